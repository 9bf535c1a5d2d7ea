//! The peer, its generated clients and the browser's transports, in
//! headless Chromium (`bash interop/browser.sh`): WebSocket and `fetch`
//! against native `spec_server`s, the MCP client over `fetch` against
//! native `mcp_server --http`, and a page ⇄ Web Worker pair over a
//! `MessagePort`.

#![cfg(target_arch = "wasm32")]

use std::time::Duration;

use jsonrpc_mcp::client::McpClient;
use jsonrpc_mcp::client_features::Root;
use jsonrpc_mcp::types::CallToolResult;
use jsonrpc_runtime::peer::CallOptions;
use jsonrpc_runtime::policy::{CancellationPolicy, ProgressPolicy};
use jsonrpc_runtime::reconnect::Backoff;
use jsonrpc_runtime::transport::{
    BrowserWebSocketConnector, FetchConnector, HttpFailure, McpFetchConnector,
    MessagePortTransport, TransportError,
};
use jsonrpc_runtime::{
    rpc, CallError, CloseReason, Config, Context, ErrorCode, ErrorObject, Peer, Router,
};
use serde_json::{json, Value};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

/// Where `interop/browser.sh` started `spec_server --ws`.
// A test run without the script fails with this message, not silently.
#[allow(clippy::option_env_unwrap)]
fn ws_url() -> &'static str {
    option_env!("JSONRPC_BROWSER_WS")
        .expect("build with JSONRPC_BROWSER_WS set (run interop/browser.sh)")
}

/// Where `interop/browser.sh` started `spec_server --http`.
// A test run without the script fails with this message, not silently.
#[allow(clippy::option_env_unwrap)]
fn http_url() -> &'static str {
    option_env!("JSONRPC_BROWSER_HTTP")
        .expect("build with JSONRPC_BROWSER_HTTP set (run interop/browser.sh)")
}

/// Where `interop/browser.sh` started `mcp_server --http` (its `/mcp`).
// A test run without the script fails with this message, not silently.
#[allow(clippy::option_env_unwrap)]
fn mcp_url() -> &'static str {
    option_env!("JSONRPC_BROWSER_MCP")
        .expect("build with JSONRPC_BROWSER_MCP set (run interop/browser.sh)")
}

/// The methods of `spec_server` these tests call, as a generated client.
#[rpc]
#[allow(dead_code)] // only its client is used: spec_server serves them
trait Spec {
    #[rpc(request = "subtract")]
    async fn subtract(&self, minuend: f64, subtrahend: f64) -> Result<f64, ErrorObject>;

