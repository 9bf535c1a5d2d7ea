//! The `load` example run as a program: a small run against `spec_server`
//! over TCP and as a child process (every call answered once), against a
//! server that answers some ids twice and others never (both counted, exit
//! code 1), and bad arguments (exit code 2).
#![cfg(unix)]

use std::process::{Output, Stdio};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::message::{Dialect, Message, ParseOptions, Parsed, Response};
use jsonrpc_runtime::{Config, Transport};
use serde_json::Value;
use tests::example_path;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

/// How long one run of the load tool may take. Its runs here take well under
/// a second when the machine is idle; this is for a machine busy with
/// builds.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `load ARGS --json` to the end.
async fn load(args: &[&str]) -> Output {
    let run = Command::new(example_path("load"))
        .args(args)
        .arg("--json")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(RUN_TIMEOUT, run)
        .await
        .expect("the load tool ends in time")
        .expect("run the load tool")
}

/// The JSON summary on stdout.
fn summary(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "expected one JSON object on stdout ({e}): {stdout:?}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn assert_all_answered_once(output: &Output, calls: u64) {
    let summary = summary(output);
    assert_eq!(summary["sent"], calls, "{summary}");
    assert_eq!(summary["answered"], calls, "{summary}");
    assert_eq!(summary["lost"], 0, "{summary}");
    assert_eq!(summary["duplicated"], 0, "{summary}");
    assert_eq!(summary["unexpected"], 0, "{summary}");
    assert_eq!(summary["error_answers"], 0, "{summary}");
    assert_eq!(summary["end"], "complete", "{summary}");
    assert_eq!(summary["problems"], Value::Array(vec![]), "{summary}");
    assert!(
        summary["calls_per_second"].as_f64().unwrap() > 0.0,
        "{summary}"
    );
    let latency = &summary["latency_us"];
    for name in ["p50", "p90", "p99", "p99_9", "max"] {
        assert!(latency[name].as_u64().unwrap() >= 1, "{summary}");
    }
    assert!(output.status.success(), "{:?}: {summary}", output.status);
}

#[tokio::test]
async fn every_call_to_spec_server_over_tcp_is_answered_once() {
    let mut server = Command::new(example_path("spec_server"))
        .args(["--tcp", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn spec_server");
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let listening = tests::listening_lines(&mut stderr, 1).await;
    let addr = listening[0].strip_prefix("tcp ").unwrap();

    let output = load(&["--tcp", addr, "--calls", "2000", "--in-flight", "50"]).await;
    assert_all_answered_once(&output, 2000);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn every_call_to_spec_server_as_a_child_is_answered_once() {
    let command = format!("{} --content-length", example_path("spec_server").display());
    let output = load(&[
        "--child",
        &command,
        "--content-length",
        "--calls",
        "2000",
        "--in-flight",
        "50",
    ])
    .await;
    assert_all_answered_once(&output, 2000);
}

/// A server on its own TCP port that answers each request whose id ends in
/// 3 twice and each whose id ends in 7 never, and everything else once. It
/// serves one connection and closes it after `requests` requests.
async fn unreliable_server(requests: u64) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut transport = Transport::from_tcp(stream, &Config::default());
        for _ in 0..requests {
            let Some(Ok(Frame::Message(bytes))) = transport.next().await else {
                panic!("the client closed before sending every request");
            };
            let Parsed::Single(Message::Request(request)) =
                Message::parse_bytes(&bytes, &ParseOptions::default())
            else {
                panic!("expected a request: {}", String::from_utf8_lossy(&bytes));
            };
            let times = match request.id.as_u64().unwrap() % 10 {
                3 => 2,
                7 => 0,
                _ => 1,
            };
            let answer = Message::Response(Response::result(request.id, &request.params).unwrap());
            let body = Bytes::from(answer.to_json(Dialect::Strict));
            for _ in 0..times {
                transport.feed(body.clone()).await.unwrap();
            }
            transport.flush().await.unwrap();
        }
        transport.close().await.unwrap();
    });
    (addr, task)
}

#[tokio::test]
async fn duplicated_and_lost_answers_are_counted_and_fail_the_run() {
    let (addr, server) = unreliable_server(1000).await;
    // A lost answer keeps its request in flight for good: room for all of
    // them, so that every request is sent. The server closes once it has
    // read them all, which tells the tool the rest will never come.
    let output = load(&["--tcp", &addr, "--calls", "1000", "--in-flight", "200"]).await;
    let summary = summary(&output);
    assert_eq!(summary["sent"], 1000, "{summary}");
    assert_eq!(summary["answered"], 900, "{summary}");
    assert_eq!(summary["lost"], 100, "{summary}");
    assert_eq!(summary["duplicated"], 100, "{summary}");
    assert_eq!(summary["end"], "server closed", "{summary}");
    assert_eq!(summary["ok"], false, "{summary}");
    assert_eq!(output.status.code(), Some(1), "{summary}");
    tokio::time::timeout(RUN_TIMEOUT, server)
        .await
        .expect("the server task ends")
        .expect("the server task does not panic");
}

#[tokio::test]
async fn bad_arguments_print_the_usage_and_exit_with_2() {
    let cases: [&[&str]; 5] = [
        &[],
        &["--tcp", "127.0.0.1:1", "--unix", "/tmp/x.sock"],
        &["--tcp", "127.0.0.1:1", "--calls", "0"],
        &["--ws", "127.0.0.1:1", "--content-length"],
        &["--tcp", "127.0.0.1:1", "--params", "42"],
    ];
    for args in cases {
        let output = load(args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: load"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}
