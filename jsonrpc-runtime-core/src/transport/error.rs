//! Transport failures: I/O and framing, settings, child processes,
//! WebSocket, TLS.

use std::fmt;

use crate::codec::FramingError;

/// A transport failure: I/O or framing. It ends the connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The framer failed: I/O, or a header it cannot recover from.
    #[error(transparent)]
    Framing(#[from] FramingError),
    /// The underlying channel is gone.
    #[error("the transport is closed")]
    Closed,
    /// A connector's settings cannot be used: a URL of another scheme or
    /// without a host, a header value a header cannot carry, a secure URL
    /// without TLS settings. Nothing was connected.
    #[error("{0}")]
    Invalid(String),
    /// The child process at the other end exited (its stdout ended, or it
    /// stopped reading its stdin): its exit status and what it wrote to
    /// stderr. See `transport::ChildProcess`.
    #[error("{0}")]
    ProcessExited(ProcessExit),
    /// The WebSocket connection failed: its handshake, a protocol violation,
    /// or a message over the size limit.
    #[error(transparent)]
    WebSocket(WebSocketError),
    /// The TLS handshake failed: a certificate that is not trusted, no
    /// protocol in common, a handshake that took too long.
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    #[error(transparent)]
    Tls(TlsError),
    /// The server ended the MCP session the transport belonged to: it
    /// answered `404 Not Found` for its `Mcp-Session-Id` (the session was
    /// deleted, expired, or the server restarted). A new session starts
    /// with a new transport and `initialize`.
    #[error(
        "the MCP session {session_id} is over: {url} answered 404 for it; \
         start a new session with `initialize`"
    )]
    SessionEnded {
        /// The endpoint's URL.
        url: String,
        /// The session's id.
        session_id: String,
    },
}

/// Why a TLS handshake failed (see [`TransportError::Tls`]).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::tls::rustls;
/// use jsonrpc_runtime::transport::{TlsError, TransportError};
///
/// fn is_untrusted(e: &TransportError) -> bool {
///     matches!(
///         e,
///         TransportError::Tls(TlsError::Handshake(rustls::Error::InvalidCertificate(
///             rustls::CertificateError::UnknownIssuer
///         )))
///     )
/// }
/// assert!(!is_untrusted(&TransportError::Closed));
/// ```
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// rustls ended the handshake: the other side's certificate is not
    /// trusted (`InvalidCertificate`, on the client), the other side
    /// refused ours (`AlertReceived`), or it does not speak TLS
    /// (`InvalidMessage`, on the server).
    #[error("the TLS handshake failed: {}", describe(.0))]
    Handshake(rustls::Error),
    /// The other side did not complete the handshake in time.
    #[error("the TLS handshake did not complete within {0:?}")]
    TimedOut(std::time::Duration),
    /// The name to check the server's certificate against is neither a DNS
    /// name nor an IP address.
    #[error("`{0}` is not a server name TLS can check: expected a DNS name or an IP address")]
    InvalidServerName(String),
}

/// rustls' reason, with what to do for the common cases.
#[cfg(feature = "tls")]
fn describe(e: &rustls::Error) -> String {
    match e {
        rustls::Error::InvalidCertificate(_) => format!(
            "{e} (the server's certificate must chain up to a root the client's `ClientTls` \
             trusts, and name the host connected to)"
        ),
        e => e.to_string(),
    }
}

/// How a child process ended: its exit status and the start of its stderr.
///
/// Stderr is drained while the child runs, so a chatty child never blocks on
/// a full pipe; only its first [`ProcessExit::STDERR_CAPTURE_LIMIT`] bytes
/// are kept (decoded as UTF-8, invalid sequences replaced), the rest is
/// dropped and [`stderr_truncated`](Self::stderr_truncated) is set.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use jsonrpc_runtime::{Config, transport::ChildProcess};
///
/// # async fn run() -> std::io::Result<()> {
/// let child = ChildProcess::spawn(tokio::process::Command::new("my-server"), &Config::default())?;
/// let exit = child.shutdown(Duration::from_secs(1)).await?;
/// if !exit.status.success() {
///     eprintln!("{exit}");
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProcessExit {
    /// The child's exit status (an exit code, or the signal that ended it).
    pub status: std::process::ExitStatus,
    /// The first bytes the child wrote to stderr, lossily decoded as UTF-8.
    pub stderr: String,
    /// Whether the child wrote more to stderr than was kept.
    pub stderr_truncated: bool,
    /// Why reading the child's stderr failed, if it did (what was read up to
    /// then is in [`stderr`](Self::stderr)).
    pub stderr_error: Option<String>,
}

