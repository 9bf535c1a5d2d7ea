//! How a connection ends: graceful and immediate closes, the other side
//! leaving, the last handle dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::{
    CallError, CloseReason, Config, Context, ErrorCode, ErrorObject, Peer, Router, Transport,
};

fn sleepy_router(finished: Arc<AtomicBool>) -> Router {
    Router::new().request("sleep", move |(ms,): (u64,), _: Context| {
        let finished = finished.clone();
        async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            finished.store(true, Ordering::SeqCst);
            Ok::<_, ErrorObject>(ms)
        }
    })
}

fn connect(router: Router) -> (Peer, Peer) {
    let (a, b) = Transport::pair(16);
    let server = Peer::builder().router(router).spawn(b);
    (Peer::spawn(a), server)
}

#[tokio::test]
async fn close_with_grace_lets_running_requests_finish() {
    let finished = Arc::new(AtomicBool::new(false));
    let (client, server) = connect(sleepy_router(finished.clone()));
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (100,)).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let reason = server.close(Duration::from_secs(5)).await;
    assert!(matches!(reason, CloseReason::Local), "{reason:?}");
    assert_eq!(call.await.unwrap().unwrap(), 100);
    assert!(finished.load(Ordering::SeqCst));
}

#[tokio::test]
async fn close_refuses_new_requests_during_the_grace() {
    let finished = Arc::new(AtomicBool::new(false));
    let (client, server) = connect(sleepy_router(finished));
    let slow = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (300,)).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let closing = tokio::spawn(async move { server.close(Duration::from_secs(5)).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let err = client.call::<u64>("sleep", (1,)).await.unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::SERVER_CLOSING)
    );
    assert_eq!(slow.await.unwrap().unwrap(), 300);
    closing.await.unwrap();
}

#[tokio::test]
async fn close_now_stops_running_handlers_and_answers_them() {
    let finished = Arc::new(AtomicBool::new(false));
    let (client, server) = connect(sleepy_router(finished.clone()));
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("sleep", (10_000,)).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    let started = std::time::Instant::now();
    server.close_now().await;
    let err = tokio::time::timeout(Duration::from_secs(2), call)
        .await
        .expect("prompt")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, CallError::Rpc(e) if e.code == ErrorCode::SERVER_CLOSING)
            || matches!(err, CallError::Closed(_)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(!finished.load(Ordering::SeqCst));
}

#[tokio::test]
async fn pending_calls_fail_promptly_when_the_other_side_leaves() {
    let (a, b) = Transport::pair(16);
    let client = Peer::spawn(a);
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call::<u64>("never", ()).await }
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    drop(b);
    let err = tokio::time::timeout(Duration::from_secs(1), call)
        .await
        .expect("prompt")
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(err, CallError::Closed(CloseReason::RemoteClosed)),
        "{err:?}"
    );
    assert!(matches!(client.closed().await, CloseReason::RemoteClosed));
    // Calls after the end fail at once.
    let err = client.call::<u64>("never", ()).await.unwrap_err();
    assert!(matches!(err, CallError::Closed(_)), "{err:?}");
}

#[tokio::test]
async fn dropping_the_last_handle_closes_the_connection() {
    let (a, b) = Transport::pair(16);
    let server = Peer::builder().spawn(b);
    let client = Peer::spawn(a);
    let client_closed = client.closed();
    drop(client);
    let reason = tokio::time::timeout(Duration::from_secs(2), server.closed())
        .await
        .expect("closed");
    assert!(matches!(reason, CloseReason::RemoteClosed), "{reason:?}");
    assert!(matches!(client_closed.await, CloseReason::Local));
}

#[tokio::test]
async fn a_notification_sent_just_before_the_last_handle_drops_is_delivered() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let router = Router::new().notification("bye", move |(n,): (u32,), _: Context| {
        let _ = tx.send(n);
        async {}
    });
    let (client, _server) = connect(router);
    client.notify("bye", (7,)).await.unwrap();
    drop(client);
    let got = tokio::time::timeout(Duration::from_secs(2), rx.recv())
        .await
        .expect("delivered");
    assert_eq!(got, Some(7));
}

#[tokio::test]
async fn a_handler_holding_a_handle_keeps_the_connection_until_it_finishes() {
    let (a, b) = Transport::pair(16);
    let router = Router::new().request("ask_back", |(): (), ctx: Context| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let answer: String = ctx.peer().call("name", ()).await?;
        Ok::<_, ErrorObject>(answer)
    });
    drop(Peer::builder().router(router).spawn(b));
    let client_router = Router::new().request("name", |(): (), _: Context| async {
        Ok::<_, ErrorObject>("client".to_owned())
    });
    let client = Peer::builder().router(client_router).spawn(a);
    // The server's only handle was dropped at once, so the request is refused
    // or served; either way the caller learns which, and nothing hangs.
    let out = tokio::time::timeout(
        Duration::from_secs(2),
        client.call::<String>("ask_back", ()),
    )
    .await
    .expect("no hang");
    match out {
        Ok(name) => assert_eq!(name, "client"),
        Err(CallError::Closed(_)) | Err(CallError::Rpc(_)) => {}
        Err(other) => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_remote_end_lets_owed_answers_out_before_closing() {
    // The client writes requests and ends its stream at once; the server
    // still answers every one before it closes.
    let (x, y) = tokio::io::duplex(1 << 16);
    let (yr, yw) = tokio::io::split(y);
    let router = Router::new().request("slow_echo", |(n,): (u32,), _: Context| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok::<_, ErrorObject>(n)
    });
    let server = Peer::builder()
        .router(router)
        .config(Config::default())
        .spawn(Transport::from_io(
            yr,
            yw,
            jsonrpc_runtime::codec::LineCodec::new(),
        ));
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let (xr, mut xw) = tokio::io::split(x);
    for n in 0..20 {
        xw.write_all(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{n},\"method\":\"slow_echo\",\"params\":[{n}]}}\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    }
    xw.shutdown().await.unwrap();
    let mut lines = tokio::io::BufReader::new(xr).lines();
    let mut answered = 0;
    while let Some(line) = tokio::time::timeout(Duration::from_secs(5), lines.next_line())
        .await
        .unwrap()
        .unwrap()
    {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["result"], v["id"]);
        answered += 1;
    }
    assert_eq!(answered, 20);
    assert!(matches!(server.closed().await, CloseReason::RemoteClosed));
}

#[tokio::test]
async fn close_is_idempotent_and_later_sends_fail() {
    let (client, server) = connect(Router::new());
    let first = client.close_now().await;
    let second = client.close(Duration::from_secs(1)).await;
    assert!(matches!(
        (first, second),
        (CloseReason::Local, CloseReason::Local)
    ));
    assert!(client.is_closed());
    assert!(client.notify("x", ()).await.is_err());
    assert!(matches!(server.closed().await, CloseReason::RemoteClosed));
}
