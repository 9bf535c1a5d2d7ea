//! A child process as the other end of a connection.
//!
//! The child's stdin and stdout carry the messages, framed as the config
//! says. Three helpers run beside the connection:
//!
//! * a stderr drain, which reads stderr as it comes so the child never blocks
//!   on a full pipe, and keeps its first 64 KiB;
//! * a reaper, which owns the `tokio::process::Child`, waits for it and
//!   publishes its exit status, and kills it when asked (or when every part
//!   of the connection is gone);
//! * a shared stdin slot, so that [`ChildHandle::shutdown`] can close the
//!   child's stdin even while a peer owns the transport.
//!
//! When stdout ends, the inbound stream waits (briefly) for the exit status
//! and the rest of stderr, then yields one
//! [`TransportError::ProcessExited`]: a peer on this transport fails its
//! pending calls with that error, so a caller learns the exit status and the
//! stderr of a child that died mid-call. A failed write to stdin is reported
//! the same way when the child has exited.

use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_sink::Sink;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;

mod exit;
mod stderr;

use self::exit::{exit_error, reap};
pub use self::stderr::StderrMode;
use self::stderr::{drain_stderr, Capture};
use super::Transport;
use super::{ProcessExit, TransportError};
use crate::codec::{Frame, FramingCodec, FramingError};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// How long the inbound stream waits, once stdout has ended, for the child
/// to exit so that its status can be reported. A child that closed stdout
/// but keeps running is reported as such after this.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// How long, once the child has exited, the rest of its stderr is waited
/// for. Longer only matters when a grandchild holds the pipe open.
const STDERR_WAIT: Duration = Duration::from_millis(500);

/// A child process speaking JSON-RPC over its stdin and stdout.
///
/// A `ChildProcess` is a transport (it implements `Stream` of inbound
/// [`Frame`]s and `Sink` of outbound messages, like [`Transport`]) plus
/// control of the process: [`shutdown`](Self::shutdown), [`id`](Self::id).
/// Use it directly when the caller wants to control the wire order message
/// by message, or split it with [`into_parts`](Self::into_parts) to run a
/// [`Peer`](crate::Peer) on the transport while keeping the
/// [`ChildHandle`].
///
/// The child's stderr is drained concurrently and its first 64 KiB kept.
/// When its stdout ends, the stream yields
/// [`TransportError::ProcessExited`] with the exit status and that stderr,
/// then ends.
///
/// The child is killed and reaped when it is dropped; after `into_parts`,
/// when the handle and both halves of the transport are all dropped. No
/// zombie is left behind (outside a runtime, tokio's orphan reaping takes
/// over). Only the child itself is killed, not processes it started.
///
/// # Examples
///
/// With a peer:
///
/// ```no_run
/// use std::time::Duration;
/// use jsonrpc_runtime::{Config, Peer, transport::ChildProcess};
/// use tokio::process::Command;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let config = Config::default();
/// let (transport, child) = ChildProcess::spawn(Command::new("my-server"), &config)?.into_parts();
/// let peer = Peer::builder().config(config).spawn(transport);
/// let sum: i64 = peer.call("add", [2, 3]).await?;
/// assert_eq!(sum, 5);
/// peer.close(Duration::from_secs(1)).await;
/// let exit = child.shutdown(Duration::from_secs(1)).await?;
/// println!("{exit}");
/// # Ok(())
/// # }
/// ```
///
/// Without a peer, one message at a time (the caller picks the ids and the
/// order):
///
/// ```no_run
/// use std::time::Duration;
/// use bytes::Bytes;
/// use futures_util::{SinkExt as _, StreamExt as _};
/// use jsonrpc_runtime::codec::Frame;
/// use jsonrpc_runtime::message::{Dialect, Message, ParseOptions, Parsed, Request};
/// use jsonrpc_runtime::{Config, Id, transport::ChildProcess};
/// use tokio::process::Command;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut child = ChildProcess::spawn(Command::new("my-server"), &Config::default())?;
/// let request = Message::Request(Request {
///     id: Id::from(1),
///     method: "add".into(),
///     params: Some(serde_json::value::to_raw_value(&[2, 3])?),
///     extras: Default::default(),
/// });
/// child.send(Bytes::from(request.to_json(Dialect::Strict))).await?;
/// if let Some(Frame::Message(bytes)) = child.next().await.transpose()? {
///     if let Parsed::Single(Message::Response(response)) =
///         Message::parse_bytes(&bytes, &ParseOptions::default())
///     {
///         println!("{} answered {:?}", response.id, response.outcome);
///     }
/// }
/// let exit = child.shutdown(Duration::from_secs(1)).await?;
/// assert!(exit.status.success());
/// # Ok(())
/// # }
/// ```
pub struct ChildProcess {
    transport: Transport,
    handle: ChildHandle,
}

