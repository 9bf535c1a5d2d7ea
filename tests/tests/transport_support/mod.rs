//! Helpers shared by the socket transport tests: a router, the
//! 200 connections × 100 calls load, and waiting for a server to drain.
// Each test binary uses a different subset of these.
#![allow(dead_code)]

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use jsonrpc_runtime::{server::Server, Context, ErrorObject, Peer, Router, Transport};
use tokio::sync::Barrier;
use tokio::task::JoinSet;

/// How many clients connect at once in the load test.
pub(crate) const CONNECTIONS: usize = 200;
/// How many calls each of them makes.
pub(crate) const CALLS: usize = 100;

/// `add` and `sleep`, the routes every socket test serves.
pub(crate) fn router() -> Router {
    Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("sleep", |(ms,): (u64,), _: Context| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, ErrorObject>(ms)
        })
}

/// A path for a Unix socket that no other test uses.
pub(crate) fn socket_path(name: &str) -> std::path::PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "jsonrpc-{name}-{}-{}.sock",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Waits until `server` has no live connection, failing after ten seconds.
pub(crate) async fn wait_until_drained(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.live_connections() > 0 {
        assert!(
            Instant::now() < deadline,
            "{} connections still live after ten seconds",
            server.live_connections()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Opens [`CONNECTIONS`] connections with `connect`, all live at once, and
/// makes [`CALLS`] concurrent calls on each; checks every answer, that the
/// server saw every connection at once, and that its live count returns to
/// zero once the clients leave. Returns the time the calls took.
///
/// Fails (rather than hangs) after a minute, should a client get stuck.
pub(crate) async fn load<F, Fut>(label: &str, server: &Server, connect: F) -> Duration
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Transport> + Send,
{
    tokio::time::timeout(Duration::from_secs(60), load_inner(label, server, connect))
        .await
        .expect("the load finished within a minute")
}

async fn load_inner<F, Fut>(label: &str, server: &Server, connect: F) -> Duration
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Transport> + Send,
{
    let answered = Arc::new(AtomicUsize::new(0));
    let connected = Arc::new(Barrier::new(CONNECTIONS + 1));
    let finish = Arc::new(Barrier::new(CONNECTIONS + 1));
    let mut clients = JoinSet::new();
    for c in 0..CONNECTIONS as i64 {
        let (connect, answered) = (connect.clone(), answered.clone());
        let (connected, finish) = (connected.clone(), finish.clone());
        clients.spawn(async move {
            let client = Peer::spawn(connect().await);
            // One answered call proves the server has accepted us.
            let first: i64 = client.call("add", (c, 0)).await.expect("first call");
            assert_eq!(first, c);
            connected.wait().await;
            let calls = (0..CALLS as i64).map(|i| {
                let client = client.clone();
                async move { (i, client.call::<i64>("add", (c, i)).await) }
            });
            for (i, result) in join_all(calls).await {
                match result {
                    Ok(sum) => assert_eq!(sum, c + i, "connection {c}, call {i}"),
                    Err(e) => panic!("connection {c}, call {i} failed: {e}"),
                }
                answered.fetch_add(1, Ordering::Relaxed);
            }
            finish.wait().await;
            client.close(Duration::from_secs(5)).await;
        });
    }
    connected.wait().await;
    let start = Instant::now();
    assert_eq!(
        server.live_connections(),
        CONNECTIONS,
        "every connection is live at once"
    );
    finish.wait().await;
    let elapsed = start.elapsed();
    while let Some(joined) = clients.join_next().await {
        joined.expect("client task");
    }
    assert_eq!(answered.load(Ordering::Relaxed), CONNECTIONS * CALLS);
    wait_until_drained(server).await;
    println!(
        "{label}: {CONNECTIONS} connections x {CALLS} calls answered in {elapsed:?} ({:.0} calls/s)",
        (CONNECTIONS * CALLS) as f64 / elapsed.as_secs_f64()
    );
    elapsed
}
