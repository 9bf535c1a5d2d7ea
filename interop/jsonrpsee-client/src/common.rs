//! What both checks share: the tally of checks, the bounded wait, and
//! `spec_server` started on a loopback port and stopped with SIGTERM.

use std::future::Future;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// The bound on every wait: an answer, an item, a stream's end, a process.
pub const WAIT: Duration = Duration::from_secs(30);

pub type Outcome = Result<(), String>;

/// Counts the checks that passed; the first failure ends the run.
pub struct Checks {
    pub passed: usize,
}

impl Checks {
    pub async fn run(&mut self, name: &str, check: impl Future<Output = Outcome>) -> Outcome {
        match check.await {
            Ok(()) => {
                self.passed += 1;
                println!("ok   {name}");
                Ok(())
            }
            Err(e) => Err(format!("FAIL {name}: {e}")),
        }
    }
}

pub fn expect_eq<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> Outcome {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

/// `future`'s output, or an error naming `what` after [`WAIT`].
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(WAIT, future)
        .await
        .map_err(|_| format!("{what}: nothing within {} s", WAIT.as_secs()))
}

/// Starts `spec_server FLAG 127.0.0.1:0` (`--http`, `--ws`); returns it
/// and its URL once it listens. Its later stderr is copied to ours.
pub async fn start_server(bin: &str, flag: &str) -> Result<(Child, String), String> {
    let mut child = Command::new(bin)
        .args([flag, "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {bin}: {e}"))?;
    let stderr = child.stderr.take().ok_or("no stderr")?;
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = within("spec_server saying where it listens", lines.next_line())
            .await?
            .map_err(|e| e.to_string())?
            .ok_or("spec_server exited before listening")?;
        eprintln!("{line}");
        if let Some(url) = line.strip_prefix("spec_server: listening on ") {
            break url.trim().to_owned();
        }
    };
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            eprintln!("{line}");
        }
    });
    Ok((child, url))
}

/// SIGTERM, then the exit status: spec_server drains and exits 0.
pub async fn stop_server(mut child: Child) -> Outcome {
    let pid = child.id().ok_or("spec_server already exited")?;
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .map_err(|e| format!("kill: {e}"))?;
    if !status.success() {
        return Err(format!("kill -TERM {pid} failed: {status}"));
    }
    let status = within("spec_server exiting after SIGTERM", child.wait())
        .await?
        .map_err(|e| e.to_string())?;
    expect_eq(
        "spec_server's exit status after SIGTERM",
        status.code(),
        Some(0),
    )
}
