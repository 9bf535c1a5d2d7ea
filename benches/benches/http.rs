//! JSON-RPC over HTTP: our `HttpListener` against jsonrpsee's HTTP server
//! and two bare hyper floors, all measured with the same raw keep-alive
//! client (`jsonrpc_benches::http`, which describes the four servers).
//!
//! Not criterion: closed loops over fixed windows, several windows per
//! point, interleaved between the servers (each round measures every server
//! once, in a rotating order), so every ratio is taken within one run.
//!
//! Two parts:
//!
//! * **Sequential round trip**: one keep-alive connection, one call at a
//!   time; client and server on one current-thread runtime, on a thread
//!   pinned to CPU 0 (as the other round-trip benchmarks: no cross-CPU
//!   wake-ups in the figure). Reports the mean time per call and the p50
//!   and p99 of the calls' latencies.
//! * **Keep-alive throughput**: N connections (1, 8, 32), each one call at
//!   a time (HTTP/1.1 without pipelining, as HTTP clients use it); the
//!   servers on a tokio multi-thread runtime of 2 workers (`http-server`),
//!   the clients on another (`http-client`); calls per second, and the CPU
//!   time of each runtime's threads per call. Nothing is pinned.
//!
//! Every answer is checked (status 200, the `add` answer with id 1 and
//! result 5). Prints the tables of BENCHMARKS.md and writes
//! `target/http.json`. `HTTP_ONLY=ours,jsonrpsee` and
//! `HTTP_CONNECTIONS=32` (comma-separated lists) run a subset;
//! `HTTP_SEQUENTIAL=0` skips the sequential part.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonrpc_benches::http::{self, HttpClient, Point, Results, IMPLEMENTATIONS};
use jsonrpc_benches::jsonrpsee_side;
use jsonrpc_benches::multicore::{Run, ServerSide};
use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_benches::sys::{self, pin_to_cpu, sh, thread_cpu};
use jsonrpc_runtime::server::HttpListener;
use jsonrpc_runtime::transport::TcpAcceptor;
use tokio::runtime::Runtime;

const CONNECTIONS: [usize; 3] = [1, 8, 32];
const SERVER_WORKERS: usize = 2;
const CLIENT_WORKERS: usize = 2;
const RUNS: usize = 5;
const WARM_UP: Duration = Duration::from_millis(200);
const WINDOW: Duration = Duration::from_secs(1);
/// How long the calls in flight get to be answered after a window.
const DRAIN: Duration = Duration::from_secs(30);

const SERVER_THREAD: &str = "http-server";
const CLIENT_THREAD: &str = "http-client";
const SEQUENTIAL_THREAD: &str = "http-sequential";

/// Starts `imp` on a loopback port, on the runtime this runs in.
async fn start_server(imp: &str) -> (SocketAddr, ServerSide) {
    match imp {
        "hyper_floor" => {
            let (addr, accept) = http::hyper_floor().await;
            (addr, ServerSide::Floor(accept))
        }
        "hyper_two_phase" => {
            let (addr, accept) = http::hyper_two_phase().await;
            (addr, ServerSide::Floor(accept))
        }
        "ours" => {
            let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.expect("bind");
            let addr = acceptor.local_addr().expect("bound");
            let router = hand_router(Arc::new(State::default()));
            (
                addr,
                ServerSide::Ours(HttpListener::new(acceptor).spawn(router)),
            )
        }
        "jsonrpsee" => {
            let (addr, handle) = jsonrpsee_side::http_server().await;
            (addr, ServerSide::Jsonrpsee(handle))
        }
        other => unreachable!("{other}"),
    }
}

/// What one connection's loop shares with the window that runs it.
#[derive(Default)]
struct Flags {
    /// Set at the end of the window: finish the call in flight, return.
    stop: AtomicBool,
    /// Set during the measured part of the window: record latencies.
    measuring: AtomicBool,
}

