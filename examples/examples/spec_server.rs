//! Run with: cargo run --example spec_server [-- [--content-length] [--tcp ADDR] [--unix PATH] [--ws ADDR] [--http ADDR] [--tls-cert FILE --tls-key FILE] [--max-connections N] [--record FILE] [--metrics]]
//!
//! A conformance and interop server. It serves the methods of the JSON-RPC
//! 2.0 specification's examples (`subtract`, `sum`, `get_data`, `update`,
//! `notify_hello`, `notify_sum`), `echo`, two methods that call back into
//! the client (`test/roundtrip`, `test/notifyMe`), `test/progress {token, n, delay_ms?}`
//! (n `$/progress` notifications, `delay_ms` apart, then the answer), `test/slow {ms}`
//! (cancellable with `$/cancelRequest`, answered -32800), `test/caller`
//! (the caller's address and `X-Forwarded-For` header), the subscription
//! `subscribe_ticks {interval_ms, count}` (notifications `ticks` with 1, 2,
//! 3, .., in jsonrpsee's format; `unsubscribe_ticks [id]` ends it), and
//! `initialize`/`initialized`/`shutdown`/`exit`. The methods are one `#[rpc]`
//! trait, so the conformance tests cover generated code; `rpc.discover`
//! answers with their OpenRPC document.
//!
//! `--lsp` runs the LSP preset: Content-Length framing, `initialize`
//! required first (other requests get -32002), `shutdown`, then `exit`.
//!
//! With no socket option it serves stdin/stdout. `--tcp ADDR`, `--unix PATH`
//! and `--ws ADDR` (any combination) serve sockets instead, one peer per
//! connection, and `--http ADDR` serves JSON-RPC over HTTP (one message or
//! batch per `POST` to `/`, health at `/health`, callable from pages of any
//! origin (CORS); the methods that call back
//! into the client fail there, as HTTP has no way back); each prints
//! `spec_server: listening on ...` to stderr once bound. Newline-delimited by
//! default; `--content-length` switches stdio and the TCP and Unix sockets to
//! LSP framing (WebSocket and HTTP have their own framing).
//!
//! `--tls-cert FILE --tls-key FILE` (PEM: the certificate chain, and its
//! private key) serve `--tcp` over TLS (`listening on tls ADDR`), `--ws` as
//! `wss://` and `--http` as HTTPS (HTTP/1.1 and h2 through ALPN); the Unix
//! socket and stdio stay as they are. Each client gets 10 seconds to
//! complete its TLS handshake. For example, with a certificate for
//! `localhost`:
//!
//! ```text
//! cargo run --example spec_server -- --http 127.0.0.1:8443 --tls-cert cert.pem --tls-key key.pem
//! curl --cacert cert.pem -H 'Content-Type: application/json' \
//!      -d '{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}' https://localhost:8443/
//! ```
//!
//! `--metrics` counts every request per method (the `tower` feature's
//! metrics layer) and prints the figures as Prometheus text on stderr at
//! exit; with `--http` they are also served live at `/metrics`.
//!
//! `--record FILE` (stdio) writes every frame in and out to FILE as JSON
//! Lines; `cargo run --example replay -- FILE --child "..."` plays it back.
//!
//! On stdio it exits once stdin ends and every answer is written, or on
//! `exit`: 0 when `shutdown` came first, else 1; a stream it cannot read
//! (a broken `Content-Length` header, say) is answered -32700 when it can
//! be, reported on stderr, and exits 1. On sockets, `exit` closes that
//! connection; each socket serves at most `--max-connections` clients at
//! once (default 1,024), all of them together at most 100,000 requests in
//! flight holding 512 MiB of params, and a connection that fails is
//! reported on stderr. SIGTERM or SIGINT stops every socket accepting at
//! once, closes everything gracefully (running requests get a second to
//! finish; `/health` answers 503 meanwhile) and exits 0.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::codec::Framing;
use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::openrpc::Document;
use jsonrpc_runtime::policy::{CancellationPolicy, SharedBudget};
use jsonrpc_runtime::router::{Metrics, PendingSubscription, SubscriptionClosed};
use jsonrpc_runtime::server::{shutdown_all, HttpListener, Listener};
use jsonrpc_runtime::tls::ServerTls;
use jsonrpc_runtime::transport::{
    Acceptor, TcpAcceptor, TlsAcceptor, UnixAcceptor, WebSocketAcceptor,
};
use jsonrpc_runtime::{rpc, CloseReason, Config, Context, ErrorObject, Peer, Router, Transport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Number, Value};

