//! `spec_server --lsp` and the spec server's progress and cancellation
//! methods, driven as a child process through the runtime's own client.

use std::time::{Duration, Instant};

use jsonrpc_runtime::{
    peer::CallOptions, transport::ChildProcess, CallError, CloseReason, Config, Context, ErrorCode,
    ErrorObject, Peer, Router,
};
use serde_json::{json, Value};

/// Spawns `spec_server ARGS` and connects a peer with `config` and `router`.
fn spawn(
    args: &[&str],
    config: Config,
    router: Router,
) -> (Peer, jsonrpc_runtime::transport::ChildHandle) {
    let mut command = tokio::process::Command::new(tests::example_path("spec_server"));
    command.args(args);
    let (transport, child) = ChildProcess::spawn(command, &config).unwrap().into_parts();
    let peer = Peer::builder()
        .config(config)
        .router(router)
        .spawn(transport);
    (peer, child)
}

#[tokio::test]
async fn lsp_mode_requires_initialize_and_exits_0_after_shutdown() {
    let (peer, child) = spawn(&["--lsp"], Config::lsp(), Router::new());
    let err = peer.call::<Value>("get_data", ()).await.unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::SERVER_NOT_INITIALIZED)
    );
    let init: Value = peer
        .call("initialize", json!({"capabilities": {}}))
        .await
        .unwrap();
    assert_eq!(init["serverInfo"]["name"], "spec_server");
    assert!(init["capabilities"].is_object());
    peer.notify("initialized", json!({})).await.unwrap();
    let data: Value = peer.call("get_data", ()).await.unwrap();
    assert_eq!(data, json!(["hello", 5]));
    let err = peer
        .call::<Value>("initialize", json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::INVALID_REQUEST)
    );
    peer.call::<()>("shutdown", ()).await.unwrap();
    let err = peer.call::<Value>("get_data", ()).await.unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::INVALID_REQUEST)
    );
    peer.notify("exit", ()).await.unwrap();
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.status.code(), Some(0), "stderr: {}", exit.stderr);
    assert!(matches!(
        peer.closed().await,
        CloseReason::RemoteClosed | CloseReason::Transport(_)
    ));
}

#[tokio::test]
async fn lsp_mode_exit_without_shutdown_exits_1() {
    let (peer, child) = spawn(&["--lsp"], Config::lsp(), Router::new());
    let _: Value = peer.call("initialize", json!({})).await.unwrap();
    peer.notify("exit", ()).await.unwrap();
    assert_eq!(child.wait().await.unwrap().status.code(), Some(1));
}

#[tokio::test]
async fn cancelling_test_slow_answers_request_cancelled_promptly() {
    for args in [&["--lsp"][..], &["--content-length"][..]] {
        let config = Config::lsp();
        let (peer, child) = spawn(args, config, Router::new());
        let _: Value = peer.call("initialize", json!({})).await.unwrap();
        let call = peer
            .call_with_progress::<Value, ErrorObject, Value>(
                "test/slow",
                json!({"ms": 10_000}),
                CallOptions::default(),
            )
            .unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let cancelled = Instant::now();
        call.cancel(None).unwrap();
        let err = call.result().await.unwrap_err();
        let elapsed = cancelled.elapsed();
        assert!(
            matches!(&err, CallError::Domain(e) if e.code == ErrorCode::REQUEST_CANCELLED),
            "{err:?}"
        );
        println!("spec_server {args:?}: cancel answered in {elapsed:?}");
        drop(child);
    }
}

#[tokio::test]
async fn test_progress_reports_arrive_in_order_before_the_answer() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    // `test/progress` names its own token, so the reports reach a route.
    let router = Router::new().notification("$/progress", move |p: Value, _: Context| {
        let _ = tx.send(p);
        async {}
    });
    let (peer, _child) = spawn(&[], Config::default(), router);
    let answer: Value = peer
        .call("test/progress", json!({"token": "t", "n": 20}))
        .await
        .unwrap();
    assert_eq!(answer, json!({"done": true, "steps": 20}));
    // Notifications are handled in order; all of them were read before the
    // answer, so they are all queued by now.
    let mut values = Vec::new();
    while let Ok(Some(p)) = tokio::time::timeout(Duration::from_secs(2), rx.recv()).await {
        assert_eq!(p["token"], "t");
        values.push(p["value"].as_u64().unwrap());
        if values.len() == 20 {
            break;
        }
    }
    assert_eq!(values, (1..=20).collect::<Vec<_>>());
}

/// Runs `spec_server ARGS` with `input` on stdin, which stays open (the
/// server must end the connection by itself): its stdout, stderr and exit
/// code.
async fn run_with_input(args: &[&str], input: &[u8]) -> (String, String, Option<i32>) {
    run_spec_server(args, input, false).await
}

/// Runs `spec_server ARGS` on `input`, then closes its stdin.
async fn run_until_eof(args: &[&str], input: &[u8]) -> (String, String, Option<i32>) {
    run_spec_server(args, input, true).await
}

async fn run_spec_server(
    args: &[&str],
    input: &[u8],
    close_stdin: bool,
) -> (String, String, Option<i32>) {
    use tokio::io::AsyncWriteExt as _;
    let mut child = tokio::process::Command::new(tests::example_path("spec_server"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = tokio::spawn(async move {
        // The server may stop reading early; a broken pipe is its answer.
        let _ = stdin.write_all(&input).await;
        // Kept open until the server has exited, unless asked to close.
        if close_stdin {
            None
        } else {
            Some(stdin)
        }
    });
    let out = tokio::time::timeout(tests::ANSWER_TIMEOUT * 3, child.wait_with_output())
        .await
        .expect("spec_server exits on its own")
        .unwrap();
    drop(writer.await.unwrap());
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[tokio::test]
async fn a_broken_header_is_answered_reported_and_ends_with_exit_code_1() {
    let (stdout, stderr, code) =
        run_with_input(&["--content-length"], b"Content-Length: lots\r\n\r\n{}").await;
    assert!(stdout.contains("-32700"), "{stdout}");
    assert!(stdout.contains("Content-Length: lots"), "{stdout}");
    assert!(
        stderr.contains("the connection failed") && stderr.contains("Content-Length: lots"),
        "{stderr}"
    );
    assert_eq!(code, Some(1));
}

#[tokio::test]
async fn a_declared_length_over_the_cap_is_refused_and_the_next_message_served() {
    let mut input = b"Content-Length: 18446744073709551615\r\n\r\n{}".to_vec();
    // The huge body never ends, so the server reads the rest of its input
    // as that body: it answers the refusal and exits when stdin closes.
    let (stdout, _stderr, code) = run_until_eof(&["--content-length"], &input).await;
    assert!(stdout.contains("-32600"), "{stdout}");
    assert_eq!(code, Some(0));
    input.clear();
    let ok = br#"{"jsonrpc":"2.0","id":9,"method":"echo","params":["after"]}"#;
    input.extend_from_slice(b"Content-Length: 9000000\r\n\r\n");
    input.extend_from_slice(&vec![b' '; 9_000_000]);
    input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", ok.len()).as_bytes());
    input.extend_from_slice(ok);
    let (stdout, _stderr, code) = run_until_eof(&["--content-length"], &input).await;
    assert!(stdout.contains("-32600"), "{stdout}");
    assert!(stdout.contains(r#""result":["after"]"#), "{stdout}");
    assert_eq!(code, Some(0));
}
