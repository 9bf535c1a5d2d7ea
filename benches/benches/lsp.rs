//! The same language server on jsonrpc-lsp, tower-lsp-server 0.23 and
//! async-lsp 0.2 (`lsp-server ours|tower|async-lsp`, see
//! `jsonrpc_benches::lsp`), each driven over its stdio by the same raw
//! client, the sides alternating for five rounds, medians reported:
//!
//! * a `didChange` storm then a completion: 20 bursts of 500 incremental
//!   changes, each burst followed at once by `textDocument/completion`,
//!   whose answer must show every change before it (changes/s over the
//!   run; the completion's latency from the moment it was written, p50 and
//!   p99; completions that missed a change are counted);
//! * `textDocument/hover` one at a time (requests/s, p50/p99) and with 32
//!   in flight (requests/s);
//! * server memory with 1,000 open documents of 4.6 KB (RSS from outside,
//!   after less before, per document).
//!
//! Client and server are pinned to one CPU, as in the MCP comparison.
//! Not a criterion benchmark; prints a Markdown table and writes
//! `target/lsp.json`.

use std::process::Stdio;
use std::time::{Duration, Instant};

use jsonrpc_benches::{lsp, sys};
use serde::Serialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

const SERVER: &str = env!("CARGO_BIN_EXE_lsp-server");
const ROUNDS: usize = 5;
const SIDES: [&str; 3] = ["ours", "tower", "async-lsp"];
const URI: &str = "file:///bench.txt";

/// One side's figure for a row, with latency where measured and the
/// completions that missed a change.
#[derive(Debug, Serialize, Clone, Default)]
struct Figure {
    value: f64,
    latency: Option<(f64, f64)>,
    stale: u64,
}

#[derive(Debug, Serialize)]
struct Row {
    workload: String,
    unit: &'static str,
    sides: Vec<(String, Figure)>,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "lsp".contains(f.as_str())) {
        return;
    }
    assert!(sys::pin_to_cpu(0), "pinning to one CPU was refused");
    let rt = jsonrpc_benches::runtime();
    let mut rows = Vec::new();
    let mut run = |name: &str, unit, measure: fn(&'static str) -> Measure| {
        rows.push(rt.block_on(compare(name, unit, measure)));
    };
    run("didChange storm, then completion", "changes/s", |s| {
        Box::pin(storm(s))
    });
    run("hover, sequential", "requests/s", |s| {
        Box::pin(hover_sequential(s))
    });
    run("hover, 32 in flight", "requests/s", |s| {
        Box::pin(hover_pipelined(s))
    });
    run("memory per open document (1,000)", "bytes", |s| {
        Box::pin(memory(s))
    });
    print_table(&rows);
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lsp.json");
    std::fs::write(out, serde_json::to_string_pretty(&rows).unwrap()).expect("write lsp.json");
}

type Measure = std::pin::Pin<Box<dyn std::future::Future<Output = Figure>>>;

