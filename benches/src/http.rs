//! JSON-RPC over HTTP (`benches/http.rs`): the servers compared, the one
//! load generator they are all measured with, and the results the benchmark
//! saves and prints.
//!
//! Servers, each serving `add` on `POST /`:
//!
//! * `hyper_floor`: a bare hyper 1 HTTP/1.1 service that reads the body
//!   and answers a fixed [`ADD_RESPONSE`](crate::ADD_RESPONSE), parsing
//!   nothing: what the HTTP stack costs by itself;
//! * `hyper_two_phase`: the same service answering with the hand-written
//!   two-phase dispatch ([`floor::two_phase`]): the HTTP stack plus the
//!   least JSON-RPC work there is;
//! * `ours`: `HttpListener::new(TcpAcceptor::bind(..)).spawn(hand_router(..))`
//!   with the default `Config`;
//! * `jsonrpsee`: jsonrpsee's server (it serves HTTP and WebSocket on one
//!   port) with the async `add` of [`jsonrpsee_side::module`].
//!
//! The client is the same for all: [`HttpClient`], one raw keep-alive
//! connection that writes a pre-built request and parses the answer's head
//! with `httparse`, one call at a time, checking every answer (status 200,
//! `Content-Length`, a JSON-RPC answer with id 1 and result 5). It costs
//! far less than any server, so the servers are what is measured.

use std::fmt::Write as _;
use std::net::SocketAddr;

use bytes::{Buf as _, Bytes, BytesMut};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::multicore::{cpu_per_call_us, median, median_rate, rate_range, thousands, Run};
use crate::{floor, ADD_REQUEST, ADD_RESPONSE};

/// The servers measured, in table order.
pub const IMPLEMENTATIONS: [&str; 4] = ["hyper_floor", "hyper_two_phase", "ours", "jsonrpsee"];

/// The request every client sends, head and body: `add(2, 3)` with id 1.
pub fn request_bytes(addr: SocketAddr) -> Bytes {
    let mut head = String::new();
    let _ = write!(
        head,
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        ADD_REQUEST.len()
    );
    let mut request = head.into_bytes();
    request.extend_from_slice(ADD_REQUEST);
    Bytes::from(request)
}

/// One raw HTTP/1.1 keep-alive connection, one call at a time.
#[derive(Debug)]
pub struct HttpClient {
    stream: TcpStream,
    request: Bytes,
    buf: BytesMut,
}

#[derive(Deserialize)]
struct Answer {
    jsonrpc: String,
    id: u64,
    result: i64,
}

impl HttpClient {
    /// Connects to `addr` (`TCP_NODELAY` on, as every server sets it).
    pub async fn connect(addr: SocketAddr) -> HttpClient {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        HttpClient {
            stream,
            request: request_bytes(addr),
            buf: BytesMut::with_capacity(16 * 1024),
        }
    }

    /// Sends the request and reads its answer; panics on anything but
    /// `200` with the `add` answer.
    pub async fn call(&mut self) {
        self.stream
            .write_all(&self.request)
            .await
            .expect("write the request");
        let (head_len, body_len) = loop {
            if let Some(head) = self.parse_head() {
                break head;
            }
            self.read_more().await;
        };
        while self.buf.len() < head_len + body_len {
            self.read_more().await;
        }
        self.buf.advance(head_len);
        let body = self.buf.split_to(body_len);
        let answer: Answer = serde_json::from_slice(&body).unwrap_or_else(|e| {
            panic!(
                "not an add answer ({e}): {}",
                String::from_utf8_lossy(&body)
            )
        });
        assert!(
            answer.jsonrpc == "2.0" && answer.id == 1 && answer.result == 5,
            "wrong answer: {}",
            String::from_utf8_lossy(&body)
        );
    }

    async fn read_more(&mut self) {
        self.buf.reserve(4096);
        let n = self.stream.read_buf(&mut self.buf).await.expect("read");
        assert!(n > 0, "the server closed the connection");
    }

