//! Memory: allocations and bytes per call (a counting global allocator),
//! heap per in-flight inbound request with 10,000 parked, and the peak RSS
//! of an 8 MiB round trip between two processes.
//!
//! Not a criterion benchmark: counts are exact, not timed. Prints a
//! Markdown table and writes `target/memory.json` for the report.
//!
//! With `--rss-client ours|floor` it runs one 8 MiB round trip as the client
//! process and prints its figures as one JSON line (the main run starts
//! itself that way, so each measurement has a fresh process).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use jsonrpc_benches::alloc::{self, Counting};
use jsonrpc_benches::service::{hand_router, invoke_once, macro_router, respond_once, State};
use jsonrpc_benches::setup::{self, Kind};
use jsonrpc_benches::{
    floor, jsonrpsee_side, large, loopback, runtime, sys, AddParams, ADD_REQUEST, NOTE,
};
use jsonrpc_runtime::{transport::ChildProcess, Context, Id, Peer};
use jsonrpsee::core::client::ClientT as _;
use serde::{Deserialize, Serialize};
use tokio::process::Command;
use tokio::runtime::Runtime;

#[global_allocator]
static ALLOC: Counting = Counting;

const SERVER: &str = env!("CARGO_BIN_EXE_bench-server");
const RAW: &str = env!("CARGO_BIN_EXE_raw-server");
const MIB: usize = 1024 * 1024;
const PAYLOAD: usize = 8 * MIB;
const PARKED: usize = 10_000;

/// One line of the allocation table.
#[derive(Debug, Serialize, Deserialize)]
struct AllocRow {
    name: String,
    what: String,
    allocs_per_op: f64,
    bytes_per_op: f64,
}

/// The figures of one 8 MiB round trip.
#[derive(Debug, Serialize, Deserialize)]
struct RssRow {
    name: String,
    /// glibc malloc's setting for this run.
    malloc: String,
    /// `escaped` (source text: newlines, tabs, quotes) or `plain`
    /// (base64-like, nothing to escape).
    text: String,
    payload: u64,
    request_frame: u64,
    client_idle: u64,
    client_peak: u64,
    server_idle: u64,
    server_peak: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Parked {
    requests: usize,
    live_bytes_before: usize,
    live_bytes_parked: usize,
    per_request: f64,
    allocs_per_request: f64,
}

#[derive(Debug, Serialize, Deserialize)]
struct Report {
    allocations: Vec<AllocRow>,
    parked: Parked,
    rss: Vec<RssRow>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--rss-client") {
        let which = args.get(i + 1).map(String::as_str).unwrap_or("ours");
        let text = args.get(i + 2).map(String::as_str).unwrap_or("escaped");
        let row = rss_client(which, text);
        println!("{}", serde_json::to_string(&row).unwrap());
        return;
    }
    // `cargo bench -- <filter>`: run only when the filter names us.
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "memory".contains(f.as_str())) {
        return;
    }

    // `MEMORY_ONLY=parked`: the parked requests alone (to profile them).
    if std::env::var("MEMORY_ONLY").as_deref() == Ok("parked") {
        let p = parked(&runtime());
        println!(
            "heap per parked inbound request: {:.0} bytes ({:.1} allocations)",
            p.per_request, p.allocs_per_request
        );
        return;
    }

    let mut runs = Vec::new();
    for threshold in [None, Some("131072")] {
        for text in ["escaped", "plain"] {
            for which in ["ours", "floor"] {
                runs.push((which, text, threshold));
            }
        }
    }
    let rss: Vec<RssRow> = runs
        .into_iter()
        .map(|(which, text, threshold)| {
            let exe = std::env::current_exe().expect("own path");
            let mut command = std::process::Command::new(exe);
            if let Some(threshold) = threshold {
                // Inherited by the server child too.
                command.env("MALLOC_MMAP_THRESHOLD_", threshold);
            }
            let out = command
                .args(["--rss-client", which, text])
                .stderr(Stdio::inherit())
                .output()
                .expect("run the RSS client");
            let line = String::from_utf8_lossy(&out.stdout);
            serde_json::from_str::<RssRow>(line.trim())
                .unwrap_or_else(|e| panic!("RSS client {which}: {e}: {line}"))
        })
        .collect();

    let rt = runtime();
    let allocations = allocation_rows(&rt);
    let parked = parked(&rt);
    let report = Report {
        allocations,
        parked,
        rss,
    };
    print!("{}", markdown(&report));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let _ = std::fs::create_dir_all(&dir);
    std::fs::write(
        dir.join("memory.json"),
        serde_json::to_string_pretty(&report).unwrap(),
    )
    .expect("write target/memory.json");
}

