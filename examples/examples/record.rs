//! Run with: cargo run --example record [-- FILE | --serve ADDR]
//!
//! Records a session and plays it back. `Transport::recorded` writes every
//! frame in and out of a connection to a JSON Lines file (`t`, `dir`,
//! `frame`); the `replay` example sends a recording's inbound frames to a
//! server and reports where its answers now differ: a bug report as a file.
//!
//! ```text
//! cargo run --example record -- session.jsonl           # records a session
//! cargo run --example record -- --serve 127.0.0.1:9000  # the same server, over TCP
//! cargo run --example replay -- session.jsonl --tcp 127.0.0.1:9000
//! ```
//!
//! With no argument the session goes to a file in the temporary directory.

use std::path::PathBuf;
use std::time::Duration;

use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::TcpAcceptor;
use jsonrpc_runtime::{CallError, Context, ErrorObject, Peer, Router, Transport};

#[path = "support/logging.rs"]
mod logging;

fn router() -> Router {
    Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("divide", |(a, b): (i64, i64), _: Context| async move {
            a.checked_div(b)
                .ok_or_else(|| ErrorObject::new(-32010, "division by zero"))
        })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = match &args[..] {
        [flag, addr] if flag == "--serve" => {
            let acceptor = TcpAcceptor::bind(addr.as_str()).await?;
            eprintln!("serving on {}", acceptor.local_addr()?);
            let server = Listener::new(acceptor).spawn(router());
            tokio::signal::ctrl_c().await?;
            server.shutdown(Duration::from_secs(5)).await;
            return Ok(());
        }
        [file] => PathBuf::from(file),
        [] => std::env::temp_dir().join(format!("session-{}.jsonl", std::process::id())),
        _ => return Err("usage: record [FILE | --serve ADDR]".into()),
    };

    // The server side of a connection is recorded; any transport can be.
    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder()
        .router(router())
        .spawn(server_side.recorded(&path)?);
    let client = Peer::spawn(client_side);
    let sum: i64 = client.call("add", [2, 3]).await?;
    println!("add(2, 3) = {sum}");
    match client.call::<i64>("divide", [1, 0]).await {
        Err(CallError::Rpc(error)) => println!("divide(1, 0): {error}"),
        other => return Err(format!("divide(1, 0) should fail, got {other:?}").into()),
    }
    client.notify("unrouted", ()).await?;
    client.close(Duration::from_secs(1)).await;
    // Waits until the server side has written its last frame.
    server.closed().await;

    let recording = std::fs::read_to_string(&path)?;
    println!(
        "\n{} ({} frames):\n{recording}",
        path.display(),
        recording.lines().count()
    );
    println!(
        "play it back against a server: cargo run --example replay -- {} --tcp ADDR",
        path.display()
    );
    Ok(())
}
