//! Unix domain sockets: round trip, 200 connections × 100 calls, the
//! server dying mid-call, and the socket file's life: stale files replaced,
//! live servers and other files left alone, nothing left behind.
#![cfg(unix)]

mod transport_support;

use std::future::IntoFuture as _;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{UnixAcceptor, UnixConnector};
use jsonrpc_runtime::{CallError, Peer};
use tests::ANSWER_TIMEOUT;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use transport_support::{load, router, socket_path, wait_until_drained};

/// Waits up to two seconds for `path` to disappear.
async fn assert_removed(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} was left behind",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn round_trip_and_shutdown_removes_the_socket_file() {
    let path = socket_path("round-trip");
    let server = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router());
    assert!(path.exists());
    let client = Peer::spawn(UnixConnector::new(&path).connect().await.unwrap());
    let sum: i64 = client.call("add", (2, 3)).await.unwrap();
    assert_eq!(sum, 5);
    client.close(Duration::from_secs(1)).await;
    server.shutdown(Duration::from_secs(1)).await;
    assert!(!path.exists(), "shutdown removes the socket file");
}

#[tokio::test]
async fn dropping_the_server_removes_the_socket_file() {
    let path = socket_path("drop-server");
    let server = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router());
    let client = Peer::spawn(UnixConnector::new(&path).connect().await.unwrap());
    let _: i64 = client.call("add", (1, 1)).await.unwrap();
    drop(server);
    assert_removed(&path).await;
    // The connection was closed at once too.
    let reason = tokio::time::timeout(ANSWER_TIMEOUT, client.closed())
        .await
        .expect("the client sees the server go");
    println!("after the server was dropped, the client closed: {reason}");
}

#[tokio::test]
async fn dropping_an_unused_acceptor_removes_the_socket_file() {
    let path = socket_path("drop-acceptor");
    let acceptor = UnixAcceptor::bind(&path).await.unwrap();
    assert_eq!(acceptor.path(), path);
    drop(acceptor);
    assert!(!path.exists());
}

#[tokio::test]
async fn bind_replaces_a_stale_socket_file() {
    let path = socket_path("stale");
    // A server that died without cleaning up leaves its file behind.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let server = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router());
    let client = Peer::spawn(UnixConnector::new(&path).connect().await.unwrap());
    assert_eq!(client.call::<i64>("add", (20, 22)).await.unwrap(), 42);
    client.close(Duration::from_secs(1)).await;
    server.shutdown(Duration::from_secs(1)).await;
    assert!(!path.exists());
}

#[tokio::test]
async fn bind_fails_with_addr_in_use_while_a_server_listens() {
    let path = socket_path("in-use");
    let server = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router());
    let err = UnixAcceptor::bind(&path).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    assert!(err.to_string().contains("already listening"), "{err}");
    // The first server is untouched.
    let client = Peer::spawn(UnixConnector::new(&path).connect().await.unwrap());
    assert_eq!(client.call::<i64>("add", (1, 2)).await.unwrap(), 3);
    client.close(Duration::from_secs(1)).await;
    server.shutdown(Duration::from_secs(1)).await;
    assert!(!path.exists());
}

#[tokio::test]
async fn bind_never_removes_a_file_that_is_not_a_socket() {
    let path = socket_path("regular-file");
    std::fs::write(&path, b"precious").unwrap();
    let err = UnixAcceptor::bind(&path).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    assert!(err.to_string().contains("not a socket"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test]
async fn dropping_an_acceptor_leaves_a_file_someone_else_bound_since() {
    let path = socket_path("rebound");
    let acceptor = UnixAcceptor::bind(&path).await.unwrap();
    std::fs::remove_file(&path).unwrap();
    let other = std::os::unix::net::UnixListener::bind(&path).unwrap();
    drop(acceptor);
    assert!(path.exists(), "the other listener's file stays");
    drop(other);
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_connections_times_one_hundred_calls_are_all_answered() {
    let path = socket_path("load");
    let server = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router());
    let connect_to = path.clone();
    load("unix", &server, move || {
        let path = connect_to.clone();
        async move { UnixConnector::new(&path).connect().await.expect("connect") }
    })
    .await;
    server.shutdown(Duration::from_secs(1)).await;
    assert!(!path.exists());
}

#[tokio::test]
async fn server_dying_mid_call_fails_every_pending_call_promptly() {
    let path = socket_path("dying");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    // A server that reads ten requests, answers none, and dies.
    let dying = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut lines = BufReader::new(stream).lines();
        for _ in 0..10 {
            lines.next_line().await.unwrap();
        }
    });
    let client = Peer::spawn(UnixConnector::new(&path).connect().await.unwrap());
    let started = Instant::now();
    let calls = (0..10i64).map(|i| client.call::<i64>("add", (i, i)).into_future());
    let results = tokio::time::timeout(ANSWER_TIMEOUT, join_all(calls))
        .await
        .expect("no call hangs");
    dying.await.unwrap();
    for result in results {
        assert!(
            matches!(result, Err(CallError::Closed(_))),
            "expected the call to fail as closed, got {result:?}"
        );
    }
    println!(
        "unix: 10 pending calls failed {:?} after the server died",
        started.elapsed()
    );
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test]
async fn client_leaving_mid_call_ends_its_server_peer() {
    let path = socket_path("client-leaves");
    let server = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router());
    let client = Peer::spawn(UnixConnector::new(&path).connect().await.unwrap());
    let _: i64 = client.call("add", (1, 1)).await.unwrap();
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (100,)).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    client.close_now().await;
    assert!(matches!(pending.await.unwrap(), Err(CallError::Closed(_))));
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}