// ---------------------------------------------------------------------------
// Allocations per operation.

/// Counts what `ops` runs of `body` allocate, after one warm-up run.
fn count(rt: &Runtime, ops: u64, mut body: impl AsyncFnMut()) -> (f64, f64) {
    rt.block_on(async {
        body().await;
        let before = alloc::snapshot();
        body().await;
        let after = alloc::snapshot();
        after.per_op_since(&before, ops)
    })
}

fn allocation_rows(rt: &Runtime) -> Vec<AllocRow> {
    const N: u64 = 10_000;
    let mut rows = Vec::new();
    let mut row = |name: &str, what: &str, (allocs, bytes): (f64, f64)| {
        rows.push(AllocRow {
            name: name.into(),
            what: what.into(),
            allocs_per_op: allocs,
            bytes_per_op: bytes,
        })
    };

    // Dispatch, one request line to one response line.
    row(
        "dispatch/floor_typed",
        "request line to response line",
        count(rt, N, async || {
            for _ in 0..N {
                let mut out = Vec::with_capacity(64);
                floor::typed(ADD_REQUEST, &mut out);
                std::hint::black_box(out);
            }
        }),
    );
    row(
        "dispatch/floor_two_phase",
        "request line to response line",
        count(rt, N, async || {
            for _ in 0..N {
                let mut out = Vec::with_capacity(64);
                floor::two_phase(ADD_REQUEST, &mut out);
                std::hint::black_box(out);
            }
        }),
    );
    let state = Arc::new(State::default());
    let hand = hand_router(state.clone());
    let macro_ = macro_router(state.clone());
    let ctx = Context::detached(Some(Id::from(1)));
    for (name, router) in [
        ("dispatch/ours_respond_hand", &hand),
        ("dispatch/ours_respond_macro", &macro_),
    ] {
        row(
            name,
            "Router::respond: one frame in, its answer out",
            count(rt, N, async || {
                for _ in 0..N {
                    std::hint::black_box(respond_once(router, ADD_REQUEST).await);
                }
            }),
        );
    }
    for (name, router) in [
        ("dispatch/ours_invoke_hand", &hand),
        ("dispatch/ours_invoke_macro", &macro_),
    ] {
        row(
            name,
            "Message::parse_bytes + Router::invoke + to_json",
            count(rt, N, async || {
                for _ in 0..N {
                    std::hint::black_box(invoke_once(router, &ctx, ADD_REQUEST).await);
                }
            }),
        );
    }
    for (name, router) in [
        ("dispatch/ours_peer_hand", &hand),
        ("dispatch/ours_peer_macro", &macro_),
    ] {
        let (transport, client) = loopback::pair();
        let _guard = rt.enter();
        let _server = Peer::builder()
            .config(jsonrpc_benches::config())
            .router(router.clone())
            .spawn(transport);
        let mut client = client;
        row(
            name,
            "server peer only, one request at a time",
            count(rt, N, async || {
                for _ in 0..N {
                    std::hint::black_box(client.request(Bytes::from_static(ADD_REQUEST)).await);
                }
            }),
        );
        row(
            &format!("{name}_x64"),
            "server peer only, 64 requests at a time",
            count(rt, N, async || {
                for _ in 0..N / 64 {
                    for _ in 0..64 {
                        client.tx.send(Bytes::from_static(ADD_REQUEST)).unwrap();
                    }
                    for _ in 0..64 {
                        std::hint::black_box(client.rx.recv().await);
                    }
                }
            })
            .scale(N, N / 64 * 64),
        );
    }
    {
        let (transport, client) = loopback::pair();
        let _guard = rt.enter();
        let _server = Peer::builder()
            .config(jsonrpc_benches::config())
            .router(hand.clone())
            .spawn(transport);
        row(
            "dispatch/ours_peer_note",
            "server peer only, one notification",
            count(rt, N, async || {
                for _ in 0..N {
                    client.tx.send(Bytes::from_static(NOTE)).unwrap();
                    state.noted.notified().await;
                }
            }),
        );
    }
    for sync in [false, true] {
        let module = jsonrpsee_side::module(sync);
        row(
            if sync {
                "dispatch/jsonrpsee_sync"
            } else {
                "dispatch/jsonrpsee_async"
            },
            "RpcModule::raw_json_request",
            count(rt, N, async || {
                let text = std::str::from_utf8(ADD_REQUEST).unwrap();
                for _ in 0..N {
                    std::hint::black_box(module.raw_json_request(text, 1).await.unwrap());
                }
            }),
        );
    }

    // Whole round trips: client and server peers, both in this process.
    for kind in [Kind::Memory, Kind::Unix] {
        let ours = rt.block_on(setup::ours(kind, Path::new(SERVER)));
        row(
            &format!("round_trip/{}", kind.name()),
            "client + server peers, one call at a time",
            count(rt, N, async || {
                for _ in 0..N {
                    std::hint::black_box(ours.add(2, 3).await);
                }
            }),
        );
        row(
            &format!("pipelined/{}/64", kind.name()),
            "client + server peers, 64 calls in flight, awaited in place",
            count(rt, N, async || {
                for _ in 0..N / 64 {
                    std::hint::black_box(ours.add_pipelined(64).await);
                }
            })
            .scale(N, N / 64 * 64),
        );
        row(
            &format!("pipelined/{}/64/join_all", kind.name()),
            "as above, awaited with `join_all` (a task per future past 30)",
            count(rt, N, async || {
                for _ in 0..N / 64 {
                    std::hint::black_box(ours.add_join_all(64).await);
                }
            })
            .scale(N, N / 64 * 64),
        );
        row(
            &format!("notifications/{}", kind.name()),
            "client + server peers, per notification (1,024 + one call)",
            count(rt, 10 * 1024, async || {
                for _ in 0..10 {
                    std::hint::black_box(ours.notes_then_add(1024).await);
                }
            }),
        );
        rt.block_on(ours.client.close(Duration::from_secs(1)));
    }
    for kind in [Kind::Memory, Kind::Unix] {
        let mut floor = rt.block_on(setup::floor(kind, Path::new(RAW)));
        row(
            &format!("round_trip/{}/floor", kind.name()),
            "raw client + raw server, one call at a time",
            count(rt, N, async || {
                for _ in 0..N {
                    std::hint::black_box(floor.add(2, 3).await);
                }
            }),
        );
        row(
            &format!("pipelined/{}/64/floor", kind.name()),
            "raw client + raw server, 64 calls in flight",
            count(rt, N, async || {
                for _ in 0..N / 64 {
                    std::hint::black_box(floor.add_pipelined(64).await);
                }
            })
            .scale(N, N / 64 * 64),
        );
    }
    {
        let (client, server) = rt.block_on(async {
            let (addr, server) = jsonrpsee_side::ws_server().await;
            (jsonrpsee_side::ws_client(addr, 256).await, server)
        });
        row(
            "round_trip/websocket/jsonrpsee",
            "jsonrpsee client + server, one call at a time",
            count(rt, N, async || {
                for _ in 0..N {
                    let sum: i64 = client
                        .request(
                            "add",
                            jsonrpc_benches::jsonrpsee_side::Add(AddParams { a: 2, b: 3 }),
                        )
                        .await
                        .unwrap();
                    std::hint::black_box(sum);
                }
            }),
        );
        row(
            "pipelined/websocket/64/jsonrpsee",
            "jsonrpsee client + server, 64 calls in flight",
            count(rt, N, async || {
                for _ in 0..N / 64 {
                    let calls = (0..64).map(|i| {
                        client.request::<i64, _>(
                            "add",
                            jsonrpc_benches::jsonrpsee_side::Add(AddParams { a: i, b: 1 }),
                        )
                    });
                    std::hint::black_box(futures_util::future::join_all(calls).await);
                }
            })
            .scale(N, N / 64 * 64),
        );
        drop(client);
        let _ = server.stop();
    }
    {
        let ours = rt.block_on(setup::ours(Kind::WebSocket, Path::new(SERVER)));
        row(
            "round_trip/websocket/ours",
            "client + server peers, one call at a time",
            count(rt, N, async || {
                for _ in 0..N {
                    std::hint::black_box(ours.add(2, 3).await);
                }
            }),
        );
        row(
            "pipelined/websocket/64/ours",
            "client + server peers, 64 calls in flight, awaited in place",
            count(rt, N, async || {
                for _ in 0..N / 64 {
                    std::hint::black_box(ours.add_pipelined(64).await);
                }
            })
            .scale(N, N / 64 * 64),
        );
        rt.block_on(ours.client.close(Duration::from_secs(1)));
    }
    rows
}