/// One connection's loop: calls until `stop`; returns the connection, the
/// calls answered and the latencies (ns) of the calls made while
/// measuring.
async fn drive(
    mut client: HttpClient,
    flags: Arc<Flags>,
    done: Arc<AtomicU64>,
) -> (HttpClient, u64, Vec<u32>) {
    let mut answered = 0;
    let mut latencies = Vec::with_capacity(1 << 16);
    while !flags.stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        client.call().await;
        if flags.measuring.load(Ordering::Relaxed) {
            latencies.push(u32::try_from(start.elapsed().as_nanos()).unwrap_or(u32::MAX));
        }
        answered += 1;
        done.fetch_add(1, Ordering::Relaxed);
    }
    (client, answered, latencies)
}

struct Setup {
    imp: &'static str,
    server: ServerSide,
    clients: Vec<HttpClient>,
    verified: u64,
    latencies: Vec<u32>,
    runs: Vec<Run>,
}

/// One window, run on the clients' runtime: start every connection's loop,
/// warm up, measure, stop and collect.
async fn window(setup: &mut Setup, threads: (&str, &str)) -> Run {
    let flags = Arc::new(Flags::default());
    let counters: Vec<Arc<AtomicU64>> = setup.clients.iter().map(|_| Arc::default()).collect();
    let tasks: Vec<_> = std::mem::take(&mut setup.clients)
        .into_iter()
        .zip(&counters)
        .map(|(client, done)| tokio::spawn(drive(client, flags.clone(), done.clone())))
        .collect();
    let total = || {
        counters
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<u64>()
    };
    let cpu = || thread_cpu(threads.0, threads.1);
    tokio::time::sleep(WARM_UP).await;
    flags.measuring.store(true, Ordering::Relaxed);
    let (calls0, cpu0, t0) = (total(), cpu(), Instant::now());
    tokio::time::sleep(WINDOW).await;
    let (calls1, cpu1, t1) = (total(), cpu(), Instant::now());
    flags.measuring.store(false, Ordering::Relaxed);
    flags.stop.store(true, Ordering::Relaxed);
    let results = tokio::time::timeout(DRAIN, futures_util::future::join_all(tasks))
        .await
        .expect("calls still unanswered after the drain timeout");
    for result in results {
        let (client, answered, latencies) = result.expect("a client task panicked");
        setup.verified += answered;
        setup.latencies.extend(latencies);
        setup.clients.push(client);
    }
    Run {
        calls: calls1 - calls0,
        seconds: (t1 - t0).as_secs_f64(),
        server_cpu_ns: cpu1.server_ns - cpu0.server_ns,
        client_cpu_ns: cpu1.client_ns - cpu0.client_ns,
        wait_ns: cpu1.wait_ns - cpu0.wait_ns,
    }
}

fn percentile(sorted: &[u32], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    u64::from(sorted[i])
}

impl Setup {
    fn into_point(mut self, connections: usize) -> (Point, ServerSide, Vec<HttpClient>) {
        self.latencies.sort_unstable();
        let point = Point {
            implementation: self.imp.to_owned(),
            connections,
            p50_ns: percentile(&self.latencies, 0.5),
            p99_ns: percentile(&self.latencies, 0.99),
            runs: self.runs,
            verified_calls: self.verified,
        };
        (point, self.server, self.clients)
    }
}

/// Runs the interleaved windows of every setup; `run_window` runs one.
fn rounds(setups: &mut [Setup], n: usize, mut run_window: impl FnMut(&mut Setup) -> Run) {
    for run in 0..RUNS {
        for i in 0..setups.len() {
            let k = setups.len();
            let setup = &mut setups[(i + run) % k];
            let r = run_window(setup);
            eprintln!(
                "  n={n:<3} run {run} {:<16} {:>9.0} calls/s  server {:.2} µs/call, client {:.2} µs/call",
                setup.imp,
                r.calls_per_second(),
                r.server_cpu_ns as f64 / 1e3 / r.calls.max(1) as f64,
                r.client_cpu_ns as f64 / 1e3 / r.calls.max(1) as f64,
            );
            setup.runs.push(r);
        }
    }
}