    /// Its params, back (an array or an object).
    #[rpc(request = "echo")]
    async fn echo(&self, #[rpc(params)] value: Value) -> Result<Value, ErrorObject>;

    #[rpc(request = "test/caller")]
    async fn caller(&self) -> Result<Value, ErrorObject>;

    #[rpc(notification = "exit")]
    async fn exit(&self);
}

/// spec_server's progress (`$/progress {token, value}`, the token in the
/// request's `token`) and LSP's cancellation.
fn config() -> Config {
    Config::default()
        .progress(ProgressPolicy::new("$/progress", "token").token_path(["token"]))
        .cancellation(CancellationPolicy::lsp())
}

async fn ws_peer(router: Router) -> Peer {
    let transport = BrowserWebSocketConnector::new(ws_url())
        .connect()
        .await
        .expect("connect");
    Peer::builder()
        .config(config())
        .router(router)
        .spawn(transport)
}

async fn http_peer() -> Peer {
    let transport = FetchConnector::new(http_url())
        .bearer("browser-token")
        .header(
            http::HeaderName::from_static("x-forwarded-for"),
            http::HeaderValue::from_static("203.0.113.7"),
        )
        .connect()
        .await
        .expect("connect");
    Peer::builder().config(config()).spawn(transport)
}

#[wasm_bindgen_test]
async fn websocket_typed_calls_and_a_domain_error() {
    let spec = SpecClient::new(ws_peer(Router::new()).await);
    assert_eq!(spec.subtract(42.0, 23.0).await.unwrap(), 19.0);
    // Past f64's range: spec_server refuses it with invalid params.
    let refused = spec.subtract(f64::MAX, -f64::MAX).await.unwrap_err();
    assert!(
        matches!(&refused, CallError::Domain(e) if e.code == ErrorCode::INVALID_PARAMS),
        "{refused:?}"
    );
    assert_eq!(
        spec.echo(json!({"page": "hello"})).await.unwrap(),
        json!({"page": "hello"})
    );
}

#[wasm_bindgen_test]
async fn websocket_the_server_calls_back_into_the_page() {
    let router = Router::new().request("test/ask", |question: Value, _: Context| async move {
        Ok::<_, ErrorObject>(json!({"page answered": question["question"]}))
    });
    let peer = ws_peer(router).await;
    let answer: Value = peer.call("test/roundtrip", json!({"n": 1})).await.unwrap();
    assert_eq!(
        answer,
        json!({"clientSaid": {"page answered": "roundtrip"}})
    );
}

#[wasm_bindgen_test]
async fn websocket_progress_then_the_answer() {
    let peer = ws_peer(Router::new()).await;
    let mut call = peer
        .call_with_progress::<Value, ErrorObject, u32>(
            "test/progress",
            json!({"n": 25}),
            CallOptions::default(),
        )
        .unwrap();
    let mut seen = Vec::new();
    while let Some(step) = call.next_progress().await {
        seen.push(step.unwrap());
    }
    assert_eq!(seen, (1..=25).collect::<Vec<_>>());
    assert_eq!(
        call.result().await.unwrap(),
        json!({"done": true, "steps": 25})
    );
}

/// The browser's timers: a call to `test/slow` given up on after 200 ms.
async fn gives_up_on_a_slow_call(peer: &Peer) {
    let timed_out = peer
        .call_with::<Value, ErrorObject>(
            "test/slow",
            json!({"ms": 30_000}),
            CallOptions::default().timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap_err();
    assert!(matches!(timed_out, CallError::TimedOut), "{timed_out:?}");
}

#[wasm_bindgen_test]
async fn websocket_cancel_and_timeout() {
    let peer = ws_peer(Router::new()).await;
    let call = peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "test/slow",
            json!({"ms": 30_000}),
            CallOptions::default(),
        )
        .unwrap();
    call.cancel(Some("the page moved on")).unwrap();
    let cancelled = call.result().await.unwrap_err();
    assert!(
        matches!(&cancelled, CallError::Domain(e) if e.code == ErrorCode::REQUEST_CANCELLED),
        "{cancelled:?}"
    );
    gives_up_on_a_slow_call(&peer).await;
    // The connection is still good.
    assert_eq!(SpecClient::new(peer).subtract(1.0, 1.0).await.unwrap(), 0.0);
}

/// Params `len` bytes long as JSON: `["xx..x"]`.
fn text_of(len: usize) -> Value {
    json!(["x".repeat(len - 4)])
}

#[wasm_bindgen_test]
async fn websocket_messages_up_to_one_mebibyte_and_over_the_limit() {
    let spec = SpecClient::new(ws_peer(Router::new()).await);
    for len in [(1 << 20) - 1, 1 << 20, (1 << 20) + 1] {
        let text = text_of(len);
        assert_eq!(spec.echo(text.clone()).await.unwrap(), text, "{len} bytes");
    }
    // A peer that takes at most 64 KiB: an answer over it closes with 1009.
    let transport = BrowserWebSocketConnector::new(ws_url())
        .max_frame_len(64 * 1024)
        .connect()
        .await
        .unwrap();
    let small = SpecClient::new(Peer::spawn(transport));
    let failed = small.echo(text_of(100 * 1024)).await.unwrap_err();
    let CallError::Closed(CloseReason::Transport(error)) = &failed else {
        panic!("{failed:?}");
    };
    let TransportError::WebSocket(error) = &**error else {
        panic!("{error:?}");
    };
    assert_eq!(error.close_code(), Some(1009), "{error}");
}

#[wasm_bindgen_test]
async fn websocket_a_server_that_goes_away_mid_call() {
    let peer = ws_peer(Router::new()).await;
    let slow = peer.call::<Value>("test/slow", json!({"ms": 30_000}));
    let spec = SpecClient::new(peer.clone());
    // `exit` makes spec_server close this connection (after a second's
    // grace for the running call).
    spec.exit().await.unwrap();
    // Either the server answers it as it closes (-32001), or the
    // connection is gone first.
    let failed = slow.await.unwrap_err();
    assert!(
        matches!(&failed, CallError::Closed(_))
            || matches!(&failed, CallError::Rpc(e) if e.code == ErrorCode::SERVER_CLOSING),
        "{failed:?}"
    );
    peer.closed().await;
}

#[wasm_bindgen_test]
async fn websocket_no_server() {
    let refused = BrowserWebSocketConnector::new("ws://127.0.0.1:9/")
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(refused, TransportError::WebSocket(_)),
        "{refused:?}"
    );
    // A scheme the browser's WebSocket refuses outright.
    let invalid = BrowserWebSocketConnector::new("ftp://example.invalid/")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(invalid, TransportError::Invalid(_)), "{invalid:?}");
}

