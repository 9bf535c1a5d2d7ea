//! Multi-core throughput: N connections, each keeping K `add` calls in
//! flight, against a server on a multi-thread runtime; calls per second.
//!
//! Not criterion: a closed loop for a fixed window, several windows per
//! point, interleaved between the implementations (each run measures every
//! implementation once, in a rotating order), so every ratio is taken
//! within one run of the process.
//!
//! Threads (nothing is pinned: the point is to use both CPUs):
//!
//! * the servers run on a tokio multi-thread runtime of 2 workers
//!   (`mc-server`): the accept loops, and every connection's tasks;
//! * the clients run on a second multi-thread runtime of 2 workers
//!   (`mc-client`), so they never run on the server's workers; one task per
//!   connection keeps K calls in flight, plus whatever tasks the client
//!   library runs per connection;
//! * the main thread only sleeps through the window and reads counters.
//!
//! All four threads share the machine's CPUs (2 here), so the figures are
//! of client and server together; the CPU time of each runtime's threads is
//! read from `/proc/self/task/*/schedstat` and reported per call.
//!
//! Implementations, all serving the same `add` (`a + b`):
//!
//! * `floor_tcp`: a raw newline server over TCP (`raw::serve_lines`, the
//!   two-phase floor, one task per connection), and a raw pipelined client
//!   that refills its K slots after every read;
//! * `ours_tcp`: `Listener::new(TcpAcceptor::bind(..)).spawn(router)` with
//!   the default `Config`, clients `Peer::spawn(Transport::connect_tcp(..))`;
//! * `ours_websocket`: the same over `WebSocketAcceptor` and
//!   `Transport::connect_websocket`;
//! * `jsonrpsee_websocket`: jsonrpsee's server and WebSocket client, as in
//!   the other benchmarks (`jsonrpsee_side`).
//!
//! Every answer is checked (`a + 1` for a call with params `{a, b: 1}`), and
//! every call issued must be answered: after a window, the clients stop
//! issuing and drain what is in flight, within a timeout.
//!
//! Prints the table of BENCHMARKS.md and writes `target/multicore.json` (the
//! `report` binary prints it again). For profiling, `MULTICORE_ONLY=ours_tcp`
//! and `MULTICORE_CONNECTIONS=16` (comma-separated lists) run a subset.

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{FuturesUnordered, StreamExt as _};
use jsonrpc_benches::multicore::{Point, Results, Run, ServerSide, IMPLEMENTATIONS};
use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_benches::sys::{self, sh, thread_cpu, ThreadCpu};
use jsonrpc_benches::{floor, jsonrpsee_side, raw, AddParams};
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{
    TcpAcceptor, TcpConnector, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::Peer;
use jsonrpsee::core::client::ClientT as _;
use jsonrpsee_ws_client::WsClient;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

const CONNECTIONS: [usize; 4] = [1, 4, 16, 64];
const IN_FLIGHT: usize = 32;
const SERVER_WORKERS: usize = 2;
const CLIENT_WORKERS: usize = 2;
const RUNS: usize = 5;
const WARM_UP: Duration = Duration::from_millis(200);
const WINDOW: Duration = Duration::from_secs(1);
/// How long the in-flight calls get to be answered after a window.
const DRAIN: Duration = Duration::from_secs(30);

const SERVER_THREAD: &str = "mc-server";
const CLIENT_THREAD: &str = "mc-client";

fn multi_thread(workers: usize, name: &str) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

// ---------------------------------------------------------------------------
// Servers (started inside the server runtime).

/// The raw floor's server: accept, and serve each connection on a task.
async fn floor_server() -> (SocketAddr, ServerSide) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("bound");
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).expect("nodelay");
            let (read, write) = stream.into_split();
            tokio::spawn(raw::serve_lines(read, write));
        }
    });
    (addr, ServerSide::Floor(accept))
}

async fn start_server(imp: &str) -> (SocketAddr, ServerSide) {
    let router = hand_router(Arc::new(State::default()));
    match imp {
        "floor_tcp" => floor_server().await,
        "ours_tcp" => {
            let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.expect("bind");
            let addr = acceptor.local_addr().expect("bound");
            (
                addr,
                ServerSide::Ours(Listener::new(acceptor).spawn(router)),
            )
        }
        "ours_websocket" => {
            let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.expect("bind");
            let addr = acceptor.local_addr().expect("bound");
            (
                addr,
                ServerSide::Ours(Listener::new(acceptor).spawn(router)),
            )
        }
        "jsonrpsee_websocket" => {
            let (addr, handle) = jsonrpsee_side::ws_server().await;
            (addr, ServerSide::Jsonrpsee(handle))
        }
        other => unreachable!("{other}"),
    }
}

// ---------------------------------------------------------------------------
// Clients (connected inside the client runtime).

struct RawConn {
    reader: BufReader<OwnedReadHalf>,
    write: OwnedWriteHalf,
    next_id: u64,
}

enum Conn {
    Raw(Box<RawConn>),
    Ours(Peer),
    Jsonrpsee(WsClient),
}

