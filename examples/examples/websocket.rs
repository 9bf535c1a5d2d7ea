//! Run with: cargo run --example websocket
//!
//! A WebSocket server on a free local port and a client. Each JSON-RPC
//! message travels in one text message; the server's handler calls back
//! into the client over the same connection while it runs.

use std::time::Duration;

use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{WebSocketAcceptor, WebSocketConnector};
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router};

#[path = "support/logging.rs"]
mod logging;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let config = Config::default();
    let server_routes = Router::new().request("greet", |(): (), ctx: Context| async move {
        // Ask the client who it is, on the same connection.
        let name: String = ctx.peer().call("whoami", ()).await?;
        Ok::<_, ErrorObject>(format!("hello, {name}"))
    });
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await?;
    let url = format!("ws://{}/rpc", acceptor.local_addr()?);
    let server = Listener::new(acceptor)
        .config(config.clone())
        .spawn(server_routes);
    println!("listening on {url}");

    let client_routes = Router::new().request("whoami", |(): (), _: Context| async {
        Ok::<_, ErrorObject>("the websocket example")
    });
    let client = Peer::builder()
        .config(config.clone())
        .router(client_routes)
        .spawn(WebSocketConnector::new(&url).connect().await?);
    let greeting: String = client.call("greet", ()).await?;
    println!("greet() = {greeting:?}");

    let reason = client.close(Duration::from_secs(1)).await;
    println!("client closed: {reason}");
    server.shutdown(Duration::from_secs(1)).await;
    println!("server shut down");
    Ok(())
}