#[wasm_bindgen_test]
async fn websocket_a_subscription() {
    let peer = ws_peer(Router::new()).await;
    let mut ticks = peer
        .subscribe::<u64>(
            "subscribe_ticks",
            json!({"interval_ms": 5, "count": 10}),
            "unsubscribe_ticks",
        )
        .await
        .unwrap();
    let mut seen = Vec::new();
    while let Some(tick) = ticks.next().await {
        seen.push(tick.unwrap());
    }
    assert_eq!(seen, (1..=10).collect::<Vec<_>>());
}

/// The connectors' futures are `Send`, as natively: they hold no
/// JavaScript value (checked when this file compiles).
#[allow(dead_code)]
fn connecting_is_send() {
    fn send<T: Send>(_: T) {}
    send(BrowserWebSocketConnector::new("ws://h/").connect());
    send(FetchConnector::new("http://h/").connect());
    send(McpFetchConnector::new("http://h/mcp").connect());
}

#[wasm_bindgen_test]
async fn websocket_a_client_that_reconnects_after_the_server_closes() {
    let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let client = BrowserWebSocketConnector::new(ws_url())
        .reconnecting()
        .config(config())
        .backoff(Backoff::new(
            Duration::from_millis(50),
            Duration::from_millis(500),
        ))
        .queue_for(Duration::from_secs(30))
        .on_event(move |event| {
            let _ = events_tx.send(format!("{event:?}"));
        })
        .spawn();
    assert_eq!(client.call::<f64>("subtract", [5, 3]).await.unwrap(), 2.0);
    // `exit` makes spec_server close this connection.
    client.notify("exit", ()).await.unwrap();
    let mut seen = Vec::new();
    while let Some(event) = events.recv().await {
        let again = event.contains("again: true");
        seen.push(event);
        if again {
            break;
        }
    }
    assert!(
        seen.iter().any(|e| e.starts_with("Disconnected")),
        "{seen:?}"
    );
    // On the new connection, calls go through as before.
    assert_eq!(client.call::<f64>("subtract", [9, 3]).await.unwrap(), 6.0);
    client.close().await;
}

#[wasm_bindgen_test]
async fn fetch_typed_calls_headers_a_batch_and_large_bodies() {
    let peer = http_peer().await;
    let spec = SpecClient::new(peer.clone());
    assert_eq!(spec.subtract(42.0, 23.0).await.unwrap(), 19.0);
    let refused = spec.subtract(f64::MAX, -f64::MAX).await.unwrap_err();
    assert!(
        matches!(&refused, CallError::Domain(e) if e.code == ErrorCode::INVALID_PARAMS),
        "{refused:?}"
    );
    // The connector's headers travel with every POST (past the preflight).
    let caller = spec.caller().await.unwrap();
    assert_eq!(caller["forwardedFor"], "203.0.113.7", "{caller}");
    for len in [(1 << 20) - 1, 1 << 20, (1 << 20) + 1] {
        let text = text_of(len);
        assert_eq!(spec.echo(text.clone()).await.unwrap(), text, "{len} bytes");
    }
    let mut batch = peer.batch();
    let first = batch.call(peer.call::<f64>("subtract", [10, 3]));
    let second = batch.call(peer.call::<Value>("echo", json!(["batched"])));
    batch.send().await.unwrap();
    assert_eq!(first.await.unwrap(), 7.0);
    assert_eq!(second.await.unwrap(), json!(["batched"]));
    gives_up_on_a_slow_call(&peer).await;
}