impl fmt::Debug for ChildProcess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildProcess")
            .field("id", &self.handle.shared.pid)
            .finish_non_exhaustive()
    }
}

/// Control of a child process whose transport is used elsewhere (see
/// [`ChildProcess::into_parts`]).
///
/// Dropping the handle does not kill the child while its transport is still
/// in use; the child is killed and reaped once the handle and both halves
/// of the transport are dropped.
///
/// # Examples
///
/// See [`ChildProcess`].
#[must_use = "the child is killed once the handle and its transport are dropped"]
pub struct ChildHandle {
    shared: Arc<ChildShared>,
    _guard: Arc<KillGuard>,
}

impl fmt::Debug for ChildHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildHandle")
            .field("id", &self.shared.pid)
            .finish_non_exhaustive()
    }
}

impl ChildProcess {
    /// Spawns `command` with piped stdin, stdout and stderr, framed by
    /// `codec` (a `&Config` converts: `&Config::lsp()` frames with
    /// `Content-Length`).
    ///
    /// The command's stdio settings are replaced, and it is set to be killed
    /// on drop.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::codec::ContentLengthCodec;
    /// use jsonrpc_runtime::transport::ChildProcess;
    /// use tokio::process::Command;
    ///
    /// # async fn run() -> Result<(), jsonrpc_runtime::transport::TransportError> {
    /// let mut command = Command::new("rust-analyzer");
    /// command.current_dir("/my/project");
    /// let child = ChildProcess::spawn(command, ContentLengthCodec::new())?;
    /// println!("started pid {:?}", child.id());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// Fails when the process cannot be started (the program is missing or
    /// not executable, the working directory does not exist, ...).
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn(
        command: Command,
        codec: impl Into<FramingCodec>,
    ) -> Result<ChildProcess, TransportError> {
        ChildProcess::spawn_with(command, codec, StderrMode::Keep)
    }

