//! JSON-RPC over HTTP: every status code the server answers, keep-alive and
//! h2c, the health endpoint through a graceful drain, the `Peer` client
//! over HTTP (calls, a concurrent burst, a notification, the typed error of
//! a failed `POST`), and `spec_server --http` end to end.

use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::join_all;
use http_body_util::Full;
use hyper::header;
use hyper::{Method, Request, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use jsonrpc_runtime::server::{shutdown_all, HttpListener, Listener};
use jsonrpc_runtime::transport::{HttpConnector, HttpFailure, TcpAcceptor, TcpConnector};
use jsonrpc_runtime::{
    server::Server, CallError, Config, Context, ErrorCode, ErrorObject, Peer, Router,
};
use serde_json::{json, Value};
use tests::http::HttpAnswer;
use tests::{example_path, ANSWER_TIMEOUT};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::process::Command;
use tokio::sync::{mpsc, Semaphore};

/// The body cap of the servers under test: small, so a test goes over it
/// without sending megabytes.
const MAX_BODY: usize = 4096;

/// `subtract`, `sum`, a notification `log`, `hold` (answers once the test
/// releases it, after saying it started), and `call_back` (tries to call
/// the client).
struct Routes {
    router: Router,
    started: mpsc::UnboundedReceiver<()>,
    release: Arc<Semaphore>,
}

fn routes() -> Routes {
    let (started_tx, started) = mpsc::unbounded_channel();
    let release = Arc::new(Semaphore::new(0));
    let held = release.clone();
    let router = Router::new()
        .request("subtract", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a - b)
        })
        .request("sum", |numbers: Vec<i64>, _: Context| async move {
            Ok::<_, ErrorObject>(numbers.iter().sum::<i64>())
        })
        .notification("log", |_: Value, _: Context| async {})
        .request("hold", move |(): (), _: Context| {
            let (started, held) = (started_tx.clone(), held.clone());
            async move {
                let _ = started.send(());
                held.acquire().await.expect("open").forget();
                Ok::<_, ErrorObject>("released")
            }
        })
        .request("call_back", |(): (), ctx: Context| async move {
            let answer: Result<Value, CallError> = ctx.peer().call("ask", ()).await;
            match answer {
                Err(CallError::Closed(_)) => Ok::<_, ErrorObject>("no way back"),
                other => Err(ErrorObject::internal_error(format!("{other:?}"))),
            }
        });
    Routes {
        router,
        started,
        release,
    }
}

async fn serve_routes(router: Router) -> (Server, SocketAddr) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = HttpListener::new(acceptor)
        .config(Config::default().max_frame_len(MAX_BODY))
        .spawn(router);
    (server, addr)
}

async fn serve() -> (Server, SocketAddr) {
    serve_routes(routes().router).await
}

/// One HTTP/1.1 connection, for requests one after another.
async fn http1(addr: SocketAddr) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    send
}

/// One HTTP/2 connection with prior knowledge (h2c).
async fn http2(addr: SocketAddr) -> hyper::client::conn::http2::SendRequest<Full<Bytes>> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (send, connection) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(connection);
    send
}

fn post(path: &str, content_type: &str, body: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, content_type)
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap()
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, "localhost")
        .body(Full::default())
        .unwrap()
}

async fn send1(
    send: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    request: Request<Full<Bytes>>,
) -> HttpAnswer {
    let response = tokio::time::timeout(ANSWER_TIMEOUT, send.send_request(request))
        .await
        .expect("an answer in time")
        .expect("an answer");
    HttpAnswer::read(response).await
}

/// One request on a connection of its own.
async fn once(addr: SocketAddr, request: Request<Full<Bytes>>) -> HttpAnswer {
    send1(&mut http1(addr).await, request).await
}

/// Writes `request` in one go on a fresh connection and reads until the
/// server closes it; returns the status code and the whole answer.
async fn raw(addr: SocketAddr, request: &[u8]) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(ANSWER_TIMEOUT, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes in time")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"));
    (status, answer)
}

const JSON: &str = "application/json";

