//! Who is calling: the client's address, the handshake's or `POST`'s path
//! and headers, state attached by `Config::on_connect`, refusals answered
//! with their HTTP status, and client request headers, over TCP, WebSocket
//! and HTTP against real sockets.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::connection::Refusal;
use jsonrpc_runtime::http::{HeaderName, HeaderValue};
use jsonrpc_runtime::policy::{Decision, Gate, GateInput};
use jsonrpc_runtime::server::{HttpListener, Listener};
use jsonrpc_runtime::transport::{
    kind, Connector, HttpConnector, HttpFailure, TcpAcceptor, TcpConnector, WebSocketAcceptor,
    WebSocketConnector,
};
use jsonrpc_runtime::{
    connection::ConnectionInfo, CallError, CloseReason, Config, Context, ErrorObject, Peer, Router,
    Transport,
};
use serde_json::{json, Value};
use tests::ANSWER_TIMEOUT;

#[derive(Clone, Debug, PartialEq)]
struct User(String);

/// Accepts `Bearer alice` and `Bearer root`, attaching the user; refuses
/// anything else with 401 and a `WWW-Authenticate` header.
fn authenticate(info: &mut ConnectionInfo) -> Result<(), Refusal> {
    match info.bearer_token() {
        Some(name @ ("alice" | "root")) => {
            let user = User(name.to_owned());
            info.insert(user);
            Ok(())
        }
        _ => Err(Refusal::unauthorized("a valid bearer token is required")
            .header("www-authenticate", "Bearer realm=\"test\"")),
    }
}

/// `whoami`: the attached user, the address's IP, the path and the
/// `x-tenant` header; `admin/reset`: only root gets through (a gate).
fn router() -> Router {
    Router::new()
        .request("whoami", |(): (), cx: Context| async move {
            let info = cx.connection();
            Ok::<_, ErrorObject>(json!({
                "user": info.get::<User>().map(|u| u.0.clone()),
                "loopback": info.addr().map(|a| a.to_string().starts_with("127.0.0.1:")),
                "path": info.path(),
                "tenant": info.header("x-tenant"),
            }))
        })
        .request("admin/reset", |(): (), _: Context| async move {
            Ok::<_, ErrorObject>("reset")
        })
}

/// Lets `admin/*` through only for root.
struct AdminOnly;

impl Gate for AdminOnly {
    fn check(&self, input: GateInput<'_>) -> Decision {
        let root = input.connection.get::<User>() == Some(&User("root".into()));
        if input.method.starts_with("admin/") && !root {
            Decision::Reject(ErrorObject::new(-32050, "admins only"))
        } else {
            Decision::Allow
        }
    }
}

fn with_credentials<K: kind::Web>(connector: Connector<K>, token: &str) -> Connector<K> {
    connector.bearer(token).header(
        HeaderName::from_static("x-tenant"),
        HeaderValue::from_static("blue"),
    )
}

async fn whoami(peer: &Peer) -> Result<Value, CallError> {
    tokio::time::timeout(ANSWER_TIMEOUT, peer.call("whoami", ()))
        .await
        .expect("answered in time")
}

