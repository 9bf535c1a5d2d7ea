//! Subscription throughput: items per second from a server's feed to a
//! client's typed stream, ours and jsonrpsee's over WebSocket (and ours
//! over TCP), in one run.
//!
//! The server (`feeds`: the same `subscribe_items [count, size]` on our
//! router and on jsonrpsee's `RpcModule`, each sender waiting while its
//! subscriber's buffer is full) runs on a current-thread runtime of its own
//! thread (`sub-server`); the client on another (`sub-client`), so the two
//! sides use the machine's two CPUs. For each scenario a fresh connection
//! opens S subscriptions at once and reads every item of each, checking
//! that `seq` runs 1, 2, 3, .. without a gap; the clock runs from the first
//! subscribe to the last item. Each scenario runs once with each client's
//! default buffer per subscription (1,024 items for both), reporting any
//! feed that ended early (a client ends a subscription whose buffer
//! overflows); the timed runs give both clients room for every item
//! (1,048,576), so each rate is of a whole feed.
//!
//! Scenarios: one feed of 200,000 small items; 16 feeds of 12,500 at once
//! on one connection; one feed of 50,000 items of 1 KiB. Five runs, the
//! implementations in a rotating order within each; the table gives the
//! median rate, the CPU both threads spent per item, and ours against
//! jsonrpsee's as the median of the per-run ratios. Writes
//! `target/subscriptions.json`.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use jsonrpc_benches::feeds::{self, Item, SUBSCRIBE, UNSUBSCRIBE};
use jsonrpc_benches::multicore::{median, thousands};
use jsonrpc_benches::sys::thread_cpu;
use jsonrpc_runtime::peer::SubscribeOptions;
use jsonrpc_runtime::server::{Listener, Server};
use jsonrpc_runtime::transport::{
    TcpAcceptor, TcpConnector, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::{ErrorObject, Peer};
use jsonrpsee::core::client::SubscriptionClientT as _;
use jsonrpsee::rpc_params;
use jsonrpsee_ws_client::{WsClient, WsClientBuilder};
use serde::Serialize;

const RUNS: usize = 5;
/// The buffer per subscription both clients get in the timed runs: room
/// for a burst, so that the rate is the transport's and not a lost feed.
const BUFFER: usize = 1 << 20;
const IMPLEMENTATIONS: [&str; 3] = ["ours_websocket", "jsonrpsee_websocket", "ours_tcp"];
/// How long one scenario may take before the run is declared stuck.
const STUCK: Duration = Duration::from_secs(120);
const SERVER_THREAD: &str = "sub-server";
const CLIENT_THREAD: &str = "sub-client";

#[derive(Debug, Clone, Copy, Serialize)]
struct Scenario {
    name: &'static str,
    subscriptions: usize,
    items: u64,
    size: usize,
}

const SCENARIOS: [Scenario; 3] = [
    Scenario {
        name: "1 feed, small items",
        subscriptions: 1,
        items: 200_000,
        size: 0,
    },
    Scenario {
        name: "16 feeds on one connection",
        subscriptions: 16,
        items: 12_500,
        size: 0,
    },
    Scenario {
        name: "1 feed, 1 KiB items",
        subscriptions: 1,
        items: 50_000,
        size: 1024,
    },
];

#[derive(Debug, Clone, Serialize)]
struct Sample {
    items_per_second: f64,
    cpu_ns_per_item: f64,
}

#[derive(Debug, Serialize)]
struct Row {
    scenario: Scenario,
    implementation: &'static str,
    samples: Vec<Sample>,
    median_items_per_second: f64,
    median_cpu_ns_per_item: f64,
    /// Median over runs of this run's rate / jsonrpsee's in the same run.
    ratio_to_jsonrpsee: f64,
}

/// Starts both servers on the server thread; returns where each listens.
fn start_servers() -> (SocketAddr, SocketAddr, SocketAddr) {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(SERVER_THREAD.into())
        .spawn(move || {
            jsonrpc_benches::runtime().block_on(async move {
                let ws = WebSocketAcceptor::bind("127.0.0.1:0").await.expect("bind");
                let tcp = TcpAcceptor::bind("127.0.0.1:0").await.expect("bind");
                let (ws_addr, tcp_addr) = (ws.local_addr().unwrap(), tcp.local_addr().unwrap());
                let ours: [Server; 2] = [
                    Listener::new(ws).spawn(feeds::router()),
                    Listener::new(tcp).spawn(feeds::router()),
                ];
                let (jsonrpsee_addr, handle) = feeds::jsonrpsee_server().await;
                tx.send((ws_addr, jsonrpsee_addr, tcp_addr)).unwrap();
                handle.stopped().await;
                drop(ours);
            })
        })
        .expect("spawn the server thread");
    rx.recv().expect("the servers start")
}

/// Reads one feed to its end on our client; why not, if it ended early.
async fn ours_feed(peer: Peer, s: Scenario, buffer: Option<usize>) -> Result<(), String> {
    let options = buffer.map_or_else(SubscribeOptions::default, |n| {
        SubscribeOptions::default().buffer(n)
    });
    let mut feed = peer
        .subscribe_with::<Item, ErrorObject>(SUBSCRIBE, (s.items, s.size), UNSUBSCRIBE, options)
        .await
        .expect("subscribe");
    for seq in 1..=s.items {
        let item = match feed.next().await {
            Some(Ok(item)) => item,
            Some(Err(e)) => return Err(format!("after {} items: {e}", seq - 1)),
            None => return Err(format!("ended after {} items", seq - 1)),
        };
        assert_eq!(item.seq, seq, "out of order");
        assert_eq!(item.pad.len(), s.size);
    }
    Ok(())
}

/// Reads one feed to its last item on jsonrpsee's client; why not, if it
/// ended early.
async fn jsonrpsee_feed(client: &WsClient, s: Scenario) -> Result<(), String> {
    let mut feed = client
        .subscribe::<Item, _>(SUBSCRIBE, rpc_params![s.items, s.size], UNSUBSCRIBE)
        .await
        .expect("subscribe");
    for seq in 1..=s.items {
        let item = match feed.next().await {
            Some(Ok(item)) => item,
            Some(Err(e)) => return Err(format!("after {} items: {e}", seq - 1)),
            None => {
                let why = feed.close_reason();
                return Err(format!("ended after {} items ({why:?})", seq - 1));
            }
        };
        assert_eq!(item.seq, seq, "out of order");
        assert_eq!(item.pad.len(), s.size);
    }
    Ok(())
}

/// One scenario on one implementation over a fresh connection, each
/// client holding `buffer` unread items per subscription (`None`: its
/// default): seconds from the first subscribe to the last item, or why a
/// feed ended early.
async fn measure(
    imp: &str,
    addrs: (SocketAddr, SocketAddr, SocketAddr),
    s: Scenario,
    buffer: Option<usize>,
) -> Result<f64, String> {
    let (ws, jsonrpsee, tcp) = addrs;
    let (took, outcomes) = match imp {
        "ours_websocket" | "ours_tcp" => {
            let transport = if imp == "ours_tcp" {
                TcpConnector::new(tcp).connect().await
            } else {
                WebSocketConnector::new(format!("ws://{ws}/"))
                    .connect()
                    .await
            };
            let peer = Peer::spawn(transport.expect("connect"));
            let start = Instant::now();
            let feeds = (0..s.subscriptions).map(|_| ours_feed(peer.clone(), s, buffer));
            let outcomes = join_all(feeds).await;
            let took = start.elapsed().as_secs_f64();
            peer.close(Duration::from_secs(5)).await;
            (took, outcomes)
        }
        "jsonrpsee_websocket" => {
            let mut builder = WsClientBuilder::default();
            if let Some(n) = buffer {
                builder = builder.max_buffer_capacity_per_subscription(n);
            }
            let client = builder
                .build(format!("ws://{jsonrpsee}"))
                .await
                .expect("connect");
            let start = Instant::now();
            let outcomes = join_all((0..s.subscriptions).map(|_| jsonrpsee_feed(&client, s))).await;
            (start.elapsed().as_secs_f64(), outcomes)
        }
        other => unreachable!("{other}"),
    };
    let failed: Vec<String> = outcomes.into_iter().filter_map(Result::err).collect();
    match failed.first() {
        None => Ok(took),
        Some(first) => Err(format!(
            "{} of {} feeds ended early, the first {first}",
            failed.len(),
            s.subscriptions
        )),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "subscriptions".contains(f.as_str())) {
        return;
    }
    let addrs = start_servers();
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(CLIENT_THREAD.into())
        .spawn(move || tx.send(run_all(addrs)).unwrap())
        .expect("spawn the client thread");
    let report = rx.recv().expect("the client thread finishes");
    print_table(&report);
    let json = serde_json::to_string_pretty(&report).expect("serialize");
    std::fs::write("target/subscriptions.json", json).expect("write target/subscriptions.json");
}

#[derive(Debug, Serialize)]
struct Report {
    /// Per scenario and implementation: every feed read whole with the
    /// clients' default buffers, or why not.
    with_defaults: Vec<(&'static str, &'static str, Result<(), String>)>,
    rows: Vec<Row>,
}

/// Every scenario, every implementation: once with the clients' default
/// buffers (does every feed arrive whole?), then `RUNS` timed runs with
/// [`BUFFER`] in a rotating order.
fn run_all(addrs: (SocketAddr, SocketAddr, SocketAddr)) -> Report {
    let runtime = jsonrpc_benches::runtime();
    let mut report = Report {
        with_defaults: Vec::new(),
        rows: Vec::new(),
    };
    let within = |imp: &'static str, s: Scenario, buffer| {
        runtime
            .block_on(async { tokio::time::timeout(STUCK, measure(imp, addrs, s, buffer)).await })
            .unwrap_or_else(|_| panic!("{imp} stuck on {}", s.name))
    };
    for s in SCENARIOS {
        for imp in IMPLEMENTATIONS {
            let outcome = within(imp, s, None).map(|_| ());
            report.with_defaults.push((s.name, imp, outcome));
        }
        let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); IMPLEMENTATIONS.len()];
        for run in 0..RUNS {
            for k in 0..IMPLEMENTATIONS.len() {
                let i = (run + k) % IMPLEMENTATIONS.len();
                let before = thread_cpu(SERVER_THREAD, CLIENT_THREAD);
                let seconds = within(IMPLEMENTATIONS[i], s, Some(BUFFER))
                    .unwrap_or_else(|e| panic!("{} on {}: {e}", IMPLEMENTATIONS[i], s.name));
                let after = thread_cpu(SERVER_THREAD, CLIENT_THREAD);
                let items = (s.items * s.subscriptions as u64) as f64;
                let cpu =
                    (after.server_ns + after.client_ns) - (before.server_ns + before.client_ns);
                samples[i].push(Sample {
                    items_per_second: items / seconds,
                    cpu_ns_per_item: cpu as f64 / items,
                });
            }
        }
        report.rows.extend(rows_of(s, &samples));
    }
    report
}

