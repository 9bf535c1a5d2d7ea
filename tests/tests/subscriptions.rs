//! Subscriptions: items in order and the end over memory, TCP and
//! WebSocket; the wire format exactly; unsubscribe and a client that
//! leaves; the per-connection cap at 10,000 subscribe calls; the feed
//! policies against a client that never reads; a client that lags;
//! refusals over HTTP and inside a batch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt as _;
use jsonrpc_runtime::peer::{SubscribeOptions, SubscriptionError};
use jsonrpc_runtime::router::{PendingSubscription, SubscriptionClosed, WhenFull};
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{
    TcpAcceptor, TcpConnector, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router, Transport};
use serde_json::{json, Value};
use tests::{RawClient, ANSWER_TIMEOUT};
use tokio::sync::{mpsc, Notify};

/// `subscribe_ticks [count]` sends 1..=count, then ends; `watch` accepts
/// and reports on `closed` once the client unsubscribes or leaves.
fn router(closed: mpsc::UnboundedSender<u64>) -> Router {
    Router::new()
        .subscription(
            "subscribe_ticks",
            "ticks",
            "unsubscribe_ticks",
            |(count,): (u64,), pending: PendingSubscription<u64>, _: Context| async move {
                let sink = pending.accept().await?;
                for n in 1..=count {
                    sink.send(&n).await?;
                }
                Ok::<_, SubscriptionClosed>(())
            },
        )
        .subscription(
            "watch",
            "watched",
            "unwatch",
            move |(): (), pending: PendingSubscription<String>, _: Context| {
                let closed = closed.clone();
                async move {
                    let sink = pending.accept().await?;
                    sink.send(&"first".to_owned()).await?;
                    sink.closed().await;
                    let _ = closed.send(sink.id().as_i64().unwrap_or(-1) as u64);
                    Ok::<_, SubscriptionClosed>(())
                }
            },
        )
        .subscription(
            "refuse",
            "refused",
            "unrefuse",
            |(): (), pending: PendingSubscription<u64>, _: Context| async move {
                pending.reject(ErrorObject::new(-32010, "not today"));
            },
        )
        .subscription(
            "fail_early",
            "failed",
            "unfail",
            |(): (), _pending: PendingSubscription<u64>, _: Context| async move {
                Err::<(), _>(ErrorObject::new(-32011, "no source"))
            },
        )
        .subscription(
            "fail_late",
            "failing",
            "unfail_late",
            |(): (), pending: PendingSubscription<u64>, _: Context| async move {
                let sink = pending.accept().await?;
                sink.send(&7).await?;
                Err::<(), _>(ErrorObject::new(-32012, "source gone"))
            },
        )
}

