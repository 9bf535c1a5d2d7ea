//! Run with: cargo run --example unix_socket
//!
//! A Unix-domain-socket server in a temporary directory: a client calls it,
//! the server shuts down gracefully and removes its socket file. Binding
//! again over a stale socket file (one nobody listens on) replaces it.

use std::time::Duration;

use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{UnixAcceptor, UnixConnector};
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router};

#[path = "support/logging.rs"]
mod logging;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let path = std::env::temp_dir().join(format!("jsonrpc-example-{}.sock", std::process::id()));
    let router = Router::new().request("add", |(a, b): (i64, i64), _: Context| async move {
        Ok::<_, ErrorObject>(a + b)
    });
    let config = Config::default();

    let acceptor = UnixAcceptor::bind(&path).await?;
    let server = Listener::new(acceptor)
        .config(config.clone())
        .spawn(router.clone());
    println!("listening on unix {}", path.display());

    let client = Peer::spawn(UnixConnector::new(&path).codec(&config).connect().await?);
    let sum: i64 = client.call("add", (40, 2)).await?;
    println!("add(40, 2) = {sum}");
    println!("live connections: {}", server.live_connections());
    client.close(Duration::from_secs(1)).await;

    server.shutdown(Duration::from_secs(1)).await;
    println!(
        "server shut down; socket file still there: {}",
        path.exists()
    );

    // A socket file left behind by a server that died is replaced on bind.
    let stale = std::os::unix::net::UnixListener::bind(&path)?;
    drop(stale); // the file stays, nobody listens
    let acceptor = UnixAcceptor::bind(&path).await?;
    println!(
        "bound again over a stale socket file at {}",
        acceptor.path().display()
    );
    drop(acceptor);
    println!("socket file still there: {}", path.exists());
    Ok(())
}
