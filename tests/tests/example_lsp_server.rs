//! The `lsp_server` example, spawned as a child process and driven by a
//! [`Peer`] with the LSP preset's framing, cancellation and progress: the
//! lifecycle and its gate, the server calling back during `initialized`,
//! ordering of a burst of `didChange` before a hover, work-done progress on
//! the client's token and on one the server creates, cancellation races,
//! and the exit code.
#![cfg(unix)]

use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::transport::{ChildHandle, ProcessExit, TransportError};
use jsonrpc_runtime::{
    peer::CallOptions, transport::ChildProcess, CallError, Config, Context, ErrorCode, ErrorObject,
    Id, Router,
};
use serde_json::{json, Value};
use tests::{example_path, ANSWER_TIMEOUT};
use tokio::process::Command;
use tokio::sync::mpsc;

/// The client side of the LSP preset: no lifecycle gate on what the server
/// sends (`workspace/configuration`, `window/logMessage`).
fn client_config() -> Config {
    Config::lsp_client()
}

/// A running `lsp_server` and a client peer on its stdio, with what the
/// server sent to the client's own routes.
struct Client {
    peer: jsonrpc_runtime::Peer,
    child: ChildHandle,
    /// `window/logMessage` params, in order.
    logs: mpsc::UnboundedReceiver<Value>,
    /// `$/progress` params for tokens the server created, in order.
    progress: mpsc::UnboundedReceiver<Value>,
    /// `workspace/configuration` params the server asked with.
    configuration_asked: Arc<Mutex<Vec<Value>>>,
    /// Tokens the server created with `window/workDoneProgress/create`.
    created: Arc<Mutex<Vec<Value>>>,
}

impl Client {
    fn spawn() -> Client {
        let (log_tx, logs) = mpsc::unbounded_channel();
        let (progress_tx, progress) = mpsc::unbounded_channel();
        let configuration_asked = Arc::new(Mutex::new(Vec::new()));
        let created = Arc::new(Mutex::new(Vec::new()));
        let asked = configuration_asked.clone();
        let tokens = created.clone();
        let router = Router::new()
            .request("workspace/configuration", move |p: Value, _: Context| {
                asked.lock().unwrap().push(p);
                async { Ok::<_, ErrorObject>(json!([{"answer": 42}])) }
            })
            .request(
                "window/workDoneProgress/create",
                move |p: Value, _: Context| {
                    tokens.lock().unwrap().push(p["token"].clone());
                    async { Ok::<_, ErrorObject>(()) }
                },
            )
            .notification("window/logMessage", move |p: Value, _: Context| {
                let _ = log_tx.send(p);
                async {}
            })
            .notification("$/progress", move |p: Value, _: Context| {
                let _ = progress_tx.send(p);
                async {}
            });
        let config = client_config();
        let command = Command::new(example_path("lsp_server"));
        let (transport, child) = ChildProcess::spawn(command, &config)
            .expect("spawn lsp_server")
            .into_parts();
        Client {
            peer: jsonrpc_runtime::Peer::builder()
                .config(config)
                .router(router)
                .spawn(transport),
            child,
            logs,
            progress,
            configuration_asked,
            created,
        }
    }

    /// Spawns the server, initializes it with `capabilities` and sends
    /// `initialized`.
    async fn initialized(capabilities: Value) -> Client {
        let client = Client::spawn();
        let result = client.initialize(capabilities).await.expect("initialize");
        assert_eq!(result["capabilities"]["hoverProvider"], true, "{result}");
        // Incremental sync (2) and the encoding: the layer's answers.
        assert_eq!(
            result["capabilities"]["textDocumentSync"]["change"], 2,
            "{result}"
        );
        assert_eq!(
            result["capabilities"]["positionEncoding"], "utf-16",
            "{result}"
        );
        client.peer.notify("initialized", json!({})).await.unwrap();
        client
    }

    async fn initialize(&self, capabilities: Value) -> Result<Value, CallError> {
        let params = json!({
            "processId": null,
            "rootUri": null,
            "clientInfo": {"name": "tests"},
            "capabilities": capabilities,
        });
        self.call("initialize", params).await
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, CallError> {
        tokio::time::timeout(ANSWER_TIMEOUT, self.peer.call(method, params))
            .await
            .expect("an answer in time")
    }

    async fn hover(&self, uri: &str) -> Result<Value, CallError> {
        let params = json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}});
        self.call("textDocument/hover", params).await
    }

    async fn next_log(&mut self) -> Value {
        tokio::time::timeout(ANSWER_TIMEOUT, self.logs.recv())
            .await
            .expect("a window/logMessage in time")
            .expect("the client is still running")
    }

    async fn next_created_progress(&mut self) -> Value {
        tokio::time::timeout(ANSWER_TIMEOUT, self.progress.recv())
            .await
            .expect("a $/progress in time")
            .expect("the client is still running")
    }

    /// Waits for the server to exit (after `exit`).
    async fn exited(self) -> ProcessExit {
        tokio::time::timeout(ANSWER_TIMEOUT, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("wait for the server")
    }
}