/// Rescales a per-op figure counted over `assumed` ops to `actual` ops.
trait Scale {
    fn scale(self, assumed: u64, actual: u64) -> Self;
}

impl Scale for (f64, f64) {
    fn scale(self, assumed: u64, actual: u64) -> Self {
        let k = assumed as f64 / actual as f64;
        (self.0 * k, self.1 * k)
    }
}

// ---------------------------------------------------------------------------
// Heap per parked inbound request.

fn parked(rt: &Runtime) -> Parked {
    let state = Arc::new(State::default());
    let (transport, mut client) = loopback::pair();
    let frames: Vec<Bytes> = (1..=PARKED)
        .map(|id| Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"park"}}"#)))
        .collect();
    rt.block_on(async {
        let _server = Peer::builder()
            .config(jsonrpc_benches::config())
            .router(hand_router(state.clone()))
            .spawn(transport);
        // Warm up: one request parked and released.
        client
            .tx
            .send(Bytes::from_static(
                br#"{"jsonrpc":"2.0","id":0,"method":"park"}"#,
            ))
            .unwrap();
        while state.parked.load(Ordering::Relaxed) < 1 {
            tokio::task::yield_now().await;
        }
        state.release.notify_waiters();
        client.rx.recv().await.unwrap();
        state.parked.store(0, Ordering::Relaxed);

        let frames_bytes: usize = frames.iter().map(Bytes::len).sum();
        let before = alloc::snapshot();
        alloc::record_sizes(true);
        for frame in frames {
            client.tx.send(frame).unwrap();
        }
        while state.parked.load(Ordering::Relaxed) < PARKED {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // Let the reader finish its bookkeeping for the last frames.
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        let after = alloc::snapshot();
        alloc::record_sizes(false);
        if std::env::var_os("MEMORY_SIZES").is_some() {
            eprintln!(
                "allocations while {PARKED} requests parked, by size: {:?}",
                alloc::sizes()
            );
        }
        state.release.notify_waiters();
        for _ in 0..PARKED {
            client.rx.recv().await.unwrap();
        }
        // The frames were counted live before and freed once read.
        let grown = after.live as f64 - before.live as f64 + frames_bytes as f64;
        Parked {
            requests: PARKED,
            live_bytes_before: before.live,
            live_bytes_parked: after.live,
            per_request: grown / PARKED as f64,
            allocs_per_request: (after.allocs - before.allocs) as f64 / PARKED as f64,
        }
    })
}

