//! `#[rpc(subscription = ...)]`: the generated route pair and the typed
//! client stream, over memory and TCP, with a domain error both ways.

use std::time::Duration;

use jsonrpc_runtime::peer::SubscriptionError;
use jsonrpc_runtime::router::{PendingSubscription, SubscriptionClosed};
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector};
use jsonrpc_runtime::{rpc, CallError, Context, Peer, RpcError, Transport};
use serde::{Deserialize, Serialize};
use tests::ANSWER_TIMEOUT;

#[derive(Debug, Serialize, Deserialize, RpcError, PartialEq)]
enum TickError {
    #[rpc(error(code = -32020, message = "Too many ticks"))]
    TooMany { asked: u64 },
    #[rpc(error(code = -32021, message = "The subscription closed"))]
    Closed,
}

impl From<SubscriptionClosed> for TickError {
    fn from(_: SubscriptionClosed) -> Self {
        TickError::Closed
    }
}

#[rpc]
trait Ticker {
    /// Ticks `count` times, `interval_ms` apart.
    #[rpc(
        subscription = "subscribe_ticks",
        items = "ticks",
        unsubscribe = "unsubscribe_ticks"
    )]
    async fn ticks(
        &self,
        pending: PendingSubscription<u64>,
        interval_ms: u64,
        count: u64,
    ) -> Result<(), TickError>;

    #[rpc(subscription = "subscribe_names", unsubscribe = "unsubscribe_names")]
    async fn names(&self, ctx: Context, pending: PendingSubscription<String>);

    #[rpc(request = "ping")]
    async fn ping(&self) -> String;
}

struct Service;

impl Ticker for Service {
    async fn ticks(
        &self,
        pending: PendingSubscription<u64>,
        interval_ms: u64,
        count: u64,
    ) -> Result<(), TickError> {
        if count > 1000 {
            return Err(TickError::TooMany { asked: count });
        }
        let sink = pending.accept().await?;
        for n in 1..=count {
            tokio::time::sleep(Duration::from_millis(interval_ms)).await;
            sink.send(&n).await?;
        }
        Ok(())
    }

    async fn names(&self, ctx: Context, pending: PendingSubscription<String>) {
        let method = ctx.method().to_owned();
        if let Ok(sink) = pending.accept().await {
            let _ = sink.send(&method).await;
        }
    }

    async fn ping(&self) -> String {
        "pong".into()
    }
}

async fn exercise(client: TickerClient) {
    let mut ticks = client.ticks(1, 5).await.unwrap();
    let mut seen = Vec::new();
    while let Some(n) = tokio::time::timeout(ANSWER_TIMEOUT, ticks.next())
        .await
        .unwrap()
    {
        seen.push(n.unwrap());
    }
    assert_eq!(seen, [1, 2, 3, 4, 5]);

    let err = client.ticks(0, 5000).await.unwrap_err();
    assert!(
        matches!(err, CallError::Domain(TickError::TooMany { asked: 5000 })),
        "{err}"
    );

    // The items method defaults to the subscribe method's name.
    let mut names = client.names().await.unwrap();
    assert_eq!(names.next().await.unwrap().unwrap(), "subscribe_names");
    assert!(names.next().await.is_none());
    assert_eq!(client.ping().await.unwrap(), "pong");

    // Unsubscribing ends a long one early.
    let ticks = client.ticks(10, 1000).await.unwrap();
    assert!(ticks.unsubscribe().await.unwrap());
}

#[tokio::test]
async fn a_generated_client_subscribes_over_memory() {
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder().router(Service.into_router()).spawn(b);
    exercise(TickerClient::new(Peer::spawn(a))).await;
}

#[tokio::test]
async fn a_generated_client_subscribes_over_tcp() {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(Service.into_router());
    let client = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    exercise(TickerClient::new(client)).await;
    server.shutdown(Duration::from_secs(1)).await;
}

#[test]
fn the_router_serves_both_methods_of_each_subscription() {
    let router = Service.into_router();
    for method in [
        "subscribe_ticks",
        "unsubscribe_ticks",
        "subscribe_names",
        "unsubscribe_names",
        "ping",
    ] {
        assert!(router.contains(method), "{method}");
    }
    let _ = SubscriptionError::Lagged(1);
}
