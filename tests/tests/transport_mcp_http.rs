//! MCP over Streamable HTTP: the runtime's client against its server
//! (sessions, calls, progress on SSE, a server-to-client call answered by
//! POST, cancellation, DELETE, a broken stream resumed by the client), raw
//! HTTP for every status code the endpoint answers, resumption with
//! `Last-Event-ID`, JSON answers, parked messages, the session cap, idle
//! expiry and the drain.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::join_all;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use jsonrpc_runtime::server::{McpHttpListener, SessionClose};
use jsonrpc_runtime::transport::{HttpFailure, McpHttpConnector, TcpAcceptor, TransportError};
use jsonrpc_runtime::{
    peer::CallOptions, server::Server, CallError, CloseReason, Config, Context, ErrorCode,
    ErrorObject, Peer, Router,
};
use serde_json::{json, Value};
use tests::http::{once, send_once, HttpAnswer};
use tests::ANSWER_TIMEOUT;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};

/// The body cap of the servers under test.
const MAX_BODY: usize = 4096;

const VERSION: &str = "2025-06-18";

/// What the test routes let a test observe and steer.
struct Probe {
    /// A `hold` handler started.
    started: mpsc::UnboundedReceiver<()>,
    /// A `hold` handler was stopped (dropped before it finished).
    stopped: mpsc::UnboundedReceiver<()>,
    /// Lets a waiting `steps` go on.
    release: Arc<Semaphore>,
}

/// `initialize`, `echo`, `steps {n, wait}` (reports progress 1..=n,
/// waiting for a release after the first when asked), `hold` (runs until
/// stopped), `ask` (calls `roots/list` on the client), `notify` (sends
/// the client a notification, then answers).
fn routes() -> (Router, Probe) {
    let (started_tx, started) = mpsc::unbounded_channel();
    let (stopped_tx, stopped) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let gate = release.clone();
    let router = Router::new()
        .request("initialize", |params: Value, _: Context| async move {
            let version = params["protocolVersion"]
                .as_str()
                .unwrap_or(VERSION)
                .to_owned();
            Ok::<_, ErrorObject>(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "tests", "version": "0"},
            }))
        })
        .request("echo", |params: Value, _: Context| async move {
            Ok::<_, ErrorObject>(params)
        })
        .request("steps", move |params: Value, ctx: Context| {
            let gate = gate.clone();
            async move {
                let n = params["n"].as_u64().unwrap_or(3);
                for i in 1..=n {
                    ctx.progress(json!({"progress": i, "total": n}))
                        .map_err(ErrorObject::internal_error)?;
                    if i == 1 && params["wait"] == true {
                        gate.acquire().await.expect("open").forget();
                    }
                }
                Ok::<_, ErrorObject>("done")
            }
        })
        .request("hold", move |_: Value, _: Context| {
            let (started, stopped) = (started_tx.clone(), stopped_tx.clone());
            async move {
                let _guard = OnDrop(Some(move || {
                    let _ = stopped.send(());
                }));
                let _ = started.send(());
                std::future::pending::<()>().await;
                Ok::<_, ErrorObject>("never")
            }
        })
        .request("ask", |_: Value, ctx: Context| async move {
            let roots: Value = ctx
                .peer()
                .call("roots/list", json!({}))
                .await
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            Ok::<_, ErrorObject>(roots)
        })
        .request("notify", |params: Value, ctx: Context| async move {
            ctx.peer()
                .notify("notifications/message", params)
                .await
                .map_err(ErrorObject::internal_error)?;
            Ok::<_, ErrorObject>("sent")
        });
    let probe = Probe {
        started,
        stopped,
        release,
    };
    (router, probe)
}

/// Runs `f` when dropped.
struct OnDrop<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for OnDrop<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

/// Why each session ended, as the server's hook tells it.
type Closed = mpsc::UnboundedReceiver<(String, SessionClose)>;

async fn serve_with(
    router: Router,
    build: impl FnOnce(McpHttpListener<TcpAcceptor>) -> McpHttpListener<TcpAcceptor>,
) -> (Server, SocketAddr, Closed) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let (closed_tx, closed) = mpsc::unbounded_channel();
    let listener = McpHttpListener::new(acceptor)
        .config(Config::mcp().max_frame_len(MAX_BODY))
        .on_session_close(move |id, why| {
            let _ = closed_tx.send((id.to_owned(), why.clone()));
        });
    let server = build(listener).spawn(router);
    (server, addr, closed)
}

async fn serve() -> (Server, SocketAddr, Closed, Probe) {
    let (router, probe) = routes();
    let (server, addr, closed) = serve_with(router, |l| l).await;
    (server, addr, closed, probe)
}