// ---------------------------------------------------------------------------
// Peak RSS of an 8 MiB round trip, as a fresh client process.

/// The length of the request frame for `payload`, measured without
/// keeping a copy around (the count would otherwise enter the peaks).
fn frame_len(payload: &large::DidOpenParams) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, payload).unwrap();
    // The envelope around the params, as the clients write it.
    count.0 + r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":}"#.len() as u64
}

fn rss_client(which: &str, text: &str) -> RssRow {
    let make = |len| match text {
        "plain" => large::did_open_plain(len),
        _ => large::did_open(len),
    };
    let rt = runtime();
    rt.block_on(async {
        let config = jsonrpc_benches::config();
        let small = large::did_open(64);
        let request_frame;
        let (client_idle, client_peak, server_idle, server_peak);
        match which {
            "ours" => {
                let (transport, child) = ChildProcess::spawn(Command::new(SERVER), &config)
                    .expect("spawn")
                    .into_parts();
                let pid = child.id().expect("running");
                let peer = Peer::builder().config(config).spawn(transport);
                let back: String = peer.call("echo", &small).await.expect("echo");
                assert_eq!(back.len(), small.text_document.text.len());
                tokio::time::sleep(Duration::from_millis(50)).await;
                server_idle = sys::rss(Some(pid)).unwrap_or(0);
                client_idle = sys::rss(None).unwrap_or(0);
                assert!(sys::reset_peak(Some(pid)) && sys::reset_peak(None));

                let payload = make(PAYLOAD);
                request_frame = frame_len(&payload);
                let back: String = peer.call("echo", payload).await.expect("echo");
                assert_eq!(back.len(), PAYLOAD);
                client_peak = sys::peak_rss(None).unwrap_or(0);
                server_peak = sys::peak_rss(Some(pid)).unwrap_or(0);
                drop(back);
                peer.close(Duration::from_secs(1)).await;
                let _ = child.shutdown(Duration::from_secs(1)).await;
            }
            _ => {
                let mut child = Command::new(RAW)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .kill_on_drop(true)
                    .spawn()
                    .expect("spawn");
                let pid = child.id().expect("running");
                let stdin = child.stdin.take().unwrap();
                let stdout = child.stdout.take().unwrap();
                let mut client = jsonrpc_benches::raw::LineClient::new(stdout, stdin);
                let back: String = client.call("echo", &small).await;
                assert_eq!(back.len(), small.text_document.text.len());
                tokio::time::sleep(Duration::from_millis(50)).await;
                server_idle = sys::rss(Some(pid)).unwrap_or(0);
                client_idle = sys::rss(None).unwrap_or(0);
                assert!(sys::reset_peak(Some(pid)) && sys::reset_peak(None));

                let payload = make(PAYLOAD);
                request_frame = frame_len(&payload);
                let back: String = client.call("echo", payload).await;
                assert_eq!(back.len(), PAYLOAD);
                client_peak = sys::peak_rss(None).unwrap_or(0);
                server_peak = sys::peak_rss(Some(pid)).unwrap_or(0);
                // Dropping the client closes the child's stdin: it exits.
                drop(client);
                let _ = child.wait().await;
            }
        }
        RssRow {
            name: which.into(),
            malloc: match std::env::var("MALLOC_MMAP_THRESHOLD_") {
                Ok(t) => format!("MALLOC_MMAP_THRESHOLD_={t}"),
                Err(_) => "default".into(),
            },
            text: text.into(),
            payload: PAYLOAD as u64,
            request_frame,
            client_idle,
            client_peak,
            server_idle,
            server_peak,
        }
    })
}