async fn ticks_through(client: Peer) {
    for count in [0u64, 1, 5, 300] {
        let mut ticks = client
            .subscribe::<u64>("subscribe_ticks", [count], "unsubscribe_ticks")
            .await
            .unwrap();
        let mut seen = Vec::new();
        while let Some(n) = tokio::time::timeout(ANSWER_TIMEOUT, ticks.next())
            .await
            .unwrap()
        {
            seen.push(n.unwrap());
        }
        assert_eq!(seen, (1..=count).collect::<Vec<_>>());
    }
    // Several at once on one connection, each in order.
    let subs = futures_util::future::join_all(
        (0..8).map(|_| client.subscribe::<u64>("subscribe_ticks", [50], "unsubscribe_ticks")),
    )
    .await;
    let streams = subs.into_iter().map(|s| s.unwrap());
    let all =
        futures_util::future::join_all(streams.map(|s| s.map(|n| n.unwrap()).collect::<Vec<_>>()))
            .await;
    for seen in all {
        assert_eq!(seen, (1..=50).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn items_arrive_in_order_then_the_stream_ends_over_memory() {
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder()
        .router(router(mpsc::unbounded_channel().0))
        .spawn(b);
    ticks_through(Peer::spawn(a)).await;
}

#[tokio::test]
async fn items_arrive_in_order_then_the_stream_ends_over_tcp() {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(router(mpsc::unbounded_channel().0));
    ticks_through(Peer::spawn(
        TcpConnector::new(addr).connect().await.unwrap(),
    ))
    .await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn items_arrive_in_order_then_the_stream_ends_over_websocket() {
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(router(mpsc::unbounded_channel().0));
    let client = WebSocketConnector::new(format!("ws://{addr}/"))
        .connect()
        .await
        .unwrap();
    ticks_through(Peer::spawn(client)).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_wire_format_is_jsonrpsee_s() {
    let mut raw = RawClient::start(router(mpsc::unbounded_channel().0), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"subscribe_ticks","params":[2]}"#)
        .await;
    // The answer, with the id, comes before any item.
    let answer = raw.recv().await;
    assert_eq!(answer["id"], 1);
    let sub = answer["result"].clone();
    assert!(sub.is_u64(), "{answer}");
    for n in 1..=2 {
        assert_eq!(
            raw.recv().await,
            json!({"jsonrpc":"2.0","method":"ticks","params":{"subscription":sub,"result":n}})
        );
    }
    // The server ended it: one closing notification, `error: null`.
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","method":"ticks","params":{"subscription":sub,"error":null}})
    );
    // Gone: unsubscribe says false.
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"unsubscribe_ticks","params":[{sub}]}}"#
    ))
    .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","id":2,"result":false})
    );

    // Open, then unsubscribe by name: true, and nothing after it.
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"watch"}"#)
        .await;
    let sub = raw.recv().await["result"].clone();
    let first = raw.recv().await;
    assert_eq!(
        first["params"],
        json!({"subscription":sub,"result":"first"})
    );
    // The wrong unsubscribe method does not end it.
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"unsubscribe_ticks","params":[{sub}]}}"#
    ))
    .await;
    assert_eq!(raw.recv().await["result"], false);
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"unwatch","params":{{"subscription":{sub}}}}}"#
    ))
    .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","id":5,"result":true})
    );
    raw.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn rejections_and_failures_reach_the_client() {
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder()
        .router(router(mpsc::unbounded_channel().0))
        .spawn(b);
    let client = Peer::spawn(a);
    let err = client
        .subscribe::<u64>("refuse", (), "unrefuse")
        .await
        .unwrap_err();
    assert_eq!(err.as_rpc().map(|e| e.code.0), Some(-32010), "{err}");
    let err = client
        .subscribe::<u64>("fail_early", (), "unfail")
        .await
        .unwrap_err();
    assert_eq!(err.as_rpc().map(|e| e.code.0), Some(-32011), "{err}");
    let mut late = client
        .subscribe::<u64>("fail_late", (), "unfail_late")
        .await
        .unwrap();
    assert_eq!(late.next().await.unwrap().unwrap(), 7);
    match late.next().await {
        Some(Err(SubscriptionError::Ended(e))) => assert_eq!(e.code.0, -32012),
        other => panic!("expected the server's error, got {other:?}"),
    }
    assert!(late.next().await.is_none());
}

#[tokio::test]
async fn the_handler_learns_of_an_unsubscribe_and_of_a_client_that_leaves() {
    let (closed_tx, mut closed) = mpsc::unbounded_channel();
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder().router(router(closed_tx)).spawn(b);
    let client = Peer::spawn(a);

    let mut sub = client
        .subscribe::<String>("watch", (), "unwatch")
        .await
        .unwrap();
    assert_eq!(sub.next().await.unwrap().unwrap(), "first");
    let id = sub.id().as_i64().unwrap() as u64;
    assert!(sub.unsubscribe().await.unwrap());
    assert_eq!(
        tokio::time::timeout(ANSWER_TIMEOUT, closed.recv())
            .await
            .unwrap(),
        Some(id)
    );

    // Dropping the stream unsubscribes too.
    let mut sub = client
        .subscribe::<String>("watch", (), "unwatch")
        .await
        .unwrap();
    assert_eq!(sub.next().await.unwrap().unwrap(), "first");
    let id = sub.id().as_i64().unwrap() as u64;
    drop(sub);
    assert_eq!(
        tokio::time::timeout(ANSWER_TIMEOUT, closed.recv())
            .await
            .unwrap(),
        Some(id)
    );

    // The client leaves: the handler learns, the client's stream says why.
    let mut sub = client
        .subscribe::<String>("watch", (), "unwatch")
        .await
        .unwrap();
    assert_eq!(sub.next().await.unwrap().unwrap(), "first");
    client.close_now().await;
    assert!(tokio::time::timeout(ANSWER_TIMEOUT, closed.recv())
        .await
        .unwrap()
        .is_some());
    assert!(matches!(
        sub.next().await,
        Some(Err(SubscriptionError::Closed(_)))
    ));
    assert!(sub.next().await.is_none());
}

