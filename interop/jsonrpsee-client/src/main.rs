//! Interop check: jsonrpsee's HTTP client (`jsonrpsee-http-client`, the
//! client Rust users pick today) against `spec_server --http`.
//!
//! Usage: `jsonrpsee-client-interop PATH/TO/spec_server` starts the server
//! on a free loopback port, runs every check, stops it with SIGTERM and
//! checks that it exits 0; `jsonrpsee-client-interop --url URL` checks a
//! server that is already running. Prints one `ok` line per check and exits
//! non-zero at the first mismatch.

use std::process::ExitCode;
use std::time::Duration;

use jsonrpsee_core::client::{BatchResponse, ClientT, Error as ClientError};
use jsonrpsee_core::params::{ArrayParams, BatchRequestBuilder, ObjectParams};
use jsonrpsee_core::rpc_params;
use jsonrpsee_http_client::types::ErrorObjectOwned;
use jsonrpsee_http_client::{HttpClient, HttpClientBuilder};
use serde_json::{json, Value};

mod common;

use common::{expect_eq, start_server, stop_server, Checks, Outcome};

/// Calls in the concurrent burst.
const BURST: usize = 500;

/// The large payload: about 4 MiB of text with quotes, escapes and
/// characters outside ASCII, under spec_server's 8 MiB body cap.
fn large_text() -> String {
    let unit = "line \"quoted\" \\ tab\t é 漢字 🦀\n";
    unit.repeat(4 * 1024 * 1024 / unit.len())
}

/// The error object of a call that must fail with a JSON-RPC error.
fn call_error<T: std::fmt::Debug>(
    result: Result<T, ClientError>,
) -> Result<ErrorObjectOwned, String> {
    match result {
        Err(ClientError::Call(error)) => Ok(error),
        other => Err(format!("expected a JSON-RPC error answer, got {other:?}")),
    }
}

async fn positional(client: &HttpClient) -> Outcome {
    let a: i64 = client
        .request("subtract", rpc_params![42, 23])
        .await
        .map_err(|e| e.to_string())?;
    let b: i64 = client
        .request("subtract", rpc_params![23, 42])
        .await
        .map_err(|e| e.to_string())?;
    let sum: f64 = client
        .request("sum", rpc_params![1, 2.5, 4])
        .await
        .map_err(|e| e.to_string())?;
    expect_eq("subtract [42, 23]", a, 19)?;
    expect_eq("subtract [23, 42]", b, -19)?;
    expect_eq("sum [1, 2.5, 4]", sum, 7.5)
}

async fn named(client: &HttpClient) -> Outcome {
    let mut params = ObjectParams::new();
    params.insert("subtrahend", 23).map_err(|e| e.to_string())?;
    params.insert("minuend", 42).map_err(|e| e.to_string())?;
    let difference: i64 = client
        .request("subtract", params)
        .await
        .map_err(|e| e.to_string())?;
    expect_eq("subtract {subtrahend: 23, minuend: 42}", difference, 19)?;
    let data: (String, u32) = client
        .request("get_data", rpc_params![])
        .await
        .map_err(|e| e.to_string())?;
    expect_eq("get_data", data, ("hello".to_owned(), 5))
}

async fn errors(client: &HttpClient) -> Outcome {
    let unknown = call_error(client.request::<Value, _>("foobar", rpc_params![]).await)?;
    expect_eq("unknown method: code", unknown.code(), -32601)?;
    expect_eq(
        "unknown method: message",
        unknown.message(),
        "Method not found: foobar",
    )?;
    let bad = call_error(
        client
            .request::<Value, _>("subtract", rpc_params!["a", "b"])
            .await,
    )?;
    expect_eq("bad params: code", bad.code(), -32602)?;
    if !bad.message().starts_with("Invalid params") {
        return Err(format!("bad params: message {:?}", bad.message()));
    }
    let overflow = call_error(
        client
            .request::<Value, _>("sum", rpc_params![1e308, 1e308])
            .await,
    )?;
    expect_eq("handler error: code", overflow.code(), -32602)?;
    expect_eq(
        "handler error: message",
        overflow.message(),
        "Invalid params: the result is not a finite number",
    )?;
    // The client still works after errors.
    let a: i64 = client
        .request("subtract", rpc_params![1, 1])
        .await
        .map_err(|e| e.to_string())?;
    expect_eq("subtract after errors", a, 0)
}

async fn notification(client: &HttpClient) -> Outcome {
    client
        .notification("update", rpc_params![1, 2, 3, 4, 5])
        .await
        .map_err(|e| format!("update: {e}"))?;
    // A notification is never answered, even for a method nobody serves.
    client
        .notification("nobody_serves_this", rpc_params![])
        .await
        .map_err(|e| format!("unknown notification: {e}"))?;
    let a: i64 = client
        .request("subtract", rpc_params![3, 1])
        .await
        .map_err(|e| e.to_string())?;
    expect_eq("subtract after notifications", a, 2)
}