#[wasm_bindgen_test]
async fn fetch_no_server() {
    let transport = FetchConnector::new("http://127.0.0.1:9/")
        .connect()
        .await
        .unwrap();
    let peer = Peer::spawn(transport);
    let failed = peer.call::<Value>("subtract", [1, 2]).await.unwrap_err();
    let failure = failed.as_rpc().and_then(HttpFailure::from_error);
    assert_eq!(failure.map(|f| f.status), Some(None), "{failed:?}");
    // An answer that is not JSON-RPC: the health endpoint's text.
    let health = format!("{}health", http_url());
    let peer = Peer::spawn(FetchConnector::new(health).connect().await.unwrap());
    let failed = peer.call::<Value>("subtract", [1, 2]).await.unwrap_err();
    let failure = failed
        .as_rpc()
        .and_then(HttpFailure::from_error)
        .expect("an HTTP failure");
    assert_eq!(failure.status, Some(405), "{failed:?}");
}

/// The text of a tool result's first content block.
fn first_text(result: &CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[wasm_bindgen_test]
async fn mcp_client_over_fetch_on_a_session() {
    let transport = McpFetchConnector::new(mcp_url()).connect().await.unwrap();
    let client = McpClient::builder("a page", "1.0")
        .protocol_version("2025-11-25")
        .roots([Root {
            uri: "file:///page".into(),
            name: Some("the page".into()),
        }])
        .connect(transport)
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), "2025-11-25");
    let tools: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    for tool in ["echo", "add", "sleep", "roots"] {
        assert!(tools.iter().any(|t| t == tool), "{tools:?}");
    }
    let sum = client
        .call_tool("add", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    assert_eq!(first_text(&sum), "42");
    // The server asks the page for its roots while the call runs: a
    // request on the session's streams, answered with a POST of its own.
    let roots = client.call_tool("roots", json!({})).await.unwrap();
    assert!(first_text(&roots).contains("file:///page"), "{roots:?}");
    // Progress on the POST's SSE stream, read as it arrives, then the
    // answer.
    let mut call = client
        .peer()
        .call_with_progress::<Value, ErrorObject, Value>(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 100}}),
            CallOptions::default(),
        )
        .unwrap();
    let mut reports = 0;
    while let Some(report) = call.next_progress().await {
        report.unwrap();
        reports += 1;
    }
    assert!(reports > 0, "no progress reports");
    let slept = call.result().await.unwrap();
    assert_eq!(slept["isError"], json!(false), "{slept}");
    // A cancelled call is owed no answer; the session goes on.
    let long = client
        .peer()
        .call_with_progress::<Value, ErrorObject, Value>(
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 30_000}}),
            CallOptions::default(),
        )
        .unwrap();
    long.cancel(Some("the page moved on")).unwrap();
    assert!(long.result().await.is_err());
    let echoed = client
        .call_tool("echo", json!({"text": "still here"}))
        .await
        .unwrap();
    assert_eq!(first_text(&echoed), "still here");
    client.close(Duration::from_secs(5)).await;
}

#[wasm_bindgen_test]
async fn mcp_client_over_fetch_on_the_stateless_revision() {
    let transport = McpFetchConnector::new(mcp_url()).connect().await.unwrap();
    let client = McpClient::builder("a page", "1.0")
        .protocol_version("2026-07-28")
        .connect(transport)
        .await
        .unwrap();
    assert!(client.is_stateless());
    let sum = client
        .call_tool("add", json!({"a": 1, "b": 2}))
        .await
        .unwrap();
    assert_eq!(first_text(&sum), "3");
    // An unknown tool: the server's error, answered with 404 or 400 and a
    // JSON-RPC body, reaches the page as that error.
    let unknown = client
        .call_tool("no-such-tool", json!({}))
        .await
        .unwrap_err();
    assert!(format!("{unknown:?}").contains("-32602"), "{unknown:?}");
}