fn url(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

/// A client peer over MCP HTTP serving `roots/list`.
async fn client(url: &str) -> Peer {
    let config = Config::mcp_client();
    let router = Router::new().request("roots/list", |_: Value, _: Context| async move {
        Ok::<_, ErrorObject>(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
    });
    Peer::builder()
        .config(config.clone())
        .router(router)
        .spawn(McpHttpConnector::new(url).connect().await.unwrap())
}

async fn within<T>(future: impl std::future::IntoFuture<Output = T>) -> T {
    tokio::time::timeout(ANSWER_TIMEOUT, future.into_future())
        .await
        .expect("in time")
}

/// `initialize`, and `notifications/initialized` when `ready` (which
/// opens the client's stream of the server's own messages).
async fn initialize(peer: &Peer, ready: bool) -> Value {
    let params = json!({
        "protocolVersion": VERSION,
        "capabilities": {"roots": {}},
        "clientInfo": {"name": "tests", "version": "0"},
    });
    let result: Value = within(peer.call("initialize", params)).await.unwrap();
    if ready {
        within(peer.notify("notifications/initialized", json!({})))
            .await
            .unwrap();
    }
    result
}

async fn next_close(closed: &mut Closed) -> (String, SessionClose) {
    within(closed.recv()).await.expect("a session closed")
}

// ---------------------------------------------------------------------------
// Raw HTTP.

const BOTH: &str = "application/json, text/event-stream";

/// A request to the endpoint with `headers`.
fn request(method: Method, headers: &[(&str, &str)], body: &str) -> Request<Full<Bytes>> {
    let mut builder = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "localhost");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

fn post(headers: &[(&str, &str)], body: Value) -> Request<Full<Bytes>> {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    request(Method::POST, &all, &body.to_string())
}

/// Sends `request` on a connection of its own; the response's body is
/// left to read (an SSE stream may not end).
async fn send(addr: SocketAddr, request: Request<Full<Bytes>>) -> Response<Incoming> {
    send_once(addr, request).await
}

async fn full(addr: SocketAddr, request: Request<Full<Bytes>>) -> HttpAnswer {
    once(addr, request).await
}

/// An SSE body, event by event.
struct Events {
    body: Incoming,
    buffer: String,
}

impl Events {
    fn new(response: Response<Incoming>) -> Self {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()["content-type"],
            "text/event-stream",
            "{response:?}"
        );
        Events {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next event's id and message; `None` once the stream ends.
    async fn next(&mut self) -> Option<(String, Value)> {
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("id: ") {
                        id = value.to_owned();
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push_str(value);
                    }
                }
                if !data.is_empty() {
                    let message = serde_json::from_str(&data).expect("JSON data");
                    return Some((id, message));
                }
            }
            match within(self.body.frame()).await {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        self.buffer.push_str(std::str::from_utf8(data).unwrap());
                    }
                }
                Some(Err(e)) => panic!("the stream broke: {e}"),
                None => return None,
            }
        }
    }

    async fn end(&mut self) {
        assert!(self.next().await.is_none(), "the stream goes on");
    }
}

