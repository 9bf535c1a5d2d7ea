//! Prints the figures tables of BENCHMARKS.md from the last run: criterion's
//! estimates under `target/criterion` and the memory benchmark's
//! `target/memory.json`, the multi-core benchmark's `target/multicore.json`
//! and the HTTP benchmark's `target/http.json`,
//! with every ratio taken within that run.
//!
//! ```text
//! cargo bench --manifest-path benches/Cargo.toml
//! cargo run --release --manifest-path benches/Cargo.toml --bin report
//! ```

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Copy)]
struct Est {
    /// Median time per iteration, ns.
    median: f64,
    /// Median absolute deviation, ns.
    mad: f64,
}

#[derive(Deserialize)]
struct BenchmarkJson {
    full_id: String,
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn load(dir: &Path, out: &mut HashMap<String, Est>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            let bench = std::fs::read_to_string(path.join("benchmark.json"));
            let est = std::fs::read_to_string(path.join("estimates.json"));
            if let (Ok(bench), Ok(est)) = (bench, est) {
                let bench: BenchmarkJson = serde_json::from_str(&bench).expect("benchmark.json");
                let est: Value = serde_json::from_str(&est).expect("estimates.json");
                let point = |k: &str| est[k]["point_estimate"].as_f64().unwrap_or(f64::NAN);
                out.insert(
                    bench.full_id,
                    Est {
                        median: point("median"),
                        mad: point("median_abs_dev"),
                    },
                );
            }
        } else {
            load(&path, out);
        }
    }
}

fn time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

struct Report {
    est: HashMap<String, Est>,
    out: String,
}

impl Report {
    fn get(&self, id: &str) -> Option<Est> {
        self.est.get(id).copied()
    }

    /// `median ± mad` of one benchmark divided by `per`.
    fn cell(&self, id: &str, per: f64) -> String {
        match self.get(id) {
            Some(e) => format!("{} ± {}", time(e.median / per), time(e.mad / per)),
            None => "–".into(),
        }
    }

    fn ratio(&self, id: &str, base: &str) -> String {
        match (self.get(id), self.get(base)) {
            (Some(a), Some(b)) => format!("{:.2}×", a.median / b.median),
            _ => "–".into(),
        }
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }
}