async fn batch(client: &HttpClient) -> Outcome {
    let mut batch = BatchRequestBuilder::new();
    batch
        .insert("sum", rpc_params![1, 2, 4])
        .map_err(|e| e.to_string())?;
    batch
        .insert("subtract", rpc_params![42, 23])
        .map_err(|e| e.to_string())?;
    batch
        .insert("foo.get", rpc_params![])
        .map_err(|e| e.to_string())?;
    batch
        .insert("get_data", ArrayParams::new())
        .map_err(|e| e.to_string())?;
    let mut by_name = ObjectParams::new();
    by_name.insert("minuend", 5).map_err(|e| e.to_string())?;
    by_name.insert("subtrahend", 7).map_err(|e| e.to_string())?;
    batch
        .insert("subtract", by_name)
        .map_err(|e| e.to_string())?;
    let answers: BatchResponse<'_, Value> = client
        .batch_request(batch)
        .await
        .map_err(|e| e.to_string())?;
    expect_eq("batch: successes", answers.num_successful_calls(), 4)?;
    expect_eq("batch: failures", answers.num_failed_calls(), 1)?;
    let answers: Vec<Result<Value, ErrorObjectOwned>> = answers.into_iter().collect();
    expect_eq("batch: answers", answers.len(), 5)?;
    expect_eq("batch[0] sum", answers[0].clone().ok(), Some(json!(7)))?;
    expect_eq(
        "batch[1] subtract",
        answers[1].clone().ok(),
        Some(json!(19)),
    )?;
    match &answers[2] {
        Err(e) if e.code() == -32601 && e.message() == "Method not found: foo.get" => {}
        other => return Err(format!("batch[2] foo.get: {other:?}")),
    }
    expect_eq(
        "batch[3] get_data",
        answers[3].clone().ok(),
        Some(json!(["hello", 5])),
    )?;
    expect_eq(
        "batch[4] subtract by name",
        answers[4].clone().ok(),
        Some(json!(-2)),
    )
}

async fn large(client: &HttpClient) -> Outcome {
    let text = large_text();
    let mut params = ObjectParams::new();
    params.insert("text", &text).map_err(|e| e.to_string())?;
    params.insert("n", 1).map_err(|e| e.to_string())?;
    let echoed: Value = client
        .request("echo", params)
        .await
        .map_err(|e| e.to_string())?;
    let back = echoed["text"]
        .as_str()
        .ok_or("echo: no text in the answer")?;
    expect_eq("echo: text length", back.len(), text.len())?;
    if back != text {
        return Err("echo: the text came back changed".into());
    }
    expect_eq("echo: n", echoed["n"].clone(), json!(1))
}

async fn burst(client: &HttpClient) -> Outcome {
    let calls = (0..BURST as i64).map(|i| async move {
        let difference: Result<i64, _> = client.request("subtract", rpc_params![i, 1]).await;
        (i, difference)
    });
    let answers = futures_util::future::join_all(calls).await;
    for (i, difference) in answers {
        let difference = difference.map_err(|e| format!("call {i}: {e}"))?;
        expect_eq("burst: subtract [i, 1]", difference, i - 1)?;
    }
    Ok(())
}

async fn discover(client: &HttpClient) -> Outcome {
    let doc: Value = client
        .request("rpc.discover", rpc_params![])
        .await
        .map_err(|e| e.to_string())?;
    expect_eq(
        "rpc.discover: info.title",
        doc["info"]["title"].clone(),
        json!("spec_server"),
    )?;
    let subtract = doc["methods"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["name"] == "subtract"));
    expect_eq("rpc.discover: subtract listed", subtract.is_some(), true)
}

async fn check_all(url: &str) -> Result<usize, String> {
    let client = HttpClientBuilder::default()
        .request_timeout(Duration::from_secs(60))
        .build(url)
        .map_err(|e| format!("cannot build a client for {url}: {e}"))?;
    let mut checks = Checks { passed: 0 };
    checks
        .run(
            "positional params: subtract [42, 23] = 19, [23, 42] = -19, sum",
            positional(&client),
        )
        .await?;
    checks
        .run(
            "named params: subtract {subtrahend, minuend} = 19, get_data",
            named(&client),
        )
        .await?;
    checks
        .run(
            "error answers as jsonrpsee's ErrorObject: -32601, -32602 (bad params, handler error)",
            errors(&client),
        )
        .await?;
    checks
        .run(
            "notifications: known and unknown, both accepted without an answer",
            notification(&client),
        )
        .await?;
    checks
        .run(
            "batch (BatchRequestBuilder): 4 results and 1 error, in order",
            batch(&client),
        )
        .await?;
    checks
        .run(
            "large payload: a 4 MiB string echoed unchanged",
            large(&client),
        )
        .await?;
    checks
        .run(
            &format!("concurrent burst: {BURST} calls at once, all answered"),
            burst(&client),
        )
        .await?;
    checks
        .run("rpc.discover: the OpenRPC document", discover(&client))
        .await?;
    Ok(checks.passed)
}

async fn run(args: &[String]) -> Result<usize, String> {
    match args {
        [flag, url] if flag == "--url" => check_all(url).await,
        [bin] if !bin.starts_with('-') => {
            let (child, url) = start_server(bin, "--http").await?;
            let passed = check_all(&url).await?;
            stop_server(child).await?;
            println!("ok   SIGTERM: spec_server drained and exited 0");
            Ok(passed + 1)
        }
        _ => Err(
            "usage: jsonrpsee-client-interop PATH/TO/spec_server | --url http://HOST:PORT/".into(),
        ),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args).await {
        Ok(passed) => {
            println!("jsonrpsee HTTP client interop: {passed} checks passed");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
