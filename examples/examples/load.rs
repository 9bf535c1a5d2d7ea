//! Run with: cargo run --release --example load -- --tcp ADDR [--calls N] [--in-flight N]
//!
//! A load generator for any JSON-RPC server: it sends `--calls` requests
//! (`--method`, default `echo`, with `--params`, default a small object)
//! over one connection, keeping at most `--in-flight` unanswered, and
//! reports calls per second, latency percentiles, error answers, and the
//! answers that were lost or duplicated.
//!
//! The connection is one of `--tcp ADDR`, `--unix PATH`, `--ws URL-or-ADDR`
//! or `--child "CMD ARGS..."` (the command is spawned and spoken to over
//! its stdin and stdout; its words are split on whitespace, with no shell
//! quoting). `--content-length` switches TCP, Unix sockets and the child to
//! LSP framing.
//!
//! It shows how to use a [`Transport`] without a peer: a peer drops answers
//! whose id it does not know, so it could not see a duplicate. Here every
//! request gets a unique id (1, 2, 3, ...), the frames are read and
//! classified one by one, and each id's answers are counted. Once every
//! request has been answered the tool closes its side and reads until the
//! server closes (or `--drain-timeout` passes), so a late duplicate is seen
//! too. Ids still unanswered when the server closes, or `--drain-timeout`
//! after the last request was sent (or after the last answer, while the
//! server has stopped answering), are lost.
//!
//! A progress line goes to stderr when it is a terminal; the summary goes
//! to stdout (`--json`: one JSON object, for scripts). The exit code is 0
//! when every request was answered exactly once, 1 otherwise, and 2 for bad
//! arguments.
//!
//! Against the `spec_server` example:
//!
//! ```text
//! cargo run --release --example spec_server -- --tcp 127.0.0.1:9000 &
//! cargo run --release --example load -- --tcp 127.0.0.1:9000 --calls 1000000 --in-flight 1000
//! cargo run --release --example load -- --child "target/release/examples/spec_server"
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use hdrhistogram::Histogram;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use jsonrpc_runtime::codec::{Frame, Framing};
use jsonrpc_runtime::message::{Dialect, Message, ParseOptions, Parsed, Request};
use jsonrpc_runtime::transport::{
    ChildHandle, TcpConnector, TransportError, UnixConnector, WebSocketConnector,
};
use jsonrpc_runtime::{transport::ChildProcess, Config, Id, Transport};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::process::Command;
use tokio::sync::{Semaphore, TryAcquireError};
use tokio::task::JoinHandle;
use tokio::time::Instant;

#[path = "support/logging.rs"]
mod logging;

