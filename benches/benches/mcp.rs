//! MCP `tools/call` against rmcp: the `add` tool served by the
//! `jsonrpc-mcp` layer and by rmcp 3.11 (`mcp-server ours|rmcp`), driven by
//! the same raw client (`jsonrpc_benches::mcp_wire`), alternating sides
//! for five rounds, medians reported:
//!
//! * stdio, one call at a time (calls/s, p50/p99 latency) and 32 in flight
//!   (calls/s), client and server pinned to one CPU (a child process woken
//!   on the other vCPU costs more than the call);
//! * Streamable HTTP, SSE answers and JSON answers: one session, one call
//!   at a time; 16 sessions on 16 connections at once;
//! * server memory per idle session over HTTP (RSS from outside, 500
//!   sessions initialized and left).
//!
//! Not a criterion benchmark; prints a Markdown table and writes
//! `target/mcp.json`.

use std::time::{Duration, Instant};

use jsonrpc_benches::mcp_wire::{call, HttpSession, Server, StdioSession};
use jsonrpc_benches::sys;
use serde::Serialize;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-server");
const ROUNDS: usize = 5;
const SIDES: [&str; 2] = ["ours", "rmcp"];

#[derive(Debug, Serialize, Default, Clone)]
struct Row {
    workload: String,
    /// Per side: calls/s (or bytes per session for memory rows).
    ours: f64,
    rmcp: f64,
    /// Median p50 / p99 latency in µs where measured.
    ours_latency: Option<(f64, f64)>,
    rmcp_latency: Option<(f64, f64)>,
    unit: &'static str,
}

/// One measurement: a rate (or size) and, for sequential runs, latency
/// percentiles in µs.
struct Sample {
    value: f64,
    latency: Option<(f64, f64)>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = (0..args.len())
        .filter(|&i| !args[i].starts_with('-'))
        .filter(|&i| i == 0 || !matches!(args[i - 1].as_str(), "--only" | "--side"))
        .map(|i| &args[i])
        .collect();
    if !filters.is_empty() && !filters.iter().any(|f| "mcp".contains(f.as_str())) {
        return;
    }
    // `--only TEXT`: the rows whose name contains it; `--side ours|rmcp`:
    // one side only (to profile it).
    let option = |name: &str| {
        let at = args.iter().position(|a| a == name)?;
        args.get(at + 1).cloned()
    };
    let only = option("--only").unwrap_or_default();
    let sides: Vec<usize> = match option("--side").as_deref() {
        Some("ours") => vec![0],
        Some("rmcp") => vec![1],
        _ => vec![0, 1],
    };
    let rt = jsonrpc_benches::runtime();
    let mut rows = Vec::new();
    let mut run = |name: &str, unit, measure: &dyn Fn(&'static str) -> Measure| {
        if name.contains(only.as_str()) {
            rows.push(rt.block_on(compare(name, unit, &sides, measure)));
        }
    };
    run("stdio, sequential", "calls/s", &|s| {
        Box::pin(stdio_sequential(s))
    });
    run("stdio, 32 in flight", "calls/s", &|s| {
        Box::pin(stdio_pipelined(s))
    });
    for json in [false, true] {
        let answers = if json { "JSON" } else { "SSE" };
        run(
            &format!("HTTP {answers}, one session, sequential"),
            "calls/s",
            &move |s| Box::pin(http_sequential(s, json)),
        );
        run(
            &format!("HTTP {answers}, 16 sessions at once"),
            "calls/s",
            &move |s| Box::pin(http_sessions(s, json)),
        );
    }
    run("HTTP, memory per idle session", "bytes", &|s| {
        Box::pin(idle_sessions(s))
    });
    print_table(&rows);
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp.json");
    std::fs::write(out, serde_json::to_string_pretty(&rows).unwrap()).expect("write mcp.json");
}

/// One side's measurement, started.
type Measure = std::pin::Pin<Box<dyn std::future::Future<Output = Sample>>>;