#[tokio::test]
async fn tcp_connections_report_their_address_and_carry_hook_state() {
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor)
        .on_connect(move |info| {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            if n == 1 {
                return Err(Refusal::forbidden("the second connection is refused"));
            }
            info.insert(User(format!("client-{n}")));
            Ok(())
        })
        .spawn(router());

    let first = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    assert_eq!(
        first.connection().addr().map(ToString::to_string),
        Some(addr.to_string()),
        "a TCP client's peer knows the server's address"
    );
    let answer = whoami(&first).await.unwrap();
    assert_eq!(answer["user"], "client-0");
    assert_eq!(answer["loopback"], true);
    assert_eq!(answer["path"], Value::Null, "raw TCP has no request path");

    // Refused: the server closes the connection without reading from it.
    let second = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    let reason = tokio::time::timeout(ANSWER_TIMEOUT, second.closed())
        .await
        .expect("a refused connection is closed");
    assert!(
        matches!(reason, CloseReason::RemoteClosed),
        "closed by the server: {reason:?}"
    );

    // Other connections are still served.
    let third = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    assert_eq!(whoami(&third).await.unwrap()["user"], "client-2");
    assert_eq!(whoami(&first).await.unwrap()["user"], "client-0");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn websocket_handshakes_are_vetted_and_their_headers_reach_handlers() {
    let config = Config::default().gate(|| AdminOnly);
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.unwrap();
    let url = format!("ws://{}/rpc/v2?x=1", acceptor.local_addr().unwrap());
    let server = Listener::new(acceptor)
        .config(config)
        .on_connect(authenticate)
        .spawn(router());

    let alice = Peer::spawn(
        with_credentials(WebSocketConnector::new(&url), "alice")
            .connect()
            .await
            .unwrap(),
    );
    let answer = whoami(&alice).await.unwrap();
    assert_eq!(
        answer,
        json!({"user": "alice", "loopback": true, "path": "/rpc/v2", "tenant": "blue"})
    );
    let refused = alice.call::<String>("admin/reset", ()).await.unwrap_err();
    assert_eq!(refused.as_rpc().map(|e| e.code), Some((-32050).into()));

    let root = Peer::spawn(
        with_credentials(WebSocketConnector::new(&url), "root")
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(
        root.call::<String>("admin/reset", ()).await.unwrap(),
        "reset"
    );

    // A bad token is refused in the handshake with the refusal's status.
    let error = with_credentials(WebSocketConnector::new(&url), "mallory")
        .connect()
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("401"),
        "the refusal's status reaches the client: {error}"
    );
    let error = WebSocketConnector::new(&url).connect().await.unwrap_err();
    assert!(error.to_string().contains("401"), "{error}");

    // The connections let in are unaffected.
    assert_eq!(whoami(&alice).await.unwrap()["user"], "alice");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn http_posts_are_vetted_one_by_one_and_refusals_are_http_statuses() {
    let config = Config::default().gate(|| AdminOnly);
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", acceptor.local_addr().unwrap());
    let server = HttpListener::new(acceptor)
        .config(config)
        .on_connect(authenticate)
        .spawn(router());

    let alice = Peer::spawn(
        with_credentials(HttpConnector::new(&url), "alice")
            .connect()
            .await
            .unwrap(),
    );
    let answer = whoami(&alice).await.unwrap();
    assert_eq!(
        answer,
        json!({"user": "alice", "loopback": true, "path": "/", "tenant": "blue"})
    );

    let mallory = Peer::spawn(
        with_credentials(HttpConnector::new(&url), "mallory")
            .connect()
            .await
            .unwrap(),
    );
    let error = whoami(&mallory).await.unwrap_err();
    let failure = error
        .as_rpc()
        .and_then(HttpFailure::from_error)
        .expect("an HTTP failure");
    assert_eq!(failure.status, Some(401));
    assert!(
        failure.body.contains("a valid bearer token is required"),
        "{failure:?}"
    );

    // The raw answer carries the refusal's header.
    let response = raw_post(&url, None).await;
    assert!(response.starts_with("HTTP/1.1 401"), "{response}");
    assert!(
        response
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer realm=\"test\""),
        "{response}"
    );
    let response = raw_post(&url, Some("root")).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(r#""result":"reset""#), "{response}");

    // The gate checks each POST's messages against that POST's caller.
    let response = raw_post(&url, Some("alice")).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(r#""code":-32050"#), "{response}");
    assert_eq!(whoami(&alice).await.unwrap()["user"], "alice");
    server.shutdown(Duration::from_secs(5)).await;
}

/// One `admin/reset` POST over a fresh connection; the whole answer as text.
async fn raw_post(url: &str, token: Option<&str>) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"admin/reset"}"#;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n{auth}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(ANSWER_TIMEOUT, stream.read_to_string(&mut response))
        .await
        .expect("answered in time")
        .unwrap();
    response
}

#[tokio::test]
async fn a_transport_given_connection_info_hands_it_to_the_peer() {
    let (client, server) = Transport::pair(8);
    let mut info = ConnectionInfo::new();
    info.insert(User("in-process".into()));
    let server = Peer::builder()
        .router(router())
        .config(Config::default().gate(|| AdminOnly))
        .spawn(server.with_connection(info));
    assert_eq!(
        server.connection().get::<User>(),
        Some(&User("in-process".into()))
    );
    let client = Peer::spawn(client);
    assert_eq!(whoami(&client).await.unwrap()["user"], "in-process");
    let refused = client.call::<String>("admin/reset", ()).await.unwrap_err();
    assert_eq!(refused.as_rpc().map(|e| e.code), Some((-32050).into()));
}
