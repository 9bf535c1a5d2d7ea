//! Client batches: one frame out, typed results matched by id whatever
//! the answers' order, over memory, TCP, WebSocket and HTTP; a generated
//! client's calls in a batch; a batch the server refuses as a whole; a
//! batch dropped unsent; mixed failures.

use std::time::Duration;

use jsonrpc_runtime::server::{HttpListener, Listener};
use jsonrpc_runtime::transport::{
    HttpConnector, TcpAcceptor, TcpConnector, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::{rpc, CallError, Config, Peer, Router, RpcError, Transport};
use serde::{Deserialize, Serialize};
use tests::RawClient;

#[derive(Debug, Serialize, Deserialize, RpcError, PartialEq)]
enum CalcError {
    #[rpc(error(code = -32010, message = "Division by zero"))]
    DivisionByZero,
}

#[rpc]
trait Calc {
    #[rpc(request = "div")]
    async fn div(&self, a: i64, b: i64) -> Result<i64, CalcError>;
    /// Answers after `ms`, so later entries can be answered first.
    #[rpc(request = "late")]
    async fn late(&self, ms: u64) -> u64;
    #[rpc(notification = "log")]
    async fn log(&self, line: String);
}

struct Service;

impl Calc for Service {
    async fn div(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        if b == 0 {
            return Err(CalcError::DivisionByZero);
        }
        Ok(a / b)
    }
    async fn late(&self, ms: u64) -> u64 {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        ms
    }
    async fn log(&self, _line: String) {}
}

fn router() -> Router {
    Service.into_router()
}

/// A batch of calls with different delays (the answers arrive in another
/// order than the calls), a domain error, an unknown method and a
/// notification.
async fn batch_through(peer: Peer) {
    let client = CalcClient::new(peer.clone());
    let mut batch = peer.batch();
    let slow = batch.call(client.late(60));
    let fast = batch.call(client.late(0));
    let quotient = batch.call(client.div(7, 2));
    let by_zero = batch.call(client.div(1, 0));
    let unknown = batch.call(peer.call::<i64>("nope", ()));
    batch.notify("log", ["in the batch"]).unwrap();
    assert_eq!(batch.len(), 6);
    batch.send().await.unwrap();
    assert_eq!(fast.await.unwrap(), 0);
    assert_eq!(slow.await.unwrap(), 60);
    assert_eq!(quotient.await.unwrap(), 3);
    assert!(matches!(
        by_zero.await,
        Err(CallError::Domain(CalcError::DivisionByZero))
    ));
    let err = unknown.await.unwrap_err();
    assert_eq!(err.as_rpc().map(|e| e.code.0), Some(-32601), "{err}");

    // Many batches at once, each answered in full.
    let batches = (0..20).map(|i| {
        let (peer, client) = (peer.clone(), client.clone());
        async move {
            let mut batch = peer.batch();
            let calls: Vec<_> = (0..10)
                .map(|j| batch.call(client.div(i * 100 + j, 1)))
                .collect();
            batch.send().await.unwrap();
            for (j, call) in calls.into_iter().enumerate() {
                assert_eq!(call.await.unwrap(), i * 100 + j as i64);
            }
        }
    });
    futures_util::future::join_all(batches).await;
    // An empty batch sends nothing and succeeds.
    peer.batch().send().await.unwrap();
}

#[tokio::test]
async fn a_batch_over_memory() {
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder().router(router()).spawn(b);
    batch_through(Peer::spawn(a)).await;
}

#[tokio::test]
async fn a_batch_over_tcp() {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(router());
    batch_through(Peer::spawn(
        TcpConnector::new(addr).connect().await.unwrap(),
    ))
    .await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_batch_over_websocket() {
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(router());
    let transport = WebSocketConnector::new(format!("ws://{addr}/"))
        .connect()
        .await
        .unwrap();
    batch_through(Peer::spawn(transport)).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_batch_over_http() {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = HttpListener::new(acceptor).spawn(router());
    let transport = HttpConnector::new(format!("http://{addr}/"))
        .connect()
        .await
        .unwrap();
    batch_through(Peer::spawn(transport)).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_frame_is_one_array() {
    let mut raw = RawClient::start(Router::new(), Config::default());
    let mut batch = raw.peer.batch();
    let first = batch.call(raw.peer.call::<i64>("add", [1, 2]));
    let second = batch.call(raw.peer.call::<String>("name", ()));
    batch.notify("log", ["x"]).unwrap();
    batch.send().await.unwrap();
    let frame = raw.recv().await;
    let entries = frame.as_array().expect("one array");
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["method"], "add");
    assert_eq!(entries[1]["method"], "name");
    assert!(entries[2].get("id").is_none());
    // Answered in the other order, each still finds its call.
    let (a, b) = (&entries[0]["id"], &entries[1]["id"]);
    raw.send(&format!(
        r#"[{{"jsonrpc":"2.0","id":{b},"result":"calc"}},{{"jsonrpc":"2.0","id":{a},"result":3}}]"#
    ))
    .await;
    assert_eq!(second.await.unwrap(), "calc");
    assert_eq!(first.await.unwrap(), 3);
}

#[tokio::test]
async fn a_batch_the_server_refuses_fails_each_of_its_calls() {
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder()
        .config(Config::default().max_batch_len(3))
        .router(router())
        .spawn(b);
    let peer = Peer::spawn(a);
    let client = CalcClient::new(peer.clone());
    let mut batch = peer.batch();
    let calls: Vec<_> = (0..4).map(|i| batch.call(client.div(i, 1))).collect();
    batch.send().await.unwrap();
    for call in calls {
        let err = call.await.unwrap_err();
        assert_eq!(err.as_rpc().map(|e| e.code.0), Some(-32600), "{err}");
    }
    // Within the cap, it goes through.
    let mut batch = peer.batch();
    let calls: Vec<_> = (0..3).map(|i| batch.call(client.div(i, 1))).collect();
    batch.send().await.unwrap();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap(), i as i64);
    }
}

#[tokio::test]
async fn a_batch_dropped_unsent_cancels_its_calls_and_a_bad_entry_fails_alone() {
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder().router(router()).spawn(b);
    let peer = Peer::spawn(a);
    let mut batch = peer.batch();
    let call = batch.call(peer.call::<i64>("div", [1, 1]));
    drop(batch);
    assert!(matches!(call.await, Err(CallError::Cancelled)));

    // Params that do not encode fail their entry; the rest is sent.
    let mut batch = peer.batch();
    let bad = batch.call(peer.call::<i64>("div", 5));
    let good = batch.call(peer.call::<i64>("div", [9, 3]));
    assert_eq!(batch.len(), 1);
    batch.send().await.unwrap();
    assert!(matches!(bad.await, Err(CallError::InvalidParams(_))));
    assert_eq!(good.await.unwrap(), 3);

    // A call made on another connection's handle fails alone.
    let (c, d) = Transport::pair(8);
    let _other_server = Peer::builder().router(router()).spawn(d);
    let other = Peer::spawn(c);
    let mut batch = peer.batch();
    let foreign = batch.call(other.call::<i64>("div", [1, 1]));
    assert!(batch.is_empty());
    batch.send().await.unwrap();
    assert!(matches!(foreign.await, Err(CallError::NotSent(_))));
}