/// Runs `measure` for each side, alternating, [`ROUNDS`] times; medians.
async fn compare(
    workload: &str,
    unit: &'static str,
    sides: &[usize],
    measure: &dyn Fn(&'static str) -> Measure,
) -> Row {
    let mut samples: [Vec<Sample>; 2] = [Vec::new(), Vec::new()];
    for round in 0..ROUNDS {
        // Alternate which side goes first, so drift favours neither.
        let mut order = sides.to_vec();
        if round % 2 == 1 {
            order.reverse();
        }
        for side in order {
            samples[side].push(measure(SIDES[side]).await);
        }
    }
    let [ours, rmcp] = samples;
    let row = Row {
        workload: workload.to_owned(),
        ours: median(ours.iter().map(|s| s.value)),
        rmcp: median(rmcp.iter().map(|s| s.value)),
        ours_latency: latency(&ours),
        rmcp_latency: latency(&rmcp),
        unit,
    };
    eprintln!("{row:?}");
    row
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn latency(samples: &[Sample]) -> Option<(f64, f64)> {
    let all: Vec<(f64, f64)> = samples.iter().filter_map(|s| s.latency).collect();
    (!all.is_empty()).then(|| {
        (
            median(all.iter().map(|l| l.0)),
            median(all.iter().map(|l| l.1)),
        )
    })
}

/// p50 and p99 of durations, in µs.
fn percentiles(mut durations: Vec<Duration>) -> (f64, f64) {
    durations.sort();
    let at = |q: f64| durations[((durations.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    (at(0.5), at(0.99))
}

async fn stdio_sequential(side: &'static str) -> Sample {
    const CALLS: u64 = 5_000;
    let pinned = sys::pin_to_cpu(0);
    let mut server = Server::start(SERVER, &[side, "stdio"]);
    let mut session = StdioSession::open(&mut server).await;
    let mut durations = Vec::with_capacity(CALLS as usize);
    let start = Instant::now();
    for i in 1..=CALLS {
        let sent = Instant::now();
        session.send(&call(i)).await;
        assert_eq!(session.answer().await, i);
        durations.push(sent.elapsed());
    }
    let rate = CALLS as f64 / start.elapsed().as_secs_f64();
    drop(session);
    let _ = server.child.wait().await;
    assert!(pinned, "pinning to one CPU was refused");
    Sample {
        value: rate,
        latency: Some(percentiles(durations)),
    }
}

async fn stdio_pipelined(side: &'static str) -> Sample {
    const CALLS: u64 = 32_000;
    const WINDOW: u64 = 32;
    sys::pin_to_cpu(0);
    let mut server = Server::start(SERVER, &[side, "stdio"]);
    let mut session = StdioSession::open(&mut server).await;
    let start = Instant::now();
    let mut seen = vec![false; CALLS as usize + 1];
    for batch in 0..CALLS / WINDOW {
        let mut lines = Vec::new();
        for i in batch * WINDOW + 1..=(batch + 1) * WINDOW {
            lines.extend_from_slice(&call(i));
            lines.push(b'\n');
        }
        session.send_all(&lines).await;
        for _ in 0..WINDOW {
            let id = session.answer().await as usize;
            assert!(!seen[id], "answered twice");
            seen[id] = true;
        }
    }
    let rate = CALLS as f64 / start.elapsed().as_secs_f64();
    drop(session);
    let _ = server.child.wait().await;
    Sample {
        value: rate,
        latency: None,
    }
}

fn http_args(side: &'static str, json: bool) -> Vec<&'static str> {
    let mut args = vec![side, "http"];
    if json {
        args.push("--json");
    }
    args
}

async fn http_sequential(side: &'static str, json: bool) -> Sample {
    const CALLS: u64 = 3_000;
    let mut server = Server::start(SERVER, &http_args(side, json));
    let addr = server.address().await;
    let mut session = HttpSession::open(&addr).await;
    let mut durations = Vec::with_capacity(CALLS as usize);
    let start = Instant::now();
    for i in 1..=CALLS {
        let sent = Instant::now();
        session.call(i).await;
        durations.push(sent.elapsed());
    }
    let rate = CALLS as f64 / start.elapsed().as_secs_f64();
    drop(server);
    Sample {
        value: rate,
        latency: Some(percentiles(durations)),
    }
}

async fn http_sessions(side: &'static str, json: bool) -> Sample {
    const SESSIONS: u64 = 16;
    const CALLS: u64 = 1_000;
    let mut server = Server::start(SERVER, &http_args(side, json));
    let addr = server.address().await;
    let mut sessions = Vec::new();
    for _ in 0..SESSIONS {
        sessions.push(HttpSession::open(&addr).await);
    }
    let local = tokio::task::LocalSet::new();
    let start = Instant::now();
    local
        .run_until(async {
            let tasks: Vec<_> = sessions
                .into_iter()
                .map(|mut session| {
                    tokio::task::spawn_local(async move {
                        for i in 1..=CALLS {
                            session.call(i).await;
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.expect("a session's calls");
            }
        })
        .await;
    let rate = (SESSIONS * CALLS) as f64 / start.elapsed().as_secs_f64();
    drop(server);
    Sample {
        value: rate,
        latency: None,
    }
}

async fn idle_sessions(side: &'static str) -> Sample {
    const SESSIONS: usize = 500;
    let mut server = Server::start(SERVER, &http_args(side, false));
    let addr = server.address().await;
    let pid = server.pid();
    let mut probe = HttpSession::open(&addr).await;
    probe.call(1).await;
    settle().await;
    let before = sys::rss(Some(pid)).expect("the server's RSS");
    for i in 0..SESSIONS {
        let mut session = HttpSession::open(&addr).await;
        session.call(i as u64).await;
    }
    settle().await;
    let after = sys::rss(Some(pid)).expect("the server's RSS");
    drop(server);
    Sample {
        value: (after as f64 - before as f64) / SESSIONS as f64,
        latency: None,
    }
}

/// Lets the server finish with the last session.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

fn print_table(rows: &[Row]) {
    println!(
        "| workload | ours | rmcp 3.11 | ours ÷ rmcp | p50 / p99 µs, ours | p50 / p99 µs, rmcp |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let lat = |l: Option<(f64, f64)>| l.map_or("".to_owned(), |(a, b)| format!("{a:.0} / {b:.0}"));
    for row in rows {
        let (ours, rmcp) = if row.unit == "bytes" {
            (
                format!("{:.1} KiB", row.ours / 1024.0),
                format!("{:.1} KiB", row.rmcp / 1024.0),
            )
        } else {
            (
                format!("{:.0} {}", row.ours, row.unit),
                format!("{:.0} {}", row.rmcp, row.unit),
            )
        };
        println!(
            "| {} | {ours} | {rmcp} | {:.2}× | {} | {} |",
            row.workload,
            row.ours / row.rmcp,
            lat(row.ours_latency),
            lat(row.rmcp_latency)
        );
    }
}