async fn compare(workload: &str, unit: &'static str, measure: fn(&'static str) -> Measure) -> Row {
    let mut samples: Vec<Vec<Figure>> = vec![Vec::new(); SIDES.len()];
    for round in 0..ROUNDS {
        // Rotate which side goes first, so drift favours none.
        for k in 0..SIDES.len() {
            let side = (round + k) % SIDES.len();
            samples[side].push(measure(SIDES[side]).await);
        }
    }
    let sides = SIDES
        .iter()
        .zip(&samples)
        .map(|(side, figures)| {
            let figure = Figure {
                value: median(figures.iter().map(|f| f.value)),
                latency: figures.iter().any(|f| f.latency.is_some()).then(|| {
                    let p50 = median(figures.iter().filter_map(|f| f.latency).map(|l| l.0));
                    let p99 = median(figures.iter().filter_map(|f| f.latency).map(|l| l.1));
                    (p50, p99)
                }),
                stale: figures.iter().map(|f| f.stale).sum(),
            };
            ((*side).to_owned(), figure)
        })
        .collect();
    let row = Row {
        workload: workload.to_owned(),
        unit,
        sides,
    };
    eprintln!("{row:?}");
    row
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// p50 and p99 of durations, in µs.
fn percentiles(mut durations: Vec<Duration>) -> (f64, f64) {
    durations.sort();
    let at = |q: f64| durations[((durations.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    (at(0.5), at(0.99))
}

/// One server process and the client's end of its stdio.
struct Session {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    header: String,
}

impl Session {
    /// Starts `side`, initializes it and opens the benchmark's document.
    async fn open(side: &str) -> Session {
        let mut child = Command::new(SERVER)
            .arg(side)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start lsp-server");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut session = Session {
            child,
            input,
            output,
            header: String::new(),
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"processId": null, "rootUri": null, "capabilities": {}}});
        session.send(&[init]).await;
        let answer = session.answer().await;
        assert!(answer.get("result").is_some(), "initialize: {answer}");
        let initialized = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
        session.send(&[initialized, did_open(URI)]).await;
        session
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("a pid")
    }

    /// Writes `messages` framed, in one write.
    async fn send(&mut self, messages: &[Value]) {
        let mut out = Vec::new();
        for message in messages {
            let body = serde_json::to_vec(message).unwrap();
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            out.extend_from_slice(&body);
        }
        self.input
            .write_all(&out)
            .await
            .expect("write to the server");
    }

    /// The next message with an id (an answer); notifications are skipped.
    async fn answer(&mut self) -> Value {
        loop {
            let mut length = None;
            loop {
                self.header.clear();
                let n = self.output.read_line(&mut self.header).await.expect("read");
                assert!(n > 0, "the server closed its stdout");
                let line = self.header.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(value) = line.strip_prefix("Content-Length:") {
                    length = Some(value.trim().parse::<usize>().unwrap());
                }
            }
            let mut body = vec![0; length.expect("a Content-Length")];
            self.output
                .read_exact(&mut body)
                .await
                .expect("read a body");
            let message: Value = serde_json::from_slice(&body).unwrap();
            if message.get("id").is_some() && message.get("method").is_none() {
                return message;
            }
        }
    }

    async fn close(mut self) {
        let shutdown = json!({"jsonrpc": "2.0", "id": -1, "method": "shutdown"});
        self.send(&[shutdown]).await;
        self.answer().await;
        self.send(&[json!({"jsonrpc": "2.0", "method": "exit"})])
            .await;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}

fn did_open(uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "plaintext", "version": 1, "text": lsp::document()
    }}})
}

/// Inserts `x` at the start of the document.
fn change(version: u64) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": URI, "version": version},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
            "end": {"line": 0, "character": 0}}, "text": "x"}]
    }})
}

fn request(id: u64, method: &str, line: usize, character: usize) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {
        "textDocument": {"uri": URI}, "position": {"line": line, "character": character}
    }})
}

async fn storm(side: &'static str) -> Figure {
    const BURSTS: u64 = 20;
    const CHANGES: u64 = 500;
    let mut session = Session::open(side).await;
    let mut latencies = Vec::new();
    let mut stale = 0;
    let start = Instant::now();
    for burst in 0..BURSTS {
        let mut messages: Vec<Value> = (1..=CHANGES)
            .map(|i| change(1 + burst * CHANGES + i))
            .collect();
        // On the last line, `x`: the completion lists the words that start
        // with `x`, the x-run the changes grew at the start of line 0.
        messages.push(request(burst, "textDocument/completion", lsp::LINES, 1));
        session.send(&messages).await;
        let written = Instant::now();
        let answer = session.answer().await;
        latencies.push(written.elapsed());
        let labels: Vec<&str> = answer["result"]
            .as_array()
            .expect("a completion list")
            .iter()
            .map(|item| item["label"].as_str().unwrap())
            .collect();
        let expected = format!("{}alpha", "x".repeat(((burst + 1) * CHANGES) as usize));
        if labels != [expected.as_str()] {
            stale += 1;
        }
    }
    let rate = (BURSTS * CHANGES) as f64 / start.elapsed().as_secs_f64();
    session.close().await;
    assert!(
        side != "ours" || stale == 0,
        "ours answered a completion that missed a change"
    );
    Figure {
        value: rate,
        latency: Some(percentiles(latencies)),
        stale,
    }
}

