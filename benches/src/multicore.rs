//! The results of the multi-core throughput benchmark
//! (`benches/multicore.rs`): what it saves to `target/multicore.json` and
//! the Markdown table it prints, shared with the `report` binary.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// The implementations measured, in table order.
pub const IMPLEMENTATIONS: [&str; 4] = [
    "floor_tcp",
    "ours_tcp",
    "ours_websocket",
    "jsonrpsee_websocket",
];

/// One measurement window of one implementation at one connection count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Calls answered (and checked) during the window.
    pub calls: u64,
    /// The window, seconds.
    pub seconds: f64,
    /// CPU time of the server runtime's threads during the window, ns.
    pub server_cpu_ns: u64,
    /// CPU time of the client runtime's threads during the window, ns.
    pub client_cpu_ns: u64,
    /// Time the two runtimes' threads spent runnable but waiting for a CPU
    /// during the window, ns.
    pub wait_ns: u64,
}

impl Run {
    pub fn calls_per_second(&self) -> f64 {
        self.calls as f64 / self.seconds
    }
}

/// Every run of one implementation at one connection count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub implementation: String,
    pub connections: usize,
    pub runs: Vec<Run>,
    /// Calls answered over all the point's runs, warm-ups and drains
    /// included: every one checked, none missing.
    pub verified_calls: u64,
}

pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Median calls per second over `runs`.
pub fn median_rate(runs: &[Run]) -> f64 {
    median(runs.iter().map(Run::calls_per_second).collect())
}

/// Lowest and highest calls per second over `runs`.
pub fn rate_range(runs: &[Run]) -> (f64, f64) {
    let rates = runs.iter().map(Run::calls_per_second);
    let lo = rates.clone().fold(f64::INFINITY, f64::min);
    let hi = rates.fold(0.0, f64::max);
    (lo, hi)
}

/// Median CPU time per call (µs) over `runs`: server threads, client
/// threads.
pub fn cpu_per_call_us(runs: &[Run]) -> (f64, f64) {
    let per = |f: fn(&Run) -> u64| {
        median(
            runs.iter()
                .map(|r| f(r) as f64 / 1e3 / r.calls.max(1) as f64)
                .collect(),
        )
    };
    (per(|r| r.server_cpu_ns), per(|r| r.client_cpu_ns))
}

impl Point {
    /// Median calls per second over the runs.
    pub fn median_rate(&self) -> f64 {
        median_rate(&self.runs)
    }

    /// Lowest and highest calls per second over the runs.
    pub fn range(&self) -> (f64, f64) {
        rate_range(&self.runs)
    }

    /// Median CPU time per call (µs) of the server runtime, the client
    /// runtime.
    pub fn cpu_per_call_us(&self) -> (f64, f64) {
        cpu_per_call_us(&self.runs)
    }

    /// Median CPUs' worth of time the runtimes' threads spent runnable but
    /// waiting for a CPU during a window.
    pub fn cpus_waiting(&self) -> f64 {
        median(
            self.runs
                .iter()
                .map(|r| r.wait_ns as f64 / 1e9 / r.seconds)
                .collect(),
        )
    }

    /// Median CPUs busy (server + client threads) during a window.
    pub fn cpus_busy(&self) -> f64 {
        median(
            self.runs
                .iter()
                .map(|r| (r.server_cpu_ns + r.client_cpu_ns) as f64 / 1e9 / r.seconds)
                .collect(),
        )
    }
}

/// A whole run of the benchmark.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// `git log --oneline -1` of the repository when the run started.
    pub commit: String,
    pub server_workers: usize,
    pub client_workers: usize,
    pub in_flight_per_connection: usize,
    pub window_seconds: f64,
    pub warm_up_seconds: f64,
    /// `/proc/loadavg` before and after.
    pub loadavg_before: String,
    pub loadavg_after: String,
    pub points: Vec<Point>,
}

impl Results {
    fn point(&self, implementation: &str, connections: usize) -> Option<&Point> {
        self.points
            .iter()
            .find(|p| p.implementation == implementation && p.connections == connections)
    }

    fn connections(&self) -> Vec<usize> {
        let mut n: Vec<usize> = self.points.iter().map(|p| p.connections).collect();
        n.sort_unstable();
        n.dedup();
        n
    }