async fn connect(imp: &str, addr: SocketAddr) -> Conn {
    match imp {
        "floor_tcp" => {
            let stream = TcpStream::connect(addr).await.expect("connect");
            stream.set_nodelay(true).expect("nodelay");
            let (read, write) = stream.into_split();
            Conn::Raw(Box::new(RawConn {
                reader: BufReader::with_capacity(64 * 1024, read),
                write,
                next_id: 0,
            }))
        }
        "ours_tcp" => Conn::Ours(Peer::spawn(
            TcpConnector::new(addr).connect().await.expect("connect"),
        )),
        "ours_websocket" => Conn::Ours(Peer::spawn(
            WebSocketConnector::new(format!("ws://{addr}/"))
                .connect()
                .await
                .expect("connect"),
        )),
        "jsonrpsee_websocket" => Conn::Jsonrpsee(jsonrpsee_side::ws_client(addr, IN_FLIGHT).await),
        other => unreachable!("{other}"),
    }
}

/// Keeps `k` calls in flight until `stop`, then waits for the last ones.
/// `call(a)` resolves to `(a, the answer)`. Returns the calls answered.
async fn pipeline<F, Fut>(k: usize, first: i64, stop: &AtomicBool, done: &AtomicU64, call: F) -> u64
where
    F: Fn(i64) -> Fut,
    Fut: Future<Output = (i64, i64)>,
{
    let mut next = first;
    let mut pending = FuturesUnordered::new();
    for _ in 0..k {
        pending.push(call(next));
        next += 1;
    }
    let mut answered = 0;
    while let Some((a, sum)) = pending.next().await {
        assert_eq!(sum, a + 1, "wrong answer to add({a}, 1)");
        answered += 1;
        done.fetch_add(1, Ordering::Relaxed);
        if !stop.load(Ordering::Relaxed) {
            pending.push(call(next));
            next += 1;
        }
    }
    assert_eq!(answered, (next - first) as u64, "calls lost");
    answered
}

/// The raw floor's pipelined client: writes `k` requests, then for every
/// answer read writes a new request, one write per read burst. The server
/// answers in order, so each answer's id is the next one expected.
async fn raw_pipeline(conn: &mut RawConn, k: usize, stop: &AtomicBool, done: &AtomicU64) -> u64 {
    let mut out = Vec::with_capacity(128 * k);
    let mut line = Vec::with_capacity(128);
    let mut expect = conn.next_id;
    for _ in 0..k {
        let id = conn.next_id;
        conn.next_id += 1;
        floor::write_call(&mut out, Some(id), "add", AddParams { a: id as i64, b: 1 });
    }
    conn.write.write_all(&out).await.expect("write");
    let mut answered = 0;
    while expect < conn.next_id {
        out.clear();
        loop {
            line.clear();
            let n = conn
                .reader
                .read_until(b'\n', &mut line)
                .await
                .expect("read");
            assert!(n > 0, "the server closed the connection");
            line.pop();
            let (id, sum) = floor::read_answer::<i64>(&line);
            assert_eq!(id, expect, "answers out of order or lost");
            assert_eq!(sum, id as i64 + 1, "wrong answer to add({id}, 1)");
            expect += 1;
            answered += 1;
            done.fetch_add(1, Ordering::Relaxed);
            if !stop.load(Ordering::Relaxed) {
                let id = conn.next_id;
                conn.next_id += 1;
                floor::write_call(&mut out, Some(id), "add", AddParams { a: id as i64, b: 1 });
            }
            if conn.reader.buffer().is_empty() {
                break;
            }
        }
        if !out.is_empty() {
            conn.write.write_all(&out).await.expect("write");
        }
    }
    answered
}

/// One connection's work for one window: returns the connection and the
/// calls it answered.
async fn drive(
    mut conn: Conn,
    first: i64,
    stop: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
) -> (Conn, u64) {
    let answered = match &mut conn {
        Conn::Raw(raw) => raw_pipeline(raw, IN_FLIGHT, &stop, &done).await,
        Conn::Ours(peer) => {
            let peer: &Peer = peer;
            pipeline(IN_FLIGHT, first, &stop, &done, |a| async move {
                let sum: i64 = peer.call("add", AddParams { a, b: 1 }).await.expect("add");
                (a, sum)
            })
            .await
        }
        Conn::Jsonrpsee(client) => {
            let client: &WsClient = client;
            pipeline(IN_FLIGHT, first, &stop, &done, |a| async move {
                let sum: i64 = client
                    .request::<i64, _>("add", jsonrpsee_side::Add(AddParams { a, b: 1 }))
                    .await
                    .expect("add");
                (a, sum)
            })
            .await
        }
    };
    (conn, answered)
}

impl Conn {
    async fn close(self) {
        match self {
            Conn::Raw(mut raw) => {
                let _ = raw.write.shutdown().await;
            }
            Conn::Ours(peer) => {
                peer.close(Duration::from_secs(1)).await;
            }
            Conn::Jsonrpsee(client) => drop(client),
        }
    }
}

// ---------------------------------------------------------------------------

fn cpu() -> ThreadCpu {
    thread_cpu(SERVER_THREAD, CLIENT_THREAD)
}

