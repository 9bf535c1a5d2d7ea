//! The subscription benchmark's two servers: the same feed on our router
//! and on jsonrpsee's `RpcModule`. `subscribe_items [count, size]` sends
//! `count` items `{seq, pad}` (`seq` 1, 2, ..; `pad` a string of `size`
//! bytes) as fast as the connection takes them, each sender waiting while
//! its subscriber's buffer is full; `unsubscribe_items [id]` ends one early.

use std::net::SocketAddr;

use jsonrpc_runtime::router::{PendingSubscription, SubscriptionClosed};
use jsonrpc_runtime::{Context, Router};
use jsonrpsee::core::SubscriptionError;
use jsonrpsee::server::{RpcModule, Server, ServerHandle};
use serde::{Deserialize, Serialize};

pub const SUBSCRIBE: &str = "subscribe_items";
pub const ITEMS: &str = "items";
pub const UNSUBSCRIBE: &str = "unsubscribe_items";

/// One item of the feed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Item {
    pub seq: u64,
    pub pad: String,
}

/// The feed on our router.
pub fn router() -> Router {
    Router::new().subscription(
        SUBSCRIBE,
        ITEMS,
        UNSUBSCRIBE,
        |(count, size): (u64, usize), pending: PendingSubscription<Item>, _: Context| async move {
            let sink = pending.accept().await?;
            let mut item = Item {
                seq: 0,
                pad: "x".repeat(size),
            };
            for seq in 1..=count {
                item.seq = seq;
                sink.send(&item).await?;
            }
            Ok::<_, SubscriptionClosed>(())
        },
    )
}

/// The feed on jsonrpsee, written as its examples write a subscription:
/// `accept`, then `send` of each item serialized to a `RawValue`.
pub fn module() -> RpcModule<()> {
    let mut module = RpcModule::new(());
    module
        .register_subscription(
            SUBSCRIBE,
            ITEMS,
            UNSUBSCRIBE,
            |params, pending, _, _| async move {
                let (count, size): (u64, usize) = params.parse()?;
                let sink = pending.accept().await?;
                let mut item = Item {
                    seq: 0,
                    pad: "x".repeat(size),
                };
                for seq in 1..=count {
                    item.seq = seq;
                    sink.send(serde_json::value::to_raw_value(&item)?).await?;
                }
                Ok::<_, SubscriptionError>(())
            },
        )
        .expect("one registration");
    module
}

/// A jsonrpsee WebSocket server on a loopback port serving [`module`].
pub async fn jsonrpsee_server() -> (SocketAddr, ServerHandle) {
    let server = Server::builder().build("127.0.0.1:0").await.expect("bind");
    let addr = server.local_addr().expect("bound");
    (addr, server.start(module()))
}