fn rows_of(s: Scenario, samples: &[Vec<Sample>]) -> Vec<Row> {
    let jsonrpsee = IMPLEMENTATIONS
        .iter()
        .position(|&imp| imp == "jsonrpsee_websocket")
        .expect("jsonrpsee is measured");
    let rate = |i: usize, run: usize| samples[i][run].items_per_second;
    IMPLEMENTATIONS
        .into_iter()
        .enumerate()
        .map(|(i, imp)| Row {
            scenario: s,
            implementation: imp,
            median_items_per_second: median(
                samples[i].iter().map(|x| x.items_per_second).collect(),
            ),
            median_cpu_ns_per_item: median(samples[i].iter().map(|x| x.cpu_ns_per_item).collect()),
            ratio_to_jsonrpsee: median(
                (0..RUNS)
                    .map(|run| rate(i, run) / rate(jsonrpsee, run))
                    .collect(),
            ),
            samples: samples[i].clone(),
        })
        .collect()
}

fn print_table(report: &Report) {
    println!(
        "With each client's default buffer per subscription (ours 1,024 items, jsonrpsee's 1,024):"
    );
    for (scenario, imp, outcome) in &report.with_defaults {
        match outcome {
            Ok(()) => println!("- {scenario}, {imp}: every item arrived"),
            Err(e) => println!("- {scenario}, {imp}: {e}"),
        }
    }
    println!();
    println!(
        "| scenario | implementation | items/s (median of {RUNS}) | CPU per item (both sides) | vs jsonrpsee (same run) |"
    );
    println!("|---|---|---:|---:|---:|");
    for row in &report.rows {
        println!(
            "| {} | {} | {} | {:.2} µs | {:.2}× |",
            row.scenario.name,
            row.implementation,
            thousands(row.median_items_per_second),
            row.median_cpu_ns_per_item / 1000.0,
            row.ratio_to_jsonrpsee,
        );
    }
}