fn error_code(error: &CallError<ErrorObject>) -> i64 {
    match error {
        CallError::Rpc(e) | CallError::Domain(e) => e.code.0,
        other => panic!("expected an error answer, got {other:?}"),
    }
}

fn plain_error_code(error: &CallError) -> i64 {
    match error {
        CallError::Rpc(e) => e.code.0,
        other => panic!("expected an error answer, got {other:?}"),
    }
}

async fn open(client: &Client, uri: &str, text: &str) {
    let document = json!({"uri": uri, "languageId": "plaintext", "version": 1, "text": text});
    let params = json!({"textDocument": document});
    client
        .peer
        .notify("textDocument/didOpen", params)
        .await
        .expect("didOpen");
}

#[tokio::test]
async fn requests_before_initialize_are_refused_and_initialize_happens_once() {
    let client = Client::spawn();
    let early = client.hover("file:///a").await.unwrap_err();
    assert_eq!(plain_error_code(&early), -32002);
    client.initialize(json!({})).await.unwrap();
    let again = client.initialize(json!({})).await.unwrap_err();
    assert_eq!(plain_error_code(&again), -32600);
    assert_eq!(client.hover("file:///a").await.unwrap(), Value::Null);
    client.peer.notify("exit", ()).await.unwrap();
    // `exit` without `shutdown`: code 1.
    assert_eq!(client.exited().await.status.code(), Some(1));
}

#[tokio::test]
async fn initialized_asks_workspace_configuration_and_logs_the_answer() {
    let mut client = Client::initialized(json!({"workspace": {"configuration": true}})).await;
    let log = client.next_log().await;
    assert_eq!(log["type"], 3, "{log}");
    assert_eq!(log["message"], r#"configuration: [{"answer":42}]"#, "{log}");
    assert_eq!(
        *client.configuration_asked.lock().unwrap(),
        [json!({"items": [{"section": "example"}]})]
    );

    // A client without the capability is not asked.
    let mut plain = Client::initialized(json!({})).await;
    let log = plain.next_log().await;
    assert!(
        log["message"].as_str().unwrap().contains("does not offer"),
        "{log}"
    );
    assert!(plain.configuration_asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn hover_counts_the_words_of_the_open_document() {
    let mut client = Client::initialized(json!({})).await;
    client.next_log().await;
    open(&client, "file:///a.txt", "one two three").await;
    open(&client, "file:///b.txt", "  solo\n").await;
    let hover = client.hover("file:///a.txt").await.unwrap();
    assert_eq!(
        hover,
        json!({"contents": {"kind": "plaintext", "value": "3 words"}})
    );
    let hover = client.hover("file:///b.txt").await.unwrap();
    assert_eq!(hover["contents"]["value"], "1 word");
    assert_eq!(
        client.hover("file:///never-opened").await.unwrap(),
        Value::Null
    );
    client
        .peer
        .notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": "file:///a.txt"}}),
        )
        .await
        .unwrap();
    assert_eq!(client.hover("file:///a.txt").await.unwrap(), Value::Null);
}

#[tokio::test]
async fn a_thousand_rapid_did_change_notifications_apply_in_order_before_a_hover() {
    let mut client = Client::initialized(json!({})).await;
    client.next_log().await;
    let uri = "file:///burst.txt";
    open(&client, uri, "w").await;
    for version in 2..=1001 {
        let params = json!({
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"text": "w ".repeat(version)}],
        });
        client
            .peer
            .notify("textDocument/didChange", params)
            .await
            .expect("didChange");
    }
    let hover = client.hover(uri).await.unwrap();
    assert_eq!(hover["contents"]["value"], "1001 words");

    // No warning came during the burst: the first is the one a change to a
    // document never opened provokes.
    let marker = json!({
        "textDocument": {"uri": "file:///marker", "version": 1},
        "contentChanges": [{"text": "x"}],
    });
    client
        .peer
        .notify("textDocument/didChange", marker)
        .await
        .unwrap();
    let log = client.next_log().await;
    assert_eq!(
        log,
        json!({"type": 2, "message": "file:///marker: changed before it was opened"})
    );
}

#[tokio::test]
async fn slow_reports_progress_on_the_work_done_token_in_order_before_its_answer() {
    let client = Client::initialized(json!({})).await;
    let mut call = client
        .peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "example/slow",
            json!({"ms": 50}),
            CallOptions::default(),
        )
        .unwrap();
    let mut values = Vec::new();
    // `None` once the answer is in: everything collected here came first.
    while let Some(value) = tokio::time::timeout(ANSWER_TIMEOUT, call.next_progress())
        .await
        .expect("progress or the answer in time")
    {
        values.push(value.unwrap());
    }
    assert_eq!(call.result().await.unwrap(), json!({"sleptMs": 50}));
    assert_work_done_sequence(&values, "done");
    println!(
        "example/slow 50 ms: {} work-done values, in order, before the answer",
        values.len()
    );
    assert!(client.created.lock().unwrap().is_empty());
}