struct Setup {
    imp: &'static str,
    server: ServerSide,
    conns: Vec<Conn>,
    next_a: i64,
    verified: u64,
    runs: Vec<Run>,
}

/// One window: start every connection's loop, warm up, measure, stop,
/// drain and check.
fn window(client_rt: &Runtime, setup: &mut Setup) -> Run {
    let stop = Arc::new(AtomicBool::new(false));
    let counters: Vec<Arc<AtomicU64>> = setup.conns.iter().map(|_| Arc::default()).collect();
    let tasks: Vec<_> = std::mem::take(&mut setup.conns)
        .into_iter()
        .zip(&counters)
        .map(|(conn, done)| {
            let first = setup.next_a;
            setup.next_a += 1 << 32;
            client_rt.spawn(drive(conn, first, stop.clone(), done.clone()))
        })
        .collect();
    let total = || {
        counters
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<u64>()
    };
    std::thread::sleep(WARM_UP);
    let (calls0, cpu0, t0) = (total(), cpu(), Instant::now());
    std::thread::sleep(WINDOW);
    let (calls1, cpu1, t1) = (total(), cpu(), Instant::now());
    stop.store(true, Ordering::Relaxed);
    let results = client_rt.block_on(async {
        tokio::time::timeout(DRAIN, futures_util::future::join_all(tasks))
            .await
            .expect("calls still unanswered after the drain timeout")
    });
    for result in results {
        let (conn, answered) = result.expect("a client task panicked");
        setup.verified += answered;
        setup.conns.push(conn);
    }
    Run {
        calls: calls1 - calls0,
        seconds: (t1 - t0).as_secs_f64(),
        server_cpu_ns: cpu1.server_ns - cpu0.server_ns,
        client_cpu_ns: cpu1.client_ns - cpu0.client_ns,
        wait_ns: cpu1.wait_ns - cpu0.wait_ns,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; filters are not supported.
    let commit = sys::runtime_commit();
    let loadavg = || sh("cat", &["/proc/loadavg"]);
    let loadavg_before = loadavg();
    eprintln!("multicore: runtime at {commit}; load {loadavg_before}");

    let server_rt = multi_thread(SERVER_WORKERS, SERVER_THREAD);
    let client_rt = multi_thread(CLIENT_WORKERS, CLIENT_THREAD);
    let only = std::env::var("MULTICORE_ONLY").ok();
    let implementations: Vec<&'static str> = IMPLEMENTATIONS
        .into_iter()
        .filter(|imp| {
            only.as_ref()
                .is_none_or(|o| o.split(',').any(|w| w == *imp))
        })
        .collect();
    let connections: Vec<usize> = match std::env::var("MULTICORE_CONNECTIONS") {
        Ok(list) => list
            .split(',')
            .map(|n| n.trim().parse().expect("MULTICORE_CONNECTIONS: numbers"))
            .collect(),
        Err(_) => CONNECTIONS.to_vec(),
    };
    let mut points = Vec::new();
    for n in connections {
        let mut setups: Vec<Setup> = implementations
            .iter()
            .map(|&imp| {
                let (addr, server) = server_rt.block_on(start_server(imp));
                let conns = client_rt.block_on(futures_util::future::join_all(
                    (0..n).map(|_| connect(imp, addr)),
                ));
                Setup {
                    imp,
                    server,
                    conns,
                    next_a: 0,
                    verified: 0,
                    runs: Vec::new(),
                }
            })
            .collect();
        for run in 0..RUNS {
            for i in 0..setups.len() {
                let k = setups.len();
                let setup = &mut setups[(i + run) % k];
                let r = window(&client_rt, setup);
                eprintln!(
                    "  n={n:<3} run {run} {:<20} {:>10.0} calls/s  server {:.2} µs/call, client {:.2} µs/call",
                    setup.imp,
                    r.calls_per_second(),
                    r.server_cpu_ns as f64 / 1e3 / r.calls.max(1) as f64,
                    r.client_cpu_ns as f64 / 1e3 / r.calls.max(1) as f64,
                );
                setup.runs.push(r);
            }
        }
        for setup in setups {
            for conn in setup.conns {
                client_rt.block_on(conn.close());
            }
            server_rt.block_on(setup.server.stop());
            points.push(Point {
                implementation: setup.imp.to_owned(),
                connections: n,
                runs: setup.runs,
                verified_calls: setup.verified,
            });
        }
    }

    let results = Results {
        commit,
        server_workers: SERVER_WORKERS,
        client_workers: CLIENT_WORKERS,
        in_flight_per_connection: IN_FLIGHT,
        window_seconds: WINDOW.as_secs_f64(),
        warm_up_seconds: WARM_UP.as_secs_f64(),
        loadavg_before,
        loadavg_after: loadavg(),
        points,
    };
    print!("{}", results.markdown());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let _ = std::fs::create_dir_all(&dir);
    std::fs::write(
        dir.join("multicore.json"),
        serde_json::to_string_pretty(&results).expect("serialize"),
    )
    .expect("write target/multicore.json");
}