impl ProcessExit {
    /// How many bytes of a child's stderr are kept: 64 KiB.
    pub const STDERR_CAPTURE_LIMIT: usize = 64 * 1024;

    #[doc(hidden)]
    pub fn new(
        status: std::process::ExitStatus,
        stderr: String,
        stderr_truncated: bool,
        stderr_error: Option<String>,
    ) -> Self {
        ProcessExit {
            status,
            stderr,
            stderr_truncated,
            stderr_error,
        }
    }
}

impl fmt::Display for ProcessExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the child process exited ({})", self.status)?;
        if let Some(error) = &self.stderr_error {
            write!(f, "; reading its stderr failed: {error}")?;
        }
        let stderr = self.stderr.trim_end();
        if stderr.is_empty() {
            f.write_str(" and wrote nothing to stderr")
        } else {
            write!(f, "; its stderr:\n{stderr}")?;
            if self.stderr_truncated {
                write!(
                    f,
                    "\n[stderr truncated to its first {} bytes]",
                    Self::STDERR_CAPTURE_LIMIT
                )?;
            }
            Ok(())
        }
    }
}

/// A WebSocket failure (see [`TransportError::WebSocket`]).
///
/// The message says what went wrong and, when this side closed the
/// connection because of it, with which close code (see
/// [`close_code`](Self::close_code)).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::TransportError;
/// use jsonrpc_runtime::CloseReason;
///
/// fn was_too_big(reason: &CloseReason) -> bool {
///     matches!(reason, CloseReason::Transport(e)
///         if matches!(&**e, TransportError::WebSocket(ws) if ws.close_code() == Some(1009)))
/// }
/// assert!(!was_too_big(&CloseReason::RemoteClosed));
/// ```
#[derive(Debug)]
pub struct WebSocketError {
    message: String,
    close_code: Option<u16>,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl WebSocketError {
    /// A failure described by `message`, caused by `source` when known.
    #[doc(hidden)]
    pub fn new(
        message: impl Into<String>,
        close_code: Option<u16>,
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        WebSocketError {
            message: message.into(),
            close_code,
            source,
        }
    }

    /// The close code this side sent because of the failure: 1009 for a
    /// message over the size limit, 1002 for a protocol violation, 1007 for
    /// text that is not UTF-8. `None` when no close frame could be sent (the
    /// connection was reset, the handshake failed).
    pub fn close_code(&self) -> Option<u16> {
        self.close_code
    }
}

impl fmt::Display for WebSocketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "websocket: {}", self.message)
    }
}

impl std::error::Error for WebSocketError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl From<std::io::Error> for TransportError {
    fn from(e: std::io::Error) -> Self {
        TransportError::Framing(FramingError::Io(e))
    }
}

/// For code that reports in `io::Result`: an I/O failure is itself, an
/// invalid setting [`InvalidInput`](std::io::ErrorKind::InvalidInput),
/// anything else an [`other`](std::io::Error::other) error around it.
impl From<TransportError> for std::io::Error {
    fn from(e: TransportError) -> Self {
        match e {
            TransportError::Framing(FramingError::Io(e)) => e,
            TransportError::Invalid(why) => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, why)
            }
            e => std::io::Error::other(e),
        }
    }
}

#[cfg(feature = "tls")]
impl TransportError {
    /// An error from a TLS handshake: rustls' own reason or a timeout when
    /// it is one, else the I/O error (the connection was reset).
    #[doc(hidden)]
    pub fn from_tls_io(e: std::io::Error) -> TransportError {
        let typed = e
            .get_ref()
            .is_some_and(|inner| inner.is::<rustls::Error>() || inner.is::<TlsError>());
        if !typed {
            return TransportError::from(e);
        }
        let kind = e.kind();
        let Some(inner) = e.into_inner() else {
            return TransportError::from(std::io::Error::from(kind));
        };
        let inner = match inner.downcast::<rustls::Error>() {
            Ok(rustls) => return TransportError::Tls(TlsError::Handshake(*rustls)),
            Err(inner) => inner,
        };
        match inner.downcast::<TlsError>() {
            Ok(tls) => TransportError::Tls(*tls),
            Err(other) => TransportError::from(std::io::Error::new(kind, other)),
        }
    }
}
