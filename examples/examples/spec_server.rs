//! Run with: cargo run --example spec_server [-- [--content-length] [--tcp ADDR] [--unix PATH] [--ws ADDR]]
//!
//! A conformance and interop server. It serves the methods of the JSON-RPC
//! 2.0 specification's examples (`subtract`, `sum`, `get_data`, `update`,
//! `notify_hello`, `notify_sum`), `echo`, two methods that call back into
//! the client (`test/roundtrip`, `test/notifyMe`), and `shutdown`/`exit`.
//!
//! With no socket option it serves stdin/stdout. `--tcp ADDR`, `--unix PATH`
//! and `--ws ADDR` (any combination) serve sockets instead, one peer per
//! connection; each prints `spec_server: listening on ...` to stderr once
//! bound. Newline-delimited by default; `--content-length` switches stdio and
//! the TCP and Unix sockets to LSP framing (WebSocket has its own framing).
//!
//! On stdio it exits once stdin ends and every answer is written, or on
//! `exit`: 0 when `shutdown` came first, else 1. On sockets, `exit` closes
//! that connection. SIGTERM or SIGINT closes everything gracefully (running
//! requests get a second to finish) and exits 0.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::{
    Config, Context, ErrorObject, Framing, Listener, Peer, PeerAddr, Router, TcpAcceptor,
    Transport, UnixAcceptor, WebSocketAcceptor,
};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Number, Value};

/// Command-line options. New transports and modes add fields here.
#[derive(Debug, Default)]
struct Options {
    content_length: bool,
    tcp: Option<String>,
    unix: Option<PathBuf>,
    ws: Option<String>,
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
                "--tcp" => options.tcp = Some(value("--tcp")?),
                "--unix" => options.unix = Some(PathBuf::from(value("--unix")?)),
                "--ws" => options.ws = Some(value("--ws")?),
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
            }
        }
        Ok(options)
    }

    fn serves_sockets(&self) -> bool {
        self.tcp.is_some() || self.unix.is_some() || self.ws.is_some()
    }
}

const USAGE: &str = "usage: spec_server [--content-length] [--tcp ADDR] [--unix PATH] [--ws ADDR]
  with no socket option, serves stdin/stdout";

/// How long running requests get to finish after SIGTERM or SIGINT.
const GRACE: Duration = Duration::from_secs(1);

/// `[minuend, subtrahend]` or `{"minuend": .., "subtrahend": ..}`.
#[derive(Deserialize)]
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

/// What `shutdown` and `exit` leave behind for `main`.
#[derive(Debug, Default)]
struct Lifecycle {
    shutdown: AtomicBool,
    /// 0: no `exit` yet; else the exit code + 1.
    exit: AtomicU8,
}