    /// The tables of BENCHMARKS.md's "Multi-core throughput" section.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let runs = self.points.first().map_or(0, |p| p.runs.len());
        let _ = writeln!(
            out,
            "Calls per second, median of {runs} interleaved {:.1} s windows \
             (lowest–highest in brackets); {} calls in flight per connection; \
             server runtime {} workers, client runtime {} workers. Ratios are \
             of the medians of the same run.\n",
            self.window_seconds,
            self.in_flight_per_connection,
            self.server_workers,
            self.client_workers,
        );
        let _ = writeln!(
            out,
            "| connections | floor (raw TCP) | ours (TCP) | ours (WebSocket) | jsonrpsee (WebSocket) | ours TCP ÷ jsonrpsee | ours WS ÷ jsonrpsee | ours TCP ÷ floor | ours WS ÷ floor |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let rate = |imp: &str, n: usize| self.point(imp, n).map_or(f64::NAN, Point::median_rate);
        for n in self.connections() {
            let cell = |imp: &str| match self.point(imp, n) {
                Some(p) => {
                    let (lo, hi) = p.range();
                    format!(
                        "{} ({}–{})",
                        thousands(p.median_rate()),
                        thousands(lo),
                        thousands(hi)
                    )
                }
                None => "–".into(),
            };
            let (f, ot, ow, j) = (
                rate("floor_tcp", n),
                rate("ours_tcp", n),
                rate("ours_websocket", n),
                rate("jsonrpsee_websocket", n),
            );
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} | {:.2}× | {:.2}× | {:.2}× | {:.2}× |",
                cell("floor_tcp"),
                cell("ours_tcp"),
                cell("ours_websocket"),
                cell("jsonrpsee_websocket"),
                ot / j,
                ow / j,
                ot / f,
                ow / f,
            );
        }
        let _ = writeln!(
            out,
            "\nCPU time per call (µs, median over the windows): server runtime's threads + client runtime's threads; then the CPUs those threads kept busy during a window, and (in brackets) how many more CPUs' worth of time they spent runnable but waiting for a CPU (`/proc/self/task/*/schedstat`; other processes on the machine count there):\n"
        );
        let _ = writeln!(
            out,
            "| connections | floor (raw TCP) | ours (TCP) | ours (WebSocket) | jsonrpsee (WebSocket) |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
        for n in self.connections() {
            let cell = |imp: &str| match self.point(imp, n) {
                Some(p) => {
                    let (s, c) = p.cpu_per_call_us();
                    format!(
                        "{s:.2} + {c:.2}; {:.2} CPUs ({:.2} waiting)",
                        p.cpus_busy(),
                        p.cpus_waiting()
                    )
                }
                None => "–".into(),
            };
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} |",
                cell("floor_tcp"),
                cell("ours_tcp"),
                cell("ours_websocket"),
                cell("jsonrpsee_websocket"),
            );
        }
        let verified: u64 = self.points.iter().map(|p| p.verified_calls).sum();
        let _ = writeln!(
            out,
            "\n{} calls answered and checked (each sum, none missing). Runtime at `{}`; load average before {}, after {}.",
            thousands(verified as f64),
            self.commit,
            self.loadavg_before,
            self.loadavg_after,
        );
        out
    }
}

/// `1234567.8` as `1,234,568`.
pub fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return "–".into();
    }
    let digits = format!("{:.0}", v);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A server under measure, to stop after its benchmark.
pub enum ServerSide {
    /// A hand-written floor's accept loop.
    Floor(tokio::task::JoinHandle<()>),
    /// Ours.
    Ours(jsonrpc_runtime::server::Server),
    /// jsonrpsee's.
    Jsonrpsee(jsonrpsee::server::ServerHandle),
}

impl ServerSide {
    /// Stops the server (ours and jsonrpsee's gracefully).
    pub async fn stop(self) {
        match self {
            ServerSide::Floor(accept) => accept.abort(),
            ServerSide::Ours(server) => server.shutdown(std::time::Duration::from_secs(1)).await,
            ServerSide::Jsonrpsee(handle) => {
                let _ = handle.stop();
                handle.stopped().await;
            }
        }
    }
}