    /// Spawns `command` as [`spawn`](ChildProcess::spawn) does, doing
    /// `stderr_mode` with its stderr as it comes (forwarding it to this
    /// process's stderr, or handing each line to a callback) besides keeping
    /// its first 64 KiB for [`ProcessExit`].
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::transport::StderrMode;
    /// use jsonrpc_runtime::{Config, transport::ChildProcess};
    /// use tokio::process::Command;
    ///
    /// # async fn run() -> Result<(), jsonrpc_runtime::transport::TransportError> {
    /// // The server's logs show up as it writes them.
    /// let child = ChildProcess::spawn_with(Command::new("my-server"), &Config::default(), StderrMode::Forward)?;
    /// # drop(child);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`spawn`](ChildProcess::spawn).
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn_with(
        mut command: Command,
        codec: impl Into<FramingCodec>,
        stderr_mode: StderrMode,
    ) -> Result<ChildProcess, TransportError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            // Piped stdio was asked for, so tokio hands out all three; stay
            // clean if it ever does not.
            let _ = child.start_kill();
            return Err(io::Error::other("the child's stdio pipes were not created").into());
        };
        let codec = codec.into();

        let shared = Arc::new(ChildShared {
            pid: child.id(),
            exit: watch::Sender::new(ExitState::Running),
            stderr: Mutex::new(Capture::default()),
            stderr_done: CancellationToken::new(),
            stdin: Mutex::new(StdinSlot {
                writer: Some(super::framed_write(stdin, codec.clone())),
                waker: None,
            }),
            kill: CancellationToken::new(),
        });
        let guard = Arc::new(KillGuard(shared.kill.clone()));
        let drain = crate::rt::spawn(drain_stderr(stderr, shared.clone(), stderr_mode));
        crate::rt::spawn(reap(child, shared.clone(), drain));

        let inbound = InboundHalf {
            frames: super::framed_read(stdout, codec),
            shared: shared.clone(),
            state: ReadState::Reading,
            _guard: guard.clone(),
        };
        let outbound = OutboundHalf {
            shared: shared.clone(),
            failure: None,
            _guard: guard.clone(),
        };
        Ok(ChildProcess {
            transport: Transport::new(inbound, outbound),
            handle: ChildHandle {
                shared,
                _guard: guard,
            },
        })
    }

    /// The child's process id, or `None` once it has been reaped.
    pub fn id(&self) -> Option<u32> {
        self.handle.id()
    }

    /// Splits into the transport (give it to a [`Peer`](crate::Peer)) and a
    /// handle that controls the process.
    ///
    /// # Examples
    ///
    /// See [`ChildProcess`].
    pub fn into_parts(self) -> (Transport, ChildHandle) {
        (self.transport, self.handle)
    }

    /// Closes the child's stdin, waits up to `grace` for it to exit, then
    /// kills it; reaps it and returns its exit status and stderr.
    ///
    /// Anything the child writes to stdout meanwhile is read and dropped, so
    /// it never blocks on a full pipe while winding down.
    ///
    /// # Examples
    ///
    /// See [`ChildProcess`].
    ///
    /// # Errors
    ///
    /// Fails only when waiting for the process fails at the OS level.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the `ChildProcess`, which kills and reaps
    /// the child.
    pub async fn shutdown(self, grace: Duration) -> io::Result<ProcessExit> {
        let ChildProcess { transport, handle } = self;
        let (mut inbound, mut outbound) = transport.into_halves();
        // Flush what the caller sent, then close stdin. A child that does
        // not read its stdin cannot hold this up past the grace.
        let deadline = crate::rt::Instant::now() + grace;
        let _ = crate::rt::timeout_at(deadline, outbound.close()).await;
        drop(outbound);
        let rest = deadline.saturating_duration_since(crate::rt::Instant::now());
        let exit = handle.shutdown(rest);
        tokio::pin!(exit);
        let mut stdout_open = true;
        loop {
            tokio::select! {
                exit = &mut exit => return exit,
                // Drop what the child still writes.
                item = inbound.next(), if stdout_open => stdout_open = item.is_some(),
            }
        }
    }
}

impl Stream for ChildProcess {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.transport).poll_next(cx)
    }
}

impl Sink<Bytes> for ChildProcess {
    type Error = TransportError;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.transport).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Bytes) -> Result<(), TransportError> {
        Pin::new(&mut self.transport).start_send(item)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.transport).poll_flush(cx)
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.transport).poll_close(cx)
    }
}

impl ChildHandle {
    /// The child's process id, or `None` once it has been reaped.
    pub fn id(&self) -> Option<u32> {
        match *self.shared.exit.borrow() {
            ExitState::Running => self.shared.pid,
            _ => None,
        }
    }

    /// Closes the child's stdin, waits up to `grace` for it to exit, then
    /// kills it; reaps it and returns its exit status and stderr.
    ///
    /// A peer still running on the transport sees the child's stdout end
    /// and closes with [`TransportError::ProcessExited`]. For a clean
    /// goodbye, close the peer first (which also closes stdin), then call
    /// this.
    ///
    /// # Examples
    ///
    /// See [`ChildProcess`].
    ///
    /// # Errors
    ///
    /// Fails only when waiting for the process fails at the OS level.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the handle: the child is killed once its
    /// transport is gone too.
    pub async fn shutdown(self, grace: Duration) -> io::Result<ProcessExit> {
        self.shared.close_stdin();
        if crate::rt::timeout(grace, self.shared.exited())
            .await
            .is_err()
        {
            self.shared.kill.cancel();
        }
        self.shared.report().await
    }

