//! Memory per idle connection: a server process (`idle-server`) accepts N
//! connections over TCP or WebSocket, each makes one call and then stays
//! open and silent; the server's live heap (a counting allocator, exact)
//! and resident set size (coarse) grow by this much per connection.
//!
//! Not a criterion benchmark; prints a Markdown table and writes
//! `target/idle.json` for the report.

use std::process::Stdio;
use std::time::Duration;

use jsonrpc_benches::{runtime, sys};
use jsonrpc_runtime::transport::{TcpConnector, WebSocketConnector};
use jsonrpc_runtime::{Config, Peer};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

const SERVER: &str = env!("CARGO_BIN_EXE_idle-server");
/// Connections per transport; `IDLE_CONNECTIONS` overrides it.
const CONNECTIONS: usize = 1_000;

#[derive(Debug, Serialize)]
struct Row {
    transport: &'static str,
    connections: usize,
    heap_per_connection: f64,
    rss_per_connection: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "idle".contains(f.as_str())) {
        return;
    }
    let connections = std::env::var("IDLE_CONNECTIONS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CONNECTIONS);
    let rt = runtime();
    let rows: Vec<Row> = ["tcp", "ws"]
        .into_iter()
        .map(|transport| rt.block_on(measure(transport, connections)))
        .collect();
    println!("| transport | connections | heap per idle connection | RSS per idle connection |");
    println!("|---|---:|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {:.1} KiB | {:.1} KiB |",
            row.transport,
            row.connections,
            row.heap_per_connection / 1024.0,
            row.rss_per_connection / 1024.0
        );
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/idle.json");
    std::fs::write(out, serde_json::to_string_pretty(&rows).unwrap()).expect("write idle.json");
}

async fn connect(transport: &str, addr: &str) -> Peer {
    let config = Config::default();
    let transport = match transport {
        "ws" => WebSocketConnector::new(addr)
            .connect()
            .await
            .expect("connect"),
        _ => TcpConnector::new(addr)
            .codec(&config)
            .connect()
            .await
            .expect("connect"),
    };
    Peer::spawn(transport)
}

async fn measure(transport: &'static str, connections: usize) -> Row {
    let mut server = Command::new(SERVER)
        .arg(transport)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start idle-server");
    let pid = server.id().expect("a pid");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let addr = lines.next_line().await.unwrap().expect("the address");

    let probe = connect(transport, &addr).await;
    let _: i64 = probe.call("add", (1, 2)).await.unwrap();
    settle().await;
    let heap_before: usize = probe.call("heap", ()).await.unwrap();
    let rss_before = sys::rss(Some(pid)).unwrap();

    let mut idle = Vec::with_capacity(connections);
    for i in 0..connections {
        let peer = connect(transport, &addr).await;
        let sum: i64 = peer.call("add", (i, 1)).await.unwrap();
        assert_eq!(sum, i as i64 + 1);
        idle.push(peer);
    }
    settle().await;
    let heap_after: usize = probe.call("heap", ()).await.unwrap();
    let rss_after = sys::rss(Some(pid)).unwrap();

    drop(idle);
    drop(server.stdin.take());
    let _ = server.wait().await;
    Row {
        transport,
        connections,
        heap_per_connection: (heap_after as f64 - heap_before as f64) / connections as f64,
        rss_per_connection: (rss_after as f64 - rss_before as f64) / connections as f64,
    }
}

/// Lets the server finish with the last connection's call.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}