// ---------------------------------------------------------------------------

fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n## Allocations per operation\n");
    let _ = writeln!(out, "| benchmark | what | allocs/op | bytes/op |");
    let _ = writeln!(out, "|---|---|---:|---:|");
    for r in &report.allocations {
        let _ = writeln!(
            out,
            "| {} | {} | {:.2} | {:.0} |",
            r.name, r.what, r.allocs_per_op, r.bytes_per_op
        );
    }
    let p = &report.parked;
    let _ = writeln!(
        out,
        "\n## Parked inbound requests\n\n{} requests parked: {:.0} bytes of heap each ({:.1} allocations each)\n",
        p.requests, p.per_request, p.allocs_per_request
    );
    let _ = writeln!(out, "## Peak RSS of an 8 MiB round trip\n");
    let _ = writeln!(
        out,
        "| side | text | malloc | payload | client RSS idle | client RSS peak | client (peak-idle)/payload | server RSS idle | server RSS peak | server (peak-idle)/payload |"
    );
    let _ = writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|");
    let mib = |b: u64| b as f64 / MIB as f64;
    for r in &report.rss {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.2}x | {:.1} MiB | {:.1} MiB | {:.2}x |",
            r.name,
            r.text,
            r.malloc,
            mib(r.payload),
            mib(r.client_idle),
            mib(r.client_peak),
            (r.client_peak as f64 - r.client_idle as f64) / r.payload as f64,
            mib(r.server_idle),
            mib(r.server_peak),
            (r.server_peak as f64 - r.server_idle as f64) / r.payload as f64,
        );
    }
    out
}
