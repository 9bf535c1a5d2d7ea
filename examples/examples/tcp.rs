//! Run with: cargo run --example tcp
//!
//! A TCP server on a free local port, one peer per connection, with routes
//! built per connection (each greets its own client by address). Three
//! clients call it at once; then the server shuts down gracefully.

use std::time::Duration;

use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector};
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router};

#[path = "support/logging.rs"]
mod logging;

/// The routes for one connection: they know who they talk to.
fn routes(addr: &PeerAddr) -> Router {
    let greeting = format!("hello, {addr}");
    Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("hello", move |(): (), _: Context| {
            let greeting = greeting.clone();
            async move { Ok::<_, ErrorObject>(greeting) }
        })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let config = Config::default();
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
    let addr = acceptor.local_addr()?;
    let server = Listener::new(acceptor)
        .config(config.clone())
        .connection_limit(64)
        .spawn(routes);
    println!("listening on tcp {addr}");

    let mut clients = Vec::new();
    for i in 0..3i64 {
        let config = config.clone();
        clients.push(tokio::spawn(async move {
            let client = Peer::spawn(TcpConnector::new(addr).codec(&config).connect().await?);
            let greeting: String = client.call("hello", ()).await?;
            let sum: i64 = client.call("add", (i, 10)).await?;
            client.close(Duration::from_secs(1)).await;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((i, greeting, sum))
        }));
    }
    for client in clients {
        let (i, greeting, sum) = client.await?.map_err(|e| e.to_string())?;
        println!("client {i}: hello -> {greeting:?}, add({i}, 10) -> {sum}");
    }

    server.shutdown(Duration::from_secs(1)).await;
    println!("server shut down");
    Ok(())
}
