//! Run with: cargo build --examples && cargo run --example child_process
//!
//! Spawns the calculator example's server (`calculator serve`) as a child
//! process and calls it over its stdin and stdout: `add`, `subtract`, and a
//! `divide` by zero whose error comes back from the child, then a clean
//! shutdown that reports the child's exit status. Any JSON-RPC server that
//! speaks over stdio (a language server, an MCP server) is driven the same
//! way; only the command changes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use jsonrpc_runtime::{transport::ChildProcess, Config, Peer};
use serde_json::{json, Value};
use tokio::process::Command;

#[path = "support/logging.rs"]
mod logging;

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
    logging::init();
    let Some(server) = sibling_example("calculator") else {
        eprintln!(
            "the calculator example is not built yet: run `cargo build --examples`, \
             then `cargo run --example child_process`"
        );
        return ExitCode::FAILURE;
    };
    let mut command = Command::new(&server);
    command.arg("serve");
    match run(command).await {
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
    println!(
        "spawned `calculator serve` as pid {}",
        child.id().unwrap_or(0)
    );

    let peer = Peer::builder().config(config).spawn(transport);
    let sum: i64 = peer.call("add", json!({"a": 2, "b": 3})).await?;
    println!("add(2, 3) = {sum}");
    let difference: i64 = peer.call("subtract", [42, 23]).await?;
    println!("subtract(42, 23) = {difference}");
    match peer.call::<Value>("divide", [1, 0]).await {
        Err(e) => println!("divide(1, 0) failed as it should: {e}"),
        Ok(v) => return Err(format!("divide(1, 0) gave {v}").into()),
    }

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