/// `begin`, `report`s with increasing percentages, then `end` with
/// `message`.
fn assert_work_done_sequence(values: &[Value], message: &str) {
    let kinds: Vec<&str> = values
        .iter()
        .map(|v| v["kind"].as_str().expect("a kind"))
        .collect();
    assert_eq!(kinds.first(), Some(&"begin"), "{values:?}");
    assert_eq!(kinds.last(), Some(&"end"), "{values:?}");
    assert!(
        kinds[1..kinds.len() - 1].iter().all(|k| *k == "report"),
        "{values:?}"
    );
    let percentages: Vec<u64> = values
        .iter()
        .filter_map(|v| v["percentage"].as_u64())
        .collect();
    assert!(
        percentages.windows(2).all(|w| w[0] < w[1]),
        "{percentages:?}"
    );
    assert_eq!(values.last().unwrap()["message"], message, "{values:?}");
}

#[tokio::test]
async fn slow_creates_a_token_when_the_client_offers_work_done_progress() {
    let mut client = Client::initialized(json!({"window": {"workDoneProgress": true}})).await;
    client.next_log().await;
    let result = client
        .call("example/slow", json!({"ms": 50}))
        .await
        .unwrap();
    assert_eq!(result, json!({"sleptMs": 50}));
    let created = client.created.lock().unwrap().clone();
    assert_eq!(created.len(), 1, "{created:?}");
    // The client's notification routes may run a little after the answer
    // is delivered; the wire order is checked by the raw test below.
    let mut values = Vec::new();
    loop {
        let params = client.next_created_progress().await;
        assert_eq!(params["token"], created[0], "{params}");
        let end = params["value"]["kind"] == "end";
        values.push(params["value"].clone());
        if end {
            break;
        }
    }
    assert_work_done_sequence(&values, "done");
}

use tests::message_frame as frame;

/// The next frame as JSON, or the process exit once stdout ends.
async fn next(child: &mut ChildProcess) -> Result<Value, ProcessExit> {
    let item = tokio::time::timeout(ANSWER_TIMEOUT, child.next())
        .await
        .expect("output in time");
    match item {
        Some(Ok(Frame::Message(bytes))) => Ok(serde_json::from_slice(&bytes).expect("JSON")),
        Some(Err(TransportError::ProcessExited(exit))) => Err(exit),
        other => panic!("expected a message or the exit, got {other:?}"),
    }
}

#[tokio::test]
async fn created_token_progress_is_on_the_wire_before_the_answer() {
    let command = Command::new(example_path("lsp_server"));
    let mut child = ChildProcess::spawn(command, &Config::lsp()).unwrap();
    let capabilities = json!({"capabilities": {"window": {"workDoneProgress": true}}});
    child
        .send(frame(Some(1), "initialize", capabilities))
        .await
        .unwrap();
    assert_eq!(next(&mut child).await.unwrap()["id"], 1);
    child
        .send(frame(None, "initialized", json!({})))
        .await
        .unwrap();
    assert_eq!(
        next(&mut child).await.unwrap()["method"],
        "window/logMessage"
    );
    child
        .send(frame(Some(2), "example/slow", json!({"ms": 30})))
        .await
        .unwrap();
    let create = next(&mut child).await.unwrap();
    assert_eq!(create["method"], "window/workDoneProgress/create");
    let token = create["params"]["token"].clone();
    let answer = json!({"jsonrpc": "2.0", "id": create["id"], "result": null});
    child.send(Bytes::from(answer.to_string())).await.unwrap();

    let mut values = Vec::new();
    let result = loop {
        let message = next(&mut child).await.unwrap();
        if message["method"] == "$/progress" {
            assert_eq!(message["params"]["token"], token);
            values.push(message["params"]["value"].clone());
        } else {
            break message;
        }
    };
    assert_eq!(
        result,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"sleptMs": 30}})
    );
    assert_work_done_sequence(&values, "done");

    child
        .send(frame(Some(3), "shutdown", Value::Null))
        .await
        .unwrap();
    assert_eq!(next(&mut child).await.unwrap()["result"], Value::Null);
    child.send(frame(None, "exit", Value::Null)).await.unwrap();
    let exit = next(&mut child).await.expect_err("the server exits");
    assert_eq!(exit.status.code(), Some(0), "{exit}");
}

