//! SSE priming (SEP-1699, MCP 2025-11-25): a session's stream starts with an
//! event of an id and no data, and `retry:`, so a client that loses the
//! connection before the first real event can resume from it; earlier
//! revisions get no such event.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request};
use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::transport::TcpAcceptor;
use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
use serde_json::{json, Value};
use tests::http::once;

fn routes() -> Router {
    Router::new()
        .request("initialize", |params: Value, _: Context| async move {
            Ok::<_, ErrorObject>(json!({
                "protocolVersion": params["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "p", "version": "0"},
            }))
        })
        .request("echo", |params: Value, _: Context| async move {
            Ok::<_, ErrorObject>(params)
        })
}

fn post(session: Option<&str>, version: &str, body: Value) -> Request<Full<Bytes>> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", version);
    }
    request
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

/// A session at `version`, then one `echo`: the raw SSE text of its answer.
async fn echo_stream(addr: SocketAddr, version: &str) -> (String, String) {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let answer = once(addr, post(None, version, init)).await;
    let session = answer.header("mcp-session-id").unwrap().to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    once(addr, post(Some(&session), version, initialized)).await;
    let echo = json!({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"x": 1}});
    let answer = once(addr, post(Some(&session), version, echo)).await;
    (session, String::from_utf8(answer.body.to_vec()).unwrap())
}

#[tokio::test]
async fn a_stream_of_2025_11_25_starts_with_a_priming_event_and_earlier_ones_do_not() {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let _server = McpHttpListener::new(acceptor)
        .config(Config::mcp())
        .spawn(routes());

    let (session, text) = echo_stream(addr, "2025-11-25").await;
    let events: Vec<&str> = text
        .split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .collect();
    assert_eq!(events.len(), 2, "{text:?}");
    let (id, rest) = events[0]
        .strip_prefix("id: ")
        .unwrap()
        .split_once('\n')
        .unwrap();
    assert!(id.ends_with("-0"), "nothing delivered yet: {id}");
    assert_eq!(rest, "retry: 1000\ndata: ", "{text:?}");
    assert!(events[1].contains(r#""result":{"x":1}"#), "{text:?}");
    // Resuming from the priming event replays the answer.
    let resume = Request::builder()
        .method(Method::GET)
        .uri("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session.as_str())
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", id)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let replayed = once(addr, resume).await;
    let replayed = String::from_utf8(replayed.body.to_vec()).unwrap();
    assert!(replayed.contains(r#""result":{"x":1}"#), "{replayed:?}");

    let (_, text) = echo_stream(addr, "2025-06-18").await;
    assert!(!text.contains("retry:"), "{text:?}");
    assert_eq!(
        text.matches("\n\n").count(),
        1,
        "one event, the answer: {text:?}"
    );
}