    /// The length of the answer's head and of its body, once the head is
    /// all there.
    fn parse_head(&self) -> Option<(usize, usize)> {
        let mut headers = [httparse::EMPTY_HEADER; 16];
        let mut response = httparse::Response::new(&mut headers);
        let head_len = match response.parse(&self.buf).expect("an HTTP/1.1 answer") {
            httparse::Status::Complete(n) => n,
            httparse::Status::Partial => return None,
        };
        assert_eq!(response.code, Some(200), "status");
        let length = response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-length"))
            .expect("a Content-Length header");
        let body_len = std::str::from_utf8(length.value)
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .expect("a Content-Length that is a number");
        Some((head_len, body_len))
    }
}

/// A bare hyper HTTP/1.1 server on a loopback port: every connection on
/// its own task, every request answered by `answer(body)` with
/// `Content-Type: application/json`.
async fn hyper_server(answer: fn(&[u8]) -> Bytes) -> (SocketAddr, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("bound");
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).expect("nodelay");
            let service =
                hyper::service::service_fn(move |request: Request<Incoming>| async move {
                    let body = request.into_body().collect().await?.to_bytes();
                    let mut response = Response::new(Full::new(answer(&body)));
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static("application/json"),
                    );
                    Ok::<_, hyper::Error>(response)
                });
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, accept)
}

/// The HTTP stack alone: reads the body, answers a fixed `add` answer.
pub async fn hyper_floor() -> (SocketAddr, JoinHandle<()>) {
    hyper_server(|_| Bytes::from_static(ADD_RESPONSE)).await
}

/// The HTTP stack and the two-phase dispatch.
pub async fn hyper_two_phase() -> (SocketAddr, JoinHandle<()>) {
    hyper_server(|body| {
        let mut out = Vec::with_capacity(64);
        floor::two_phase(body, &mut out);
        Bytes::from(out)
    })
    .await
}

/// One implementation at one connection count.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Point {
    pub implementation: String,
    pub connections: usize,
    pub runs: Vec<Run>,
    /// Per-call latency percentiles over every window, ns: p50, p99.
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// Calls answered over all the point's windows, warm-ups included:
    /// every one checked.
    pub verified_calls: u64,
}

impl Point {
    /// Median calls per second over the windows.
    pub fn median_rate(&self) -> f64 {
        median_rate(&self.runs)
    }

    /// Lowest and highest calls per second over the windows.
    pub fn range(&self) -> (f64, f64) {
        rate_range(&self.runs)
    }

    /// Median CPU time per call (µs): server threads, client threads.
    pub fn cpu_per_call_us(&self) -> (f64, f64) {
        cpu_per_call_us(&self.runs)
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

/// A whole run of the HTTP benchmark.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    /// `git log --oneline -1` of the repository when the run started.
    pub commit: String,
    pub window_seconds: f64,
    pub warm_up_seconds: f64,
    pub server_workers: usize,
    pub client_workers: usize,
    /// `/proc/loadavg` before and after.
    pub loadavg_before: String,
    pub loadavg_after: String,
    /// One connection, one call at a time, client and server on one
    /// current-thread runtime pinned to one CPU.
    pub sequential: Vec<Point>,
    /// N connections, one call at a time each, server and clients on
    /// their own multi-thread runtimes.
    pub throughput: Vec<Point>,
}

fn find<'a>(points: &'a [Point], imp: &str, n: usize) -> Option<&'a Point> {
    points
        .iter()
        .find(|p| p.implementation == imp && p.connections == n)
}