#[path = "support/signals.rs"]
mod signals;
use signals::Signals;

#[path = "support/logging.rs"]
mod logging;

/// Command-line options. New transports and modes add fields here.
#[derive(Debug, Default)]
struct Options {
    content_length: bool,
    lsp: bool,
    tcp: Option<String>,
    unix: Option<PathBuf>,
    ws: Option<String>,
    http: Option<String>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    max_connections: Option<usize>,
    record: Option<PathBuf>,
    metrics: bool,
}

impl Options {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut options = Options::default();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| format!("`{name}` needs a value\n{USAGE}"))
            };
            match arg.as_str() {
                "--content-length" => options.content_length = true,
                "--lsp" => options.lsp = true,
                "--tcp" => options.tcp = Some(value("--tcp")?),
                "--unix" => options.unix = Some(PathBuf::from(value("--unix")?)),
                "--ws" => options.ws = Some(value("--ws")?),
                "--record" => options.record = Some(PathBuf::from(value("--record")?)),
                "--metrics" => options.metrics = true,
                "--http" => options.http = Some(value("--http")?),
                "--tls-cert" => options.tls_cert = Some(PathBuf::from(value("--tls-cert")?)),
                "--tls-key" => options.tls_key = Some(PathBuf::from(value("--tls-key")?)),
                "--max-connections" => {
                    let n = value("--max-connections")?;
                    match n.parse::<usize>() {
                        Ok(n) if n > 0 => options.max_connections = Some(n),
                        _ => {
                            return Err(format!(
                                "`--max-connections` needs a positive count, not `{n}`\n{USAGE}"
                            ))
                        }
                    }
                }
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
            }
        }
        match (&options.tls_cert, &options.tls_key) {
            (Some(_), None) | (None, Some(_)) => {
                return Err(format!(
                    "`--tls-cert` and `--tls-key` go together: the certificate chain and its \
                     private key\n{USAGE}"
                ))
            }
            (Some(_), Some(_))
                if options.tcp.is_none() && options.ws.is_none() && options.http.is_none() =>
            {
                return Err(format!(
                    "`--tls-cert` and `--tls-key` apply to `--tcp`, `--ws` and `--http`; give \
                     at least one\n{USAGE}"
                ))
            }
            _ => {}
        }
        Ok(options)
    }

    fn serves_sockets(&self) -> bool {
        self.tcp.is_some() || self.unix.is_some() || self.ws.is_some() || self.http.is_some()
    }
}

const USAGE: &str =
    "usage: spec_server [--content-length | --lsp] [--tcp ADDR] [--unix PATH] [--ws ADDR]
                   [--http ADDR] [--tls-cert FILE --tls-key FILE] [--max-connections N]
                   [--record FILE] [--metrics]
  with no socket option, serves stdin/stdout (--record writes the session to FILE as JSON Lines);
  --tls-cert and --tls-key (PEM) serve --tcp over TLS, --ws as wss:// and --http as https://;
  --metrics prints per-method counts and latencies (Prometheus text) on stderr at exit";

/// Connections served at once on each socket unless `--max-connections`
/// says otherwise; more wait in the backlog.
const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Requests in flight, and bytes of their params, across every connection.
const MAX_REQUESTS: usize = 100_000;
const MAX_PARKED_BYTES: usize = 512 << 20;

/// How long running requests get to finish after SIGTERM or SIGINT.
const GRACE: Duration = Duration::from_secs(1);

/// `[minuend, subtrahend]` or `{"minuend": .., "subtrahend": ..}`.
#[derive(Serialize, Deserialize, JsonSchema)]
struct SubtractParams {
    minuend: Number,
    subtrahend: Number,
}