    /// Waits for the child to exit on its own, and returns its exit status
    /// and stderr.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::{Config, Peer, transport::ChildProcess};
    /// use tokio::process::Command;
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let (transport, child) = ChildProcess::spawn(Command::new("my-server"), &Config::default())?
    ///     .into_parts();
    /// let peer = Peer::spawn(transport);
    /// let _ = peer.notify("exit", ());
    /// let exit = child.wait().await?;
    /// println!("{exit}");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// Fails only when waiting for the process fails at the OS level.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn wait(&self) -> io::Result<ProcessExit> {
        self.shared.report().await
    }

    /// Asks for the child to be killed, without waiting (see
    /// [`wait`](Self::wait)).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::{Config, transport::ChildProcess};
    /// use tokio::process::Command;
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let (_transport, child) = ChildProcess::spawn(Command::new("my-server"), &Config::default())?
    ///     .into_parts();
    /// child.kill();
    /// assert!(!child.wait().await?.status.success());
    /// # Ok(())
    /// # }
    /// ```
    pub fn kill(&self) {
        self.shared.kill.cancel();
    }
}

/// Kills the child when the last part of the connection is dropped.
struct KillGuard(CancellationToken);

impl Drop for KillGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[derive(Debug, Clone)]
enum ExitState {
    Running,
    Exited(ExitStatus),
    WaitFailed(String),
}

struct StdinSlot {
    writer: Option<super::write::FrameWriter<ChildStdin, FramingCodec>>,
    /// The writer task waiting on a full pipe, woken if stdin is closed
    /// from the handle meanwhile.
    waker: Option<Waker>,
}

struct ChildShared {
    pid: Option<u32>,
    exit: watch::Sender<ExitState>,
    stderr: Mutex<Capture>,
    stderr_done: CancellationToken,
    stdin: Mutex<StdinSlot>,
    kill: CancellationToken,
}

/// Locks a mutex whose data stays consistent across a panic (every update
/// is a single assignment or append).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl ChildShared {
    fn close_stdin(&self) {
        let (writer, waker) = {
            let mut slot = lock(&self.stdin);
            (slot.writer.take(), slot.waker.take())
        };
        drop(writer);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// Waits until the reaper has published how the child ended.
    async fn exited(&self) -> ExitState {
        let mut rx = self.exit.subscribe();
        match rx.wait_for(|s| !matches!(s, ExitState::Running)).await {
            Ok(state) => state.clone(),
            // The sender lives in `self`; it cannot be gone.
            Err(_) => ExitState::WaitFailed("the process reaper is gone".into()),
        }
    }

    /// The exit status and stderr, once the child has exited and its stderr
    /// has ended (or [`STDERR_WAIT`] has passed).
    async fn report(&self) -> io::Result<ProcessExit> {
        match self.exited().await {
            ExitState::Exited(status) => {
                let _ = crate::rt::timeout(STDERR_WAIT, self.stderr_done.cancelled()).await;
                let capture = lock(&self.stderr);
                Ok(ProcessExit::new(
                    status,
                    String::from_utf8_lossy(&capture.bytes).into_owned(),
                    capture.truncated,
                    capture.error.clone(),
                ))
            }
            ExitState::WaitFailed(message) => Err(io::Error::other(format!(
                "waiting for the child process failed: {message}"
            ))),
            // `exited` only returns once the state left `Running`.
            ExitState::Running => Err(io::Error::other("the child process is still running")),
        }
    }
}

enum ReadState {
    Reading,
    /// Stdout ended or failed: waiting for the exit status to report.
    Exiting(BoxFuture<TransportError>),
    Done,
}

/// The child's stdout, as frames.
struct InboundHalf {
    frames: FramedRead<ChildStdout, FramingCodec>,
    shared: Arc<ChildShared>,
    state: ReadState,
    _guard: Arc<KillGuard>,
}