fn router(lifecycle: Arc<Lifecycle>) -> Router {
    let on_shutdown = lifecycle.clone();
    Router::new()
        .request("subtract", |p: SubtractParams, _: Context| async move {
            combine(&p.minuend, &p.subtrahend, -1)
        })
        .request("sum", |numbers: Vec<Number>, _: Context| async move {
            numbers
                .iter()
                .try_fold(Number::from(0), |acc, n| combine(&acc, n, 1))
        })
        .request("get_data", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(("hello", 5))
        })
        .request(
            "echo",
            |params: Option<Box<RawValue>>, _: Context| async move { Ok::<_, ErrorObject>(params) },
        )
        .notification("update", |_: IgnoredAny, _: Context| async {})
        .notification("notify_hello", |_: IgnoredAny, _: Context| async {})
        .notification("notify_sum", |_: IgnoredAny, _: Context| async {})
        .request(
            "test/roundtrip",
            |params: Option<Box<RawValue>>, ctx: Context| async move {
                let answer: Value = ctx
                    .peer()
                    .call("test/ask", json!({"question": "roundtrip", "echo": params}))
                    .await?;
                Ok::<_, ErrorObject>(json!({"clientSaid": answer}))
            },
        )
        .notification(
            "test/notifyMe",
            |params: Option<Box<RawValue>>, ctx: Context| async move {
                let asked = ctx
                    .peer()
                    .call::<Value>("test/ask", json!({"question": "notifyMe", "echo": params}));
                match asked.await {
                    Ok(answer) => {
                        let _ = ctx
                            .peer()
                            .notify("test/answer", json!({"clientSaid": answer}));
                    }
                    Err(e) => eprintln!("spec_server: test/ask failed: {e}"),
                }
            },
        )
        .request("shutdown", move |(): (), _: Context| {
            on_shutdown.shutdown.store(true, Ordering::SeqCst);
            async { Ok::<_, ErrorObject>(()) }
        })
        .notification("exit", move |_: IgnoredAny, ctx: Context| {
            let code = if lifecycle.shutdown.load(Ordering::SeqCst) {
                0
            } else {
                1
            };
            lifecycle.exit.store(code + 1, Ordering::SeqCst);
            let peer = ctx.peer().clone();
            // Close from outside this handler, so the close does not wait
            // for the handler that asked for it.
            tokio::spawn(async move { peer.close(Duration::from_secs(1)).await });
            async {}
        })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
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
    let framing = if options.content_length {
        Framing::ContentLength
    } else {
        Framing::NewlineDelimited
    };
    let config = Config::default().framing(framing);
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
    let lifecycle = Arc::new(Lifecycle::default());
    let peer = Peer::builder()
        .config(config)
        .router(router(lifecycle.clone()))
        .spawn(transport);
    tokio::select! {
        _ = peer.closed() => {}
        signal = signals.recv() => {
            eprintln!("spec_server: {signal}, closing");
            peer.close(GRACE).await;
            return ExitCode::SUCCESS;
        }
    }
    match lifecycle.exit.load(Ordering::SeqCst) {
        0 => ExitCode::SUCCESS,
        code => ExitCode::from(code - 1),
    }
}

/// Serves every socket asked for until SIGTERM or SIGINT.
async fn serve_sockets(options: &Options, config: Config, signals: &mut Signals) -> ExitCode {
    // Each connection gets its own `shutdown`/`exit` state.
    let routes = |_: &PeerAddr| router(Arc::new(Lifecycle::default()));
    let mut servers = Vec::new();
    if let Some(addr) = &options.tcp {
        match TcpAcceptor::bind(addr.as_str()).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on tcp {}",
                    local(acceptor.local_addr())
                );
                servers.push(Listener::new(acceptor).config(config.clone()).serve(routes));
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
                servers.push(Listener::new(acceptor).config(config.clone()).serve(routes));
            }
            Err(e) => return bind_failed("unix", &path.display().to_string(), &e),
        }
    }
    if let Some(addr) = &options.ws {
        match WebSocketAcceptor::bind(addr.as_str()).await {
            Ok(acceptor) => {
                eprintln!(
                    "spec_server: listening on ws://{}/",
                    local(acceptor.local_addr())
                );
                servers.push(Listener::new(acceptor).config(config.clone()).serve(routes));
            }
            Err(e) => return bind_failed("ws", addr, &e),
        }
    }
    let signal = signals.recv().await;
    eprintln!("spec_server: {signal}, shutting down");
    for server in servers {
        server.shutdown(GRACE).await;
    }
    ExitCode::SUCCESS
}

fn local(addr: std::io::Result<std::net::SocketAddr>) -> String {
    addr.map_or_else(|e| format!("(unknown address: {e})"), |a| a.to_string())
}

fn bind_failed(kind: &str, addr: &str, e: &std::io::Error) -> ExitCode {
    eprintln!("spec_server: cannot listen on {kind} {addr}: {e}");
    ExitCode::FAILURE
}

/// SIGTERM and SIGINT.
struct Signals {
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    #[cfg(unix)]
    fn new() -> std::io::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    #[cfg(not(unix))]
    fn new() -> std::io::Result<Signals> {
        Ok(Signals {})
    }

    /// Waits for the next signal and names it.
    #[cfg(unix)]
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }

    #[cfg(not(unix))]
    async fn recv(&mut self) -> &'static str {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
