//! The one-capability examples run as programs, each with no arguments (it
//! serves and calls itself, and exits non-zero when an answer is not the
//! expected one): `http_server`, `tls`, `middleware`, `openrpc`, `pubsub`,
//! `record`; and a session written by `record` played back by `replay`
//! against `record --serve` over TCP.
#![cfg(unix)]

use std::process::{Output, Stdio};
use std::time::Duration;

use tests::example_path;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

/// How long one example may take. Each runs in well under a second on an
/// idle machine (the middleware example waits 200 ms for its timeout); this
/// is for a machine busy with builds.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `example ARGS` to the end and returns its stdout, after checking
/// that it succeeded.
async fn run(example: &str, args: &[&str]) -> String {
    let run = Command::new(example_path(example))
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output: Output = tokio::time::timeout(RUN_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("`{example}` ends in time"))
        .unwrap_or_else(|e| panic!("run `{example}`: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "`{example}` failed ({}):\n{stdout}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[tokio::test]
async fn http_server_answers_over_http_and_sees_the_callers_headers() {
    let out = run("http_server", &[]).await;
    assert!(out.contains("add(2, 3) = 5"), "{out}");
    assert!(
        out.contains("the server saw user-agent: http_server example"),
        "{out}"
    );
}

#[tokio::test]
async fn tls_answers_a_trusting_client_and_refuses_another() {
    let out = run("tls", &[]).await;
    assert!(out.contains("over TLS: add(2, 3) = 5"), "{out}");
    assert!(out.contains("an untrusting client is refused"), "{out}");
}

#[tokio::test]
async fn middleware_times_out_logs_and_counts() {
    let out = run("middleware", &[]).await;
    assert!(out.contains("[log] add: answered"), "{out}");
    assert!(out.contains("slow: the timeout answered"), "{out}");
    assert!(
        out.contains(r#"jsonrpc_requests_total{method="add",outcome="ok"} 1"#),
        "{out}"
    );
    assert!(
        out.contains(r#"jsonrpc_requests_total{method="slow",outcome="error"} 1"#),
        "{out}"
    );
}

#[tokio::test]
async fn openrpc_serves_a_document_with_schemas() {
    let out = run("openrpc", &[]).await;
    let document: serde_json::Value = serde_json::from_str(&out).expect("the document is JSON");
    assert_eq!(document["openrpc"], "1.3.2", "{document}");
    assert_eq!(
        document["components"]["schemas"]["Point"]["required"],
        serde_json::json!(["x", "y"]),
        "{document}"
    );
}

#[tokio::test]
async fn pubsub_subscribes_batches_and_reconnects_across_a_restart() {
    let out = run("pubsub", &[]).await;
    for line in [
        "subscription 1: Tick { symbol: \"RUST\", seq: 3",
        "unsubscribed: true",
        "refused subscription: UnknownSymbol",
        "batch: RUST = 10000, JSON = 4200, NOPE = Err(",
        "gap marker: items may have been missed",
        "after the restart: seq 1 (a new subscription)",
        "quote after the restart: 10000",
        "done",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
}

#[tokio::test]
async fn a_recorded_session_replays_against_the_same_server_without_a_difference() {
    let dir = std::env::temp_dir().join(format!("example-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("session.jsonl");
    let file = file.to_str().unwrap();
    let out = run("record", &[file]).await;
    assert!(out.contains("(5 frames)"), "{out}");

    let mut server = Command::new(example_path("record"))
        .args(["--serve", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn `record --serve`");
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let addr = tokio::time::timeout(RUN_TIMEOUT, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if let Some(addr) = line.strip_prefix("serving on ") {
                return addr.to_owned();
            }
        }
        panic!("`record --serve` ended before it listened");
    })
    .await
    .expect("`record --serve` listens in time");

    let out = run("replay", &[file, "--tcp", &addr]).await;
    assert!(out.contains("2 answers compared, 0 differ"), "{out}");
    server.kill().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
