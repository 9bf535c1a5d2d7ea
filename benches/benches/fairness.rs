//! Fairness: one client's call latency while another sends the largest
//! batches the server accepts, on the current-thread runtime the examples
//! use.
//!
//! A server (`Listener` over TCP, default `Config`: 8 MiB frames, batches
//! of at most 1,000 elements) runs on a current-thread runtime of its own
//! thread. Client A makes sequential `add` calls and records each latency.
//! Client B, meanwhile, sends one of:
//!
//! * nothing (the baseline);
//! * `batches`: 1,000 `echo` requests of 8 KiB each in one ~8 MiB frame,
//!   again as soon as the answer is in;
//! * `zeros`: one 8 MiB line `[0,0,...]` (4.2 million elements), refused
//!   whole, again as soon as the answer is in.
//!
//! Not criterion; prints A's latency percentiles per scenario and writes
//! `target/fairness.json`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector};
use jsonrpc_runtime::{Config, Peer};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

const WINDOW: Duration = Duration::from_secs(4);

#[derive(Debug, Serialize)]
struct Row {
    scenario: &'static str,
    calls: usize,
    p50_us: u64,
    p99_us: u64,
    max_us: u64,
    large_frames_served: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "fairness".contains(f.as_str())) {
        return;
    }
    let addr = start_server();
    let batch = batch_frame();
    let zeros = zeros_frame();
    let rows: Vec<Row> = [
        ("alone", None),
        ("batches", Some(batch)),
        ("zeros", Some(zeros)),
    ]
    .into_iter()
    .map(|(scenario, frame)| measure(scenario, addr, frame))
    .collect();
    println!("| client B sends | A's calls | A p50 | A p99 | A max | B's frames answered |");
    println!("|---|---:|---:|---:|---:|---:|");
    for row in &rows {
        println!(
            "| {} | {} | {:.2} ms | {:.2} ms | {:.2} ms | {} |",
            row.scenario,
            row.calls,
            row.p50_us as f64 / 1000.0,
            row.p99_us as f64 / 1000.0,
            row.max_us as f64 / 1000.0,
            row.large_frames_served
        );
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fairness.json");
    std::fs::write(out, serde_json::to_string_pretty(&rows).unwrap()).expect("write");
}

/// The server on a current-thread runtime of its own thread.
fn start_server() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = jsonrpc_benches::runtime();
        rt.block_on(async move {
            let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
            tx.send(acceptor.local_addr().unwrap()).unwrap();
            let router = hand_router(Arc::new(State::default()));
            let _server = Listener::new(acceptor)
                .config(Config::default())
                .spawn(router);
            std::future::pending::<()>().await;
        });
    });
    rx.recv().unwrap()
}

/// 1,000 `echo` requests of 8 KiB: the largest batch by default.
fn batch_frame() -> Vec<u8> {
    let params = jsonrpc_benches::large::did_open_plain(8 * 1024 - 200);
    let elements: Vec<serde_json::Value> = (0..1000)
        .map(|i| serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "echo", "params": params}))
        .collect();
    let mut frame = serde_json::to_vec(&elements).unwrap();
    frame.push(b'\n');
    frame
}

/// An 8 MiB line of zeros: 4.2 million batch elements.
fn zeros_frame() -> Vec<u8> {
    let n = (8 * 1024 * 1024 - 16) / 2;
    let mut frame = Vec::with_capacity(2 * n + 2);
    frame.push(b'[');
    for i in 0..n {
        if i > 0 {
            frame.push(b',');
        }
        frame.push(b'0');
    }
    frame.extend_from_slice(b"]\n");
    frame
}

fn measure(scenario: &'static str, addr: SocketAddr, frame: Option<Vec<u8>>) -> Row {
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicU64::new(0));
    let flood = frame.map(|frame| {
        let (stop, served) = (stop.clone(), served.clone());
        std::thread::spawn(move || {
            jsonrpc_benches::runtime().block_on(flood(addr, frame, stop, served));
        })
    });
    let latencies = jsonrpc_benches::runtime().block_on(async {
        let peer = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
        // Let the flood start.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut latencies = Vec::new();
        let start = Instant::now();
        let mut i = 0i64;
        while start.elapsed() < WINDOW {
            let t = Instant::now();
            let sum: i64 = peer
                .call("add", jsonrpc_benches::AddParams { a: i, b: 1 })
                .await
                .unwrap();
            assert_eq!(sum, i + 1);
            latencies.push(t.elapsed().as_micros() as u64);
            i += 1;
        }
        latencies
    });
    stop.store(true, Ordering::Release);
    if let Some(flood) = flood {
        flood.join().unwrap();
    }
    let mut sorted = latencies.clone();
    sorted.sort_unstable();
    let pick = |q: f64| sorted[((sorted.len() as f64 - 1.0) * q) as usize];
    Row {
        scenario,
        calls: sorted.len(),
        p50_us: pick(0.5),
        p99_us: pick(0.99),
        max_us: *sorted.last().unwrap(),
        large_frames_served: served.load(Ordering::Acquire),
    }
}

/// Sends `frame` again and again, each once the previous answer is read.
async fn flood(addr: SocketAddr, frame: Vec<u8>, stop: Arc<AtomicBool>, served: Arc<AtomicU64>) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut line = Vec::new();
    while !stop.load(Ordering::Acquire) {
        write.write_all(&frame).await.unwrap();
        line.clear();
        lines.read_until(b'\n', &mut line).await.unwrap();
        assert!(line.len() > 1, "an answer");
        served.fetch_add(1, Ordering::AcqRel);
    }
}
