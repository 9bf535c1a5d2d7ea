//! Reaping the child and reporting how it ended.

use std::sync::Arc;

use tokio::process::Child;

use super::{ChildShared, ExitState, EXIT_WAIT, STDERR_WAIT};
use crate::transport::TransportError;

/// The error to report when talking to the child failed: the child's exit
/// when it has exited (within [`EXIT_WAIT`]); a child still running then is
/// killed, reaped and reported the same way. `fallback` when no exit status
/// can be had.
pub(super) async fn exit_error(
    shared: Arc<ChildShared>,
    fallback: TransportError,
) -> TransportError {
    if let Ok(report) = crate::rt::timeout(EXIT_WAIT, shared.report()).await {
        return report.map_or(fallback, TransportError::ProcessExited);
    }
    // Stdout is gone but the child runs on: nothing can reach it any more,
    // so it is killed, reaped and reported like any other exit.
    tracing::debug!("the child process closed stdout but kept running; killing it");
    shared.kill.cancel();
    match crate::rt::timeout(EXIT_WAIT, shared.report()).await {
        Ok(Ok(exit)) => TransportError::ProcessExited(exit),
        Ok(Err(_)) | Err(_) => fallback,
    }
}

pub(super) async fn reap(
    mut child: Child,
    shared: Arc<ChildShared>,
    drain: tokio::task::JoinHandle<()>,
) {
    let status = tokio::select! {
        status = child.wait() => status,
        () = shared.kill.cancelled() => {
            let _ = child.start_kill();
            child.wait().await
        }
    };
    shared.exit.send_replace(match status {
        Ok(status) => ExitState::Exited(status),
        Err(e) => ExitState::WaitFailed(e.to_string()),
    });
    // A grandchild may hold stderr open; do not let the drain outlive the
    // child by more than the report waits for.
    if crate::rt::timeout(STDERR_WAIT, shared.stderr_done.cancelled())
        .await
        .is_err()
    {
        drain.abort();
    }
}
