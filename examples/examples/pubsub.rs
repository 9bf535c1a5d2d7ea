//! Run with: cargo run --example pubsub
//!
//! What a jsonrpsee user looks for, over WebSocket on a free local port: a
//! typed subscription declared in `#[rpc]` (server sink with backpressure,
//! client stream), a client batch of typed calls sent as one frame, and a
//! reconnecting client that outlives a server restart, its subscription
//! coming back after a gap marker.

use std::net::SocketAddr;
use std::time::Duration;

use jsonrpc_runtime::peer::SubscriptionError;
use jsonrpc_runtime::reconnect::{Backoff, ReconnectEvent};
use jsonrpc_runtime::router::{PendingSubscription, SubscriptionClosed};
use jsonrpc_runtime::server::{Listener, Server};
use jsonrpc_runtime::transport::{WebSocketAcceptor, WebSocketConnector};
use jsonrpc_runtime::{rpc, CallError, Peer, RpcError};
use serde::{Deserialize, Serialize};

#[path = "support/logging.rs"]
mod logging;

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum MarketError {
    #[rpc(error(code = -32030, message = "Unknown symbol"))]
    UnknownSymbol { symbol: String },
    #[rpc(error(code = -32031, message = "The subscription closed"))]
    Closed,
}

impl From<SubscriptionClosed> for MarketError {
    fn from(_: SubscriptionClosed) -> Self {
        MarketError::Closed
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Tick {
    symbol: String,
    seq: u64,
    cents: u64,
}

#[rpc]
trait Market {
    /// A price tick every `interval_ms` until unsubscribed.
    #[rpc(
        subscription = "subscribe_prices",
        items = "price",
        unsubscribe = "unsubscribe_prices"
    )]
    async fn prices(
        &self,
        pending: PendingSubscription<Tick>,
        symbol: String,
        interval_ms: u64,
    ) -> Result<(), MarketError>;

    /// The price now, in cents.
    #[rpc(request = "quote")]
    async fn quote(&self, symbol: String) -> Result<u64, MarketError>;
}

struct Exchange;

fn price_of(symbol: &str) -> Result<u64, MarketError> {
    match symbol {
        "RUST" => Ok(10_000),
        "JSON" => Ok(4_200),
        _ => Err(MarketError::UnknownSymbol {
            symbol: symbol.to_owned(),
        }),
    }
}

impl Market for Exchange {
    async fn prices(
        &self,
        pending: PendingSubscription<Tick>,
        symbol: String,
        interval_ms: u64,
    ) -> Result<(), MarketError> {
        // Refused before it starts: the subscribe call fails with -32030.
        let base = price_of(&symbol)?;
        let sink = pending.accept().await?;
        let mut interval = tokio::time::interval(Duration::from_millis(interval_ms.max(1)));
        for seq in 1.. {
            interval.tick().await;
            let cents = base + seq % 7;
            // Waits while the client's buffer is full; fails once the
            // client unsubscribed or went away, which ends this task.
            sink.send(&Tick {
                symbol: symbol.clone(),
                seq,
                cents,
            })
            .await?;
        }
        Ok(())
    }

    async fn quote(&self, symbol: String) -> Result<u64, MarketError> {
        price_of(&symbol)
    }
}

async fn serve(addr: SocketAddr) -> Result<Server, Box<dyn std::error::Error>> {
    // The port of a server just shut down is free again, but a bind can
    // race the kernel's bookkeeping: a few tries.
    let mut tries = 0;
    let acceptor = loop {
        match WebSocketAcceptor::bind(addr).await {
            Ok(acceptor) => break acceptor,
            Err(_) if tries < 50 => tries += 1,
            Err(e) => return Err(e.into()),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    Ok(Listener::new(acceptor).spawn(Exchange.into_router()))
}

/// The typed stream of a generated client, and its unsubscribe.
async fn subscribe(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let client = MarketClient::new(Peer::spawn(WebSocketConnector::new(url).connect().await?));
    let mut prices = client.prices("RUST".into(), 5).await?;
    for _ in 0..3 {
        let tick = prices.next().await.ok_or("the feed ended")??;
        println!("subscription {}: {tick:?}", prices.id());
    }
    println!("unsubscribed: {}", prices.unsubscribe().await?);
    match client.prices("NOPE".into(), 5).await {
        Err(CallError::Domain(e)) => println!("refused subscription: {e:?}"),
        other => return Err(format!("expected a refusal, got {other:?}").into()),
    }
    Ok(())
}

/// Three typed calls in one batch frame, each with its own result.
async fn batch(url: &str) -> Result<(), Box<dyn std::error::Error>> {
    let peer = Peer::spawn(WebSocketConnector::new(url).connect().await?);
    let client = MarketClient::new(peer.clone());
    let mut batch = peer.batch();
    let rust = batch.call(client.quote("RUST".into()));
    let json = batch.call(client.quote("JSON".into()));
    let nope = batch.call(client.quote("NOPE".into()));
    batch.send().await?;
    println!(
        "batch: RUST = {}, JSON = {}, NOPE = {:?}",
        rust.await?,
        json.await?,
        nope.await.map_err(|e| e.to_string())
    );
    Ok(())
}

/// A reconnecting client across a server restart.
async fn reconnect(addr: SocketAddr, server: Server) -> Result<(), Box<dyn std::error::Error>> {
    let client = WebSocketConnector::new(format!("ws://{addr}/"))
        .reconnecting()
        .backoff(Backoff::new(
            Duration::from_millis(20),
            Duration::from_millis(500),
        ))
        .queue_for(Duration::from_secs(10))
        .on_event(|event| match event {
            ReconnectEvent::Connected { again: true, .. } => println!("reconnect: connected again"),
            ReconnectEvent::Disconnected { .. } => println!("reconnect: disconnected"),
            _ => {}
        })
        .spawn();
    let mut prices = client
        .subscribe::<Tick>("subscribe_prices", ("JSON", 5), "unsubscribe_prices")
        .await?;
    let first = prices.next().await.ok_or("the feed ended")??;
    println!("reconnecting subscription: seq {}", first.seq);

    server.shutdown(Duration::ZERO).await;
    println!("server stopped");
    let server = serve(addr).await?;
    println!("server started again");
    loop {
        match prices.next().await.ok_or("the feed ended")? {
            Ok(tick) => println!("before the restart: seq {}", tick.seq),
            Err(SubscriptionError::Reconnected) => {
                println!("gap marker: items may have been missed");
                break;
            }
            Err(e) => return Err(e.into()),
        }
    }
    let tick = prices.next().await.ok_or("the feed ended")??;
    println!("after the restart: seq {} (a new subscription)", tick.seq);
    // Queued while reconnecting, answered once connected.
    let quote: u64 = client.call("quote", ["RUST"]).await?;
    println!("quote after the restart: {quote}");
    prices.unsubscribe().await?;
    client.close().await;
    server.shutdown(Duration::from_secs(1)).await;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let addr = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let server = serve(addr).await?;
    let url = format!("ws://{addr}/");
    println!("listening on {url}");
    subscribe(&url).await?;
    batch(&url).await?;
    reconnect(addr, server).await?;
    println!("done");
    Ok(())
}