#[tokio::test]
async fn cancelling_slow_answers_request_cancelled_and_frees_the_handler_at_once() {
    let client = Client::initialized(json!({})).await;
    let mut call = client
        .peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "example/slow",
            json!({"ms": 60_000}),
            CallOptions::default(),
        )
        .unwrap();
    let begin = tokio::time::timeout(ANSWER_TIMEOUT, call.next_progress())
        .await
        .expect("`begin` in time")
        .expect("`begin` before any answer")
        .unwrap();
    assert_eq!(begin["kind"], "begin");

    let cancelled_at = Instant::now();
    call.cancel(None).unwrap();
    let mut rest = Vec::new();
    while let Some(value) = tokio::time::timeout(ANSWER_TIMEOUT, call.next_progress())
        .await
        .expect("the answer in time")
    {
        rest.push(value.unwrap());
    }
    let answered_after = cancelled_at.elapsed();
    let error = call.result().await.unwrap_err();
    assert_eq!(error_code(&error), ErrorCode::REQUEST_CANCELLED.0);
    // The handler's guard sends `end` when its future is dropped: seeing it
    // before the answer proves the handler was stopped, not left running.
    assert_eq!(
        rest.last(),
        Some(&json!({"kind": "end", "message": "cancelled"})),
        "{rest:?}"
    );
    println!(
        "LSP cancel: handler stopped and -32800 received {answered_after:?} \
         after $/cancelRequest (target 50 ms)"
    );
    // The session goes on.
    open(&client, "file:///a", "still here").await;
    assert_eq!(
        client.hover("file:///a").await.unwrap()["contents"]["value"],
        "2 words"
    );
}

#[tokio::test]
async fn cancellation_races_end_each_call_once_with_its_result_or_request_cancelled() {
    let client = Client::initialized(json!({})).await;
    let outcomes = tests::cancellation_race(
        &client.peer,
        "example/slow",
        |i| json!({"ms": i % 3 * 10}),
        |i| i % 10 * 3,
    )
    .await;
    let (mut answered, mut cancelled) = (0, 0);
    for outcome in outcomes {
        match outcome {
            Ok(result) => {
                assert!(result["sleptMs"].is_u64(), "{result}");
                answered += 1;
            }
            Err(error) => {
                assert_eq!(error_code(&error), ErrorCode::REQUEST_CANCELLED.0);
                cancelled += 1;
            }
        }
    }
    println!("LSP races: {answered} answered, {cancelled} answered -32800");
    // Cancelling something long finished changes nothing.
    client.peer.cancel(&Id::from(2), None).unwrap();
    assert_eq!(client.hover("file:///none").await.unwrap(), Value::Null);
    assert_eq!(
        client.call("shutdown", Value::Null).await.unwrap(),
        Value::Null
    );
    client.peer.notify("exit", ()).await.unwrap();
    assert_eq!(client.exited().await.status.code(), Some(0));
}

#[tokio::test]
async fn exit_after_shutdown_is_code_zero_and_requests_after_shutdown_are_refused() {
    let client = Client::initialized(json!({})).await;
    assert_eq!(
        client.call("shutdown", Value::Null).await.unwrap(),
        Value::Null
    );
    let late = client.hover("file:///a").await.unwrap_err();
    assert_eq!(plain_error_code(&late), -32600);
    client.peer.notify("exit", ()).await.unwrap();
    assert_eq!(client.exited().await.status.code(), Some(0));

    // `exit` before anything else: code 1.
    let client = Client::spawn();
    client.peer.notify("exit", ()).await.unwrap();
    assert_eq!(client.exited().await.status.code(), Some(1));
}

#[tokio::test]
async fn exit_ends_the_process_when_stdio_are_sockets_as_node_spawns_them() {
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;
    use std::process::Stdio;
    use tokio::io::AsyncWriteExt as _;

    // Node.js (so VS Code and most MCP hosts) gives a child socket pairs,
    // not pipes. A blocking read left on one would keep the server alive
    // after `exit` for as long as the client keeps its end open.
    let (ours_in, theirs_in) = UnixStream::pair().unwrap();
    let (_ours_out, theirs_out) = UnixStream::pair().unwrap();
    let mut child = Command::new(example_path("lsp_server"))
        .stdin(Stdio::from(OwnedFd::from(theirs_in)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    ours_in.set_nonblocking(true).unwrap();
    let mut input = tokio::net::UnixStream::from_std(ours_in).unwrap();
    let body = frame(None, "exit", Value::Null);
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    input.write_all(header.as_bytes()).await.unwrap();
    input.write_all(&body).await.unwrap();
    // `input` stays open: the server must leave on `exit` alone.
    let status = tokio::time::timeout(ANSWER_TIMEOUT, child.wait())
        .await
        .expect("the server exits while its stdin is still open")
        .unwrap();
    assert_eq!(status.code(), Some(1));
    drop(input);
}
