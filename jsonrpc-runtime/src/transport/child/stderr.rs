//! A child's stderr: drained as it comes, its start kept for the exit
//! report, and optionally shown as it comes.

use std::fmt;
use std::sync::Arc;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::ChildStderr;

use super::{lock, ChildShared};
use crate::transport::ProcessExit;

#[derive(Default)]
pub(super) struct Capture {
    pub(super) bytes: Vec<u8>,
    pub(super) truncated: bool,
    /// Why reading stderr failed, if it did.
    pub(super) error: Option<String>,
}

/// What else happens to a child's stderr as it is read, besides keeping its
/// first 64 KiB for [`ProcessExit`] (see [`ChildProcess::spawn_with`](crate::transport::ChildProcess::spawn_with)).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use jsonrpc_runtime::transport::StderrMode;
///
/// // Each line of the child's log, to this process's tracing.
/// let mode = StderrMode::Lines(Arc::new(|line: &str| eprintln!("[child] {line}")));
/// # let _ = mode;
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum StderrMode {
    /// Nothing else: the child's logs are seen when it exits. The default.
    #[default]
    Keep,
    /// Copied to this process's stderr as it comes.
    Forward,
    /// Each line (without its `\n`, lossily decoded as UTF-8) handed to a
    /// callback as it comes; a last line without `\n` when stderr ends.
    Lines(Arc<dyn Fn(&str) + Send + Sync>),
}

impl fmt::Debug for StderrMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StderrMode::Keep => f.write_str("Keep"),
            StderrMode::Forward => f.write_str("Forward"),
            StderrMode::Lines(_) => f.write_str("Lines(..)"),
        }
    }
}

pub(super) async fn drain_stderr(
    mut stderr: ChildStderr,
    shared: Arc<ChildShared>,
    mode: StderrMode,
) {
    let mut buf = vec![0u8; 8 * 1024];
    // The start of a line not ended yet, for `StderrMode::Lines`.
    let mut partial = Vec::new();
    let mut forward = tokio::io::stderr();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) => {
                tracing::warn!(error = %e, "reading the child process's stderr failed");
                lock(&shared.stderr).error = Some(e.to_string());
                break;
            }
        };
        let read = &buf[..n];
        {
            let mut capture = lock(&shared.stderr);
            let room = ProcessExit::STDERR_CAPTURE_LIMIT.saturating_sub(capture.bytes.len());
            let keep = n.min(room);
            capture.bytes.extend_from_slice(&read[..keep]);
            if keep < n {
                capture.truncated = true;
            }
        }
        match &mode {
            StderrMode::Keep => {}
            StderrMode::Forward => {
                // This process's stderr failing is no reason to stop
                // draining the child's.
                let _ = forward.write_all(read).await;
            }
            StderrMode::Lines(each) => {
                partial.extend_from_slice(read);
                let mut start = 0;
                while let Some(end) = memchr::memchr(b'\n', &partial[start..]) {
                    let line = &partial[start..start + end];
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    each(&String::from_utf8_lossy(line));
                    start += end + 1;
                }
                partial.drain(..start);
            }
        }
    }
    if let (StderrMode::Lines(each), false) = (&mode, partial.is_empty()) {
        each(&String::from_utf8_lossy(&partial));
    }
    shared.stderr_done.cancel();
}