/// Adds or subtracts JSON numbers, staying in integers while both are.
fn combine(a: &Number, b: &Number, sign: i64) -> Result<Number, ErrorObject> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(n) = y.checked_mul(sign).and_then(|y| x.checked_add(y)) {
            return Ok(n.into());
        }
    }
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    Number::from_f64(x + sign as f64 * y)
        .ok_or_else(|| ErrorObject::invalid_params("the result is not a finite number"))
}

/// `{"token": .., "n": .., "delay_ms"?: ..}` for `test/progress`.
#[derive(Serialize, Deserialize, JsonSchema)]
struct ProgressParams {
    token: Value,
    n: u32,
    /// How long to wait before each report (default 0: none).
    #[serde(default)]
    delay_ms: u64,
}

/// `{"ms": ..}` for `test/slow`.
#[derive(Serialize, Deserialize, JsonSchema)]
struct SlowParams {
    ms: u64,
}

/// The methods spec_server serves, as one `#[rpc]` trait.
#[rpc]
trait SpecServer {
    /// `[minuend, subtrahend]` or `{"minuend", "subtrahend"}`.
    #[rpc(request = "subtract")]
    async fn subtract(&self, #[rpc(params)] p: SubtractParams) -> Result<Number, ErrorObject>;

    /// The sum of an array of numbers.
    #[rpc(request = "sum")]
    async fn sum(&self, #[rpc(params)] numbers: Vec<Number>) -> Result<Number, ErrorObject>;

    /// `["hello", 5]`.
    #[rpc(request = "get_data")]
    async fn get_data(&self) -> (String, u32);

    /// Its params, unchanged.
    #[rpc(request = "echo")]
    async fn echo(&self, #[rpc(params)] params: Option<Box<RawValue>>) -> Option<Box<RawValue>>;

    /// Accepted, no effect.
    #[rpc(notification = "update")]
    async fn update(&self, #[rpc(params)] params: Option<Box<RawValue>>);

    /// Accepted, no effect.
    #[rpc(notification = "notify_hello")]
    async fn notify_hello(&self, #[rpc(params)] params: Option<Box<RawValue>>);

    /// Accepted, no effect.
    #[rpc(notification = "notify_sum")]
    async fn notify_sum(&self, #[rpc(params)] params: Option<Box<RawValue>>);

    /// Asks the caller `test/ask`, then answers with what it said.
    #[rpc(request = "test/roundtrip")]
    async fn roundtrip(
        &self,
        ctx: Context,
        #[rpc(params)] params: Option<Box<RawValue>>,
    ) -> Result<Value, ErrorObject>;

    /// Asks the caller `test/ask`, then notifies `test/answer`.
    #[rpc(notification = "test/notifyMe")]
    async fn notify_me(&self, ctx: Context, #[rpc(params)] params: Option<Box<RawValue>>);

    /// Sends `n` `$/progress` notifications `{token, value}` (`delay_ms`
    /// before each), then answers.
    #[rpc(request = "test/progress")]
    async fn progress(&self, ctx: Context, #[rpc(params)] p: ProgressParams) -> Value;

    /// Sleeps `ms` milliseconds; `$/cancelRequest` stops it with -32800.
    #[rpc(request = "test/slow")]
    async fn slow(&self, #[rpc(params)] p: SlowParams) -> Value;

    /// Who is calling: `{"addr", "forwardedFor"}`, the connection's address
    /// and its `X-Forwarded-For` header (set by a load balancer in front).
    #[rpc(request = "test/caller")]
    async fn caller(&self, ctx: Context) -> Value;

    /// The LSP handshake (`--lsp` requires it first).
    /// `count` notifications `ticks` carrying 1, 2, 3, .., `interval_ms`
    /// apart (`count` 0: until unsubscribed; `interval_ms` 0: as fast as
    /// the client reads).
    #[rpc(
        subscription = "subscribe_ticks",
        items = "ticks",
        unsubscribe = "unsubscribe_ticks"
    )]
    async fn ticks(
        &self,
        pending: PendingSubscription<u64>,
        interval_ms: u64,
        count: u64,
    ) -> Result<(), SubscriptionClosed>;

    #[rpc(request = "initialize")]
    async fn initialize(&self, #[rpc(params)] params: Option<Box<RawValue>>) -> Value;

    /// The LSP handshake's acknowledgement.
    #[rpc(notification = "initialized")]
    async fn initialized(&self, #[rpc(params)] params: Option<Box<RawValue>>);

    /// Answers `null`; `exit` then exits 0.
    #[rpc(request = "shutdown")]
    async fn shutdown(&self);

    /// Closes the connection: exit code 0 after `shutdown`, else 1.
    #[rpc(notification = "exit")]
    async fn exit(&self, ctx: Context);
}

/// One connection's state: what `shutdown` and `exit` leave behind.
#[derive(Debug, Default)]
struct Spec {
    shutdown: AtomicBool,
    /// 0: no `exit` yet; else the exit code + 1.
    exit: AtomicU8,
}

impl Spec {
    fn exit_code(&self) -> Option<u8> {
        self.exit.load(Ordering::SeqCst).checked_sub(1)
    }
}

impl SpecServer for Arc<Spec> {
    async fn subtract(&self, p: SubtractParams) -> Result<Number, ErrorObject> {
        combine(&p.minuend, &p.subtrahend, -1)
    }

    async fn sum(&self, numbers: Vec<Number>) -> Result<Number, ErrorObject> {
        numbers
            .iter()
            .try_fold(Number::from(0), |acc, n| combine(&acc, n, 1))
    }

    async fn get_data(&self) -> (String, u32) {
        ("hello".to_owned(), 5)
    }

    async fn echo(&self, params: Option<Box<RawValue>>) -> Option<Box<RawValue>> {
        params
    }

    async fn update(&self, _: Option<Box<RawValue>>) {}

    async fn notify_hello(&self, _: Option<Box<RawValue>>) {}

    async fn notify_sum(&self, _: Option<Box<RawValue>>) {}

    async fn roundtrip(
        &self,
        ctx: Context,
        params: Option<Box<RawValue>>,
    ) -> Result<Value, ErrorObject> {
        let question = json!({"question": "roundtrip", "echo": params});
        let answer: Value = ctx.peer().call("test/ask", question).await?;
        Ok(json!({"clientSaid": answer}))
    }

    async fn notify_me(&self, ctx: Context, params: Option<Box<RawValue>>) {
        let question = json!({"question": "notifyMe", "echo": params});
        match ctx.peer().call::<Value>("test/ask", question).await {
            Ok(answer) => {
                let _ = ctx
                    .peer()
                    .notify("test/answer", json!({"clientSaid": answer}))
                    .await;
            }
            Err(e) => eprintln!("spec_server: test/ask failed: {e}"),
        }
    }

    async fn progress(&self, ctx: Context, p: ProgressParams) -> Value {
        for step in 1..=p.n {
            if p.delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(p.delay_ms)).await;
            }
            let _ = ctx
                .peer()
                .notify("$/progress", json!({"token": p.token, "value": step}))
                .await;
        }
        json!({"done": true, "steps": p.n})
    }

    async fn slow(&self, p: SlowParams) -> Value {
        tokio::time::sleep(Duration::from_millis(p.ms)).await;
        json!({"slept": true})
    }

    async fn caller(&self, ctx: Context) -> Value {
        let connection = ctx.connection();
        json!({
            "addr": connection.addr().map(|addr| addr.to_string()),
            // Only trustworthy when a balancer sets it, replacing whatever
            // the client sent (see docs/deploy.md).
            "forwardedFor": connection.header("x-forwarded-for"),
        })
    }

    async fn ticks(
        &self,
        pending: PendingSubscription<u64>,
        interval_ms: u64,
        count: u64,
    ) -> Result<(), SubscriptionClosed> {
        let sink = pending.accept().await?;
        let mut interval =
            (interval_ms > 0).then(|| tokio::time::interval(Duration::from_millis(interval_ms)));
        let mut n = 0u64;
        while count == 0 || n < count {
            if let Some(interval) = interval.as_mut() {
                interval.tick().await;
            }
            n += 1;
            sink.send(&n).await?;
        }
        Ok(())
    }

    async fn initialize(&self, _: Option<Box<RawValue>>) -> Value {
        json!({
            "capabilities": {},
            "serverInfo": {"name": "spec_server", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    async fn initialized(&self, _: Option<Box<RawValue>>) {}

    async fn shutdown(&self) {
        self.shutdown.store(true, Ordering::SeqCst);
    }

    async fn exit(&self, ctx: Context) {
        let code = if self.shutdown.load(Ordering::SeqCst) {
            0
        } else {
            1
        };
        self.exit.store(code + 1, Ordering::SeqCst);
        let peer = ctx.peer().clone();
        // Close from outside this handler, so the close does not wait for the
        // handler that asked for it.
        tokio::spawn(async move { peer.close(Duration::from_secs(1)).await });
    }
}

/// The routes, and `rpc.discover` answering with their OpenRPC document;
/// every request counted in `metrics` when it is given.
fn router(spec: Arc<Spec>, metrics: Option<&Metrics>) -> Router {
    let document = Document::new("spec_server", env!("CARGO_PKG_VERSION"))
        .description(
            "The JSON-RPC 2.0 specification's examples, and methods for conformance tests.",
        )
        .methods(<Arc<Spec> as SpecServer>::openrpc_methods());
    let router = spec.into_router().discover(&document);
    match metrics {
        Some(metrics) => router.layer(metrics.clone()),
        None => router,
    }
}

/// Prints the per-method figures on stderr (`--metrics`).
fn report_metrics(metrics: Option<&Metrics>) {
    if let Some(metrics) = metrics {
        eprint!("{}", metrics.render_prometheus());
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    // Before anything is bound, so a signal sent as soon as the server says
    // it listens is handled, not fatal.
    let mut signals = match Signals::new() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("spec_server: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = if options.lsp {
        // Content-Length framing, `initialize` first, `shutdown`, `exit`.
        Config::lsp()
    } else {
        let framing = if options.content_length {
            Framing::ContentLength
        } else {
            Framing::NewlineDelimited
        };
        Config::default()
            .framing(framing)
            .cancellation(CancellationPolicy::lsp())
    };
    if options.serves_sockets() {
        return serve_sockets(&options, config, &mut signals).await;
    }

    let transport = match Transport::stdio(&config) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("spec_server: cannot open stdio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let transport = match &options.record {
        Some(path) => match transport.recorded(path) {
            Ok(transport) => transport,
            Err(e) => {
                eprintln!("spec_server: cannot record to {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        },
        None => transport,
    };
    let spec = Arc::new(Spec::default());
    let metrics = options.metrics.then(Metrics::new);
    let peer = Peer::builder()
        .config(config)
        .router(router(spec.clone(), metrics.as_ref()))
        .spawn(transport);
    let reason = tokio::select! {
        reason = peer.closed() => reason,
        signal = signals.recv() => {
            eprintln!("spec_server: {signal}, closing");
            peer.close(GRACE).await;
            report_metrics(metrics.as_ref());
            return ExitCode::SUCCESS;
        }
    };
    report_metrics(metrics.as_ref());
    match (reason, spec.exit_code()) {
        (CloseReason::Exit { code }, _) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        (CloseReason::Transport(e), _) => {
            eprintln!("spec_server: the connection failed: {e}");
            ExitCode::FAILURE
        }
        (_, Some(code)) => ExitCode::from(code),
        (_, None) => ExitCode::SUCCESS,
    }
}

/// Serves every socket asked for until SIGTERM or SIGINT.
async fn serve_sockets(options: &Options, config: Config, signals: &mut Signals) -> ExitCode {
    // Each connection gets its own `shutdown`/`exit` state.
    let metrics = options.metrics.then(Metrics::new);
    let counted = metrics.clone();
    let routes = move |_: &PeerAddr| router(Arc::new(Spec::default()), counted.as_ref());
    let config = config.shared_budget(SharedBudget::new(MAX_REQUESTS, MAX_PARKED_BYTES));
    let limit = options.max_connections.unwrap_or(DEFAULT_MAX_CONNECTIONS);
    let tls = match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => match ServerTls::from_pem_files(cert, key) {
            Ok(tls) => Some(tls),
            Err(e) => {
                eprintln!("spec_server: cannot use the TLS certificate and key: {e}");
                return ExitCode::FAILURE;
            }
        },
        _ => None,
    };
    let mut servers = Vec::new();
    if let (Some(addr), Some(tls)) = (&options.tcp, &tls) {
        match TlsAcceptor::bind(addr.as_str(), tls.clone()).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on tls {}",
                    local(acceptor.local_addr())
                );
                servers.push(listener(acceptor, &config, limit).spawn(routes.clone()));
            }
            Err(e) => return bind_failed("tls", addr, &e),
        }
    } else if let Some(addr) = &options.tcp {
        match TcpAcceptor::bind(addr.as_str()).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on tcp {}",
                    local(acceptor.local_addr())
                );
                servers.push(listener(acceptor, &config, limit).spawn(routes.clone()));
            }
            Err(e) => return bind_failed("tcp", addr, &e),
        }
    }
    if let Some(path) = &options.unix {
        match UnixAcceptor::bind(path).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on unix {}",
                    acceptor.path().display()
                );
                servers.push(listener(acceptor, &config, limit).spawn(routes.clone()));
            }
            Err(e) => return bind_failed("unix", &path.display().to_string(), &e),
        }
    }
    if let Some(addr) = &options.ws {
        match WebSocketAcceptor::bind(addr.as_str()).await {
            Ok(acceptor) => {
                let (scheme, acceptor) = match &tls {
                    Some(tls) => ("wss", acceptor.tls(tls.clone())),
                    None => ("ws", acceptor),
                };
                eprintln!(
                    "spec_server: listening on {scheme}://{}/",
                    local(acceptor.local_addr())
                );
                servers.push(listener(acceptor, &config, limit).spawn(routes.clone()));
            }
            Err(e) => return bind_failed("ws", addr, &e),
        }
    }
    if let (Some(addr), Some(tls)) = (&options.http, &tls) {
        match TlsAcceptor::bind(addr.as_str(), tls.clone()).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on https://{}/",
                    local(acceptor.local_addr())
                );
                servers.push(http_listener(acceptor, &config, limit).spawn(routes.clone()));
            }
            Err(e) => return bind_failed("https", addr, &e),
        }
    } else if let Some(addr) = &options.http {
        match TcpAcceptor::bind(addr.as_str()).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on http://{}/",
                    local(acceptor.local_addr())
                );
                let mut http = http_listener(acceptor, &config, limit);
                if let Some(metrics) = &metrics {
                    http = http.metrics("/metrics", metrics.clone());
                }
                servers.push(http.spawn(routes.clone()));
            }
            Err(e) => return bind_failed("http", addr, &e),
        }
    }
    let signal = signals.recv().await;
    eprintln!("spec_server: {signal}, shutting down");
    // Every socket stops accepting at once, then the connections drain.
    shutdown_all(servers, GRACE).await;
    report_metrics(metrics.as_ref());
    ExitCode::SUCCESS
}

