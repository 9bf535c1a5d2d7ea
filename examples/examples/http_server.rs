//! Run with: cargo run --example http_server [-- ADDR]
//!
//! JSON-RPC over HTTP: one `POST` is one message or one batch, answered in
//! the response body. The server speaks HTTP/1.1 and h2c on one port, has a
//! `/health` endpoint that turns 503 while it drains, and caps connections.
//!
//! With no argument it binds a free port, calls itself through the HTTP
//! client (`HttpConnector`), prints the answers and drains. With an address
//! it serves until Ctrl-C:
//!
//! ```text
//! cargo run --example http_server -- 127.0.0.1:8080
//! curl -s localhost:8080/ -H 'content-type: application/json' \
//!      -d '{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}'
//! curl -si localhost:8080/health
//! ```

use std::time::Duration;

use jsonrpc_runtime::server::HttpListener;
use jsonrpc_runtime::transport::{HttpConnector, TcpAcceptor};
use jsonrpc_runtime::{Context, ErrorObject, Peer, Router};

#[path = "support/logging.rs"]
mod logging;

fn router() -> Router {
    Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("caller", |(): (), ctx: Context| async move {
            // Each POST is its own caller: its address, URI and headers.
            let agent = ctx.connection().header("user-agent").unwrap_or("none");
            let agent = agent.to_owned();
            Ok::<_, ErrorObject>(agent)
        })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let addr = std::env::args().nth(1);
    let acceptor = TcpAcceptor::bind(addr.as_deref().unwrap_or("127.0.0.1:0")).await?;
    let local = acceptor.local_addr()?;
    let server = HttpListener::new(acceptor)
        .connection_limit(1024)
        .spawn(router());
    eprintln!("serving JSON-RPC over HTTP on http://{local}/ (health: /health)");

    if addr.is_some() {
        tokio::signal::ctrl_c().await?;
    } else {
        let client = Peer::spawn(
            HttpConnector::new(format!("http://{local}/"))
                .header(
                    jsonrpc_runtime::http::header::USER_AGENT,
                    "http_server example".parse()?,
                )
                .connect()
                .await?,
        );
        let sum: i64 = client.call("add", [2, 3]).await?;
        println!("add(2, 3) = {sum}");
        let agent: String = client.call("caller", ()).await?;
        println!("the server saw user-agent: {agent}");
        client.close(Duration::from_secs(1)).await;
    }
    // Stops accepting, answers what is in flight, then closes.
    server.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