const USAGE: &str = "\
usage: load (--tcp ADDR | --unix PATH | --ws URL-or-ADDR | --child \"CMD ARGS...\")
            [--calls N] [--in-flight N] [--method NAME] [--params JSON]
            [--content-length] [--drain-timeout SECS] [--json]

  --tcp ADDR            connect to a TCP server (host:port)
  --unix PATH           connect to a Unix-socket server
  --ws URL-or-ADDR      connect to a WebSocket server (ws://host:port/path, or host:port)
  --child \"CMD ARGS...\" spawn CMD and talk over its stdin/stdout (split on whitespace)
  --calls N             requests to send (default 100000)
  --in-flight N         most requests unanswered at once (default 100)
  --method NAME         the method to call (default echo)
  --params JSON         its params, an object or an array (default {\"hello\":\"world\",\"n\":42})
  --content-length      LSP framing (Content-Length headers) on tcp, unix and child
  --drain-timeout SECS  how long to wait for the last answers (default 10)
  --json                print the summary as one JSON object on stdout

exit code: 0 if every request was answered exactly once, 1 if not, 2 for bad arguments";

const DEFAULT_CALLS: u64 = 100_000;
/// Every id is tracked (9 bytes each): a billion calls take 9 GB.
const MAX_CALLS: u64 = 1_000_000_000;
const DEFAULT_IN_FLIGHT: usize = 100;
const DEFAULT_METHOD: &str = "echo";
const DEFAULT_PARAMS: &str = r#"{"hello":"world","n":42}"#;
const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How many first answers between two updates of the progress line.
const PROGRESS_STEP: u64 = 1024;

/// How long a child is given to exit once its stdin is closed.
const CHILD_GRACE: Duration = Duration::from_secs(5);

/// Where the load goes. Everything that depends on the kind of connection is
/// in this type: the option that picks it, its label and how it is opened.
#[derive(Debug)]
enum Target {
    Tcp(String),
    Unix(PathBuf),
    Ws(String),
    Child(Vec<String>),
}

/// An open connection: the transport, and the child process behind it.
struct Connection {
    transport: Transport,
    child: Option<ChildHandle>,
}

impl Target {
    /// The target an option names, or `None` when `flag` picks no transport.
    fn from_option(flag: &str, value: String) -> Option<Result<Target, String>> {
        let target = match flag {
            "--tcp" => Ok(Target::Tcp(value)),
            "--unix" => Ok(Target::Unix(PathBuf::from(value))),
            "--ws" if value.starts_with("ws://") || value.starts_with("wss://") => {
                Ok(Target::Ws(value))
            }
            "--ws" => Ok(Target::Ws(format!("ws://{value}/"))),
            "--child" => {
                let words: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
                if words.is_empty() {
                    Err("`--child` needs a command".to_owned())
                } else {
                    Ok(Target::Child(words))
                }
            }
            _ => return None,
        };
        Some(target)
    }

    /// Whether the connection is framed by one of the runtime's framers
    /// (so `--content-length` applies), rather than by its own protocol.
    fn uses_framer(&self) -> bool {
        match self {
            Target::Tcp(_) | Target::Unix(_) | Target::Child(_) => true,
            Target::Ws(_) => false,
        }
    }

    /// `tcp 127.0.0.1:9000`, `child spec_server`, ...
    fn label(&self) -> String {
        match self {
            Target::Tcp(addr) => format!("tcp {addr}"),
            Target::Unix(path) => format!("unix {}", path.display()),
            Target::Ws(url) => format!("ws {url}"),
            Target::Child(words) => format!("child {}", words.join(" ")),
        }
    }

    /// The transport's name in the JSON summary.
    fn kind(&self) -> &'static str {
        match self {
            Target::Tcp(_) => "tcp",
            Target::Unix(_) => "unix",
            Target::Ws(_) => "ws",
            Target::Child(_) => "child",
        }
    }

    async fn connect(&self, config: &Config) -> Result<Connection, String> {
        let failed = |e: &dyn std::fmt::Display| format!("cannot connect to {}: {e}", self.label());
        let transport = match self {
            Target::Tcp(addr) => TcpConnector::new(addr.as_str())
                .codec(config)
                .connect()
                .await
                .map_err(|e| failed(&e))?,
            Target::Unix(path) => UnixConnector::new(path)
                .codec(config)
                .connect()
                .await
                .map_err(|e| failed(&e))?,
            Target::Ws(url) => WebSocketConnector::new(url)
                .connect()
                .await
                .map_err(|e| failed(&e))?,
            Target::Child(words) => {
                let mut command = Command::new(&words[0]);
                command.args(&words[1..]);
                let child = ChildProcess::spawn(command, config).map_err(|e| failed(&e))?;
                let (transport, handle) = child.into_parts();
                return Ok(Connection {
                    transport,
                    child: Some(handle),
                });
            }
        };
        Ok(Connection {
            transport,
            child: None,
        })
    }
}

/// Command-line options.
#[derive(Debug)]
struct Options {
    target: Target,
    calls: u64,
    in_flight: usize,
    method: String,
    params: Box<RawValue>,
    content_length: bool,
    drain_timeout: Duration,
    json: bool,
}

/// What the command line asked for instead of a load run.
enum NoRun {
    Help,
    Bad(String),
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, NoRun> {
        let bad = NoRun::Bad;
        let mut target = None;
        let mut calls = DEFAULT_CALLS;
        let mut in_flight = DEFAULT_IN_FLIGHT;
        let mut method = DEFAULT_METHOD.to_owned();
        let mut params = DEFAULT_PARAMS.to_owned();
        let mut content_length = false;
        let mut drain_timeout = DEFAULT_DRAIN_TIMEOUT;
        let mut json = false;
        while let Some(arg) = args.next() {
            // Flags without a value first.
            match arg.as_str() {
                "-h" | "--help" => return Err(NoRun::Help),
                "--content-length" => content_length = true,
                "--json" => json = true,
                _ if arg.starts_with("--") => {}
                _ => return Err(bad(format!("unexpected argument `{arg}`"))),
            }
            if matches!(arg.as_str(), "--content-length" | "--json") {
                continue;
            }
            let value = args
                .next()
                .ok_or_else(|| bad(format!("`{arg}` needs a value")))?;
            if let Some(picked) = Target::from_option(&arg, value.clone()) {
                if target.is_some() {
                    return Err(bad(format!(
                        "`{arg}`: give exactly one of --tcp, --unix, --ws, --child"
                    )));
                }
                target = Some(picked.map_err(bad)?);
                continue;
            }
            match arg.as_str() {
                "--calls" => calls = positive(&arg, &value, MAX_CALLS).map_err(bad)?,
                "--in-flight" => {
                    let n = positive(&arg, &value, Semaphore::MAX_PERMITS as u64).map_err(bad)?;
                    in_flight = usize::try_from(n).map_err(|e| bad(e.to_string()))?;
                }
                "--method" => method = value,
                "--params" => params = value,
                "--drain-timeout" => drain_timeout = seconds(&arg, &value).map_err(bad)?,
                _ => return Err(bad(format!("unknown option `{arg}`"))),
            }
        }
        let target = target.ok_or_else(|| {
            bad("say where to send the load: --tcp, --unix, --ws or --child".to_owned())
        })?;
        if content_length && !target.uses_framer() {
            return Err(bad(format!(
                "`--content-length` does not apply to {}: it has its own framing",
                target.kind()
            )));
        }
        let params = structured_params(&params).map_err(bad)?;
        Ok(Options {
            target,
            calls,
            in_flight,
            method,
            params,
            content_length,
            drain_timeout,
            json,
        })
    }

    fn config(&self) -> Config {
        let framing = if self.content_length {
            Framing::ContentLength
        } else {
            Framing::NewlineDelimited
        };
        Config::default().framing(framing)
    }
}

/// A count from 1 to `max`; `1_000_000` is accepted.
fn positive(flag: &str, value: &str, max: u64) -> Result<u64, String> {
    match value.replace('_', "").parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{flag} {value}`: expected a whole number from 1 to {max}"
        )),
    }
}

/// A duration in seconds, fractions allowed.
fn seconds(flag: &str, value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("`{flag} {value}`: expected a number of seconds"))
}

/// Params as JSON-RPC allows them: an object or an array.
fn structured_params(text: &str) -> Result<Box<RawValue>, String> {
    let raw: Box<RawValue> =
        serde_json::from_str(text).map_err(|e| format!("`--params {text}` is not JSON: {e}"))?;
    match raw.get().as_bytes().first() {
        Some(b'{' | b'[') => Ok(raw),
        _ => Err(format!(
            "`--params {text}`: JSON-RPC params are an object or an array"
        )),
    }
}

/// What the writer and the reader share.
struct Shared {
    start: Instant,
    /// Per id (index `id - 1`): nanoseconds from `start` to its sending,
    /// plus one; 0 while unsent.
    sent_at: Vec<AtomicU64>,
    /// One permit per request that may still be sent before an answer comes.
    in_flight: Semaphore,
    /// The highest id handed to the transport.
    sent: AtomicU64,
}

impl Shared {
    fn nanos(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }
}

/// Sends requests 1..=`calls`, waiting for a free in-flight permit before
/// each, and flushing whenever it has to wait: a burst goes out in few
/// writes, and nothing sits in the buffer while the server is idle. Returns
/// the sink, to be closed once every answer is in.
async fn write_requests(
    mut sink: SplitSink<Transport, Bytes>,
    options: Arc<Options>,
    shared: Arc<Shared>,
) -> Result<SplitSink<Transport, Bytes>, TransportError> {
    for id in 1..=options.calls {
        let permit = match shared.in_flight.try_acquire() {
            Ok(permit) => permit,
            Err(TryAcquireError::NoPermits) => {
                sink.flush().await?;
                shared
                    .in_flight
                    .acquire()
                    .await
                    .expect("the semaphore is never closed")
            }
            Err(TryAcquireError::Closed) => unreachable!("the semaphore is never closed"),
        };
        permit.forget();
        let body = request_body(id, &options);
        let slot = &shared.sent_at[index(id)];
        slot.store(shared.nanos() + 1, Ordering::Relaxed);
        if let Err(e) = sink.feed(body).await {
            slot.store(0, Ordering::Relaxed);
            return Err(e);
        }
        shared.sent.store(id, Ordering::Relaxed);
    }
    sink.flush().await?;
    Ok(sink)
}

fn request_body(id: u64, options: &Options) -> Bytes {
    let request = Message::Request(Request {
        id: Id::from(id),
        method: options.method.clone(),
        params: Some(options.params.clone()),
        extras: Default::default(),
    });
    Bytes::from(request.to_json(Dialect::Strict))
}

fn index(id: u64) -> usize {
    usize::try_from(id - 1).expect("ids are below `calls`, which fits in memory")
}

/// What the reader has seen.
struct Tally {
    /// Answers per id (index `id - 1`), saturating.
    answers: Vec<u8>,
    /// Ids answered at least once.
    answered: u64,
    /// First answers that were errors.
    errors: u64,
    /// Answers beyond the first for an id.
    duplicated: u64,
    /// Messages that answer nothing we sent: unknown or unsent ids, requests
    /// and notifications from the server, frames that are not JSON-RPC.
    unexpected: u64,
    /// The first unexpected message, to show what it was.
    first_unexpected: Option<String>,
    /// The first error answer.
    first_error: Option<String>,
    /// Latency of first answers, in microseconds.
    latency: Histogram<u64>,
    /// When the last first answer came, in nanoseconds from the start.
    last_answer: u64,
}

impl Tally {
    fn new(calls: u64) -> Tally {
        Tally {
            answers: vec![0; index(calls) + 1],
            answered: 0,
            errors: 0,
            duplicated: 0,
            unexpected: 0,
            first_unexpected: None,
            first_error: None,
            latency: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("valid histogram bounds"),
            last_answer: 0,
        }
    }

    /// Counts one frame; true when it was the first answer for its id.
    fn frame(&mut self, frame: Frame, shared: &Shared) -> bool {
        let bytes = match frame {
            Frame::Message(bytes) => bytes,
            other => {
                self.unexpect(format!("{other:?}"));
                return false;
            }
        };
        let response = match Message::parse_bytes(&bytes, &ParseOptions::default()) {
            Parsed::Single(Message::Response(response)) => response,
            _ => {
                self.unexpect(String::from_utf8_lossy(&bytes).into_owned());
                return false;
            }
        };
        let sent_at = response
            .id
            .as_u64()
            .filter(|id| (1..=self.answers.len() as u64).contains(id))
            .map(|id| (index(id), shared.sent_at[index(id)].load(Ordering::Relaxed)))
            .filter(|&(_, sent_at)| sent_at != 0);
        let Some((slot, sent_at)) = sent_at else {
            self.unexpect(String::from_utf8_lossy(&bytes).into_owned());
            return false;
        };
        let count = &mut self.answers[slot];
        *count = count.saturating_add(1);
        if *count > 1 {
            self.duplicated += 1;
            return false;
        }
        let now = shared.nanos();
        self.answered += 1;
        self.last_answer = now;
        let micros = now.saturating_sub(sent_at - 1) / 1000;
        self.latency.saturating_record(micros.max(1));
        if let Err(error) = &response.outcome {
            self.errors += 1;
            if self.first_error.is_none() {
                self.first_error = Some(format!(
                    "id {}: {} {}",
                    response.id, error.code.0, error.message
                ));
            }
        }
        true
    }

    fn unexpect(&mut self, what: String) {
        self.unexpected += 1;
        if self.first_unexpected.is_none() {
            let mut what = what;
            if what.len() > 200 {
                let mut end = 200;
                while !what.is_char_boundary(end) {
                    end -= 1;
                }
                what.truncate(end);
                what.push_str("...");
            }
            self.first_unexpected = Some(what);
        }
    }
}

/// Why reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// Every request was answered, and the server closed after we did.
    Complete,
    /// Every request was answered, but the server did not close the
    /// connection within the drain timeout after we closed our side.
    CompleteServerStayedOpen,
    /// The server closed (or the transport failed) with requests unanswered.
    ServerClosed,
    /// The drain timeout passed with requests unanswered.
    TimedOut,
}

/// The run's outcome, as printed.
struct Summary {
    target: String,
    kind: &'static str,
    method: String,
    calls: u64,
    in_flight: usize,
    sent: u64,
    end: End,
    tally: Tally,
    /// Transport failures and an unclean child exit, in order.
    problems: Vec<String>,
}

impl Summary {
    fn lost(&self) -> u64 {
        self.sent - self.tally.answered
    }

    fn unsent(&self) -> u64 {
        self.calls - self.sent
    }

    fn ok(&self) -> bool {
        self.lost() == 0
            && self.unsent() == 0
            && self.tally.duplicated == 0
            && self.tally.unexpected == 0
    }

    fn seconds(&self) -> f64 {
        self.tally.last_answer as f64 / 1e9
    }

    fn calls_per_second(&self) -> f64 {
        if self.tally.last_answer == 0 {
            0.0
        } else {
            self.tally.answered as f64 / self.seconds()
        }
    }

    /// Latency percentiles in microseconds: p50, p90, p99, p99.9, max.
    fn percentiles(&self) -> [(&'static str, u64); 5] {
        let h = &self.tally.latency;
        [
            ("p50", h.value_at_quantile(0.5)),
            ("p90", h.value_at_quantile(0.9)),
            ("p99", h.value_at_quantile(0.99)),
            ("p99_9", h.value_at_quantile(0.999)),
            ("max", h.max()),
        ]
    }

    fn end(&self) -> &'static str {
        match self.end {
            End::Complete => "complete",
            End::CompleteServerStayedOpen => "complete, server stayed open",
            End::ServerClosed => "server closed",
            End::TimedOut => "timed out",
        }
    }

    fn to_json(&self) -> Value {
        let latency: serde_json::Map<String, Value> = self
            .percentiles()
            .iter()
            .map(|&(name, micros)| (name.to_owned(), json!(micros)))
            .collect();
        json!({
            "transport": self.kind,
            "target": self.target,
            "method": self.method,
            "calls": self.calls,
            "in_flight": self.in_flight,
            "sent": self.sent,
            "answered": self.tally.answered,
            "error_answers": self.tally.errors,
            "lost": self.lost(),
            "unsent": self.unsent(),
            "duplicated": self.tally.duplicated,
            "unexpected": self.tally.unexpected,
            "seconds": self.seconds(),
            "calls_per_second": self.calls_per_second().round(),
            "latency_us": latency,
            "end": self.end(),
            "first_error_answer": self.tally.first_error,
            "first_unexpected": self.tally.first_unexpected,
            "problems": self.problems,
            "ok": self.ok(),
        })
    }

    fn to_text(&self) -> String {
        let latency: Vec<String> = self
            .percentiles()
            .iter()
            .map(|(name, micros)| format!("{} {micros}", name.replace('_', ".")))
            .collect();
        let mut lines = vec![
            (
                "calls/s",
                format!(
                    "{:.0} ({} answered in {:.2} s)",
                    self.calls_per_second(),
                    self.tally.answered,
                    self.seconds()
                ),
            ),
            ("latency (µs)", latency.join("  ")),
            ("error answers", self.tally.errors.to_string()),
            ("lost", self.lost().to_string()),
            ("duplicated", self.tally.duplicated.to_string()),
        ];
        if self.unsent() > 0 {
            lines.push(("unsent", self.unsent().to_string()));
        }
        if self.tally.unexpected > 0 {
            lines.push(("unexpected", self.tally.unexpected.to_string()));
        }
        lines.push(("end", self.end().to_owned()));
        if let Some(error) = &self.tally.first_error {
            lines.push(("first error", error.clone()));
        }
        if let Some(what) = &self.tally.first_unexpected {
            lines.push(("first unexpected", what.clone()));
        }
        for problem in &self.problems {
            lines.push(("problem", problem.clone()));
        }
        let mut out = format!(
            "load: {} calls of `{}` to {}, {} in flight\n",
            self.calls, self.method, self.target, self.in_flight
        );
        for (label, value) in lines {
            let _ = writeln!(out, "{label:<17} {value}");
        }
        out
    }
}

/// The progress line on stderr; hidden when stderr is not a terminal.
fn progress_bar(calls: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(calls), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} answered, {rate} calls/s, eta {eta}",
    )
    .expect("a valid progress template")
    .with_key(
        "rate",
        |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0}", state.per_sec());
        },
    )
    .progress_chars("=> ");
    bar.set_style(style);
    bar
}

/// Reads answers until every request is answered and the server has closed,
/// the server closes early, or the drain timeout passes.
async fn run(options: Options) -> Result<Summary, String> {
    let options = Arc::new(options);
    let Connection { transport, child } = options.target.connect(&options.config()).await?;
    let (sink, mut stream) = transport.split();
    let shared = Arc::new(Shared {
        start: Instant::now(),
        sent_at: (0..options.calls).map(|_| AtomicU64::new(0)).collect(),
        in_flight: Semaphore::new(options.in_flight),
        sent: AtomicU64::new(0),
    });
    let mut tally = Tally::new(options.calls);
    let mut problems = Vec::new();
    let bar = progress_bar(options.calls);
    let mut writer = Some(tokio::spawn(write_requests(
        sink,
        options.clone(),
        shared.clone(),
    )));
    // The sink, once the writer is done with it.
    let mut sink = None;
    let drain = options.drain_timeout;

    // The clock the drain timeout runs from: the last answer while
    // requests are still being sent, then the end of sending, then the
    // closing of our side.
    let mut phase = Phase::Sending {
        last_answer: Instant::now(),
    };
    // Checked lazily: when it fires, the real deadline is worked out and
    // the timer set again if that is later.
    let timer = tokio::time::sleep(drain);
    tokio::pin!(timer);
    let end = loop {
        tokio::select! {
            biased;
            item = stream.next() => match item {
                Some(Ok(frame)) => {
                    if !tally.frame(frame, &shared) {
                        continue;
                    }
                    shared.in_flight.add_permits(1);
                    if let Phase::Sending { last_answer } = &mut phase {
                        *last_answer = Instant::now();
                    }
                    if tally.answered % PROGRESS_STEP == 0 {
                        bar.set_position(tally.answered);
                    }
                    if tally.answered == options.calls {
                        bar.set_position(tally.answered);
                        // Every request is answered: close our side, then
                        // read on until the server closes, to catch late
                        // duplicates.
                        if let Some(handle) = writer.take() {
                            sink = finished(handle.await, &shared, &mut problems)?;
                        }
                        if let Some(sink) = &mut sink {
                            if tokio::time::timeout(drain, sink.close()).await.is_err() {
                                problems.push("closing our side timed out".to_owned());
                            }
                        }
                        phase = Phase::Closed { at: Instant::now() };
                        timer.as_mut().reset(Instant::now() + drain);
                    }
                }
                Some(Err(e)) => {
                    let closed = matches!(phase, Phase::Closed { .. });
                    if !(closed && clean_exit(&e)) {
                        problems.push(e.to_string());
                    }
                    break if closed { End::Complete } else { End::ServerClosed };
                }
                None => break if matches!(phase, Phase::Closed { .. }) {
                    End::Complete
                } else {
                    End::ServerClosed
                },
            },
            done = join(&mut writer), if writer.is_some() => {
                writer = None;
                sink = finished(done, &shared, &mut problems)?;
                phase = Phase::Sent { at: Instant::now() };
                timer.as_mut().reset(Instant::now() + drain);
            }
            () = &mut timer => {
                let deadline = phase.since() + drain;
                if Instant::now() >= deadline {
                    break match phase {
                        Phase::Closed { .. } => End::CompleteServerStayedOpen,
                        _ => End::TimedOut,
                    };
                }
                timer.as_mut().reset(deadline);
            }
        }
    };
    bar.finish_and_clear();
    // Still sending when the server went away or stopped answering: the
    // writer may wait for permits, or on a full socket, for ever.
    if let Some(handle) = writer {
        handle.abort();
        let _ = handle.await;
    }
    drop(sink);
    let sent = shared.sent.load(Ordering::Relaxed);
    if end == End::TimedOut {
        problems.push(format!(
            "{} requests unanswered {} s after the last request was sent or answered",
            sent - tally.answered,
            drain.as_secs_f64()
        ));
    }
    drop(stream);
    if let Some(child) = child {
        match child.shutdown(CHILD_GRACE).await {
            Ok(exit) if exit.status.success() => {}
            Ok(exit) => {
                // The stream may have reported the same exit already.
                let exit = exit.to_string();
                if !problems.contains(&exit) {
                    problems.push(exit);
                }
            }
            Err(e) => problems.push(format!("waiting for the child failed: {e}")),
        }
    }
    Ok(Summary {
        target: options.target.label(),
        kind: options.target.kind(),
        method: options.method.clone(),
        calls: options.calls,
        in_flight: options.in_flight,
        sent,
        end,
        tally,
        problems,
    })
}

type Writer = JoinHandle<WriterOutcome>;

/// The writer's end, once: pending for ever when it was already taken.
async fn join(writer: &mut Option<Writer>) -> Result<WriterOutcome, tokio::task::JoinError> {
    match writer {
        Some(handle) => handle.await,
        None => std::future::pending().await,
    }
}

type WriterOutcome = Result<SplitSink<Transport, Bytes>, TransportError>;

/// The sink the writer hands back; a send failure is a problem to report.
fn finished(
    done: Result<WriterOutcome, tokio::task::JoinError>,
    shared: &Shared,
    problems: &mut Vec<String>,
) -> Result<Option<SplitSink<Transport, Bytes>>, String> {
    match done {
        Ok(Ok(sink)) => Ok(Some(sink)),
        Ok(Err(e)) => {
            problems.push(format!(
                "sending failed after {} requests: {e}",
                shared.sent.load(Ordering::Relaxed)
            ));
            Ok(None)
        }
        Err(e) => Err(format!("the writer failed: {e}")),
    }
}

/// Where a run is, for the drain timeout.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Requests are still being sent.
    Sending { last_answer: Instant },
    /// Every request is sent; answers are still due.
    Sent { at: Instant },
    /// Every request is answered and our side is closed.
    Closed { at: Instant },
}

impl Phase {
    /// When the drain timeout started.
    fn since(self) -> Instant {
        match self {
            Phase::Sending { last_answer } => last_answer,
            Phase::Sent { at } | Phase::Closed { at } => at,
        }
    }
}

/// A child that exited 0 after we closed its stdin ended cleanly.
fn clean_exit(e: &TransportError) -> bool {
    matches!(e, TransportError::ProcessExited(exit) if exit.status.success())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(NoRun::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(NoRun::Bad(message)) => {
            eprintln!("load: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let json = options.json;
    let summary = match run(options).await {
        Ok(summary) => summary,
        Err(message) => {
            eprintln!("load: {message}");
            return ExitCode::FAILURE;
        }
    };
    if json {
        println!("{}", summary.to_json());
    } else {
        print!("{}", summary.to_text());
    }
    if summary.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
