//! The reconnecting client: the server killed and started again under
//! load over TCP, WebSocket and Unix (nothing answered is lost, nothing
//! runs twice, the subscription comes back with a gap marker), calls
//! failing or waiting while there is no server, and giving up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpc_runtime::peer::SubscriptionError;
use jsonrpc_runtime::reconnect::{Backoff, ReconnectBuilder, ReconnectEvent};
use jsonrpc_runtime::router::{PendingSubscription, SubscriptionClosed};
use jsonrpc_runtime::server::{Listener, Server};
use jsonrpc_runtime::transport::{
    TcpAcceptor, TcpConnector, UnixAcceptor, UnixConnector, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::{CallError, Context, ErrorObject, Router};
use tests::ANSWER_TIMEOUT;
use tokio::sync::mpsc;

/// How many times the server ran each token's `work`.
type Runs = Arc<Mutex<HashMap<u64, u32>>>;

fn router(runs: Runs) -> Router {
    Router::new()
        .request("work", move |(token,): (u64,), _: Context| {
            let runs = runs.clone();
            async move {
                *runs.lock().unwrap().entry(token).or_default() += 1;
                tokio::time::sleep(Duration::from_micros(token % 700)).await;
                Ok::<_, ErrorObject>(token)
            }
        })
        .subscription(
            "subscribe_ticks",
            "ticks",
            "unsubscribe_ticks",
            |(): (), pending: PendingSubscription<u64>, _: Context| async move {
                let sink = pending.accept().await?;
                for n in 1.. {
                    sink.send(&n).await?;
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                Ok::<_, SubscriptionClosed>(())
            },
        )
}

/// Where a server listens, and how to start one there again.
#[derive(Clone)]
enum Place {
    Tcp(std::net::SocketAddr),
    WebSocket(std::net::SocketAddr),
    Unix(std::path::PathBuf),
}

impl Place {
    async fn serve(&self, runs: &Runs) -> Server {
        // The old listener's port or path is free once its shutdown
        // returned; a bind can still race the kernel's bookkeeping.
        for _ in 0..100 {
            let server = match self {
                Place::Tcp(addr) => TcpAcceptor::bind(*addr)
                    .await
                    .map(|a| Listener::new(a).spawn(router(runs.clone()))),
                Place::WebSocket(addr) => WebSocketAcceptor::bind(*addr)
                    .await
                    .map(|a| Listener::new(a).spawn(router(runs.clone()))),
                Place::Unix(path) => UnixAcceptor::bind(path)
                    .await
                    .map(|a| Listener::new(a).spawn(router(runs.clone()))),
            };
            match server {
                Ok(server) => return server,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        }
        panic!("could not listen again");
    }

    fn client(&self) -> ReconnectBuilder {
        match self {
            Place::Tcp(addr) => TcpConnector::new(*addr).reconnecting(),
            Place::WebSocket(addr) => {
                WebSocketConnector::new(format!("ws://{addr}/")).reconnecting()
            }
            Place::Unix(path) => UnixConnector::new(path).reconnecting(),
        }
    }
}

fn free_port() -> std::net::SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Eight callers call `work` with fresh tokens while the server is killed
/// and started again; then every token answered ran exactly once, none
/// ran twice, and the subscription came back after a gap marker.
async fn restart_under_load(place: Place) {
    let runs: Runs = Arc::default();
    let server = place.serve(&runs).await;
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let client = place
        .client()
        .backoff(Backoff::new(
            Duration::from_millis(10),
            Duration::from_millis(200),
        ))
        .queue_for(ANSWER_TIMEOUT)
        .on_event(move |event| {
            let _ = events_tx.send(event.clone());
        })
        .spawn();
    client.connected().await.unwrap();
    let mut ticks = client
        .subscribe::<u64>("subscribe_ticks", (), "unsubscribe_ticks")
        .await
        .unwrap();
    assert_eq!(ticks.next().await.unwrap().unwrap(), 1);

    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let callers: Vec<_> = (0..8u64)
        .map(|caller| {
            let (client, stop, answered) = (client.clone(), stop.clone(), answered.clone());
            tokio::spawn(async move {
                let mut outcomes = Vec::new();
                let mut token = caller << 32;
                while !stop.load(Ordering::Relaxed) {
                    token += 1;
                    let outcome = client.call::<u64>("work", [token]).await;
                    if let Ok(back) = &outcome {
                        assert_eq!(*back, token);
                        answered.fetch_add(1, Ordering::Relaxed);
                    }
                    outcomes.push((token, outcome));
                }
                outcomes
            })
        })
        .collect();
    let wait_for_answers = |n: usize| {
        let answered = answered.clone();
        async move {
            while answered.load(Ordering::Relaxed) < n {
                tokio::task::yield_now().await;
            }
        }
    };
    tokio::time::timeout(ANSWER_TIMEOUT, wait_for_answers(200))
        .await
        .unwrap();
    // Killed: every connection dropped at once, calls in flight.
    server.shutdown(Duration::ZERO).await;
    let before = answered.load(Ordering::Relaxed);
    let server = place.serve(&runs).await;
    tokio::time::timeout(ANSWER_TIMEOUT, wait_for_answers(before + 200))
        .await
        .unwrap();
    stop.store(true, Ordering::Relaxed);

    let mut outcomes = Vec::new();
    for caller in callers {
        outcomes.extend(caller.await.unwrap());
    }
    let runs_seen = runs.lock().unwrap().clone();
    let mut interrupted = 0;
    {
        for (token, outcome) in outcomes {
            let ran = runs_seen.get(&token).copied().unwrap_or(0);
            match outcome {
                Ok(_) => assert_eq!(ran, 1, "token {token} was answered"),
                Err(CallError::Interrupted(_)) => {
                    interrupted += 1;
                    assert!(ran <= 1, "token {token} ran {ran} times");
                }
                Err(CallError::NotConnected(_)) => assert_eq!(ran, 0),
                // Refused or stopped by the server as it closed.
                Err(CallError::Rpc(e)) if e.code.0 == -32001 => assert!(ran <= 1),
                Err(other) => panic!("token {token}: {other}"),
            }
        }
    }
    assert!(runs_seen.values().all(|&n| n == 1), "a call ran twice");
    let _ = interrupted;

    // The subscription: items, the gap, then items of the new one.
    let mut last = 1;
    loop {
        match tokio::time::timeout(ANSWER_TIMEOUT, ticks.next())
            .await
            .unwrap()
        {
            Some(Ok(n)) => {
                assert_eq!(n, last + 1, "in order within one connection");
                last = n;
            }
            Some(Err(SubscriptionError::Reconnected)) => break,
            other => panic!("expected the gap marker, got {other:?}"),
        }
    }
    assert_eq!(ticks.next().await.unwrap().unwrap(), 1);
    assert!(ticks.unsubscribe().await.unwrap());

    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    assert!(
        matches!(
            seen.first(),
            Some(ReconnectEvent::Connected { again: false, .. })
        ),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|e| matches!(e, ReconnectEvent::Disconnected { .. })),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|e| matches!(e, ReconnectEvent::Connected { again: true, .. })),
        "{seen:?}"
    );
    client.close().await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_server_restarted_under_load() {
    restart_under_load(Place::Tcp(free_port())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_server_restarted_under_load() {
    restart_under_load(Place::WebSocket(free_port())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_server_restarted_under_load() {
    let path = std::env::temp_dir().join(format!("jsonrpc-reconnect-{}.sock", std::process::id()));
    restart_under_load(Place::Unix(path)).await;
}

#[tokio::test]
async fn without_a_server_calls_fail_at_once_or_wait_for_one() {
    let place = Place::Tcp(free_port());
    let failing = place
        .client()
        .backoff(Backoff::new(
            Duration::from_millis(5),
            Duration::from_millis(20),
        ))
        .spawn();
    // Not queued: fails at once, once a try has failed, with why.
    let err = loop {
        match failing.call::<u64>("work", [1]).await {
            Err(CallError::NotConnected(Some(e))) => break e,
            Err(CallError::NotConnected(None)) => tokio::task::yield_now().await,
            other => panic!("{other:?}"),
        }
    };
    assert!(err.to_string().to_lowercase().contains("refused"), "{err}");

    // Queued: waits for the server that comes.
    let waiting = place
        .client()
        .backoff(Backoff::new(
            Duration::from_millis(5),
            Duration::from_millis(20),
        ))
        .queue_for(ANSWER_TIMEOUT)
        .spawn();
    let call = tokio::spawn({
        let waiting = waiting.clone();
        async move { waiting.call::<u64>("work", [7]).await }
    });
    let runs: Runs = Arc::default();
    let server = place.serve(&runs).await;
    assert_eq!(call.await.unwrap().unwrap(), 7);
    assert_eq!(runs.lock().unwrap().get(&7), Some(&1));
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn it_gives_up_after_the_tries_allowed() {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let client = Place::Tcp(free_port())
        .client()
        .backoff(Backoff::new(Duration::from_millis(1), Duration::from_millis(4)).jitter(0.0))
        .max_attempts(3)
        .on_event(move |event| {
            let _ = events_tx.send(event.clone());
        })
        .spawn();
    assert!(matches!(
        client.connected().await,
        Err(CallError::NotConnected(Some(_)))
    ));
    let mut retries = Vec::new();
    loop {
        match events.recv().await.unwrap() {
            ReconnectEvent::Retrying { attempt, delay, .. } => retries.push((attempt, delay)),
            ReconnectEvent::GaveUp { attempts } => {
                assert_eq!(attempts, 3);
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    // Doubling, capped.
    assert_eq!(
        retries,
        [(1, Duration::from_millis(1)), (2, Duration::from_millis(2))]
    );
    assert!(matches!(
        client.call::<u64>("work", [1]).await,
        Err(CallError::NotConnected(_))
    ));
}
