//! Run with: cargo run --example calculator [-- serve | call]
//!
//! The `#[rpc]` macro in one file: a `Calculator` trait with typed requests,
//! a typed domain error and a notification, and calls steered from the
//! client: one with a timeout, one started and then cancelled.
//!
//! - No argument: a server and a client in one process over an in-memory
//!   pair, printing each call and the typed error decoded on the client.
//! - `serve`: the calculator as a server on stdin/stdout (newline-delimited);
//!   `rpc.discover` answers with its OpenRPC document (params, results and
//!   the error codes `CalcError` declares).
//! - `call`: spawns `calculator serve` as a child process and calls it.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use jsonrpc_runtime::openrpc::Document;
use jsonrpc_runtime::policy::CancellationPolicy;
use jsonrpc_runtime::{
    rpc, transport::ChildProcess, CallError, Config, Context, Peer, RpcError, Transport,
};
use serde::{Deserialize, Serialize};

#[path = "support/logging.rs"]
mod logging;

/// What can go wrong in a calculation; travels as a JSON-RPC error.
#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010, message = "Division by zero"))]
    DivisionByZero,
    #[rpc(error(code = -32011, message = "Overflow"))]
    Overflow { a: i64, b: i64 },
}

/// Integer arithmetic over JSON-RPC.
#[rpc]
trait Calculator {
    /// `a + b`.
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError>;

    /// `a - b`.
    #[rpc(request = "subtract")]
    async fn subtract(&self, a: i64, b: i64) -> Result<i64, CalcError>;

    /// `a / b`, failing on zero.
    #[rpc(request = "divide")]
    async fn divide(&self, a: i64, b: i64) -> Result<i64, CalcError>;

    /// `a * b`, slowly: takes `ms` milliseconds, or stops when cancelled.
    #[rpc(request = "slowMultiply")]
    async fn slow_multiply(&self, ctx: Context, a: i64, b: i64, ms: u64) -> Result<i64, CalcError>;

    /// Logs a line on the server; never answered.
    #[rpc(notification = "log")]
    async fn log(&self, message: String);
}

#[derive(Default)]
struct Calc {
    lines_logged: AtomicUsize,
}

impl Calculator for Calc {
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        a.checked_add(b).ok_or(CalcError::Overflow { a, b })
    }

    async fn subtract(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        a.checked_sub(b).ok_or(CalcError::Overflow { a, b })
    }

    async fn divide(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        if b == 0 {
            return Err(CalcError::DivisionByZero);
        }
        a.checked_div(b).ok_or(CalcError::Overflow { a, b })
    }

    async fn slow_multiply(&self, ctx: Context, a: i64, b: i64, ms: u64) -> Result<i64, CalcError> {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(ms)) => {
                a.checked_mul(b).ok_or(CalcError::Overflow { a, b })
            }
            _ = ctx.cancellation().cancelled() => {
                eprintln!("server: slowMultiply #{} was cancelled", ctx.id().map(ToString::to_string).unwrap_or_default());
                Ok(0)
            }
        }
    }

    async fn log(&self, message: String) {
        let n = self.lines_logged.fetch_add(1, Ordering::Relaxed) + 1;
        eprintln!("server log #{n}: {message}");
    }
}

/// The client side: the same calls whichever transport is underneath.
async fn talk(calc: &CalculatorClient) -> Result<(), CallError<CalcError>> {
    println!("add(2, 3)          = {}", calc.add(2, 3).await?);
    println!("subtract(10, 4)    = {}", calc.subtract(10, 4).await?);
    println!("divide(84, 2)      = {}", calc.divide(84, 2).await?);
    match calc.divide(1, 0).await {
        Err(CallError::Domain(e)) => println!("divide(1, 0)       -> typed error {e:?}"),
        other => println!("divide(1, 0)       -> unexpected {other:?}"),
    }
    match calc.add(i64::MAX, 1).await {
        Err(CallError::Domain(e)) => println!("add(i64::MAX, 1)   -> typed error {e:?}"),
        other => println!("add(i64::MAX, 1)   -> unexpected {other:?}"),
    }
    // A call with its own timeout: the answer takes longer, so it fails
    // with `TimedOut` (and, under the cancellation policy, the server is
    // told to stop).
    match calc
        .slow_multiply(6, 7, 5_000)
        .timeout(Duration::from_millis(100))
        .await
    {
        Err(CallError::TimedOut) => println!("slowMultiply(6, 7) -> timed out after 100 ms"),
        other => println!("slowMultiply(6, 7) -> unexpected {other:?}"),
    }
    // A call started, then cancelled by its id.
    let call = calc.slow_multiply(3, 4, 5_000).start();
    println!("slowMultiply(3, 4) -> sent as request {}", call.id());
    if let Err(e) = call.cancel() {
        println!("slowMultiply(3, 4) -> could not cancel: {e}");
    }
    match call.await {
        Err(CallError::Cancelled) => println!("slowMultiply(3, 4) -> cancelled"),
        other => println!("slowMultiply(3, 4) -> unexpected {other:?}"),
    }
    calc.log("the client says hello".into()).await?;
    Ok(())
}

/// Both sides tell each other about calls they give up on (MCP's
/// `notifications/cancelled`).
fn config() -> Config {
    Config::default().cancellation(CancellationPolicy::mcp())
}

async fn in_memory() -> Result<(), Box<dyn std::error::Error>> {
    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder()
        .config(config())
        .router(Calc::default().into_router())
        .spawn(server_side);
    let calc = CalculatorClient::new(Peer::builder().config(config()).spawn(client_side));
    talk(&calc).await?;
    calc.peer().close(Duration::from_secs(1)).await;
    server.closed().await;
    Ok(())
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let config = config();
    let transport = Transport::stdio(&config)?;
    let document = Document::new("calculator", env!("CARGO_PKG_VERSION"))
        .description("Integer arithmetic over JSON-RPC.")
        .methods(Calc::openrpc_methods());
    let router = Calc::default().into_router().discover(&document);
    Peer::builder()
        .config(config)
        .router(router)
        .serve(transport)
        .await;
    Ok(())
}

async fn call() -> Result<(), Box<dyn std::error::Error>> {
    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    command.arg("serve");
    let (transport, child) = ChildProcess::spawn(command, &config())?.into_parts();
    println!("spawned `calculator serve` as pid {:?}", child.id());
    let calc = CalculatorClient::new(Peer::builder().config(config()).spawn(transport));
    talk(&calc).await?;
    calc.peer().close(Duration::from_secs(1)).await;
    let exit = child.shutdown(Duration::from_secs(2)).await?;
    println!("the server exited with {}", exit.status);
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let mode = std::env::args().nth(1);
    let result = match mode.as_deref() {
        None => in_memory().await,
        Some("serve") => serve().await,
        Some("call") => call().await,
        Some(other) => {
            eprintln!("unknown mode `{other}`; usage: calculator [serve | call]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("calculator: {e}");
            ExitCode::FAILURE
        }
    }
}
