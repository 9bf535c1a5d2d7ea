//! Stateless requests (MCP 2026-07-28) on an MCP HTTP endpoint: the
//! headers checked against the body, the status of each answer, a stream
//! when the request asks for progress, and the session path kept for the
//! session revisions.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, StatusCode};
use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::transport::TcpAcceptor;
use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
use serde_json::{json, Value};
use tests::http::{once, HttpAnswer};

const REVISION: &str = "2026-07-28";

/// `tools/call` echoes its arguments, `fail` is -32602, `steps` reports
/// progress twice.
fn routes() -> Router {
    Router::new()
        .request("tools/call", |params: Value, _: Context| async move {
            Ok::<_, ErrorObject>(json!({"content": [], "echo": params["arguments"]}))
        })
        .request("fail", |_: Value, _: Context| async {
            Err::<Value, _>(ErrorObject::invalid_params("no"))
        })
        .request("steps", |_: Value, ctx: Context| async move {
            for step in 1..=2 {
                ctx.progress(json!({"progress": step, "total": 2})).unwrap();
            }
            Ok::<_, ErrorObject>(json!({"done": true}))
        })
}

async fn serve(
    build: impl FnOnce(McpHttpListener<TcpAcceptor>) -> McpHttpListener<TcpAcceptor>,
) -> (jsonrpc_runtime::server::Server, SocketAddr) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let listener = McpHttpListener::new(acceptor).config(Config::mcp());
    (build(listener).spawn(routes()), addr)
}

/// The `_meta` of a stateless request of `revision`.
fn meta(revision: &str) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn body(id: u64, method: &str, mut params: Value) -> Value {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(REVISION);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// POSTs `body` with the usual headers and `headers` (a `None` value
/// leaves that header out), on a connection of its own.
async fn post(addr: SocketAddr, headers: &[(&str, Option<&str>)], body: &Value) -> HttpAnswer {
    let mut all: Vec<(&str, Option<&str>)> = vec![
        ("host", Some("localhost")),
        ("content-type", Some("application/json")),
        ("accept", Some("application/json, text/event-stream")),
        ("mcp-protocol-version", Some(REVISION)),
    ];
    if let Some(method) = body["method"].as_str() {
        all.push(("mcp-method", Some(method)));
    }
    for (name, value) in headers {
        all.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        all.push((name, *value));
    }
    let mut builder = Request::builder().method(Method::POST).uri("/mcp");
    for (name, value) in all {
        if let Some(value) = value {
            builder = builder.header(name, value);
        }
    }
    let request = builder
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    once(addr, request).await
}

#[tokio::test]
async fn a_stateless_request_is_answered_on_its_post_with_no_session() {
    let (_server, addr) = serve(|l| l).await;
    let call = body(1, "tools/call", json!({"name": "t", "arguments": {"x": 1}}));
    let answer = post(addr, &[("mcp-name", Some(" t "))], &call).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["result"]["echo"], json!({"x": 1}));
    assert!(answer.headers.get("mcp-session-id").is_none());
    // Header names are case-insensitive; values are not.
    let list = body(2, "fail", json!({}));
    let answer = post(
        addr,
        &[("mcp-method", None), ("MCP-METHOD", Some("fail"))],
        &list,
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::BAD_REQUEST,
        "an error answer is 400"
    );
    assert_eq!(answer.error_code(), -32602);
    let unknown = body(3, "unknown/method", json!({}));
    let answer = post(addr, &[], &unknown).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(answer.error_code(), -32601);
    assert_eq!(answer.json()["id"], 3);
}

#[tokio::test]
async fn headers_that_disagree_with_the_body_are_refused_with_32020() {
    let (_server, addr) = serve(|l| l).await;
    let call = body(7, "tools/call", json!({"name": "t"}));
    let cases: [&[(&str, Option<&str>)]; 5] = [
        &[("mcp-method", None), ("mcp-name", Some("t"))],
        &[("mcp-method", Some("tools/list")), ("mcp-name", Some("t"))],
        &[("mcp-method", Some("TOOLS/CALL")), ("mcp-name", Some("t"))],
        &[],
        &[("mcp-name", Some("other"))],
    ];
    for headers in cases {
        let answer = post(addr, headers, &call).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{headers:?}");
        assert_eq!(answer.error_code(), -32020, "{headers:?}");
        assert_eq!(answer.json()["id"], 7, "the request's id is echoed");
    }
    // The version header against `_meta`'s, then the revision itself.
    let mismatched = body(8, "fail", json!({"_meta": meta("v999.0.0")}));
    let answer = post(addr, &[], &mismatched).await;
    assert_eq!(
        (answer.status, answer.error_code()),
        (StatusCode::BAD_REQUEST, -32020)
    );
    let future = body(9, "fail", json!({"_meta": meta("v999.0.0")}));
    let answer = post(addr, &[("mcp-protocol-version", Some("v999.0.0"))], &future).await;
    assert_eq!(
        (answer.status, answer.error_code()),
        (StatusCode::BAD_REQUEST, -32022)
    );
    let data = &answer.json()["error"]["data"];
    assert_eq!(
        *data,
        json!({"supported": [REVISION], "requested": "v999.0.0"})
    );
}

#[tokio::test]
async fn progress_asked_for_makes_the_answer_a_stream() {
    let (_server, addr) = serve(|l| l).await;
    let mut params = json!({"_meta": meta(REVISION)});
    params["_meta"]["progressToken"] = json!("p");
    let answer = post(addr, &[], &body(4, "steps", params)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.headers["content-type"], "text/event-stream");
    let text = std::str::from_utf8(&answer.body).unwrap();
    let messages: Vec<Value> = text
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    assert_eq!(messages.len(), 3, "{text}");
    assert_eq!(messages[0]["params"]["progress"], 1);
    assert_eq!(messages[1]["params"]["progress"], 2);
    assert_eq!(messages[2]["result"]["done"], true);
}

#[tokio::test]
async fn session_revisions_keep_the_session_path_and_stateless_serving_can_be_off() {
    let (_server, addr) = serve(|l| l).await;
    let call = body(5, "tools/call", json!({"name": "t"}));
    for version in ["2025-11-25", "2025-03-26"] {
        let answer = post(addr, &[("mcp-protocol-version", Some(version))], &call).await;
        assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{version}");
        let text = String::from_utf8_lossy(&answer.body);
        assert!(text.contains("Mcp-Session-Id"), "{version}: {text}");
    }
    let (_off, addr) = serve(|l| l.stateless_versions(Vec::<String>::new())).await;
    let answer = post(addr, &[("mcp-name", Some("t"))], &call).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8_lossy(&answer.body).contains("Mcp-Session-Id"));
}
