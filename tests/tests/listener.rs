//! The listener shared by every socket server: per-connection routes,
//! the connection limit, graceful and immediate shutdown, and spec_server
//! serving sockets until SIGTERM.

mod transport_support;

use std::process::Stdio;
use std::time::Duration;

use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector, UnixConnector, WebSocketConnector};
use jsonrpc_runtime::{CallError, Config, Context, ErrorCode, ErrorObject, Peer, Router};
use tests::{example_path, ANSWER_TIMEOUT};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;
use transport_support::{router, wait_until_drained};

async fn bind() -> (TcpAcceptor, std::net::SocketAddr) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    (acceptor, addr)
}

async fn connect(addr: std::net::SocketAddr) -> Peer {
    Peer::spawn(TcpConnector::new(addr).connect().await.unwrap())
}

#[tokio::test]
async fn routes_can_be_built_per_connection() {
    let (acceptor, addr) = bind().await;
    let server = Listener::new(acceptor).spawn(|peer: &PeerAddr| {
        let who = peer.to_string();
        Router::new().request("whoami", move |(): (), _: Context| {
            let who = who.clone();
            async move { Ok::<_, ErrorObject>(who) }
        })
    });
    let (a, b) = (connect(addr).await, connect(addr).await);
    let (who_a, who_b): (String, String) = (
        a.call("whoami", ()).await.unwrap(),
        b.call("whoami", ()).await.unwrap(),
    );
    assert_ne!(who_a, who_b, "each connection has its own routes");
    assert!(who_a.starts_with("127.0.0.1:"), "{who_a}");
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn connection_limit_holds_extra_clients_until_one_leaves() {
    let (acceptor, addr) = bind().await;
    let server = Listener::new(acceptor).connection_limit(2).spawn(router());
    let (first, second) = (connect(addr).await, connect(addr).await);
    assert_eq!(first.call::<i64>("add", (1, 1)).await.unwrap(), 2);
    assert_eq!(second.call::<i64>("add", (2, 2)).await.unwrap(), 4);
    assert_eq!(server.live_connections(), 2);

    // The third client connects (the OS backlog takes it) but is not served.
    let third = connect(addr).await;
    let waiting = tokio::spawn({
        let third = third.clone();
        async move { third.call::<i64>("add", (3, 3)).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiting.is_finished(), "the third client waits");
    assert_eq!(server.live_connections(), 2);

    first.close(Duration::from_secs(1)).await;
    let answer = tokio::time::timeout(ANSWER_TIMEOUT, waiting)
        .await
        .expect("served once a slot frees")
        .unwrap();
    assert_eq!(answer.unwrap(), 6);
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn shutdown_lets_running_requests_finish_and_refuses_new_ones() {
    let (acceptor, addr) = bind().await;
    let server = Listener::new(acceptor).spawn(router());
    let client = connect(addr).await;
    let slow = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (300,)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let shutdown = tokio::spawn(server.shutdown(Duration::from_secs(5)));
    tokio::time::sleep(Duration::from_millis(50)).await;

    // During the grace, new requests are refused...
    let err = client.call::<i64>("add", (1, 1)).await.unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::SERVER_CLOSING)
    );
    // ...and the running one finishes.
    assert_eq!(slow.await.unwrap().unwrap(), 300);
    tokio::time::timeout(ANSWER_TIMEOUT, shutdown)
        .await
        .expect("shutdown finishes")
        .unwrap();
    // Nothing accepts anymore.
    let refused = TcpConnector::new(addr).connect().await;
    assert!(refused.is_err(), "the socket is closed");
}

#[tokio::test]
async fn shutdown_grace_expiry_answers_running_requests_with_server_closing() {
    let (acceptor, addr) = bind().await;
    let server = Listener::new(acceptor).spawn(router());
    let client = connect(addr).await;
    let slow = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (60_000,)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    tokio::time::timeout(ANSWER_TIMEOUT, server.shutdown(Duration::from_millis(100)))
        .await
        .expect("shutdown does not wait for the handler");
    let err = slow.await.unwrap().unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::SERVER_CLOSING)
    );
}

#[tokio::test]
async fn dropping_the_server_closes_every_connection_at_once() {
    let (acceptor, addr) = bind().await;
    let server = Listener::new(acceptor).spawn(router());
    let client = connect(addr).await;
    let slow = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (60_000,)).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    drop(server);
    let err = tokio::time::timeout(ANSWER_TIMEOUT, slow)
        .await
        .expect("the call fails promptly")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, CallError::Rpc(e) if e.code == ErrorCode::SERVER_CLOSING)
            || matches!(err, CallError::Closed(_)),
        "{err:?}"
    );
}