#[wasm_bindgen_test]
async fn mcp_over_fetch_with_no_server() {
    let transport = McpFetchConnector::new("http://127.0.0.1:9/mcp")
        .connect()
        .await
        .unwrap();
    let failed = McpClient::builder("a page", "1.0")
        .connect(transport)
        .await
        .unwrap_err();
    assert!(format!("{failed:?}").contains("-32100"), "{failed:?}");
    // A URL fetch cannot take is refused at once.
    let invalid = McpFetchConnector::new("ftp://example.invalid/mcp")
        .connect()
        .await
        .unwrap_err();
    assert!(matches!(invalid, TransportError::Invalid(_)), "{invalid:?}");
}

/// What the worker serves to the page.
#[rpc]
trait InWorker {
    /// The sum of `numbers`.
    #[rpc(request = "worker/sum")]
    async fn sum(&self, numbers: Vec<i64>) -> Result<i64, ErrorObject>;

    /// `text`, back.
    #[rpc(request = "worker/echo")]
    async fn echo(&self, text: String) -> Result<String, ErrorObject>;

    /// Asks the page for its name (a call back into the page) and greets it.
    #[rpc(request = "worker/greetPage")]
    async fn greet_page(&self, ctx: Context) -> Result<String, ErrorObject>;
}

struct Worker;

impl InWorker for Worker {
    async fn sum(&self, numbers: Vec<i64>) -> Result<i64, ErrorObject> {
        Ok(numbers.iter().sum())
    }

    async fn echo(&self, text: String) -> Result<String, ErrorObject> {
        Ok(text)
    }

    async fn greet_page(&self, ctx: Context) -> Result<String, ErrorObject> {
        let name: String = ctx
            .peer()
            .call("page/name", ())
            .await
            .map_err(ErrorObject::internal_error)?;
        Ok(format!("hello, {name}"))
    }
}

/// The worker's entry point: it hands a port to the page and serves on it
/// until the page closes it.
#[wasm_bindgen]
pub fn browser_worker_main() {
    wasm_bindgen_futures::spawn_local(async {
        let transport = MessagePortTransport::connect_to_page().expect("in a worker");
        let peer = Peer::builder()
            .router(Worker.into_router())
            .spawn(transport);
        peer.closed().await;
    });
}

#[wasm_bindgen(inline_js = r#"
export function start_worker(entry) {
    // This snippet is served at /snippets/<crate>/inline0.js; the module
    // it belongs to, two levels up.
    const glue = new URL('../../wasm-bindgen-test.js', import.meta.url).href;
    const binary = new URL('../../wasm-bindgen-test_bg.wasm', import.meta.url).href;
    const source = `import init, * as m from ${JSON.stringify(glue)};
        try { await init({ module_or_path: ${JSON.stringify(binary)} }); m[${JSON.stringify(entry)}](); }
        catch (e) { console.error('the worker failed to start: ' + e); }`;
    const url = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    const worker = new Worker(url, { type: 'module' });
    worker.addEventListener('error', e => console.error('worker error: ' + e.message));
    return worker;
}
"#)]
extern "C" {
    fn start_worker(entry: &str) -> web_sys::Worker;
}

#[wasm_bindgen_test]
async fn a_page_and_its_worker_call_each_other() {
    let worker = start_worker("browser_worker_main");
    let transport = MessagePortTransport::accept_worker(&worker).await.unwrap();
    let router = Router::new().request("page/name", |(): (), _: Context| async {
        Ok::<_, ErrorObject>("the page")
    });
    let peer = Peer::builder().router(router).spawn(transport);
    let worker_api = InWorkerClient::new(peer.clone());
    assert_eq!(worker_api.sum(vec![1, 2, 3, 4]).await.unwrap(), 10);
    assert_eq!(worker_api.greet_page().await.unwrap(), "hello, the page");
    let text = "x".repeat(1 << 20);
    assert_eq!(worker_api.echo(text.clone()).await.unwrap(), text);
    peer.close(Duration::from_secs(5)).await;
    worker.terminate();
}
