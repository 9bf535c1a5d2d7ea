//! TCP: round trips in both framings, 200 connections × 100 calls, and
//! either side dying mid-call.

mod transport_support;

use std::future::IntoFuture as _;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use jsonrpc_runtime::codec::Framing;
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector};
use jsonrpc_runtime::{server::Server, CallError, Config, Peer};
use tests::ANSWER_TIMEOUT;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use transport_support::{load, router, wait_until_drained};

async fn serve(config: Config) -> (Server, std::net::SocketAddr) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    (Listener::new(acceptor).config(config).spawn(router()), addr)
}

#[tokio::test]
async fn round_trip_with_newline_framing() {
    let (server, addr) = serve(Config::default()).await;
    let client = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    let sum: i64 = client.call("add", (2, 3)).await.unwrap();
    assert_eq!(sum, 5);
    client.close(Duration::from_secs(1)).await;
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn round_trip_with_content_length_framing() {
    let config = Config::default().framing(Framing::ContentLength);
    let (server, addr) = serve(config.clone()).await;
    let client = Peer::spawn(
        TcpConnector::new(addr)
            .codec(&config)
            .connect()
            .await
            .unwrap(),
    );
    let sum: i64 = client.call("add", (40, 2)).await.unwrap();
    assert_eq!(sum, 42);
    client.close(Duration::from_secs(1)).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_connections_times_one_hundred_calls_are_all_answered() {
    let (server, addr) = serve(Config::default()).await;
    load("tcp", &server, move || async move {
        TcpConnector::new(addr).connect().await.expect("connect")
    })
    .await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn server_dying_mid_call_fails_every_pending_call_promptly() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // A server that reads ten requests, answers none, and dies.
    let dying = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut lines = BufReader::new(stream).lines();
        for _ in 0..10 {
            lines.next_line().await.unwrap();
        }
    });
    let client = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    let started = Instant::now();
    let calls = (0..10i64).map(|i| client.call::<i64>("add", (i, i)).into_future());
    let results = tokio::time::timeout(ANSWER_TIMEOUT, join_all(calls))
        .await
        .expect("no call hangs");
    dying.await.unwrap();
    for result in results {
        match result {
            Err(CallError::Closed(reason)) => {
                assert!(!reason.to_string().is_empty());
            }
            other => panic!("expected the call to fail as closed, got {other:?}"),
        }
    }
    println!(
        "tcp: 10 pending calls failed {:?} after the server died",
        started.elapsed()
    );
}

#[tokio::test]
async fn client_leaving_mid_call_ends_its_server_peer() {
    let (server, addr) = serve(Config::default()).await;
    let client = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    let _: i64 = client.call("add", (1, 1)).await.unwrap();
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (100,)).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(server.live_connections(), 1);
    client.close_now().await;
    let err = pending.await.unwrap().unwrap_err();
    assert!(matches!(err, CallError::Closed(_)), "{err:?}");
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_config_that_skips_blank_lines_answers_nothing_for_them() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};

    for (skip, expected) in [(false, -32700), (true, 0)] {
        let config = Config::default().skip_blank_lines(skip);
        let (server, addr) = serve(config).await;
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (read, mut write) = stream.into_split();
        write
            .write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"add\",\"params\":[1,2]}\n")
            .await
            .unwrap();
        let mut lines = tokio::io::BufReader::new(read).lines();
        let first: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        if expected == 0 {
            assert_eq!(first["result"], 3, "{first}");
        } else {
            assert_eq!(first["error"]["code"], expected, "{first}");
        }
        drop(write);
        server.shutdown(std::time::Duration::from_secs(1)).await;
    }
}