/// A listener with the server's config, connection limit and failure report.
fn listener<A: Acceptor>(acceptor: A, config: &Config, limit: usize) -> Listener<A> {
    Listener::new(acceptor)
        .config(config.clone())
        .connection_limit(limit)
        .on_close(report_failure)
}

/// An HTTP listener with the server's config and connection limit.
fn http_listener<A>(acceptor: A, config: &Config, limit: usize) -> HttpListener<A>
where
    A: Acceptor,
    A::Connection: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    // An interop server: pages of any origin may call it (CORS), so the
    // browser tests' page reaches it.
    HttpListener::new(acceptor)
        .config(config.clone())
        .connection_limit(limit)
        .allow_any_origin()
}

/// Prints why a connection failed (a client that broke the framing, say).
fn report_failure(addr: &PeerAddr, reason: &CloseReason) {
    if let CloseReason::Transport(e) = reason {
        eprintln!("spec_server: connection {addr} failed: {e}");
    }
}

fn local(addr: std::io::Result<std::net::SocketAddr>) -> String {
    addr.map_or_else(|e| format!("(unknown address: {e})"), |a| a.to_string())
}

fn bind_failed(kind: &str, addr: &str, e: &std::io::Error) -> ExitCode {
    eprintln!("spec_server: cannot listen on {kind} {addr}: {e}");
    ExitCode::FAILURE
}