/// The sequential part, on a thread pinned to CPU 0 with one current-thread
/// runtime for servers and client.
fn sequential(implementations: &[&'static str]) -> Vec<Point> {
    let implementations = implementations.to_vec();
    std::thread::Builder::new()
        .name(SEQUENTIAL_THREAD.into())
        .spawn(move || {
            assert!(pin_to_cpu(0), "could not pin the sequential thread");
            let rt = jsonrpc_benches::runtime();
            let mut setups: Vec<Setup> = implementations
                .iter()
                .map(|&imp| {
                    rt.block_on(async {
                        let (addr, server) = start_server(imp).await;
                        Setup {
                            imp,
                            server,
                            clients: vec![HttpClient::connect(addr).await],
                            verified: 0,
                            latencies: Vec::new(),
                            runs: Vec::new(),
                        }
                    })
                })
                .collect();
            eprintln!("sequential (one connection, one CPU):");
            rounds(&mut setups, 1, |setup| {
                rt.block_on(window(setup, (SEQUENTIAL_THREAD, "")))
            });
            setups
                .into_iter()
                .map(|setup| {
                    let (point, server, clients) = setup.into_point(1);
                    drop(clients);
                    rt.block_on(server.stop());
                    point
                })
                .collect()
        })
        .expect("spawn the sequential thread")
        .join()
        .expect("the sequential part panicked")
}

fn multi_thread(workers: usize, name: &str) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// The throughput part: servers and clients on their own multi-thread
/// runtimes.
fn throughput(implementations: &[&'static str], connections: &[usize]) -> Vec<Point> {
    let server_rt = multi_thread(SERVER_WORKERS, SERVER_THREAD);
    let client_rt = multi_thread(CLIENT_WORKERS, CLIENT_THREAD);
    let mut points = Vec::new();
    for &n in connections {
        eprintln!("throughput ({n} connections):");
        let mut setups: Vec<Setup> = implementations
            .iter()
            .map(|&imp| {
                let (addr, server) = server_rt.block_on(start_server(imp));
                let clients = client_rt.block_on(futures_util::future::join_all(
                    (0..n).map(|_| HttpClient::connect(addr)),
                ));
                Setup {
                    imp,
                    server,
                    clients,
                    verified: 0,
                    latencies: Vec::new(),
                    runs: Vec::new(),
                }
            })
            .collect();
        // The window's own future runs on this thread (`block_on`), the
        // connections' loops on the client runtime's workers.
        rounds(&mut setups, n, |setup| {
            client_rt.block_on(window(setup, (SERVER_THREAD, CLIENT_THREAD)))
        });
        for setup in setups {
            let (point, server, clients) = setup.into_point(n);
            drop(clients);
            server_rt.block_on(server.stop());
            points.push(point);
        }
    }
    points
}

fn list(var: &str) -> Option<Vec<String>> {
    std::env::var(var)
        .ok()
        .map(|v| v.split(',').map(|w| w.trim().to_owned()).collect())
}

fn main() {
    // `cargo bench` passes `--bench`; filters are not supported.
    let commit = sys::runtime_commit();
    let loadavg = || sh("cat", &["/proc/loadavg"]);
    let loadavg_before = loadavg();
    eprintln!("http: runtime at {commit}; load {loadavg_before}");

    let only = list("HTTP_ONLY");
    let implementations: Vec<&'static str> = IMPLEMENTATIONS
        .into_iter()
        .filter(|imp| only.as_ref().is_none_or(|o| o.iter().any(|w| w == imp)))
        .collect();
    let connections: Vec<usize> = match list("HTTP_CONNECTIONS") {
        Some(list) => list
            .iter()
            .map(|n| n.parse().expect("HTTP_CONNECTIONS: numbers"))
            .collect(),
        None => CONNECTIONS.to_vec(),
    };
    let sequential = if std::env::var("HTTP_SEQUENTIAL").as_deref() == Ok("0") {
        Vec::new()
    } else {
        sequential(&implementations)
    };
    let throughput = throughput(&implementations, &connections);

    let results = Results {
        commit,
        window_seconds: WINDOW.as_secs_f64(),
        warm_up_seconds: WARM_UP.as_secs_f64(),
        server_workers: SERVER_WORKERS,
        client_workers: CLIENT_WORKERS,
        loadavg_before,
        loadavg_after: loadavg(),
        sequential,
        throughput,
    };
    print!("{}", results.markdown());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let _ = std::fs::create_dir_all(&dir);
    std::fs::write(
        dir.join("http.json"),
        serde_json::to_string_pretty(&results).expect("serialize"),
    )
    .expect("write target/http.json");
}