/// A hover on line `i % LINES`, word `i % 8`; the word it must answer.
fn hover(text: &str, i: u64) -> (Value, String) {
    let line = (i as usize) % lsp::LINES;
    let word = (i as usize / lsp::LINES) % 8;
    let line_text = text.lines().nth(line).unwrap();
    let character = line_text
        .split(' ')
        .take(word)
        .map(|w| w.len() + 1)
        .sum::<usize>();
    let expected = line_text.split(' ').nth(word).unwrap().to_owned();
    (request(i, "textDocument/hover", line, character), expected)
}

fn hover_word(answer: &Value) -> &str {
    answer["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
}

async fn hover_sequential(side: &'static str) -> Figure {
    const CALLS: u64 = 5_000;
    let mut session = Session::open(side).await;
    let text = lsp::document();
    let hovers: Vec<_> = (1..=CALLS).map(|i| hover(&text, i)).collect();
    let mut latencies = Vec::with_capacity(CALLS as usize);
    let start = Instant::now();
    for (message, expected) in &hovers {
        let sent = Instant::now();
        session.send(std::slice::from_ref(message)).await;
        let answer = session.answer().await;
        latencies.push(sent.elapsed());
        assert_eq!(hover_word(&answer), expected, "{side}: {answer}");
    }
    let rate = CALLS as f64 / start.elapsed().as_secs_f64();
    session.close().await;
    Figure {
        value: rate,
        latency: Some(percentiles(latencies)),
        stale: 0,
    }
}

async fn hover_pipelined(side: &'static str) -> Figure {
    const CALLS: u64 = 32_000;
    const WINDOW: u64 = 32;
    let mut session = Session::open(side).await;
    let text = lsp::document();
    let hovers: Vec<_> = (0..CALLS).map(|i| hover(&text, i)).collect();
    let start = Instant::now();
    for window in hovers.chunks(WINDOW as usize) {
        let messages: Vec<Value> = window.iter().map(|(m, _)| m.clone()).collect();
        session.send(&messages).await;
        for _ in 0..window.len() {
            let answer = session.answer().await;
            let id = answer["id"].as_u64().expect("an id");
            assert_eq!(
                hover_word(&answer),
                hovers[id as usize].1,
                "{side}: {answer}"
            );
        }
    }
    let rate = CALLS as f64 / start.elapsed().as_secs_f64();
    session.close().await;
    Figure {
        value: rate,
        latency: None,
        stale: 0,
    }
}

async fn memory(side: &'static str) -> Figure {
    const DOCUMENTS: usize = 1_000;
    let mut session = Session::open(side).await;
    settle(&mut session, 1).await;
    let before = sys::rss(Some(session.pid())).expect("the server's RSS");
    let opens: Vec<Value> = (0..DOCUMENTS)
        .map(|i| did_open(&format!("file:///doc{i}.txt")))
        .collect();
    for chunk in opens.chunks(100) {
        session.send(chunk).await;
    }
    settle(&mut session, 2).await;
    let after = sys::rss(Some(session.pid())).expect("the server's RSS");
    session.close().await;
    Figure {
        value: after.saturating_sub(before) as f64 / DOCUMENTS as f64,
        latency: None,
        stale: 0,
    }
}

/// A request answered: everything sent before it has been handled.
async fn settle(session: &mut Session, id: u64) {
    session
        .send(&[request(id, "textDocument/hover", 0, 0)])
        .await;
    session.answer().await;
}

fn print_table(rows: &[Row]) {
    println!("| workload | unit | {} |", SIDES.join(" | "));
    println!("|---|---|{}", "---:|".repeat(SIDES.len()));
    for row in rows {
        let cells: Vec<String> = row
            .sides
            .iter()
            .map(|(_, f)| {
                let mut cell = format!("{:.0}", f.value);
                if let Some((p50, p99)) = f.latency {
                    cell.push_str(&format!(" (p50 {p50:.0} µs, p99 {p99:.0} µs)"));
                }
                if f.stale > 0 {
                    cell.push_str(&format!(", {} stale", f.stale));
                }
                cell
            })
            .collect();
        println!(
            "| {} | {} | {} |",
            row.workload,
            row.unit,
            cells.join(" | ")
        );
    }
    let ours = |row: &Row| row.sides[0].1.value;
    for row in rows {
        let ratios: Vec<String> = row.sides[1..]
            .iter()
            .map(|(side, f)| format!("{side} {:.2}×", ours(row) / f.value))
            .collect();
        println!("{}: ours ÷ {}", row.workload, ratios.join(", "));
    }
}
