//! Run with: cargo run --example spec_server [-- --content-length]
//!
//! A conformance and interop server on stdin/stdout. It serves the methods
//! of the JSON-RPC 2.0 specification's examples (`subtract`, `sum`,
//! `get_data`, `update`, `notify_hello`, `notify_sum`), `echo`, two methods
//! that call back into the client (`test/roundtrip`, `test/notifyMe`), and
//! `shutdown`/`exit`. Newline-delimited by default; `--content-length`
//! switches to LSP framing.
//!
//! It exits 0 once stdin ends and every answer is written, or on `exit`:
//! 0 when `shutdown` came first, else 1.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::{Config, Context, ErrorObject, Framing, Peer, Router, Transport};
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Number, Value};

/// Command-line options. New transports and modes add fields here.
#[derive(Debug, Default)]
struct Options {
    content_length: bool,
}

impl Options {
    fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut options = Options::default();
        for arg in args {
            match arg.as_str() {
                "--content-length" => options.content_length = true,
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
            }
        }
        Ok(options)
    }
}

const USAGE: &str = "usage: spec_server [--content-length]";

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
    let framing = if options.content_length {
        Framing::ContentLength
    } else {
        Framing::NewlineDelimited
    };
    let config = Config::default().framing(framing);
    let transport = match Transport::stdio(&config) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("spec_server: cannot open stdio: {e}");
            return ExitCode::FAILURE;
        }
    };
    let lifecycle = Arc::new(Lifecycle::default());
    Peer::builder()
        .config(config)
        .router(router(lifecycle.clone()))
        .serve(transport)
        .await;
    match lifecycle.exit.load(Ordering::SeqCst) {
        0 => ExitCode::SUCCESS,
        code => ExitCode::from(code - 1),
    }
}