impl Stream for InboundHalf {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            match &mut this.state {
                ReadState::Reading => match this.frames.poll_next_unpin(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Some(Ok(frame))) => return Poll::Ready(Some(Ok(frame))),
                    Poll::Ready(Some(Err(e))) => {
                        let fallback = TransportError::from(e);
                        this.state =
                            ReadState::Exiting(Box::pin(exit_error(this.shared.clone(), fallback)));
                    }
                    Poll::Ready(None) => {
                        let fallback = TransportError::from(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!(
                                "the child process{} closed its stdout but is still running",
                                pid_suffix(this.shared.pid)
                            ),
                        ));
                        this.state =
                            ReadState::Exiting(Box::pin(exit_error(this.shared.clone(), fallback)));
                    }
                },
                ReadState::Exiting(report) => {
                    let error = std::task::ready!(report.as_mut().poll(cx));
                    this.state = ReadState::Done;
                    return Poll::Ready(Some(Err(error)));
                }
                ReadState::Done => return Poll::Ready(None),
            }
        }
    }
}

fn pid_suffix(pid: Option<u32>) -> String {
    pid.map(|pid| format!(" (pid {pid})")).unwrap_or_default()
}

/// The child's stdin, through the shared slot.
struct OutboundHalf {
    shared: Arc<ChildShared>,
    /// A write failed: the error to report, once the exit is known.
    failure: Option<BoxFuture<TransportError>>,
    _guard: Arc<KillGuard>,
}

impl OutboundHalf {
    /// Runs `op` on the stdin writer, turning a failure (or a stdin closed
    /// by the handle) into the child's exit when it has exited.
    fn poll_writer(
        &mut self,
        cx: &mut Context<'_>,
        op: impl FnOnce(
            Pin<&mut super::write::FrameWriter<ChildStdin, FramingCodec>>,
            &mut Context<'_>,
        ) -> Poll<Result<(), FramingError>>,
    ) -> Poll<Result<(), TransportError>> {
        if self.failure.is_none() {
            let mut slot = lock(&self.shared.stdin);
            let fallback = match slot.writer.as_mut() {
                None => TransportError::Closed,
                Some(writer) => match op(Pin::new(writer), cx) {
                    Poll::Pending => {
                        slot.waker = Some(cx.waker().clone());
                        return Poll::Pending;
                    }
                    Poll::Ready(Ok(())) => return Poll::Ready(Ok(())),
                    Poll::Ready(Err(e)) => TransportError::from(e),
                },
            };
            drop(slot);
            self.failure = Some(Box::pin(exit_error(self.shared.clone(), fallback)));
        }
        match &mut self.failure {
            Some(report) => report.as_mut().poll(cx).map(Err),
            None => Poll::Ready(Err(TransportError::Closed)),
        }
    }
}

impl Sink<Bytes> for OutboundHalf {
    type Error = TransportError;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.poll_writer(cx, |w, cx| w.poll_ready(cx))
    }

    fn start_send(self: Pin<&mut Self>, item: Bytes) -> Result<(), TransportError> {
        if self.failure.is_some() {
            return Err(TransportError::Closed);
        }
        let mut slot = lock(&self.shared.stdin);
        match slot.writer.as_mut() {
            Some(writer) => Pin::new(writer)
                .start_send(item)
                .map_err(TransportError::from),
            None => Err(TransportError::Closed),
        }
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.poll_writer(cx, |w, cx| w.poll_flush(cx))
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        if lock(&self.shared.stdin).writer.is_none() && self.failure.is_none() {
            // Already closed (by the handle, or an earlier close).
            return Poll::Ready(Ok(()));
        }
        let result = std::task::ready!(self.poll_writer(cx, |w, cx| w.poll_close(cx)));
        // Flushed: now close the pipe so the child sees the end of its input.
        self.shared.close_stdin();
        Poll::Ready(result)
    }
}

impl Drop for OutboundHalf {
    fn drop(&mut self) {
        // The pipe would otherwise stay open as long as the handle lives.
        self.shared.close_stdin();
    }
}