fn initialize_body(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

/// Starts a session by hand; returns its id.
async fn raw_session(addr: SocketAddr) -> String {
    let response = send(addr, post(&[("accept", BOTH)], initialize_body(0))).await;
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let mut events = Events::new(response);
    let (_, answer) = events.next().await.expect("the answer");
    assert_eq!(answer["result"]["protocolVersion"], VERSION);
    events.end().await;
    id
}

fn call(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// ---------------------------------------------------------------------------
// The runtime's client against its server.

#[tokio::test]
async fn a_client_starts_a_session_calls_and_deletes_it_on_close() {
    let (server, addr, mut closed, _probe) = serve().await;
    let peer = client(&url(addr)).await;
    let init = initialize(&peer, true).await;
    assert_eq!(init["protocolVersion"], VERSION);
    let calls = (0..20).map(|i| {
        let peer = peer.clone();
        async move {
            let echo: Value = within(peer.call("echo", json!({"i": i}))).await.unwrap();
            assert_eq!(echo, json!({"i": i}));
        }
    });
    join_all(calls).await;
    within(peer.close(Duration::from_secs(5))).await;
    let (id, why) = next_close(&mut closed).await;
    assert!(matches!(why, SessionClose::Deleted), "{why:?}");
    assert_eq!(id.len(), 32, "{id}");
    // The session is gone for good.
    let gone = full(
        addr,
        post(
            &[("accept", BOTH), ("mcp-session-id", &id)],
            call(1, "echo", json!({})),
        ),
    )
    .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn progress_travels_on_the_requests_stream_before_its_answer() {
    let (server, addr, _closed, _probe) = serve().await;
    let peer = client(&url(addr)).await;
    initialize(&peer, true).await;
    let mut call = peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "steps",
            json!({"n": 5}),
            CallOptions::default(),
        )
        .unwrap();
    let mut reports = Vec::new();
    while let Some(report) = within(call.next_progress()).await {
        reports.push(report.unwrap()["progress"].as_u64().unwrap());
    }
    assert_eq!(reports, [1, 2, 3, 4, 5]);
    assert_eq!(within(call.result()).await.unwrap(), "done");
    peer.close(Duration::from_secs(5)).await;
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_handler_calls_the_client_back_and_the_posted_answer_completes_it() {
    let (server, addr, _closed, _probe) = serve().await;
    // With the server's stream open (after `initialized`), and without it
    // (the call then rides the stream of the request that made it).
    for ready in [true, false] {
        let peer = client(&url(addr)).await;
        initialize(&peer, ready).await;
        let roots: Value = within(peer.call("ask", json!({}))).await.unwrap();
        assert_eq!(roots["roots"][0]["name"], "work", "ready: {ready}");
        peer.close(Duration::from_secs(5)).await;
    }
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_cancelled_call_stops_its_handler_and_the_session_goes_on() {
    let (server, addr, _closed, mut probe) = serve().await;
    let peer = client(&url(addr)).await;
    initialize(&peer, true).await;
    let call = peer.call::<Value>("hold", json!({})).start();
    within(probe.started.recv()).await.unwrap();
    call.cancel_because("enough").unwrap();
    within(probe.stopped.recv()).await.unwrap();
    assert!(matches!(within(call).await, Err(CallError::Cancelled)));
    let echo: Value = within(peer.call("echo", json!({"after": true})))
        .await
        .unwrap();
    assert_eq!(echo, json!({"after": true}));
    peer.close(Duration::from_secs(5)).await;
    server.shutdown(Duration::from_secs(5)).await;
}

/// A TCP proxy whose connections can all be cut at once.
struct Proxy {
    addr: SocketAddr,
    cut: watch::Sender<u64>,
}

impl Proxy {
    async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (cut, _) = watch::channel(0);
        let cuts = cut.clone();
        tokio::spawn(async move {
            while let Ok((mut downstream, _)) = listener.accept().await {
                let mut cut = cuts.subscribe();
                tokio::spawn(async move {
                    let mut upstream = TcpStream::connect(upstream).await.unwrap();
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut downstream, &mut upstream) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Proxy { addr, cut }
    }

    fn cut(&self) {
        self.cut.send_modify(|n| *n += 1);
    }
}

#[tokio::test]
async fn a_broken_answer_stream_is_resumed_by_the_client_and_nothing_is_lost() {
    let (server, addr, _closed, probe) = serve().await;
    let proxy = Proxy::start(addr).await;
    let peer = client(&url(proxy.addr)).await;
    initialize(&peer, false).await;
    let mut call = peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "steps",
            json!({"n": 4, "wait": true}),
            CallOptions::default(),
        )
        .unwrap();
    let first = within(call.next_progress()).await.unwrap().unwrap();
    assert_eq!(first["progress"], 1);
    proxy.cut();
    probe.release.add_permits(1);
    let mut reports = vec![1];
    while let Some(report) = within(call.next_progress()).await {
        reports.push(report.unwrap()["progress"].as_u64().unwrap());
    }
    assert_eq!(reports, [1, 2, 3, 4]);
    assert_eq!(within(call.result()).await.unwrap(), "done");
    peer.close(Duration::from_secs(5)).await;
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn an_expired_session_ends_the_client_with_session_ended() {
    let (router, _probe) = routes();
    let (server, addr, mut closed) =
        serve_with(router, |l| l.idle_timeout(Duration::from_millis(200))).await;
    let peer = client(&url(addr)).await;
    // No `initialized`: no stream stays open, so the session turns idle.
    initialize(&peer, false).await;
    let (_, why) = next_close(&mut closed).await;
    assert!(matches!(why, SessionClose::Idle), "{why:?}");
    let failed = within(peer.call::<Value>("echo", json!({})))
        .await
        .unwrap_err();
    match failed {
        CallError::Closed(CloseReason::Transport(e)) => {
            assert!(matches!(&*e, TransportError::SessionEnded { .. }), "{e}");
        }
        other => panic!("expected the session's end, got {other:?}"),
    }
    assert!(peer.is_closed());
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_failed_post_fails_its_call_with_an_http_failure() {
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l.max_sessions(1)).await;
    let first = client(&url(addr)).await;
    initialize(&first, false).await;
    let second = client(&url(addr)).await;
    let refused = within(second.call::<Value>("initialize", json!({})))
        .await
        .unwrap_err();
    let error = refused.as_rpc().expect("an error answer");
    assert_eq!(error.code, ErrorCode::TRANSPORT_FAILED);
    let failure = HttpFailure::from_error(error).expect("an HTTP failure");
    assert_eq!(failure.status, Some(503));
    first.close(Duration::from_secs(5)).await;
    server.shutdown(Duration::from_secs(5)).await;
}

// ---------------------------------------------------------------------------
// The endpoint, by hand.

#[tokio::test]
async fn initialize_makes_a_session_whose_id_later_requests_must_carry() {
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l.instance_tag("a1")).await;
    let id = raw_session(addr).await;
    let (tag, random) = id.split_once('.').expect("a tagged id");
    assert_eq!(tag, "a1");
    assert_eq!(random.len(), 32);
    assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_ne!(raw_session(addr).await, id, "ids are not reused");

    // Without the header: 400, unless it is `initialize`.
    let missing = full(addr, post(&[("accept", BOTH)], call(1, "echo", json!({})))).await;
    assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    assert_eq!(missing.json()["error"]["code"], -32000);
    for (method, accept) in [(Method::GET, "text/event-stream"), (Method::DELETE, BOTH)] {
        let missing = full(addr, request(method, &[("accept", accept)], "")).await;
        assert_eq!(missing.status, StatusCode::BAD_REQUEST);
    }
    // An id no session has: 404, for every method.
    let unknown = [("accept", BOTH), ("mcp-session-id", "a1.0000")];
    let answer = full(addr, post(&unknown, call(1, "echo", json!({})))).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let answer = full(addr, request(Method::GET, &unknown, "")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    let answer = full(addr, request(Method::DELETE, &unknown, "")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);

    // With it: answered on an SSE stream.
    let headers = [("accept", BOTH), ("mcp-session-id", id.as_str())];
    let mut events =
        Events::new(send(addr, post(&headers, call(1, "echo", json!({"x": 1})))).await);
    let (event_id, answer) = events.next().await.unwrap();
    assert_eq!(answer["result"], json!({"x": 1}));
    assert!(event_id.contains('-'), "{event_id}");
    events.end().await;

    // `initialize` in a batch does not start a session.
    let batch = post(&[("accept", BOTH)], json!([initialize_body(1)]));
    assert_eq!(full(addr, batch).await.status, StatusCode::BAD_REQUEST);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn notifications_and_responses_are_accepted_with_202() {
    let (server, addr, _closed, _probe) = serve().await;
    let id = raw_session(addr).await;
    let headers = [("accept", BOTH), ("mcp-session-id", id.as_str())];
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let answer = full(addr, post(&headers, notification)).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);
    assert!(answer.body.is_empty());
    // A response to nothing this side asked: taken all the same.
    let response = json!({"jsonrpc": "2.0", "id": 99, "result": {}});
    assert_eq!(
        full(addr, post(&headers, response)).await.status,
        StatusCode::ACCEPTED
    );
    // Not JSON: 400 with a parse error.
    let garbage = request(
        Method::POST,
        &[
            ("accept", BOTH),
            ("mcp-session-id", &id),
            ("content-type", "application/json"),
        ],
        "{oops",
    );
    let answer = full(addr, garbage).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["error"]["code"], -32700);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn accept_content_type_size_method_path_and_origin_are_checked() {
    let (server, addr, _closed, _probe) = serve().await;
    let id = raw_session(addr).await;
    let session = ("mcp-session-id", id.as_str());
    let echo = || call(1, "echo", json!({}));

    for accept in ["application/json", "text/event-stream", "text/html"] {
        let answer = full(addr, post(&[("accept", accept), session], echo())).await;
        assert_eq!(answer.status, StatusCode::NOT_ACCEPTABLE, "{accept}");
    }
    let answer = full(addr, post(&[("accept", "*/*"), session], echo())).await;
    assert_eq!(answer.status, StatusCode::OK, "a wildcard accepts both");
    let answer = full(
        addr,
        request(Method::GET, &[("accept", "application/json"), session], ""),
    )
    .await;
    assert_eq!(answer.status, StatusCode::NOT_ACCEPTABLE);

    let text = request(
        Method::POST,
        &[("accept", BOTH), session, ("content-type", "text/plain")],
        &echo().to_string(),
    );
    assert_eq!(
        full(addr, text).await.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );

    let big =
        json!({"jsonrpc": "2.0", "id": 2, "method": "echo", "params": {"x": "y".repeat(MAX_BODY)}});
    assert_eq!(
        full(addr, post(&[("accept", BOTH), session], big))
            .await
            .status,
        StatusCode::PAYLOAD_TOO_LARGE
    );

    let put = full(addr, request(Method::PUT, &[session], "")).await;
    assert_eq!(put.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(put.header("allow"), Some("GET, POST, DELETE"));

    let mut elsewhere = post(&[("accept", BOTH), session], echo());
    *elsewhere.uri_mut() = "/other".parse().unwrap();
    assert_eq!(full(addr, elsewhere).await.status, StatusCode::NOT_FOUND);
    let mut health = request(Method::GET, &[], "");
    *health.uri_mut() = "/health".parse().unwrap();
    assert_eq!(full(addr, health).await.status, StatusCode::OK);

    for origin in [
        "https://evil.example",
        "http://localhost.evil.example",
        "null",
    ] {
        let answer = full(
            addr,
            post(&[("accept", BOTH), session, ("origin", origin)], echo()),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{origin}");
    }
    for origin in [
        "http://localhost:3000",
        "https://127.0.0.1",
        "http://[::1]:8080",
    ] {
        let answer = full(
            addr,
            post(&[("accept", BOTH), session, ("origin", origin)], echo()),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{origin}");
    }
    server.shutdown(Duration::from_secs(5)).await;

    let (router, _probe) = routes();
    let (server, addr, _closed) =
        serve_with(router, |l| l.allowed_origins(["https://app.example"])).await;
    let init = |origin| post(&[("accept", BOTH), ("origin", origin)], initialize_body(0));
    assert_eq!(
        full(addr, init("https://app.example")).await.status,
        StatusCode::OK
    );
    assert_eq!(
        full(addr, init("http://localhost")).await.status,
        StatusCode::FORBIDDEN
    );
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_body_over_the_cap_written_whole_gets_its_413_without_a_reset() {
    let (server, addr, _closed, _probe) = serve().await;
    let id = raw_session(addr).await;
    let headers = format!("Accept: {BOTH}\r\nMcp-Session-Id: {id}\r\n");
    tests::assert_413_without_reset(addr, "/mcp", &headers, MAX_BODY).await;
    // The session goes on.
    let answer = full(
        addr,
        post(
            &[("accept", BOTH), ("mcp-session-id", id.as_str())],
            call(2, "echo", json!({})),
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_session_answers_only_the_identity_that_initialised_it() {
    use jsonrpc_runtime::connection::Refusal;

    let router = Router::new()
        .request("initialize", |_: Value, _: Context| async move {
            Ok::<_, ErrorObject>(json!({
                "protocolVersion": VERSION,
                "capabilities": {},
                "serverInfo": {"name": "tests", "version": "0"},
            }))
        })
        .request("whoami", |_: Value, cx: Context| async move {
            Ok::<_, ErrorObject>(json!({
                "session": cx.connection().identity(),
                "request": cx.caller().identity(),
                "agent": cx.caller().header("user-agent"),
            }))
        });
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = McpHttpListener::new(acceptor)
        .on_connect(|info| {
            let user = match info.bearer_token() {
                Some("token-of-alice") => "alice",
                Some("token-of-bob") => "bob",
                _ => return Err(Refusal::unauthorized("a valid bearer token is required")),
            };
            info.set_identity(user);
            Ok(())
        })
        .json_responses(true)
        .spawn(router);

    let alice = ("authorization", "Bearer token-of-alice");
    let bob = ("authorization", "Bearer token-of-bob");
    let opened = full(addr, post(&[("accept", BOTH), alice], initialize_body(0))).await;
    assert_eq!(opened.status, StatusCode::OK);
    let id = opened
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let session = ("mcp-session-id", id.as_str());

    // Bob's token is valid, but the session is Alice's: as unknown to him
    // as a session that never was.
    let stolen = full(
        addr,
        post(
            &[("accept", BOTH), bob, session],
            call(1, "whoami", json!({})),
        ),
    )
    .await;
    assert_eq!(stolen.status, StatusCode::NOT_FOUND, "{:?}", stolen.body);
    let never = full(
        addr,
        post(
            &[("accept", BOTH), bob, ("mcp-session-id", "0123")],
            call(1, "whoami", json!({})),
        ),
    )
    .await;
    assert_eq!(never.status, StatusCode::NOT_FOUND);
    assert_eq!(stolen.body, never.body, "nothing tells the two apart");
    let stream = full(
        addr,
        request(
            Method::GET,
            &[("accept", "text/event-stream"), bob, session],
            "",
        ),
    )
    .await;
    assert_eq!(stream.status, StatusCode::NOT_FOUND);
    let delete = full(addr, request(Method::DELETE, &[bob, session], "")).await;
    assert_eq!(delete.status, StatusCode::NOT_FOUND);

    // Alice's requests are served, and the handler sees both the session's
    // caller and this request's.
    let mine = full(
        addr,
        post(
            &[
                ("accept", BOTH),
                alice,
                session,
                ("user-agent", "second-post"),
            ],
            call(2, "whoami", json!({})),
        ),
    )
    .await;
    assert_eq!(mine.status, StatusCode::OK, "{:?}", mine.body);
    assert_eq!(
        mine.json()["result"],
        json!({"session": "alice", "request": "alice", "agent": "second-post"})
    );
    let delete = full(addr, request(Method::DELETE, &[alice, session], "")).await;
    assert_eq!(delete.status, StatusCode::NO_CONTENT);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_protocol_version_header_must_be_known_or_negotiated() {
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l.protocol_versions(["2025-03-26"])).await;
    // The session negotiates 2025-06-18 (its `initialize` answers what
    // the client asked).
    let id = raw_session(addr).await;
    for (version, status) in [
        ("2025-06-18", StatusCode::OK),
        ("2025-03-26", StatusCode::OK),
        ("1999-01-01", StatusCode::BAD_REQUEST),
    ] {
        let headers = [
            ("accept", BOTH),
            ("mcp-session-id", id.as_str()),
            ("mcp-protocol-version", version),
        ];
        let answer = full(addr, post(&headers, call(1, "echo", json!({})))).await;
        assert_eq!(answer.status, status, "{version}");
    }
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn one_standalone_stream_per_session_carries_the_servers_messages() {
    let (server, addr, _closed, _probe) = serve().await;
    let id = raw_session(addr).await;
    let session = ("mcp-session-id", id.as_str());
    let get = || request(Method::GET, &[("accept", "text/event-stream"), session], "");
    let mut standalone = Events::new(send(addr, get()).await);
    assert_eq!(full(addr, get()).await.status, StatusCode::CONFLICT);

    // The server's own notification goes there, its answer on the POST.
    let posted = send(
        addr,
        post(
            &[("accept", BOTH), session],
            call(1, "notify", json!({"text": "hi"})),
        ),
    )
    .await;
    let mut answers = Events::new(posted);
    let (_, answer) = answers.next().await.unwrap();
    assert_eq!(answer["result"], "sent");
    answers.end().await;
    let (_, notification) = standalone.next().await.unwrap();
    assert_eq!(notification["method"], "notifications/message");
    assert_eq!(notification["params"]["text"], "hi");

    // Closed, it can be opened again.
    drop(standalone);
    let reopened = tokio::time::timeout(ANSWER_TIMEOUT, async {
        loop {
            let response = send(addr, get()).await;
            if response.status() == StatusCode::OK {
                return response;
            }
            assert_eq!(response.status(), StatusCode::CONFLICT);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the old stream lets go");
    drop(reopened);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_stream_resumed_with_last_event_id_replays_what_was_missed() {
    let (server, addr, _closed, probe) = serve().await;
    let id = raw_session(addr).await;
    let session = ("mcp-session-id", id.as_str());
    let steps = call(
        7,
        "steps",
        json!({"n": 3, "wait": true, "_meta": {"progressToken": "t"}}),
    );
    let mut first = Events::new(send(addr, post(&[("accept", BOTH), session], steps)).await);
    let (seen, report) = first.next().await.unwrap();
    assert_eq!(report["params"]["progress"], 1);
    assert_eq!(report["params"]["progressToken"], "t");
    // The connection breaks; the work goes on meanwhile.
    drop(first);
    probe.release.add_permits(1);

    let resume = || {
        request(
            Method::GET,
            &[
                ("accept", "text/event-stream"),
                session,
                ("last-event-id", &seen),
            ],
            "",
        )
    };
    let response = tokio::time::timeout(ANSWER_TIMEOUT, async {
        loop {
            let response = send(addr, resume()).await;
            if response.status() != StatusCode::CONFLICT {
                return response;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the broken connection lets go of the stream");
    let mut resumed = Events::new(response);
    let mut ids = vec![seen.clone()];
    let mut progress = Vec::new();
    let answer = loop {
        let (event_id, message) = resumed.next().await.expect("the rest of the stream");
        ids.push(event_id);
        if message["method"] == "notifications/progress" {
            progress.push(message["params"]["progress"].as_u64().unwrap());
        } else {
            break message;
        }
    };
    assert_eq!(progress, [2, 3]);
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"], "done");
    resumed.end().await;
    let stream = |id: &String| id.split_once('-').unwrap().0.to_owned();
    assert!(ids.iter().all(|i| stream(i) == stream(&seen)), "{ids:?}");
    // From its last event, the stream is over: nothing more to replay.
    let last = ids.last().unwrap().clone();
    let after_last = request(
        Method::GET,
        &[
            ("accept", "text/event-stream"),
            session,
            ("last-event-id", &last),
        ],
        "",
    );
    assert_eq!(full(addr, after_last).await.status, StatusCode::NO_CONTENT);
    let bogus = request(
        Method::GET,
        &[
            ("accept", "text/event-stream"),
            session,
            ("last-event-id", "999-1"),
        ],
        "",
    );
    assert_eq!(full(addr, bogus).await.status, StatusCode::BAD_REQUEST);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_batch_is_answered_on_one_stream_and_an_id_in_flight_is_refused() {
    let (server, addr, _closed, mut probe) = serve().await;
    let id = raw_session(addr).await;
    let session = ("mcp-session-id", id.as_str());
    let batch = json!([
        call(1, "echo", json!({"a": 1})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call(2, "echo", json!({"b": 2})),
        {"jsonrpc": "2.0", "id": 3},
    ]);
    let mut events = Events::new(send(addr, post(&[("accept", BOTH), session], batch)).await);
    let mut answers = Vec::new();
    while let Some((_, message)) = events.next().await {
        answers.push(message);
    }
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["result"], json!({"a": 1}));
    assert_eq!(answers[1]["result"], json!({"b": 2}));
    assert_eq!(answers[2]["error"]["code"], -32600);

    // While `hold` 5 runs, another request 5 is refused on its own stream.
    let _held = send(
        addr,
        post(&[("accept", BOTH), session], call(5, "hold", json!({}))),
    )
    .await;
    within(probe.started.recv()).await.unwrap();
    let mut again = Events::new(
        send(
            addr,
            post(&[("accept", BOTH), session], call(5, "echo", json!({}))),
        )
        .await,
    );
    let (_, refused) = again.next().await.unwrap();
    assert_eq!(refused["id"], 5);
    assert_eq!(refused["error"]["code"], -32600);
    again.end().await;
    server.shutdown(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn json_mode_answers_with_one_body_and_parks_the_servers_messages() {
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l.json_responses(true)).await;
    let init = full(addr, post(&[("accept", BOTH)], initialize_body(0))).await;
    assert_eq!(init.status, StatusCode::OK);
    assert_eq!(init.header("content-type"), Some("application/json"));
    assert_eq!(init.json()["result"]["protocolVersion"], VERSION);
    let id = init.header("mcp-session-id").unwrap().to_owned();
    let session = ("mcp-session-id", id.as_str());

    let batch = json!([
        call(1, "echo", json!({"v": 1})),
        call(2, "echo", json!({"v": 2}))
    ]);
    let answer = full(addr, post(&[("accept", BOTH), session], batch)).await;
    let mut answers = answer.json().as_array().unwrap().clone();
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"v": 1}}),
            json!({"jsonrpc": "2.0", "id": 2, "result": {"v": 2}}),
        ]
    );

    // No stream is open: the notification waits for one.
    let answer = full(
        addr,
        post(
            &[("accept", BOTH), session],
            call(3, "notify", json!({"n": 1})),
        ),
    )
    .await;
    assert_eq!(answer.json()["result"], "sent");
    let get = request(Method::GET, &[("accept", "text/event-stream"), session], "");
    let mut standalone = Events::new(send(addr, get).await);
    let (_, parked) = standalone.next().await.unwrap();
    assert_eq!(parked["method"], "notifications/message");
    assert_eq!(parked["params"], json!({"n": 1}));
    drop(standalone);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_server_request_with_no_stream_to_go_to_fails_once_too_many_wait() {
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l.json_responses(true)).await;
    let init = full(addr, post(&[("accept", BOTH)], initialize_body(0))).await;
    let id = init.header("mcp-session-id").unwrap().to_owned();
    let session = ("mcp-session-id", id.as_str());
    // Fill the waiting room with notifications, then ask the client.
    for i in 0..64 {
        let answer = full(
            addr,
            post(
                &[("accept", BOTH), session],
                call(10 + i, "notify", json!({"i": i})),
            ),
        )
        .await;
        assert_eq!(answer.json()["result"], "sent");
    }
    let answer = full(
        addr,
        post(&[("accept", BOTH), session], call(1, "ask", json!({}))),
    )
    .await;
    let error = &answer.json()["error"];
    assert_eq!(error["code"], -32603, "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("could not be delivered"),
        "{error}"
    );
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn delete_ends_the_session_and_stops_its_handlers() {
    let (server, addr, mut closed, mut probe) = serve().await;
    let id = raw_session(addr).await;
    let session = ("mcp-session-id", id.as_str());
    let mut held = Events::new(
        send(
            addr,
            post(&[("accept", BOTH), session], call(1, "hold", json!({}))),
        )
        .await,
    );
    within(probe.started.recv()).await.unwrap();
    let deleted = full(addr, request(Method::DELETE, &[session], "")).await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    within(probe.stopped.recv()).await.unwrap();
    let (closed_id, why) = next_close(&mut closed).await;
    assert_eq!(closed_id, id);
    assert!(matches!(why, SessionClose::Deleted), "{why:?}");
    // The held request's stream ends (with the closing peer's refusal).
    while held.next().await.is_some() {}
    let again = full(
        addr,
        post(&[("accept", BOTH), session], call(2, "echo", json!({}))),
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_FOUND);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_session_cap_refuses_initialize_with_503() {
    let (router, _probe) = routes();
    let (server, addr, mut closed) = serve_with(router, |l| l.max_sessions(2)).await;
    let first = raw_session(addr).await;
    raw_session(addr).await;
    let over = full(addr, post(&[("accept", BOTH)], initialize_body(0))).await;
    assert_eq!(over.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(over.header("mcp-session-id").is_none());
    full(
        addr,
        request(Method::DELETE, &[("mcp-session-id", &first)], ""),
    )
    .await;
    next_close(&mut closed).await;
    raw_session(addr).await;
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn idle_sessions_expire_but_an_open_stream_keeps_one_alive() {
    let (router, _probe) = routes();
    let (server, addr, mut closed) =
        serve_with(router, |l| l.idle_timeout(Duration::from_millis(400))).await;
    let kept = raw_session(addr).await;
    let get = request(
        Method::GET,
        &[("accept", "text/event-stream"), ("mcp-session-id", &kept)],
        "",
    );
    let standalone = send(addr, get).await;
    let idle = raw_session(addr).await;
    let (id, why) = next_close(&mut closed).await;
    assert_eq!(id, idle);
    assert!(matches!(why, SessionClose::Idle), "{why:?}");
    let gone = full(
        addr,
        post(
            &[("accept", BOTH), ("mcp-session-id", &idle)],
            call(1, "echo", json!({})),
        ),
    )
    .await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
    let alive = full(
        addr,
        post(
            &[("accept", BOTH), ("mcp-session-id", &kept)],
            call(1, "echo", json!({})),
        ),
    )
    .await;
    assert_eq!(alive.status, StatusCode::OK);
    // Once its stream closes, it goes too.
    drop(standalone);
    let (id, why) = next_close(&mut closed).await;
    assert_eq!(id, kept);
    assert!(matches!(why, SessionClose::Idle), "{why:?}");
    server.shutdown(Duration::from_secs(5)).await;
}

/// One HTTP/1.1 connection, kept open for later requests.
async fn keep_alive(addr: SocketAddr) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    send
}

async fn status_on(
    send: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> StatusCode {
    within(send.send_request(request))
        .await
        .expect("an answer")
        .status()
}

/// Waits until `addr` refuses new connections: the drain has begun.
async fn until_refused(addr: SocketAddr) {
    within(async {
        while TcpStream::connect(addr).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn the_drain_finishes_running_requests_then_closes_every_stream() {
    let (router, probe) = routes();
    let (server, addr, mut closed) = serve_with(router, |l| l.json_responses(true)).await;
    let init = full(addr, post(&[("accept", BOTH)], initialize_body(0))).await;
    let id = init.header("mcp-session-id").unwrap().to_owned();
    let session = ("mcp-session-id", id.as_str());
    let get = request(Method::GET, &[("accept", "text/event-stream"), session], "");
    let mut standalone = Events::new(send(addr, get).await);
    let (mut probe_health, mut probe_init) = (keep_alive(addr).await, keep_alive(addr).await);

    // A request in flight (its JSON answer comes once it is done); its
    // first report, on the standalone stream, says it runs.
    let steps = call(
        1,
        "steps",
        json!({"n": 2, "wait": true, "_meta": {"progressToken": 1}}),
    );
    let running = tokio::spawn(full(addr, post(&[("accept", BOTH), session], steps)));
    let (_, report) = standalone.next().await.unwrap();
    assert_eq!(report["params"]["progress"], 1);

    let drain = tokio::spawn(server.shutdown(Duration::from_secs(10)));
    until_refused(addr).await;
    let mut health = request(Method::GET, &[], "");
    *health.uri_mut() = "/health".parse().unwrap();
    assert_eq!(
        status_on(&mut probe_health, health).await,
        StatusCode::SERVICE_UNAVAILABLE
    );
    let refused = post(&[("accept", BOTH)], initialize_body(0));
    assert_eq!(
        status_on(&mut probe_init, refused).await,
        StatusCode::SERVICE_UNAVAILABLE
    );

    probe.release.add_permits(1);
    let answer = within(running).await.unwrap();
    assert_eq!(answer.json()["result"], "done");
    while standalone.next().await.is_some() {}
    let (_, why) = next_close(&mut closed).await;
    assert!(matches!(why, SessionClose::Shutdown), "{why:?}");
    within(drain).await.unwrap();
}

#[tokio::test]
async fn an_idle_stream_carries_keep_alive_comments() {
    let (router, _probe) = routes();
    let (server, addr, _closed) =
        serve_with(router, |l| l.keep_alive(Duration::from_millis(20))).await;
    let id = raw_session(addr).await;
    let get = request(
        Method::GET,
        &[("accept", "text/event-stream"), ("mcp-session-id", &id)],
        "",
    );
    let mut body = send(addr, get).await.into_body();
    let mut seen = String::new();
    while !seen.contains(": keep-alive\n\n") {
        let frame = within(body.frame())
            .await
            .expect("the stream goes on")
            .unwrap();
        seen.push_str(std::str::from_utf8(frame.data_ref().unwrap()).unwrap());
    }
    drop(body);
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_client_reads_json_answers_and_the_servers_calls_on_its_stream() {
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l.json_responses(true)).await;
    let peer = client(&url(addr)).await;
    initialize(&peer, true).await;
    // `roots/list` can only travel on the standalone stream here.
    let roots: Value = within(peer.call("ask", json!({}))).await.unwrap();
    assert_eq!(roots["roots"][0]["uri"], "file:///work");
    let done: Value = within(peer.call("steps", json!({"n": 3}))).await.unwrap();
    assert_eq!(done, "done");
    peer.close(Duration::from_secs(5)).await;
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn every_request_is_vetted_by_on_connect_and_the_session_keeps_its_callers_state() {
    use jsonrpc_runtime::connection::Refusal;
    use jsonrpc_runtime::http::{HeaderName, HeaderValue};

    #[derive(Clone)]
    struct User(String);

    let router = routes()
        .0
        .request("whoami", |_: Value, cx: Context| async move {
            let info = cx.connection();
            Ok::<_, ErrorObject>(json!({
                "user": info.get::<User>().map(|u| u.0.clone()),
                "agent": info.header("x-agent"),
                "path": info.path(),
            }))
        });
    let (server, addr, _closed) = serve_with(router, |listener| {
        listener.on_connect(|info| match info.bearer_token() {
            Some("alice") => {
                info.insert(User("alice".into()));
                Ok(())
            }
            _ => Err(Refusal::unauthorized("a bearer token is required")),
        })
    })
    .await;

    let transport = McpHttpConnector::new(url(addr))
        .bearer("alice")
        .header(
            HeaderName::from_static("x-agent"),
            HeaderValue::from_static("tests"),
        )
        .connect()
        .await
        .unwrap();
    let alice = Peer::builder()
        .config(Config::mcp_client())
        .spawn(transport);
    initialize(&alice, true).await;
    let me: Value = within(alice.call("whoami", json!({}))).await.unwrap();
    assert_eq!(
        me,
        json!({"user": "alice", "agent": "tests", "path": "/mcp"})
    );

    // Without the token: refused before any session is made.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}});
    let answer = full(addr, post(&[], init.clone())).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    let answer = full(addr, post(&[("authorization", "Bearer mallory")], init)).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    server.shutdown(Duration::from_secs(5)).await;
}

/// What one client saw while it posted `echo` to its session until the
/// session ended.
#[derive(Debug, Default)]
struct Posted {
    /// `200` streams that carried the request's answer.
    answered: usize,
    /// `200` streams that ended without it.
    unanswered: Vec<String>,
}

/// Posts `echo` requests to the session `id`, one at a time over a
/// kept-alive connection (opening another when the server closes one),
/// until the session or the server is gone. `running` gets one permit
/// after the first answer.
async fn post_until_gone(addr: SocketAddr, id: String, running: Arc<Semaphore>) -> Posted {
    let mut seen = Posted::default();
    let mut connection = None;
    for n in 1u64.. {
        if connection.is_none() {
            let Ok(stream) = TcpStream::connect(addr).await else {
                return seen;
            };
            let Ok((send, driver)) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
            else {
                continue;
            };
            tokio::spawn(driver);
            connection = Some(send);
        }
        let Some(send) = connection.as_mut() else {
            continue;
        };
        let echo = post(
            &[("accept", BOTH), ("mcp-session-id", &id)],
            call(n, "echo", json!({"n": n})),
        );
        let response = match within(send.send_request(echo)).await {
            Ok(response) => response,
            // The drain closed the connection before this request was
            // sent or read: no answer is owed.
            Err(_) => {
                connection = None;
                continue;
            }
        };
        match response.status() {
            StatusCode::OK => {}
            StatusCode::NOT_FOUND | StatusCode::SERVICE_UNAVAILABLE => return seen,
            other => panic!("unexpected status {other}"),
        }
        let mut events = Events::new(response);
        let mut answer = None;
        while let Some((_, message)) = events.next().await {
            if message["id"] == json!(n) {
                answer = Some(message);
            }
        }
        match answer {
            Some(answer) => {
                if answer["result"] == json!({"n": n}) {
                    if seen.answered == 0 {
                        running.add_permits(1);
                    }
                } else {
                    let code = &answer["error"]["code"];
                    assert_eq!(code, &json!(ErrorCode::SERVER_CLOSING.0), "{answer}");
                }
                seen.answered += 1;
            }
            None => seen.unanswered.push(format!("{id} request {n}")),
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_posted_as_the_drain_ends_its_session_is_answered_on_its_stream() {
    const SESSIONS: usize = 48;
    let (router, _probe) = routes();
    let (server, addr, _closed) = serve_with(router, |l| l).await;
    let ids = join_all((0..SESSIONS).map(|_| raw_session(addr))).await;
    let running = Arc::new(Semaphore::new(0));
    let clients: Vec<_> = ids
        .into_iter()
        .map(|id| tokio::spawn(post_until_gone(addr, id, running.clone())))
        .collect();
    // Every client has had an answer: each keeps a request in flight.
    within(running.acquire_many(SESSIONS as u32))
        .await
        .unwrap()
        .forget();
    within(server.shutdown(Duration::from_secs(5))).await;
    let mut unanswered = Vec::new();
    for client in clients {
        let seen = within(client).await.unwrap();
        assert!(seen.answered > 0);
        unanswered.extend(seen.unanswered);
    }
    assert!(
        unanswered.is_empty(),
        "{} streams ended without their request's answer: {unanswered:?}",
        unanswered.len()
    );
}
