//! WebSocket: round trip, 200 connections × 100 calls, one message or
//! batch per text frame, binary and oversized frames refused, pings
//! answered, close frames, and either side dying mid-call.

mod transport_support;

use std::future::IntoFuture as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{
    OpenOptions, TransportError, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::{server::Server, CallError, CloseReason, Config, Peer};
use serde_json::Value;
use tests::ANSWER_TIMEOUT;
use tokio::io::AsyncReadExt as _;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;
use transport_support::{load, router, wait_until_drained};

type RawClient = WebSocketStream<TcpStream>;

async fn serve() -> (Server, SocketAddr) {
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    (Listener::new(acceptor).spawn(router()), addr)
}

/// A server for one connection whose close reason the test can read.
/// Once `close` is notified, the server closes its side.
async fn one_connection() -> (SocketAddr, Arc<Notify>, JoinHandle<CloseReason>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let close = Arc::new(Notify::new());
    let server = tokio::spawn({
        let close = close.clone();
        async move {
            let (stream, _) = listener.accept().await.unwrap();
            let config = Config::default();
            let transport = WebSocketAcceptor::handshake(stream, &OpenOptions::new(&config))
                .await
                .unwrap();
            let peer = Peer::builder()
                .config(config)
                .router(router())
                .spawn(transport);
            tokio::select! {
                reason = peer.closed() => reason,
                () = close.notified() => peer.close(Duration::from_secs(1)).await,
            }
        }
    });
    (addr, close, server)
}

/// A raw WebSocket client, to send what our transport never would.
async fn raw_client(addr: SocketAddr) -> RawClient {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://{addr}/"), stream)
        .await
        .unwrap();
    ws
}

async fn next_message(ws: &mut RawClient) -> Message {
    tokio::time::timeout(ANSWER_TIMEOUT, ws.next())
        .await
        .expect("a message in time")
        .expect("a message, not the end")
        .expect("a message, not an error")
}

async fn next_json(ws: &mut RawClient) -> Value {
    match next_message(ws).await {
        Message::Text(text) => serde_json::from_str(text.as_str()).unwrap(),
        other => panic!("expected a text message, got {other:?}"),
    }
}

#[tokio::test]
async fn round_trip() {
    let (server, addr) = serve().await;
    let url = format!("ws://{addr}/rpc");
    let client = Peer::spawn(
        WebSocketConnector::new(url.as_str())
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(client.call::<i64>("add", (2, 3)).await.unwrap(), 5);
    let reason = client.close(Duration::from_secs(1)).await;
    assert!(matches!(reason, CloseReason::Local), "{reason:?}");
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_connections_times_one_hundred_calls_are_all_answered() {
    let (server, addr) = serve().await;
    let url = Arc::new(format!("ws://{addr}/"));
    load("websocket", &server, move || {
        let url = url.clone();
        async move {
            WebSocketConnector::new(url.as_str())
                .connect()
                .await
                .expect("connect")
        }
    })
    .await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_batch_travels_in_one_text_frame_and_is_answered_in_one() {
    let (server, addr) = serve().await;
    let mut ws = raw_client(addr).await;
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]},
                    {"jsonrpc":"2.0","id":2,"method":"add","params":[3,4]}]"#;
    ws.send(Message::text(batch)).await.unwrap();
    let answer = next_json(&mut ws).await;
    let mut results: Vec<(i64, i64)> = answer
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| (r["id"].as_i64().unwrap(), r["result"].as_i64().unwrap()))
        .collect();
    results.sort();
    assert_eq!(results, [(1, 3), (2, 7)]);
    ws.close(None).await.unwrap();
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn binary_frame_is_refused_with_a_clear_error_and_serving_goes_on() {
    let (server, addr) = serve().await;
    let mut ws = raw_client(addr).await;
    ws.send(Message::binary(
        br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#.to_vec(),
    ))
    .await
    .unwrap();
    let refusal = next_json(&mut ws).await;
    assert_eq!(refusal["id"], Value::Null);
    assert_eq!(refusal["error"]["code"], -32600);
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("binary messages are not accepted"),
        "{message}"
    );

    ws.send(Message::text(
        r#"{"jsonrpc":"2.0","id":2,"method":"add","params":[2,2]}"#,
    ))
    .await
    .unwrap();
    let answer = next_json(&mut ws).await;
    assert_eq!(
        (answer["id"].as_i64(), answer["result"].as_i64()),
        (Some(2), Some(4))
    );
    ws.close(None).await.unwrap();
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn oversized_message_is_answered_then_closed_with_code_1009() {
    let (addr, _close, server) = one_connection().await;
    let mut ws = raw_client(addr).await;
    // 9 MiB, over the default 8 MiB cap.
    let big = "a".repeat(9 * 1024 * 1024);
    ws.send(Message::text(big)).await.unwrap();

    let refusal = next_json(&mut ws).await;
    assert_eq!(refusal["error"]["code"], -32600);
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("8388608-byte frame limit"), "{message}");
    match next_message(&mut ws).await {
        Message::Close(Some(frame)) => {
            assert_eq!(frame.code, CloseCode::Size, "{frame:?}");
            assert!(
                frame.reason.as_str().contains("message too big"),
                "{frame:?}"
            );
        }
        other => panic!("expected a close frame, got {other:?}"),
    }

    let reason = tokio::time::timeout(ANSWER_TIMEOUT, server)
        .await
        .expect("the server peer ends")
        .unwrap();
    let CloseReason::Transport(error) = &reason else {
        panic!("expected a transport error, got {reason:?}");
    };
    let TransportError::WebSocket(ws_error) = &**error else {
        panic!("expected a WebSocket error, got {error:?}");
    };
    assert_eq!(ws_error.close_code(), Some(1009));
    println!("the server side ended with: {reason}");
}