/// Waits (on events, within the answer timeout) until `addr` refuses new
/// connections: the server has stopped accepting.
async fn until_refused(addr: std::net::SocketAddr) {
    tokio::time::timeout(ANSWER_TIMEOUT, async {
        while TcpStream::connect(addr).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the socket stops accepting");
}

#[tokio::test]
async fn a_request_is_answered_200_with_its_response_as_json() {
    let (server, addr) = serve().await;
    let answer = once(
        addr,
        post(
            "/",
            JSON,
            r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#,
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header(header::CONTENT_TYPE), Some(JSON));
    assert_eq!(
        answer.json(),
        json!({"jsonrpc": "2.0", "id": 1, "result": 19})
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_batch_is_answered_200_with_an_array_and_charset_parameters_are_accepted() {
    let (server, addr) = serve().await;
    let batch = r#"[
        {"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,4]},
        {"jsonrpc":"2.0","method":"log","params":["hi"]},
        {"jsonrpc":"2.0","id":"two","method":"subtract","params":[5,8]},
        {"jsonrpc":"2.0","id":3,"method":"nope"}
    ]"#;
    let answer = once(addr, post("/", "Application/JSON; charset=UTF-8", batch)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.header(header::CONTENT_TYPE), Some(JSON));
    let answers = answer.json();
    assert_eq!(answers.as_array().map(Vec::len), Some(3), "{answers}");
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": 7}));
    assert_eq!(
        answers[1],
        json!({"jsonrpc": "2.0", "id": "two", "result": -3})
    );
    assert_eq!(answers[2]["error"]["code"], -32601);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_body_that_is_not_json_is_answered_200_with_a_parse_error() {
    let (server, addr) = serve().await;
    let answer = once(addr, post("/", JSON, r#"{"jsonrpc":"2.0","id":1,"#)).await;
    assert_eq!(answer.status, StatusCode::OK);
    let error = answer.json();
    assert_eq!(error["error"]["code"], -32700, "{error}");
    assert_eq!(error["id"], Value::Null);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn notifications_only_are_answered_204_with_no_body() {
    let (server, addr) = serve().await;
    let mut send = http1(addr).await;
    let one = r#"{"jsonrpc":"2.0","method":"log","params":["one"]}"#;
    let answer = send1(&mut send, post("/", JSON, one)).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert!(answer.body.is_empty());
    let batch = r#"[{"jsonrpc":"2.0","method":"log","params":["a"]},{"jsonrpc":"2.0","method":"log","params":["b"]}]"#;
    let answer = send1(&mut send, post("/", JSON, batch)).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert!(answer.body.is_empty());
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn other_methods_are_answered_405_with_allow() {
    let (server, addr) = serve().await;
    let answer = once(addr, get("/")).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.header(header::ALLOW), Some("POST"));
    let answer = once(addr, post("/health", JSON, "{}")).await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(answer.header(header::ALLOW), Some("GET, HEAD"));
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn another_content_type_is_answered_415() {
    let (server, addr) = serve().await;
    let request = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[1,1]}"#;
    for content_type in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1",
    ] {
        let answer = once(addr, post("/", content_type, request)).await;
        assert_eq!(
            answer.status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "{content_type}"
        );
    }
    let mut missing = post("/", JSON, request);
    missing.headers_mut().remove(header::CONTENT_TYPE);
    assert_eq!(
        once(addr, missing).await.status,
        StatusCode::UNSUPPORTED_MEDIA_TYPE
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn unknown_paths_are_answered_404() {
    let (server, addr) = serve().await;
    let answer = once(addr, post("/rpc", JSON, "{}")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert_eq!(
        once(addr, get("/healthz")).await.status,
        StatusCode::NOT_FOUND
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_declared_length_over_the_cap_is_answered_413_before_the_body_is_sent() {
    let (server, addr) = serve().await;
    // Only the head: the server must answer without waiting for a body.
    let head = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        MAX_BODY + 1
    );
    let (status, answer) = raw(addr, head.as_bytes()).await;
    assert_eq!(status, 413, "{answer}");
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_body_over_the_cap_written_whole_gets_its_413_without_a_reset() {
    let (server, addr) = serve().await;
    // A server that closes with the rest unread resets the connection, and
    // the 413 is lost.
    tests::assert_413_without_reset(addr, "/", "", MAX_BODY).await;
    // The server goes on serving.
    let answer = once(
        addr,
        post(
            "/",
            JSON,
            r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[3,1]}"#,
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_chunked_body_over_the_cap_is_answered_413() {
    let (server, addr) = serve().await;
    let chunk = "x".repeat(1000);
    let mut request = String::from(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\n\r\n",
    );
    for _ in 0..(MAX_BODY / chunk.len() + 1) {
        request.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    request.push_str("0\r\n\r\n");
    let (status, answer) = raw(addr, request.as_bytes()).await;
    assert_eq!(status, 413, "{answer}");

    // A chunked body under the cap is served.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[3,1]}"#;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    let (status, answer) = raw(addr, request.as_bytes()).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer.ends_with(r#"{"jsonrpc":"2.0","id":1,"result":2}"#),
        "{answer}"
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn two_requests_travel_on_one_kept_alive_connection() {
    let (server, addr) = serve().await;
    let mut send = http1(addr).await;
    for (a, b) in [(10, 4), (7, 9)] {
        let body = json!({"jsonrpc": "2.0", "id": a, "method": "subtract", "params": [a, b]});
        let answer = send1(&mut send, post("/", JSON, &body.to_string())).await;
        assert_eq!(answer.status, StatusCode::OK);
        assert_eq!(answer.version, Version::HTTP_11);
        assert_eq!(answer.header(header::CONNECTION), None);
        assert_eq!(answer.json()["result"], a - b);
    }
    assert_eq!(server.live_connections(), 1);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn http2_with_prior_knowledge_is_served_concurrently_on_one_connection() {
    let (server, addr) = serve().await;
    let send = http2(addr).await;
    let calls = (0..20).map(|i| {
        let mut send = send.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": i, "method": "subtract", "params": [i, 1]});
            let uri = format!("http://{addr}/");
            let response = send
                .send_request(post(&uri, JSON, &body.to_string()))
                .await
                .expect("an answer");
            let answer = HttpAnswer::read(response).await;
            assert_eq!(answer.status, StatusCode::OK);
            assert_eq!(answer.version, Version::HTTP_2);
            assert_eq!(answer.json()["result"], i - 1);
        }
    });
    tokio::time::timeout(ANSWER_TIMEOUT, join_all(calls))
        .await
        .expect("every answer in time");
    let response = send
        .clone()
        .send_request(get(&format!("http://{addr}/health")))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(server.live_connections(), 1);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn health_turns_503_during_the_drain_while_an_accepted_request_finishes() {
    let Routes {
        router,
        mut started,
        release,
    } = routes();
    let (server, addr) = serve_routes(router).await;

    // A probe's kept-alive connection, and a slow request on another.
    let mut probe = http1(addr).await;
    let healthy = send1(&mut probe, get("/health")).await;
    assert_eq!(healthy.status, StatusCode::OK);
    let mut slow = http1(addr).await;
    let held = tokio::spawn(async move {
        let hold = r#"{"jsonrpc":"2.0","id":7,"method":"hold"}"#;
        send1(&mut slow, post("/", JSON, hold)).await
    });
    tokio::time::timeout(ANSWER_TIMEOUT, started.recv())
        .await
        .expect("the slow request starts");

    // The drain begins when the shutdown is first polled.
    let mut shutdown = Box::pin(server.shutdown(Duration::from_secs(60)));
    assert!(futures_util::poll!(&mut shutdown).is_pending());
    let shutdown = tokio::spawn(shutdown);

    let draining = send1(&mut probe, get("/health")).await;
    assert_eq!(draining.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(draining.header(header::CONNECTION), Some("close"));
    until_refused(addr).await;
    assert!(
        !shutdown.is_finished(),
        "the slow request keeps it draining"
    );

    release.add_permits(1);
    let answer = held.await.unwrap();
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["result"], "released");
    tokio::time::timeout(ANSWER_TIMEOUT, shutdown)
        .await
        .expect("the drain ends once the request is answered")
        .unwrap();
}

#[tokio::test]
async fn an_http2_stream_already_open_finishes_during_the_drain() {
    let Routes {
        router,
        mut started,
        release,
    } = routes();
    let (server, addr) = serve_routes(router).await;
    let mut send = http2(addr).await;
    let uri = format!("http://{addr}/");
    let hold = r#"{"jsonrpc":"2.0","id":7,"method":"hold"}"#;
    let held = tokio::spawn(send.send_request(post(&uri, JSON, hold)));
    tokio::time::timeout(ANSWER_TIMEOUT, started.recv())
        .await
        .expect("the slow request starts");
    let shutdown = tokio::spawn(server.shutdown(Duration::from_secs(60)));
    until_refused(addr).await;
    release.add_permits(1);
    let answer = HttpAnswer::read(held.await.unwrap().expect("the open stream is answered")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.version, Version::HTTP_2);
    assert_eq!(answer.json()["result"], "released");
    tokio::time::timeout(ANSWER_TIMEOUT, shutdown)
        .await
        .expect("the drain ends once the stream is answered")
        .unwrap();
}

#[tokio::test]
async fn the_grace_period_cuts_off_a_request_that_does_not_finish() {
    let Routes {
        router,
        mut started,
        release: _release,
    } = routes();
    let (server, addr) = serve_routes(router).await;
    let mut slow = http1(addr).await;
    let held = tokio::spawn(async move {
        let hold = r#"{"jsonrpc":"2.0","id":7,"method":"hold"}"#;
        slow.send_request(post("/", JSON, hold)).await
    });
    tokio::time::timeout(ANSWER_TIMEOUT, started.recv())
        .await
        .expect("the slow request starts");
    tokio::time::timeout(ANSWER_TIMEOUT, server.shutdown(Duration::from_millis(100)))
        .await
        .expect("the shutdown ends after its grace period");
    let outcome = tokio::time::timeout(ANSWER_TIMEOUT, held)
        .await
        .expect("the client learns in time")
        .unwrap();
    assert!(outcome.is_err(), "the connection was closed: {outcome:?}");
}

#[tokio::test]
async fn shutdown_all_stops_http_and_tcp_accepting_together() {
    let Routes {
        router,
        mut started,
        release,
    } = routes();
    let (http, http_addr) = serve_routes(router.clone()).await;
    let tcp_acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let tcp_addr = tcp_acceptor.local_addr().unwrap();
    let tcp = Listener::new(tcp_acceptor).spawn(router);

    let held = tokio::spawn(async move {
        let hold = r#"{"jsonrpc":"2.0","id":7,"method":"hold"}"#;
        once(http_addr, post("/", JSON, hold)).await
    });
    tokio::time::timeout(ANSWER_TIMEOUT, started.recv())
        .await
        .expect("the slow request starts");
    let shutdown = tokio::spawn(shutdown_all([http, tcp], Duration::from_secs(60)));
    tokio::time::timeout(ANSWER_TIMEOUT, async {
        while TcpStream::connect(tcp_addr).await.is_ok()
            || TcpStream::connect(http_addr).await.is_ok()
        {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("both sockets stop accepting while the HTTP server drains");
    assert!(!shutdown.is_finished());
    release.add_permits(1);
    assert_eq!(held.await.unwrap().status, StatusCode::OK);
    tokio::time::timeout(ANSWER_TIMEOUT, shutdown)
        .await
        .expect("the shutdown ends")
        .unwrap();
}

#[tokio::test]
async fn handlers_cannot_call_back_and_learn_it_at_once() {
    let (server, addr) = serve().await;
    let answer = once(
        addr,
        post(
            "/",
            JSON,
            r#"{"jsonrpc":"2.0","id":1,"method":"call_back"}"#,
        ),
    )
    .await;
    assert_eq!(answer.json()["result"], "no way back");
    server.shutdown(Duration::from_secs(1)).await;
}

async fn client(addr: SocketAddr, path: &str) -> Peer {
    let url = format!("http://{addr}{path}");
    Peer::spawn(HttpConnector::new(&url).connect().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_over_http_calls_notifies_and_bursts() {
    let (server, addr) = serve().await;
    let peer = client(addr, "/").await;
    for _ in 0..20 {
        assert_eq!(peer.call::<i64>("subtract", [42, 23]).await.unwrap(), 19);
    }
    // Calls one after another reuse kept-alive connections (one, unless a
    // call started before the previous connection was back in the pool).
    assert!(
        server.live_connections() < 5,
        "{} connections for 20 calls in a row",
        server.live_connections()
    );
    assert_eq!(peer.call::<i64>("sum", [1, 2, 3]).await.unwrap(), 6);
    peer.notify("log", ["hello"]).await.unwrap();
    let unknown = peer.call::<Value>("nope", ()).await.unwrap_err();
    assert_eq!(
        unknown.as_rpc().map(|e| e.code),
        Some(ErrorCode::METHOD_NOT_FOUND)
    );

    let burst = (0..200i64).map(|i| {
        let peer = peer.clone();
        async move { peer.call::<i64>("subtract", [i, 1]).await }
    });
    let answers = tokio::time::timeout(Duration::from_secs(60), join_all(burst))
        .await
        .expect("the burst is answered in time");
    for (i, answer) in answers.into_iter().enumerate() {
        assert_eq!(answer.unwrap(), i as i64 - 1);
    }

    let reason = tokio::time::timeout(ANSWER_TIMEOUT, peer.close(Duration::from_secs(1)))
        .await
        .expect("the peer closes at once: it waits for nothing from the server");
    assert!(
        matches!(reason, jsonrpc_runtime::CloseReason::Local),
        "{reason:?}"
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_non_2xx_status_fails_the_call_it_carried_with_an_http_failure() {
    let (server, addr) = serve().await;
    let peer = client(addr, "/no-such-path").await;
    let error = tokio::time::timeout(ANSWER_TIMEOUT, peer.call::<i64>("subtract", [1, 1]))
        .await
        .expect("the call ends")
        .unwrap_err();
    let rpc = error
        .as_rpc()
        .expect("an error response made up for the call");
    assert_eq!(rpc.code, ErrorCode::TRANSPORT_FAILED);
    assert_eq!(
        rpc.code.stage(),
        jsonrpc_runtime::error::ErrorStage::Transport
    );
    assert!(rpc.message.contains("404"), "{}", rpc.message);
    let failure = HttpFailure::from_error(rpc).expect("an HTTP failure");
    assert_eq!(failure.status, Some(404));
    assert_eq!(failure.body, "not found\n");
    assert!(!peer.is_closed(), "one failed POST does not close the peer");

    // A peer posting where the server answers.
    let healthy = client(addr, "/").await;
    assert_eq!(healthy.call::<i64>("subtract", [2, 1]).await.unwrap(), 1);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_failed_post_is_a_transport_error_even_for_a_call_whose_errors_are_error_objects() {
    // `ErrorObject` takes any code as a domain error: a 401 or a 404 of the
    // server must still not look like the method's own error.
    let (server, addr) = serve().await;
    let peer = client(addr, "/no-such-path").await;
    let error = tokio::time::timeout(
        ANSWER_TIMEOUT,
        peer.call::<i64>("subtract", [1, 1]).errors::<ErrorObject>(),
    )
    .await
    .expect("the call ends")
    .unwrap_err();
    match &error {
        CallError::Rpc(rpc) => {
            assert_eq!(rpc.code, ErrorCode::TRANSPORT_FAILED);
            let failure = HttpFailure::from_error(rpc).expect("an HttpFailure as its data");
            assert_eq!(failure.status, Some(404));
        }
        other => panic!("a transport failure, not {other:?}"),
    }
    // An error the server's handler answered is still the method's own.
    let peer = client(addr, "/").await;
    let error = tokio::time::timeout(
        ANSWER_TIMEOUT,
        peer.call::<i64>("subtract", ["not", "numbers"])
            .errors::<ErrorObject>(),
    )
    .await
    .expect("the call ends")
    .unwrap_err();
    assert!(
        matches!(&error, CallError::Domain(e) if e.code == ErrorCode::INVALID_PARAMS),
        "{error:?}"
    );
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_server_that_cannot_be_reached_fails_the_call_with_no_status() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let peer = client(addr, "/").await;
    let error = tokio::time::timeout(ANSWER_TIMEOUT, peer.call::<i64>("subtract", [1, 1]))
        .await
        .expect("the call ends")
        .unwrap_err();
    let failure = error
        .as_rpc()
        .and_then(HttpFailure::from_error)
        .unwrap_or_else(|| panic!("an HTTP failure, got {error}"));
    assert_eq!(failure.status, None);
    assert!(error.to_string().contains("failed"), "{error}");
}

#[tokio::test]
async fn an_answer_that_leaves_out_a_request_fails_that_call() {
    // A server that answers 200 with someone else's response.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let fake = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        let body = r#"{"jsonrpc":"2.0","id":"someone-else","result":0}"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(answer.as_bytes()).await.unwrap();
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest).await;
    });
    let peer = client(addr, "/").await;
    let error = tokio::time::timeout(ANSWER_TIMEOUT, peer.call::<i64>("subtract", [1, 1]))
        .await
        .expect("the call ends")
        .unwrap_err();
    let failure = error
        .as_rpc()
        .and_then(HttpFailure::from_error)
        .unwrap_or_else(|| panic!("an HTTP failure, got {error}"));
    assert_eq!(failure.status, Some(200));
    assert!(failure.body.contains("someone-else"), "{failure:?}");
    peer.close(Duration::ZERO).await;
    fake.abort();
}

#[cfg(unix)]
#[tokio::test]
async fn spec_server_serves_http_with_tcp_and_exits_cleanly_on_sigterm() {
    let mut child = Command::new(example_path("spec_server"))
        .args(["--http", "127.0.0.1:0", "--tcp", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let lines = tests::listening_lines(&mut stderr, 2).await;
    let url = lines
        .iter()
        .find(|l| l.starts_with("http://"))
        .expect("an http:// line")
        .clone();
    assert!(url.ends_with('/'), "{url}");
    let tcp = lines
        .iter()
        .find_map(|l| l.strip_prefix("tcp "))
        .expect("a tcp line")
        .to_owned();

    let config = Config::default();
    let peer = Peer::spawn(HttpConnector::new(&url).connect().await.unwrap());
    assert_eq!(peer.call::<i64>("subtract", [42, 23]).await.unwrap(), 19);
    assert_eq!(peer.call::<i64>("sum", [1, 2, 3]).await.unwrap(), 6);
    peer.notify("notify_hello", [7]).await.unwrap();
    // A handler that calls back fails at once over HTTP.
    let roundtrip = peer.call::<Value>("test/roundtrip", ()).await.unwrap_err();
    assert_eq!(
        roundtrip.as_rpc().map(|e| e.code),
        Some(ErrorCode::INTERNAL_ERROR)
    );
    let addr: SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    assert_eq!(once(addr, get("/health")).await.status, StatusCode::OK);
    let tcp_peer = Peer::spawn(
        TcpConnector::new(tcp)
            .codec(&config)
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(tcp_peer.call::<i64>("subtract", [5, 8]).await.unwrap(), -3);

    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
    tokio::time::timeout(ANSWER_TIMEOUT, tcp_peer.closed())
        .await
        .expect("the TCP connection was closed");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "nothing listens any more"
    );
}

#[tokio::test]
async fn a_request_waiting_in_the_backlog_when_the_drain_begins_is_answered() {
    let Routes {
        router,
        mut started,
        release,
    } = routes();
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    // One connection at a time: the second client waits in the backlog.
    let server = HttpListener::new(acceptor)
        .connection_limit(1)
        .spawn(router);
    let held = tokio::spawn(async move {
        let hold = r#"{"jsonrpc":"2.0","id":7,"method":"hold"}"#;
        once(addr, post("/", JSON, hold)).await
    });
    tokio::time::timeout(ANSWER_TIMEOUT, started.recv())
        .await
        .expect("the slow request starts");
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[5,3]}"#;
    let request = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let waiting = tokio::spawn(async move { raw(addr, request.as_bytes()).await });
    // The kernel has completed its handshake; the server has not taken it.
    tokio::time::timeout(ANSWER_TIMEOUT, async {
        while server.live_connections() != 1 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    tokio::task::yield_now().await;
    let shutdown = tokio::spawn(server.shutdown(Duration::from_secs(60)));
    let (status, answer) = tokio::time::timeout(ANSWER_TIMEOUT, waiting)
        .await
        .expect("the waiting client is answered during the drain")
        .unwrap();
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains(r#""result":2"#), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    release.add_permits(1);
    assert_eq!(held.await.unwrap().status, StatusCode::OK);
    tokio::time::timeout(ANSWER_TIMEOUT, shutdown)
        .await
        .expect("the shutdown ends")
        .unwrap();
}

/// A server that lets pages of `https://app.example` call it (CORS).
async fn serve_for_pages() -> (Server, SocketAddr) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = HttpListener::new(acceptor)
        .allowed_origins(["https://app.example/"])
        .spawn(routes().router);
    (server, addr)
}

fn from_page(mut request: Request<Full<Bytes>>, origin: &str) -> Request<Full<Bytes>> {
    request
        .headers_mut()
        .insert(header::ORIGIN, origin.parse().unwrap());
    request
}

fn preflight(origin: &str, asked_headers: Option<&str>) -> Request<Full<Bytes>> {
    let mut request = Request::builder()
        .method(Method::OPTIONS)
        .uri("/")
        .header(header::HOST, "localhost")
        .header(header::ORIGIN, origin)
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST");
    if let Some(asked) = asked_headers {
        request = request.header(header::ACCESS_CONTROL_REQUEST_HEADERS, asked);
    }
    request.body(Full::default()).unwrap()
}

fn header_of(answer: &HttpAnswer, name: header::HeaderName) -> Option<&str> {
    answer.headers.get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn a_preflight_from_an_allowed_origin_is_answered_with_the_methods_and_headers() {
    let (_server, addr) = serve_for_pages().await;
    let asked = "authorization, content-type, x-trace";
    let answer = once(addr, preflight("https://app.example", Some(asked))).await;
    assert_eq!(answer.status, StatusCode::NO_CONTENT);
    assert_eq!(
        header_of(&answer, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some("https://app.example")
    );
    let methods = header_of(&answer, header::ACCESS_CONTROL_ALLOW_METHODS).unwrap();
    assert!(methods.contains("POST"), "{methods}");
    assert_eq!(
        header_of(&answer, header::ACCESS_CONTROL_ALLOW_HEADERS),
        Some(asked)
    );
    assert!(header_of(&answer, header::ACCESS_CONTROL_MAX_AGE).is_some());
    // A preflight that names no headers is given the ones a client sends.
    let answer = once(addr, preflight("https://app.example", None)).await;
    let allowed = header_of(&answer, header::ACCESS_CONTROL_ALLOW_HEADERS).unwrap();
    assert!(allowed.contains("authorization"), "{allowed}");
}

#[tokio::test]
async fn a_call_from_an_allowed_origin_names_it_and_others_are_served_without_it() {
    let (_server, addr) = serve_for_pages().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#;
    let allowed = once(
        addr,
        from_page(post("/", JSON, call), "https://APP.example"),
    )
    .await;
    assert_eq!(allowed.status, StatusCode::OK);
    assert_eq!(
        header_of(&allowed, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some("https://APP.example")
    );
    assert_eq!(header_of(&allowed, header::VARY), Some("origin"));
    let exposed = header_of(&allowed, header::ACCESS_CONTROL_EXPOSE_HEADERS).unwrap();
    assert!(exposed.contains("mcp-session-id"), "{exposed}");
    let answer: Value = serde_json::from_slice(&allowed.body).unwrap();
    assert_eq!(answer["result"], 19);
    // Another page's call is still served (the browser, not the server,
    // keeps the answer from it), but no origin is named.
    let other = once(
        addr,
        from_page(post("/", JSON, call), "https://evil.example"),
    )
    .await;
    assert_eq!(other.status, StatusCode::OK);
    assert_eq!(header_of(&other, header::ACCESS_CONTROL_ALLOW_ORIGIN), None);
    // Its preflight is not answered as one: OPTIONS is not a method here.
    let refused = once(addr, preflight("https://evil.example", None)).await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(
        header_of(&refused, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        None
    );
    // The health endpoint answers pages too.
    let health = once(addr, from_page(get("/health"), "https://app.example")).await;
    assert_eq!(health.status, StatusCode::OK);
    assert_eq!(
        header_of(&health, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        Some("https://app.example")
    );
}

#[tokio::test]
async fn without_allowed_origins_no_page_of_another_origin_is_named() {
    let (_server, addr) = serve().await;
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#;
    let answer = once(
        addr,
        from_page(post("/", JSON, call), "https://app.example"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        header_of(&answer, header::ACCESS_CONTROL_ALLOW_ORIGIN),
        None
    );
    let refused = once(addr, preflight("https://app.example", None)).await;
    assert_eq!(refused.status, StatusCode::METHOD_NOT_ALLOWED);
}

/// A server that answers each `POST` with what its params ask:
/// `{"status", "len", "declare"}`: that status and a body of exactly `len`
/// bytes (a JSON-RPC answer to the request for a `2xx`, lowercase letters
/// otherwise), in three chunks, with a `Content-Length` only when
/// `declare`. The bytes it sends come back with the answer in
/// `sent_body` order: the plain reference the client is checked against.
async fn sized_answers() -> SocketAddr {
    use http_body_util::{BodyExt as _, StreamBody};
    use hyper::body::Frame;
    tests::http::serve_fn(|request: Request<hyper::body::Incoming>| async move {
        let body = request.into_body().collect().await.unwrap().to_bytes();
        let call: Value = serde_json::from_slice(&body).unwrap();
        let (status, len) = (
            call["params"]["status"].as_u64().unwrap() as u16,
            call["params"]["len"].as_u64().unwrap() as usize,
        );
        let body = sized_body(status, len, &call["id"]);
        let cut = [len / 3, 2 * len / 3];
        let chunks = vec![
            body.slice(..cut[0]),
            body.slice(cut[0]..cut[1]),
            body.slice(cut[1]..),
        ];
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::convert::Infallible>(Frame::data(c))),
        );
        let mut response = hyper::Response::new(StreamBody::new(stream));
        *response.status_mut() = StatusCode::from_u16(status).unwrap();
        if call["params"]["declare"].as_bool().unwrap() {
            response
                .headers_mut()
                .insert(header::CONTENT_LENGTH, len.into());
        }
        response
    })
    .await
}

/// The body [`sized_answers`] sends: for a `2xx`, `{"jsonrpc":"2.0","id":
/// ID,"result":"aaa…"}` padded to `len` bytes; otherwise `len` letters.
fn sized_body(status: u16, len: usize, id: &Value) -> Bytes {
    let letters =
        |n: usize| -> String { (0..n).map(|i| (b'a' + (i % 26) as u8) as char).collect() };
    if !(200..300).contains(&status) {
        return Bytes::from(letters(len));
    }
    let head = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":""#);
    let pad = len.saturating_sub(head.len() + 2);
    Bytes::from(format!("{head}{}\"}}", letters(pad)))
}

/// The sizes of one sweep across `threshold`: ±1 byte around it, and every
/// power of two from 64 to twice it.
fn sweep(threshold: usize) -> Vec<usize> {
    let mut sizes = vec![threshold - 1, threshold, threshold + 1];
    let mut power = 64;
    while power <= 2 * threshold {
        sizes.push(power);
        power *= 2;
    }
    sizes
}

/// How the client sees a failed answer of `len` bytes: its `HttpFailure`,
/// or the call's result.
async fn ask(peer: &Peer, status: u16, len: usize, declare: bool) -> Result<String, HttpFailure> {
    let params = json!({"status": status, "len": len, "declare": declare});
    match peer.call::<String>("sized", params).await {
        Ok(result) => Ok(result),
        Err(e) => Err(e
            .as_rpc()
            .and_then(HttpFailure::from_error)
            .unwrap_or_else(|| panic!("not an HTTP failure: {e:?}"))),
    }
}

/// A failed answer's body is kept up to 1,024 bytes: at and around that
/// threshold, and past it, the excerpt is the body's start, byte for
/// byte (the plain truncation), with and without a declared length, on a
/// fresh peer for each size and on one long-lived peer with the sizes in
/// changing order.
#[tokio::test]
async fn a_failed_answers_excerpt_is_its_start_across_the_1_kib_threshold() {
    const EXCERPT: usize = 1024;
    let addr = sized_answers().await;
    let url = format!("http://{addr}/");
    let sizes = sweep(EXCERPT);
    let expected = |len: usize| {
        let body = sized_body(502, len, &Value::Null);
        String::from_utf8_lossy(&body[..len.min(EXCERPT)]).into_owned()
    };
    for &len in &sizes {
        let fresh = Peer::spawn(HttpConnector::new(&url).connect().await.unwrap());
        let failure = ask(&fresh, 502, len, len % 2 == 0).await.unwrap_err();
        assert_eq!(failure.status, Some(502));
        assert_eq!(failure.body, expected(len), "{len} bytes, fresh peer");
    }
    let long_lived = Peer::spawn(HttpConnector::new(&url).connect().await.unwrap());
    let mut order: Vec<usize> = sizes.iter().rev().copied().collect();
    order.extend(sizes.iter().copied());
    for (i, &len) in order.iter().enumerate() {
        let failure = ask(&long_lived, 502, len, i % 2 == 0).await.unwrap_err();
        assert_eq!(failure.body, expected(len), "{len} bytes, long-lived peer");
    }
}

/// An answer is taken up to the connector's `max_frame_len` and refused
/// one byte past it, whether the length is declared or only counted as
/// the chunks arrive; what is taken is the answer sent, byte for byte.
#[tokio::test]
async fn answers_are_taken_up_to_the_frame_cap_and_refused_one_byte_past_it() {
    const CAP: usize = 4096;
    let addr = sized_answers().await;
    let url = format!("http://{addr}/");
    let check = |len: usize, answer: Result<String, HttpFailure>| {
        if len <= CAP {
            let result = answer.unwrap_or_else(|f| panic!("{len} bytes refused: {f:?}"));
            // The padding the server wrote (its length depends on the id).
            let sent = sized_body(200, len, &json!(0));
            let sent: Value = serde_json::from_slice(&sent).unwrap();
            let sent = sent["result"].as_str().unwrap();
            assert!(sent.len().abs_diff(result.len()) < 24, "{len} bytes");
            assert!(
                sent.starts_with(&result) || result.starts_with(sent),
                "{len} bytes"
            );
        } else {
            let failure = answer.expect_err("over the cap");
            assert_eq!(failure.status, Some(200), "{len} bytes");
        }
    };
    for &len in &sweep(CAP) {
        for declare in [true, false] {
            let connector = HttpConnector::new(&url).max_frame_len(CAP);
            let fresh = Peer::spawn(connector.connect().await.unwrap());
            check(len, ask(&fresh, 200, len, declare).await);
        }
    }
    let connector = HttpConnector::new(&url).max_frame_len(CAP);
    let long_lived = Peer::spawn(connector.connect().await.unwrap());
    let sizes = sweep(CAP);
    for (i, &len) in sizes.iter().rev().chain(&sizes).enumerate() {
        check(len, ask(&long_lived, 200, len, i % 3 == 0).await);
    }
}

/// A request of exactly `len` bytes whose params are one string; `None`
/// when no such request is that short.
fn request_of_len(len: usize) -> Option<(String, usize)> {
    const HEAD: &str = r#"{"jsonrpc":"2.0","id":7,"method":"len","params":[""#;
    const TAIL: &str = r#""]}"#;
    let pad = len.checked_sub(HEAD.len() + TAIL.len())?;
    let letters: String = (0..pad).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    Some((format!("{HEAD}{letters}{TAIL}"), pad))
}

/// `body` cut where `cut` says: each chunk `cut(i)` bytes long (at least 1).
fn chunks_of(body: &str, cut: Cut) -> Vec<Bytes> {
    let mut chunks = Vec::new();
    let mut rest = body.as_bytes();
    while !rest.is_empty() {
        let n = cut(chunks.len()).clamp(1, rest.len());
        chunks.push(Bytes::copy_from_slice(&rest[..n]));
        rest = &rest[n..];
    }
    chunks
}

/// Where a chunked body is cut: chunk `i` is `cut(i)` bytes long.
type Cut = fn(usize) -> usize;

/// How the sweep cuts a chunked body: one chunk, a byte at a time at
/// first then large chunks, and chunks of changing odd sizes.
const CUTS: [Cut; 3] = [
    |_| usize::MAX,
    |i| if i < 3 { 1 } else { 1000 },
    |i| [7, 513, 1, 2048, 31][i % 5],
];

type BoxedBody = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// A request for `body`: with its length declared, or chunked as cut.
fn sized_request(body: &str, cut: Option<Cut>) -> Request<BoxedBody> {
    use http_body_util::BodyExt as _;
    let body = match cut {
        None => Full::new(Bytes::from(body.to_owned())).boxed(),
        Some(cut) => {
            let frames = chunks_of(body, cut)
                .into_iter()
                .map(|chunk| Ok(hyper::body::Frame::data(chunk)));
            http_body_util::StreamBody::new(futures_util::stream::iter(frames)).boxed()
        }
    };
    Request::builder()
        .method(Method::POST)
        .uri("/")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, JSON)
        .body(body)
        .unwrap()
}

/// Sends a request for `body` (see [`sized_request`]) on `send`, and reads
/// its answer.
async fn ask_sized(
    send: &mut hyper::client::conn::http1::SendRequest<BoxedBody>,
    body: &str,
    cut: Option<Cut>,
) -> HttpAnswer {
    let response =
        tokio::time::timeout(ANSWER_TIMEOUT, send.send_request(sized_request(body, cut)))
            .await
            .expect("an answer in time")
            .expect("an answer");
    HttpAnswer::read(response).await
}

/// What the server must answer a request of `len` bytes (`pad` of them the
/// string's): its length under the cap, `413` over it.
fn check_sized(answer: &HttpAnswer, len: usize, pad: usize, how: &str) {
    if len <= MAX_BODY {
        assert_eq!(answer.status, StatusCode::OK, "{len} bytes, {how}");
        let expected = format!(r#"{{"jsonrpc":"2.0","id":7,"result":{pad}}}"#);
        assert_eq!(answer.body, expected.as_bytes(), "{len} bytes, {how}");
    } else {
        assert_eq!(
            answer.status,
            StatusCode::PAYLOAD_TOO_LARGE,
            "{len} bytes, {how}"
        );
    }
}

/// The server's body cap, swept: ±1 byte around it and every power of two
/// from 64 to twice it, each body declared or chunked three ways, on a
/// connection per request and on one kept-alive connection with the sizes
/// in changing order; bodies that come in one chunk are taken as they are,
/// others joined, and only bodies over the cap are refused.
#[tokio::test]
async fn request_bodies_are_read_whole_up_to_the_cap_and_refused_one_byte_past_it() {
    let router = Router::new().request("len", |(s,): (String,), _: Context| async move {
        Ok::<_, ErrorObject>(s.len())
    });
    let (server, addr) = serve_routes(router).await;
    let sizes: Vec<usize> = sweep(MAX_BODY)
        .into_iter()
        .filter(|&len| request_of_len(len).is_some())
        .collect();
    let hows: Vec<(Option<Cut>, &str)> = std::iter::once((None, "declared"))
        .chain(CUTS.iter().map(|&cut| (Some(cut), "chunked")))
        .collect();

    // A connection per request.
    for &len in &sizes {
        let (body, pad) = request_of_len(len).unwrap();
        for (n, &(cut, how)) in hows.iter().enumerate() {
            let stream = TcpStream::connect(addr).await.unwrap();
            let (mut send, connection) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream))
                    .await
                    .unwrap();
            tokio::spawn(connection);
            let answer = ask_sized(&mut send, &body, cut).await;
            check_sized(&answer, len, pad, &format!("{how} #{n}, fresh connection"));
        }
    }

    // One connection for every size the cap allows, in changing order, then
    // one over it (which ends the connection).
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let mut under: Vec<usize> = sizes.iter().copied().filter(|&l| l <= MAX_BODY).collect();
    let count = under.len();
    under.rotate_left(count / 2);
    under.swap(0, count - 1);
    for (i, &len) in under.iter().chain(under.iter().rev()).enumerate() {
        let (body, pad) = request_of_len(len).unwrap();
        let (cut, how) = hows[i % hows.len()];
        let answer = ask_sized(&mut send, &body, cut).await;
        check_sized(
            &answer,
            len,
            pad,
            &format!("{how}, request {i} on one connection"),
        );
    }
    let (body, pad) = request_of_len(MAX_BODY + 1).unwrap();
    let answer = ask_sized(&mut send, &body, Some(CUTS[2])).await;
    check_sized(
        &answer,
        MAX_BODY + 1,
        pad,
        "chunked, last on one connection",
    );
    server.shutdown(Duration::from_secs(1)).await;
}
