//! The MCP HTTP client's order at the start of a session: once
//! `notifications/initialized` is taken, the session's `GET` stream is
//! opened before any later `POST` goes, so what the server sends outside
//! its answers has a stream to go on; a server that offers no stream
//! (`405`) holds nothing up.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response, StatusCode};
use jsonrpc_runtime::transport::McpHttpConnector;
use jsonrpc_runtime::{Config, Peer};
use serde_json::{json, Value};
use tests::http::serve_fn;

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

/// What the server saw, in order: `GET`, or the method of each `POST`.
type Seen = Arc<Mutex<Vec<String>>>;

/// A session server that records requests: `initialize` gets a session id,
/// notifications `202`, `GET` a stream held open (or `405` when `offers`
/// is false), any other request an empty result.
async fn recording(offers: bool) -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let addr = serve_fn(move |request| {
        let log = log.clone();
        async move { answer(request, &log, offers).await }
    })
    .await;
    (addr, seen)
}

async fn answer(request: Request<Incoming>, log: &Seen, offers: bool) -> Response<Body> {
    if request.method() == hyper::Method::GET {
        log.lock().unwrap().push("GET".into());
        if !offers {
            return status(StatusCode::METHOD_NOT_ALLOWED);
        }
        // A stream that stays open, with nothing on it.
        let (_keep, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, Infallible>>(1);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(_keep);
        });
        let body = StreamBody::new(tokio_stream_of(rx));
        let mut response = Response::new(body.boxed());
        response
            .headers_mut()
            .insert("content-type", "text/event-stream".parse().unwrap());
        return response;
    }
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let message: Value = serde_json::from_slice(&body).unwrap();
    let method = message["method"].as_str().unwrap_or_default().to_owned();
    log.lock().unwrap().push(method.clone());
    if message.get("id").is_none() {
        return status(StatusCode::ACCEPTED);
    }
    let result = match method.as_str() {
        "initialize" => {
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "r", "version": "0"}})
        }
        _ => json!({}),
    };
    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())).boxed());
    let headers = response.headers_mut();
    headers.insert("content-type", "application/json".parse().unwrap());
    headers.insert("mcp-session-id", "s-1".parse().unwrap());
    response
}

fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::new()).boxed());
    *response.status_mut() = code;
    response
}

/// The receiver as a stream of frames.
fn tokio_stream_of(
    mut rx: tokio::sync::mpsc::Receiver<Result<Frame<Bytes>, Infallible>>,
) -> impl futures_util::Stream<Item = Result<Frame<Bytes>, Infallible>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

async fn start_session(addr: SocketAddr) -> Peer {
    let transport = McpHttpConnector::new(format!("http://{addr}/mcp"))
        .connect()
        .await
        .unwrap();
    let client = Peer::builder()
        .config(Config::mcp_client())
        .spawn(transport);
    let _: Value = client
        .call("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}))
        .await
        .unwrap();
    client
        .notify("notifications/initialized", json!({}))
        .await
        .unwrap();
    // Sent at once, with nothing in between: each is a `POST` of its own.
    let (a, b) = tokio::join!(
        client.call::<Value>("tools/list", json!({})),
        client.call::<Value>("prompts/list", json!({})),
    );
    a.unwrap();
    b.unwrap();
    client
}

/// A session started against a recording server: what it saw, after
/// checking its start (`initialize`, the notification, then the `GET`).
async fn started(offers: bool) -> Vec<String> {
    let (addr, seen) = recording(offers).await;
    let _client = tokio::time::timeout(Duration::from_secs(30), start_session(addr))
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        &seen[..3],
        ["initialize", "notifications/initialized", "GET"],
        "{seen:?}"
    );
    seen
}

#[tokio::test]
async fn the_get_stream_opens_before_any_post_after_initialized() {
    for _ in 0..20 {
        let seen = started(true).await;
        let mut later = seen[3..].to_vec();
        later.sort();
        assert_eq!(later, ["prompts/list", "tools/list"], "{seen:?}");
    }
}

#[tokio::test]
async fn a_server_without_a_get_stream_holds_nothing_up() {
    let seen = started(false).await;
    assert_eq!(seen.len(), 5, "{seen:?}");
}