impl Results {
    /// The tables of BENCHMARKS.md's "HTTP" section.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let runs = self.sequential.first().map_or(0, |p| p.runs.len());
        let _ = writeln!(
            out,
            "Sequential round trip over one keep-alive connection (client and server on one current-thread runtime, pinned to one CPU), {runs} interleaved {:.1} s windows: the calls' latency percentiles, the mean (the window over the calls: on a shared machine it carries every time another process held the CPU), and the ratios of the p50s:\n",
            self.window_seconds
        );
        let _ = writeln!(
            out,
            "| server | p50 µs | p99 µs | mean µs | p50 ÷ hyper floor | p50 ÷ jsonrpsee |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
        let p50 = |imp: &str| find(&self.sequential, imp, 1).map_or(f64::NAN, |p| p.p50_ns as f64);
        let (floor, theirs) = (p50("hyper_floor"), p50("jsonrpsee"));
        for imp in IMPLEMENTATIONS {
            if let Some(p) = find(&self.sequential, imp, 1) {
                let t = p.p50_ns as f64;
                let _ = writeln!(
                    out,
                    "| {imp} | {:.1} | {:.1} | {:.1} | {:.2}× | {:.2}× |",
                    t / 1e3,
                    p.p99_ns as f64 / 1e3,
                    1e6 / p.median_rate(),
                    t / floor,
                    t / theirs,
                );
            }
        }
        let mut connections: Vec<usize> = self.throughput.iter().map(|p| p.connections).collect();
        connections.sort_unstable();
        connections.dedup();
        let _ = writeln!(
            out,
            "\nKeep-alive throughput: N connections, one call at a time each; server runtime {} workers, client runtime {} workers; calls per second, median of {runs} interleaved {:.1} s windows (lowest–highest):\n",
            self.server_workers, self.client_workers, self.window_seconds
        );
        let _ = writeln!(
            out,
            "| connections | hyper floor | hyper + two-phase | ours | jsonrpsee | ours ÷ jsonrpsee | ours ÷ floor | jsonrpsee ÷ floor |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|---:|---:|");
        for &n in &connections {
            let rate =
                |imp: &str| find(&self.throughput, imp, n).map_or(f64::NAN, Point::median_rate);
            let cell = |imp: &str| match find(&self.throughput, imp, n) {
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
            let (f, o, j) = (rate("hyper_floor"), rate("ours"), rate("jsonrpsee"));
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} | {:.2}× | {:.2}× | {:.2}× |",
                cell("hyper_floor"),
                cell("hyper_two_phase"),
                cell("ours"),
                cell("jsonrpsee"),
                o / j,
                o / f,
                j / f,
            );
        }
        let _ = writeln!(
            out,
            "\nCPU time per call (µs, median over the windows): server runtime's threads + client runtime's threads; CPUs they kept busy (2.0 on an idle machine); and the servers' CPU per call, jsonrpsee ÷ ours (the ratio the throughput would show if the servers alone held the CPUs):\n"
        );
        let _ = writeln!(
            out,
            "| connections | hyper floor | hyper + two-phase | ours | jsonrpsee | server CPU, jsonrpsee ÷ ours |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|---:|---:|");
        for &n in &connections {
            let cell = |imp: &str| match find(&self.throughput, imp, n) {
                Some(p) => {
                    let (s, c) = p.cpu_per_call_us();
                    format!("{s:.2} + {c:.2}; {:.2} CPUs", p.cpus_busy())
                }
                None => "–".into(),
            };
            let server = |imp: &str| {
                find(&self.throughput, imp, n).map_or(f64::NAN, |p| p.cpu_per_call_us().0)
            };
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} | {:.2}× |",
                cell("hyper_floor"),
                cell("hyper_two_phase"),
                cell("ours"),
                cell("jsonrpsee"),
                server("jsonrpsee") / server("ours"),
            );
        }
        let verified: u64 = self
            .sequential
            .iter()
            .chain(&self.throughput)
            .map(|p| p.verified_calls)
            .sum();
        let _ = writeln!(
            out,
            "\n{} calls answered and checked. Runtime at `{}`; load average before {}, after {}.",
            thousands(verified as f64),
            self.commit,
            self.loadavg_before,
            self.loadavg_after,
        );
        out
    }
}