#[tokio::test]
async fn ten_thousand_subscriptions_are_refused_past_the_cap() {
    let cap = 1024;
    let (a, b) = Transport::pair(1024);
    let _server = Peer::builder()
        .config(Config::default().max_subscriptions(cap))
        .router(router(mpsc::unbounded_channel().0))
        .spawn(b);
    let client = Peer::spawn(a);
    let calls = (0..10_000).map(|_| {
        client.subscribe_with::<String, ErrorObject>(
            "watch",
            (),
            "unwatch",
            SubscribeOptions::default().buffer(4),
        )
    });
    let outcomes = futures_util::future::join_all(calls).await;
    let mut open = Vec::new();
    let mut refused = 0;
    for outcome in outcomes {
        match outcome {
            Ok(sub) => open.push(sub),
            Err(jsonrpc_runtime::CallError::Domain(e)) => {
                assert_eq!(e.code.0, -32000);
                assert!(e.message.contains("1024 subscriptions"), "{}", e.message);
                refused += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(open.len(), cap);
    assert_eq!(refused, 10_000 - cap);
    // A seat given back is taken again.
    let first = open.pop().unwrap();
    assert!(first.unsubscribe().await.unwrap());
    client
        .subscribe::<String>("watch", (), "unwatch")
        .await
        .unwrap();
}

/// A server whose `flood` handler sends items until the subscription
/// ends, yielding between sends, and reports how many it queued.
fn flood(
    policy: WhenFull,
    sent: Arc<AtomicU64>,
    dropped: Arc<AtomicU64>,
    done: Arc<Notify>,
) -> Router {
    Router::new().subscription(
        "flood",
        "item",
        "unflood",
        move |(): (), pending: PendingSubscription<String>, _: Context| {
            let (sent, dropped, done) = (sent.clone(), dropped.clone(), done.clone());
            async move {
                let sink = pending.capacity(16).when_full(policy).accept().await?;
                let item = "x".repeat(1000);
                while sent.load(Ordering::Relaxed) < 20_000 {
                    if sink.send(&item).await.is_err() {
                        break;
                    }
                    sent.fetch_add(1, Ordering::Relaxed);
                    tokio::task::yield_now().await;
                }
                dropped.store(sink.dropped(), Ordering::Relaxed);
                done.notify_one();
                Ok::<_, SubscriptionClosed>(())
            }
        },
    )
}

/// A client that subscribes over a pipe and then never reads: what the
/// server holds is the pipe, the outbound budget and the feed.
async fn never_reading(policy: WhenFull) -> (u64, RawClient, Arc<Notify>, [Arc<AtomicU64>; 2]) {
    let sent = Arc::new(AtomicU64::new(0));
    let dropped = Arc::new(AtomicU64::new(0));
    let done = Arc::new(Notify::new());
    let budget = 64 * 1024;
    let mut raw = RawClient::start(
        flood(policy, sent.clone(), dropped.clone(), done.clone()),
        Config::default().outbound_budget(budget),
    );
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"flood"}"#)
        .await;
    (budget as u64, raw, done, [sent, dropped])
}

/// Bytes of one `flood` item's frame.
const ITEM_LEN: u64 = 1060;

/// What the server may hold for a client that never reads: the pipe
/// (1 MiB), the outbound budget and the feed, with a frame's slack each.
fn held_at_most(budget: u64) -> u64 {
    ((1 << 20) + budget) / ITEM_LEN + 16 + 3
}

#[tokio::test]
async fn a_client_that_never_reads_ends_a_closing_feed_within_the_budget() {
    let (budget, mut raw, done, _) = never_reading(WhenFull::Close).await;
    tokio::time::timeout(ANSWER_TIMEOUT, done.notified())
        .await
        .expect("the feed closes");
    // What went out fits the pipe (1 MiB), the budget and the feed; the
    // client then reads it all, the answer first and the reason last.
    let mut frames = Vec::new();
    loop {
        let frame = raw.recv().await;
        let last = frame["params"].get("error").is_some();
        frames.push(frame);
        if last {
            break;
        }
    }
    let items = frames.len() as u64 - 2;
    assert!(items <= held_at_most(budget), "{items} items held");
    assert!(items > 16, "the pump moved items on: {items}");
    let last = frames.last().unwrap();
    assert_eq!(last["params"]["error"]["code"], -32000, "{last}");
}

#[tokio::test]
async fn a_client_that_never_reads_loses_the_oldest_items_of_a_dropping_feed() {
    let (budget, _raw, done, [sent, dropped]) = never_reading(WhenFull::DropOldest).await;
    // The handler is never held up: it sends all it means to, and all but
    // what the server may hold is dropped.
    tokio::time::timeout(ANSWER_TIMEOUT * 3, done.notified())
        .await
        .expect("every item sent");
    let (sent, dropped) = (
        sent.load(Ordering::Relaxed),
        dropped.load(Ordering::Relaxed),
    );
    assert_eq!(sent, 20_000);
    assert!(
        sent - dropped <= held_at_most(budget),
        "{sent} sent, {dropped} dropped"
    );
}

#[tokio::test]
async fn a_client_that_lags_gets_lagged_and_unsubscribes() {
    let (closed_tx, mut closed) = mpsc::unbounded_channel();
    let router = router(closed_tx).subscription(
        "burst",
        "bursting",
        "unburst",
        |(): (), pending: PendingSubscription<u64>, _: Context| async move {
            let sink = pending.accept().await?;
            for n in 0..100u64 {
                sink.send(&n).await?;
            }
            sink.closed().await;
            Ok::<_, SubscriptionClosed>(())
        },
    );
    let (a, b) = Transport::pair(256);
    let _server = Peer::builder().router(router).spawn(b);
    let client = Peer::spawn(a);
    let mut sub = client
        .subscribe_with::<u64, ErrorObject>(
            "burst",
            (),
            "unburst",
            SubscribeOptions::default().buffer(10),
        )
        .await
        .unwrap();
    // Wait for the burst to have come: the watch below is answered after it.
    let mut watch = client
        .subscribe::<String>("watch", (), "unwatch")
        .await
        .unwrap();
    watch.next().await.unwrap().unwrap();
    let mut seen = Vec::new();
    let end = loop {
        match sub.next().await {
            Some(Ok(n)) => seen.push(n),
            other => break other,
        }
    };
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
    assert!(
        matches!(end, Some(Err(SubscriptionError::Lagged(10)))),
        "{end:?}"
    );
    assert!(sub.next().await.is_none());
    drop(watch);
    assert!(tokio::time::timeout(ANSWER_TIMEOUT, closed.recv())
        .await
        .unwrap()
        .is_some());
}

#[tokio::test]
async fn subscriptions_are_refused_over_http_and_inside_a_batch() {
    let router = router(mpsc::unbounded_channel().0);
    let answer = router
        .respond(br#"{"jsonrpc":"2.0","id":1,"method":"subscribe_ticks","params":[1]}"#)
        .await
        .unwrap();
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert!(answer["error"]["message"]
        .as_str()
        .unwrap()
        .contains("opens a subscription"));

    let mut raw = RawClient::start(router, Config::default());
    raw.send(r#"[{"jsonrpc":"2.0","id":1,"method":"subscribe_ticks","params":[1]},{"jsonrpc":"2.0","id":2,"method":"unsubscribe_ticks","params":[9]}]"#).await;
    let answers = raw.recv().await;
    assert_eq!(answers[0]["error"]["code"], -32600, "{answers}");
    assert!(answers[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("inside a batch"));
    assert_eq!(answers[1]["result"], false);
}

/// spec_server's `subscribe_ticks` over WebSocket and TCP: by name and by
/// position, a bounded count and an endless one unsubscribed.
#[tokio::test]
async fn spec_server_ticks_over_websocket_and_tcp() {
    use tokio::io::AsyncBufReadExt as _;
    let mut child = tokio::process::Command::new(tests::example_path("spec_server"))
        .args(["--ws", "127.0.0.1:0", "--tcp", "127.0.0.1:0"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let lines = tests::listening_lines(&mut stderr, 2).await;
    let ws = lines.iter().find(|l| l.starts_with("ws://")).unwrap();
    let tcp = lines.iter().find_map(|l| l.strip_prefix("tcp ")).unwrap();
    let clients = [
        Peer::spawn(WebSocketConnector::new(ws.clone()).connect().await.unwrap()),
        Peer::spawn(
            TcpConnector::new(tcp.parse::<std::net::SocketAddr>().unwrap())
                .connect()
                .await
                .unwrap(),
        ),
    ];
    for client in clients {
        let mut ticks = client
            .subscribe::<u64>(
                "subscribe_ticks",
                json!({"interval_ms": 1, "count": 3}),
                "unsubscribe_ticks",
            )
            .await
            .unwrap();
        let mut seen = Vec::new();
        while let Some(n) = tokio::time::timeout(ANSWER_TIMEOUT, ticks.next())
            .await
            .unwrap()
        {
            seen.push(n.unwrap());
        }
        assert_eq!(seen, [1, 2, 3]);
        let mut endless = client
            .subscribe::<u64>("subscribe_ticks", [0, 0], "unsubscribe_ticks")
            .await
            .unwrap();
        for expected in 1..=1000 {
            assert_eq!(endless.next().await.unwrap().unwrap(), expected);
        }
        assert!(endless.unsubscribe().await.unwrap());
        client.close(Duration::from_secs(1)).await;
    }
}

/// A server that ends a subscription with a string for its error (what
/// jsonrpsee's servers send for an error given as text): the stream ends
/// with that string as the message.
#[tokio::test]
async fn a_close_with_a_string_error_ends_the_stream_with_that_message() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        let request: serde_json::Value =
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(request["method"], "subscribe_count");
        let id = &request["id"];
        let frames = [
            json!({"jsonrpc":"2.0","id":id,"result":"a1"}),
            json!({"jsonrpc":"2.0","method":"count","params":{"subscription":"a1","result":1}}),
            json!({"jsonrpc":"2.0","method":"count","params":{"subscription":"a1","error":"counted to 1"}}),
        ];
        for frame in frames {
            write
                .write_all(format!("{frame}\n").as_bytes())
                .await
                .unwrap();
        }
        // Hold the connection open until the client goes.
        while let Ok(Some(_)) = lines.next_line().await {}
    });
    let client = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    let mut sub = client
        .subscribe::<u64>("subscribe_count", (), "unsubscribe_count")
        .await
        .unwrap();
    assert_eq!(sub.next().await.unwrap().unwrap(), 1);
    match sub.next().await {
        Some(Err(SubscriptionError::Ended(error))) => {
            assert_eq!(error.message, "counted to 1");
            assert_eq!(error.code.0, -32603);
        }
        other => panic!("expected the end with the string, got {other:?}"),
    }
    assert!(sub.next().await.is_none());
    client.close(Duration::from_secs(1)).await;
    server.await.unwrap();
}
