//! Run with: cargo build --examples && cargo run --example child_process
//!
//! Spawns the `spec_server` example as a child process and calls it over
//! its stdin and stdout: `subtract`, `sum` and `echo`, then a clean
//! shutdown that reports the child's exit status. Any JSON-RPC server that
//! speaks over stdio (a language server, an MCP server) is driven the same
//! way; only the command changes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use jsonrpc_runtime::{ChildProcess, Config, Peer};
use serde_json::{json, Value};
use tokio::process::Command;

/// The path of another example binary, next to this one.
fn sibling_example(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe
        .parent()?
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    path.exists().then_some(path)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Some(server) = sibling_example("spec_server") else {
        eprintln!(
            "the spec_server example is not built yet: run `cargo build --examples`, \
             then `cargo run --example child_process`"
        );
        return ExitCode::FAILURE;
    };
    match run(Command::new(&server)).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("child_process: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> Result<(), Box<dyn std::error::Error>> {
    let config = Config::default();
    let (transport, child) = ChildProcess::spawn(command, &config)?.into_parts();
    println!("spawned spec_server as pid {}", child.id().unwrap_or(0));

    let peer = Peer::builder().config(config).spawn(transport);
    let difference: Value = peer.call("subtract", [42, 23]).await?;
    println!("subtract(42, 23) = {difference}");
    let sum: Value = peer.call("sum", [1, 2, 3, 4]).await?;
    println!("sum(1, 2, 3, 4) = {sum}");
    let echo: Value = peer.call("echo", json!({"hello": "child"})).await?;
    println!("echo({{\"hello\": \"child\"}}) = {echo}");

    // Closing the peer closes the child's stdin; the server then exits on
    // its own, and shutdown reaps it (it would kill it after the grace).
    peer.close(Duration::from_secs(1)).await;
    let exit = child.shutdown(Duration::from_secs(2)).await?;
    println!("the child exited: {}", exit.status);
    if !exit.status.success() {
        return Err(exit.to_string().into());
    }
    Ok(())
}