fn main() {
    let target = target_dir();
    // The non-criterion benchmarks write their JSON under `benches/target`
    // whatever the cargo target directory is.
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("target");
    let mut est = HashMap::new();
    load(&target.join("criterion"), &mut est);
    let mut r = Report {
        est,
        out: String::new(),
    };

    // Dispatch.
    r.line("### Dispatch (one request line to one response line, in process)\n");
    r.line("Ratios are to the two-phase floor and to jsonrpsee's async method, same run.\n");
    r.line("| variant | median ± MAD | vs two-phase floor | jsonrpsee_async ÷ this |");
    r.line("|---|---:|---:|---:|");
    for v in [
        "floor_typed",
        "floor_two_phase",
        "ours_invoke_hand",
        "ours_invoke_macro",
        "ours_peer_hand",
        "ours_peer_macro",
        "loopback_echo_task",
        "jsonrpsee_async",
        "jsonrpsee_sync",
    ] {
        let id = format!("dispatch/add/{v}");
        let row = format!(
            "| add: {v} | {} | {} | {} |",
            r.cell(&id, 1.0),
            r.ratio(&id, "dispatch/add/floor_two_phase"),
            r.ratio("dispatch/add/jsonrpsee_async", &id),
        );
        r.line(row);
    }
    for (group, variants) in [
        (
            "note",
            &[
                "floor_two_phase",
                "ours_invoke_hand",
                "ours_invoke_macro",
                "ours_peer_hand",
                "ours_peer_macro",
            ][..],
        ),
        (
            "unknown",
            &[
                "floor_two_phase",
                "ours_invoke",
                "ours_peer",
                "jsonrpsee_async",
            ][..],
        ),
    ] {
        for v in variants {
            let id = format!("dispatch/{group}/{v}");
            let base = format!("dispatch/{group}/floor_two_phase");
            let row = format!(
                "| {group}: {v} | {} | {} | |",
                r.cell(&id, 1.0),
                r.ratio(&id, &base)
            );
            r.line(row);
        }
    }
    r.line(format!(
        "\nMacro route ÷ hand route: invoke {}, peer {}.\n",
        r.ratio(
            "dispatch/add/ours_invoke_macro",
            "dispatch/add/ours_invoke_hand"
        ),
        r.ratio(
            "dispatch/add/ours_peer_macro",
            "dispatch/add/ours_peer_hand"
        ),
    ));

    // Round trips.
    r.line("### Round trip (sequential calls, current-thread runtime)\n");
    r.line("| transport | floor (raw line ping-pong) | ours | ours ÷ floor |");
    r.line("|---|---:|---:|---:|");
    for t in ["memory", "unix", "tcp", "child_stdio"] {
        let (f, o) = (
            format!("round_trip/{t}/floor"),
            format!("round_trip/{t}/ours"),
        );
        let row = format!(
            "| {t} | {} | {} | {} |",
            r.cell(&f, 1.0),
            r.cell(&o, 1.0),
            r.ratio(&o, &f)
        );
        r.line(row);
    }
    let row = format!(
        "| websocket | jsonrpsee: {} | {} | jsonrpsee ÷ ours: {} |",
        r.cell("round_trip/websocket/jsonrpsee", 1.0),
        r.cell("round_trip/websocket/ours", 1.0),
        r.ratio(
            "round_trip/websocket/jsonrpsee",
            "round_trip/websocket/ours"
        ),
    );
    r.line(row);

    // Pipelined.
    r.line("\n### Pipelined calls (time per call, N in flight)\n");
    r.line("| transport | N | floor | ours | ours ÷ floor |");
    r.line("|---|---:|---:|---:|---:|");
    for t in ["memory", "unix", "tcp", "child_stdio"] {
        for n in [64usize, 1024] {
            let (f, o) = (
                format!("pipelined/{t}/floor/{n}"),
                format!("pipelined/{t}/ours/{n}"),
            );
            let row = format!(
                "| {t} | {n} | {} | {} | {} |",
                r.cell(&f, n as f64),
                r.cell(&o, n as f64),
                r.ratio(&o, &f)
            );
            r.line(row);
        }
    }
    r.line(
        "\n| transport | N | jsonrpsee | ours | jsonrpsee ÷ ours | jsonrpsee (ws) ÷ ours (unix) |",
    );
    r.line("|---|---:|---:|---:|---:|---:|");
    for n in [64usize, 1024] {
        let (j, o, u) = (
            format!("pipelined/websocket/jsonrpsee/{n}"),
            format!("pipelined/websocket/ours/{n}"),
            format!("pipelined/unix/ours/{n}"),
        );
        let row = format!(
            "| websocket | {n} | {} | {} | {} | {} |",
            r.cell(&j, n as f64),
            r.cell(&o, n as f64),
            r.ratio(&j, &o),
            r.ratio(&j, &u)
        );
        r.line(row);
    }

    // Notifications.
    r.line("\n### Notifications one way (time per notification; 1,024 then one call)\n");
    r.line("| transport | floor | ours | ours ÷ floor |");
    r.line("|---|---:|---:|---:|");
    for t in ["memory", "unix", "tcp", "child_stdio"] {
        let (f, o) = (
            format!("notifications/{t}/floor/1024"),
            format!("notifications/{t}/ours/1024"),
        );
        let row = format!(
            "| {t} | {} | {} | {} |",
            r.cell(&f, 1024.0),
            r.cell(&o, 1024.0),
            r.ratio(&o, &f)
        );
        r.line(row);
    }

    // Large messages.
    r.line("\n### Large messages (framer + parse + typed decode)\n");
    r.line("| shape | size | serde_json from_slice | ours (long-lived peer) | ours speed ÷ serde_json | ours in process (`respond`) | in process ÷ serde_json | ours (fresh peer per message) | framer | envelope (owned parse) | typed params |");
    r.line("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for shape in ["text", "items"] {
        for size in ["1MiB", "8MiB"] {
            let id = |v: &str| format!("large/{shape}/{v}/{size}");
            let speed = |ours: &str| match (r.get(&id("floor_from_slice")), r.get(&id(ours))) {
                (Some(f), Some(o)) => format!("{:.0}%", 100.0 * f.median / o.median),
                _ => "–".into(),
            };
            let row = format!(
                "| {shape} | {size} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                r.cell(&id("floor_from_slice"), 1.0),
                r.cell(&id("ours_peer"), 1.0),
                speed("ours_peer"),
                r.cell(&id("ours_respond"), 1.0),
                speed("ours_respond"),
                r.cell(&id("ours_fresh_peer"), 1.0),
                r.cell(&id("step_framer"), 1.0),
                r.cell(&id("step_envelope"), 1.0),
                r.cell(&id("step_typed_params"), 1.0),
            );
            r.line(row);
        }
    }

    // Memory.
    match std::fs::read_to_string(results.join("memory.json")) {
        Ok(text) => {
            let memory: Value = serde_json::from_str(&text).expect("memory.json");
            r.line("\n### Allocations per operation (counting allocator)\n");
            r.line("| benchmark | what | allocs/op | bytes/op |");
            r.line("|---|---|---:|---:|");
            for row in memory["allocations"].as_array().into_iter().flatten() {
                let line = format!(
                    "| {} | {} | {:.2} | {:.0} |",
                    row["name"].as_str().unwrap_or(""),
                    row["what"].as_str().unwrap_or(""),
                    row["allocs_per_op"].as_f64().unwrap_or(f64::NAN),
                    row["bytes_per_op"].as_f64().unwrap_or(f64::NAN),
                );
                r.line(line);
            }
            let p = &memory["parked"];
            let line = format!(
                "\nHeap per parked inbound request: {:.0} bytes ({:.1} allocations), {} requests parked.\n",
                p["per_request"].as_f64().unwrap_or(f64::NAN),
                p["allocs_per_request"].as_f64().unwrap_or(f64::NAN),
                p["requests"]
            );
            r.line(line);
            r.line("### Peak RSS of an 8 MiB round trip between two processes\n");
            r.line("(peak − idle) ÷ payload, in each process; idle is the RSS just before the payload is built.\n");
            r.line("| implementation | text | malloc | client idle | client peak | client ratio | server idle | server peak | server ratio |");
            r.line("|---|---|---|---:|---:|---:|---:|---:|---:|");
            let mib = |v: &Value| v.as_f64().unwrap_or(f64::NAN) / 1048576.0;
            for row in memory["rss"].as_array().into_iter().flatten() {
                let payload = row["payload"].as_f64().unwrap_or(f64::NAN);
                let ratio = |peak: &Value, idle: &Value| {
                    (peak.as_f64().unwrap_or(f64::NAN) - idle.as_f64().unwrap_or(f64::NAN))
                        / payload
                };
                let line = format!(
                    "| {} | {} | {} | {:.1} MiB | {:.1} MiB | {:.2}× | {:.1} MiB | {:.1} MiB | {:.2}× |",
                    row["name"].as_str().unwrap_or(""),
                    row["text"].as_str().unwrap_or(""),
                    row["malloc"].as_str().unwrap_or(""),
                    mib(&row["client_idle"]),
                    mib(&row["client_peak"]),
                    ratio(&row["client_peak"], &row["client_idle"]),
                    mib(&row["server_idle"]),
                    mib(&row["server_peak"]),
                    ratio(&row["server_peak"], &row["server_idle"]),
                );
                r.line(line);
            }
        }
        Err(_) => r.line("\n(no target/memory.json: run `cargo bench --bench memory`)"),
    }

    // Multi-core throughput (its own JSON, not criterion).
    match std::fs::read_to_string(results.join("multicore.json")) {
        Ok(text) => {
            let results: jsonrpc_benches::multicore::Results =
                serde_json::from_str(&text).expect("multicore.json");
            r.line("\n### Multi-core throughput (calls per second)\n");
            r.line(results.markdown());
        }
        Err(_) => r.line("\n(no target/multicore.json: run `cargo bench --bench multicore`)"),
    }

    // HTTP (its own JSON, not criterion).
    match std::fs::read_to_string(results.join("http.json")) {
        Ok(text) => {
            let results: jsonrpc_benches::http::Results =
                serde_json::from_str(&text).expect("http.json");
            r.line("\n### HTTP\n");
            r.line(results.markdown());
        }
        Err(_) => r.line("\n(no target/http.json: run `cargo bench --bench http`)"),
    }

    let mut out = String::new();
    let _ = write!(out, "{}", r.out);
    print!("{out}");
}