#[tokio::test]
async fn ping_is_answered_with_a_pong() {
    let (server, addr) = serve().await;
    let mut ws = raw_client(addr).await;
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .await
        .unwrap();
    match next_message(&mut ws).await {
        Message::Pong(payload) => assert_eq!(&payload[..], b"are you there"),
        other => panic!("expected a pong, got {other:?}"),
    }
    ws.close(None).await.unwrap();
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn close_frame_from_the_client_ends_the_peer_cleanly_with_1000() {
    let (addr, _close, server) = one_connection().await;
    let mut ws = raw_client(addr).await;
    ws.send(Message::text(
        r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#,
    ))
    .await
    .unwrap();
    assert_eq!(next_json(&mut ws).await["result"], 3);
    ws.send(Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "bye".into(),
    })))
    .await
    .unwrap();
    match next_message(&mut ws).await {
        Message::Close(Some(frame)) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("expected the close reply, got {other:?}"),
    }
    let reason = tokio::time::timeout(ANSWER_TIMEOUT, server)
        .await
        .expect("the server peer ends")
        .unwrap();
    assert!(matches!(reason, CloseReason::RemoteClosed), "{reason:?}");
}

#[tokio::test]
async fn closing_the_server_side_sends_close_code_1000() {
    let (addr, close, server) = one_connection().await;
    let mut ws = raw_client(addr).await;
    ws.send(Message::text(
        r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#,
    ))
    .await
    .unwrap();
    assert_eq!(next_json(&mut ws).await["result"], 3);
    close.notify_one();
    match next_message(&mut ws).await {
        Message::Close(Some(frame)) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("expected a close frame, got {other:?}"),
    }
    // The raw client replies to the close; then the stream ends.
    let end = tokio::time::timeout(ANSWER_TIMEOUT, ws.next())
        .await
        .unwrap();
    assert!(end.is_none(), "{end:?}");
    let reason = server.await.unwrap();
    assert!(matches!(reason, CloseReason::Local), "{reason:?}");
}

#[tokio::test]
async fn server_dying_mid_call_fails_every_pending_call_promptly() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // A server that reads ten requests, answers none, and drops the
    // connection without a close frame.
    let dying = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut ws = tokio_tungstenite::accept_async(stream).await.unwrap();
        for _ in 0..10 {
            ws.next().await.unwrap().unwrap();
        }
    });
    let url = format!("ws://{addr}/");
    let client = Peer::spawn(
        WebSocketConnector::new(url.as_str())
            .connect()
            .await
            .unwrap(),
    );
    let started = Instant::now();
    let calls = (0..10i64).map(|i| client.call::<i64>("add", (i, i)).into_future());
    let results = tokio::time::timeout(ANSWER_TIMEOUT, join_all(calls))
        .await
        .expect("no call hangs");
    dying.await.unwrap();
    let mut message = String::new();
    for result in results {
        match result {
            Err(CallError::Closed(reason)) => message = reason.to_string(),
            other => panic!("expected the call to fail as closed, got {other:?}"),
        }
    }
    println!(
        "websocket: 10 pending calls failed {:?} after the server died: {message}",
        started.elapsed()
    );
}

#[tokio::test]
async fn client_dropping_the_connection_mid_call_ends_its_server_peer() {
    let (server, addr) = serve().await;
    let mut ws = raw_client(addr).await;
    ws.send(Message::text(
        r#"{"jsonrpc":"2.0","id":1,"method":"sleep","params":[50]}"#,
    ))
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(server.live_connections(), 1);
    drop(ws);
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_client_that_never_completes_its_handshake_is_dropped() {
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0")
        .await
        .unwrap()
        .handshake_timeout(Duration::from_millis(100));
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(router());
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let mut buf = [0u8; 64];
    let n = tokio::time::timeout(ANSWER_TIMEOUT, silent.read(&mut buf))
        .await
        .expect("the server hangs up in time")
        .unwrap_or(0);
    assert_eq!(n, 0, "the server sends nothing, it hangs up");
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn connect_refuses_a_url_of_another_scheme_before_connecting() {
    for url in ["http://localhost/", "tcp://localhost:1", "not a url"] {
        let err = WebSocketConnector::new(url).connect().await.unwrap_err();
        assert!(
            matches!(&err, TransportError::Invalid(why) if why.contains(url)),
            "{url}: {err:?}"
        );
    }
}
