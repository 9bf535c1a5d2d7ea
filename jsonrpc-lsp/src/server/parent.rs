//! Watching the client's process: LSP says a server whose parent is gone
//! exits, even when no `exit` came (the editor crashed or was killed).

use std::time::Duration;

use jsonrpc_runtime::Peer;

/// How often the process is looked for (what VS Code's language client
/// library does).
const EVERY: Duration = Duration::from_secs(3);

/// Closes `peer` once process `pid` is gone; stops when the connection
/// closes first. Not on platforms where a process cannot be looked for.
pub(super) fn watch(pid: i32, peer: Peer) {
    if !cfg!(unix) || tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    let closed = peer.closed();
    tokio::spawn(async move {
        tokio::pin!(closed);
        loop {
            tokio::select! {
                _ = &mut closed => return,
                () = tokio::time::sleep(EVERY) => {}
            }
            if !alive(pid) {
                tracing::info!(pid, "the client's process is gone: closing the connection");
                peer.close_now().await;
                return;
            }
        }
    });
}

/// Whether process `pid` runs: on Linux from `/proc` (a zombie counts as
/// gone), elsewhere on Unix by `kill -0`.
fn alive(pid: i32) -> bool {
    if cfg!(target_os = "linux") {
        return match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            // The state follows the command, which is in parentheses and
            // may itself hold any character.
            Ok(stat) => stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .is_some_and(|state| state != "Z" && state != "X"),
            Err(_) => false,
        };
    }
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::alive;

    #[test]
    fn this_process_is_alive_and_a_reaped_child_is_not() {
        assert!(alive(i32::try_from(std::process::id()).unwrap()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        child.wait().unwrap();
        assert!(!alive(pid));
    }
}