#[tokio::test]
async fn live_connections_counts_open_connections() {
    let (acceptor, addr) = bind().await;
    let server = Listener::new(acceptor).spawn(router());
    assert_eq!(server.live_connections(), 0);
    let clients = [
        connect(addr).await,
        connect(addr).await,
        connect(addr).await,
    ];
    for client in &clients {
        let _: i64 = client.call("add", (0, 0)).await.unwrap();
    }
    assert_eq!(server.live_connections(), 3);
    for client in &clients {
        client.close(Duration::from_secs(1)).await;
    }
    wait_until_drained(&server).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[cfg(unix)]
#[tokio::test]
async fn spec_server_serves_every_socket_and_exits_cleanly_on_sigterm() {
    let path = transport_support::socket_path("spec-server");
    let mut child = Command::new(example_path("spec_server"))
        .args(["--tcp", "127.0.0.1:0", "--ws", "127.0.0.1:0", "--unix"])
        .arg(&path)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let lines = tests::listening_lines(&mut stderr, 3).await;
    let config = Config::default();
    let mut clients = Vec::new();
    for line in &lines {
        let transport = if let Some(addr) = line.strip_prefix("tcp ") {
            TcpConnector::new(addr)
                .codec(&config)
                .connect()
                .await
                .unwrap()
        } else if let Some(path) = line.strip_prefix("unix ") {
            UnixConnector::new(path)
                .codec(&config)
                .connect()
                .await
                .unwrap()
        } else {
            WebSocketConnector::new(line).connect().await.unwrap()
        };
        clients.push(Peer::spawn(transport));
    }
    for client in &clients {
        assert_eq!(client.call::<i64>("subtract", [42, 23]).await.unwrap(), 19);
        assert_eq!(client.call::<i64>("sum", [1, 2, 3]).await.unwrap(), 6);
    }

    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
    assert!(!path.exists(), "spec_server removed its socket file");
    for client in &clients {
        tokio::time::timeout(ANSWER_TIMEOUT, client.closed())
            .await
            .expect("every connection was closed");
    }
}

#[tokio::test]
async fn spec_server_over_tcp_with_content_length_framing() {
    let mut child = Command::new(example_path("spec_server"))
        .args(["--content-length", "--tcp", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let lines = tests::listening_lines(&mut stderr, 1).await;
    let addr = lines[0].strip_prefix("tcp ").unwrap();
    let config = Config::default().framing(jsonrpc_runtime::codec::Framing::ContentLength);
    let client = Peer::spawn(
        TcpConnector::new(addr)
            .codec(&config)
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(client.call::<i64>("subtract", [5, 8]).await.unwrap(), -3);
    client.close(Duration::from_secs(1)).await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn shutdown_all_stops_every_listener_accepting_before_any_drains() {
    use jsonrpc_runtime::server::shutdown_all;
    use jsonrpc_runtime::transport::UnixAcceptor;
    use std::sync::Arc;
    use tokio::sync::Semaphore;

    let release = Arc::new(Semaphore::new(0));
    let held = release.clone();
    let router = Router::new().request("hold", move |(): (), _: Context| {
        let held = held.clone();
        async move {
            held.acquire().await.expect("open").forget();
            Ok::<_, ErrorObject>("released")
        }
    });
    let (acceptor, addr) = bind().await;
    let tcp = Listener::new(acceptor).spawn(router.clone());
    let dir = tempdir();
    let path = dir.join("rpc.sock");
    let unix = Listener::new(UnixAcceptor::bind(&path).await.unwrap()).spawn(router);

    // A request in flight on the TCP server keeps it draining.
    let client = connect(addr).await;
    let call = tokio::spawn(async move { client.call::<String>("hold", ()).await });
    tokio::time::timeout(ANSWER_TIMEOUT, async {
        while tcp.live_connections() == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    // Listed first: shut down one after another, the Unix socket would
    // accept until the TCP server had drained.
    let shutdown = tokio::spawn(shutdown_all([tcp, unix], Duration::from_secs(60)));
    tokio::time::timeout(ANSWER_TIMEOUT, async {
        while tokio::net::UnixStream::connect(&path).await.is_ok() {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the Unix socket stops accepting while the TCP server drains");
    assert!(!shutdown.is_finished(), "the TCP server is still draining");
    release.add_permits(1);
    assert_eq!(call.await.unwrap().unwrap(), "released");
    tokio::time::timeout(ANSWER_TIMEOUT, shutdown)
        .await
        .expect("shutdown ends once the request is answered")
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fresh directory for socket files.
fn tempdir() -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let dir = std::env::temp_dir().join(format!(
        "listener-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
