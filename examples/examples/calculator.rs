//! Run with: cargo run --example calculator [-- serve | call]
//!
//! The `#[rpc]` macro in one file: a `Calculator` trait with typed requests,
//! a typed domain error and a notification.
//!
//! - No argument: a server and a client in one process over an in-memory
//!   pair, printing each call and the typed error decoded on the client.
//! - `serve`: the calculator as a server on stdin/stdout (newline-delimited).
//! - `call`: spawns `calculator serve` as a child process and calls it.

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use jsonrpc_runtime::{rpc, CallError, ChildProcess, Config, Peer, RpcError, Transport};
use serde::{Deserialize, Serialize};

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
    calc.log("the client says hello".into()).await?;
    Ok(())
}

async fn in_memory() -> Result<(), Box<dyn std::error::Error>> {
    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder()
        .router(Calc::default().into_router())
        .spawn(server_side);
    let calc = CalculatorClient::new(Peer::spawn(client_side));
    talk(&calc).await?;
    calc.peer().close(Duration::from_secs(1)).await;
    server.closed().await;
    Ok(())
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::default();
    let transport = Transport::stdio(&config)?;
    let router = Calc::default().into_router();
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
    let (transport, child) = ChildProcess::spawn(command, &Config::default())?.into_parts();
    println!("spawned `calculator serve` as pid {:?}", child.id());
    let calc = CalculatorClient::new(Peer::spawn(transport));
    talk(&calc).await?;
    calc.peer().close(Duration::from_secs(1)).await;
    let exit = child.shutdown(Duration::from_secs(2)).await?;
    println!("the server exited with {}", exit.status);
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
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
