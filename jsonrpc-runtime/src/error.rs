//! Errors: the wire error object, its codes and stages, the `RpcError`
//! mapping trait for domain errors, and the errors callers and transports see.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::codec::FramingError;
use crate::id::Id;

/// A JSON-RPC error code.
///
/// Codes are plain integers on the wire. The constants name the five codes
/// JSON-RPC 2.0 predefines and the extras LSP uses; [`ErrorCode::stage`]
/// tells where in a request's life an error with this code arose.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{ErrorCode, ErrorStage};
///
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.stage(), ErrorStage::Dispatch);
/// assert!(ErrorCode(-32050).is_implementation_defined());
/// assert!(!ErrorCode(-32600).is_available_to_applications());
/// assert!(ErrorCode(-32010).is_available_to_applications());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// -32700: the frame is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: the JSON is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: no route for the method.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: the params do not fit the route.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: the handler failed (it panicked, or its result could not be
    /// encoded).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000: the peer refused the request because too many are queued.
    pub const SERVER_OVERLOADED: ErrorCode = ErrorCode(-32000);
    /// -32001: the peer is closing and takes no new requests.
    pub const SERVER_CLOSING: ErrorCode = ErrorCode(-32001);
    /// -32002 (LSP): a request arrived before the handshake completed.
    pub const SERVER_NOT_INITIALIZED: ErrorCode = ErrorCode(-32002);
    /// -32800 (LSP): the request was cancelled.
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// -32801 (LSP): the content changed while the request ran.
    pub const CONTENT_MODIFIED: ErrorCode = ErrorCode(-32801);
    /// -32803 (LSP): the request failed although its params were valid.
    pub const REQUEST_FAILED: ErrorCode = ErrorCode(-32803);

    /// Returns true for the five codes JSON-RPC 2.0 predefines.
    pub const fn is_predefined(self) -> bool {
        matches!(self.0, -32700 | -32600 | -32601 | -32602 | -32603)
    }

    /// Returns true inside -32099..=-32000, the block JSON-RPC 2.0 leaves to
    /// implementations ("server error").
    pub const fn is_implementation_defined(self) -> bool {
        self.0 >= -32099 && self.0 <= -32000
    }

    /// Returns true for codes inside the block JSON-RPC 2.0 reserves,
    /// -32768..=-32000 (the predefined codes and the implementation band
    /// included).
    pub const fn is_reserved(self) -> bool {
        self.0 >= -32768 && self.0 <= -32000
    }

    /// Returns true when an application may map its own errors to this code:
    /// anything but the five predefined codes and -32768..=-32100 (the
    /// implementation band -32099..=-32000 is allowed).
    pub const fn is_available_to_applications(self) -> bool {
        !(self.is_predefined() || (self.0 >= -32768 && self.0 <= -32100))
    }

    /// The stage of a request's life that errors with this code come from.
    pub const fn stage(self) -> ErrorStage {
        match self.0 {
            -32700 | -32600 => ErrorStage::Parse,
            -32601 | -32602 | -32002 => ErrorStage::Dispatch,
            -32603 | -32800 => ErrorStage::Execution,
            c if c >= -32099 && c <= -32000 => ErrorStage::Execution,
            _ => ErrorStage::Application,
        }
    }

    /// The message JSON-RPC 2.0 suggests for a predefined code.
    pub(crate) const fn default_message(self) -> &'static str {
        match self.0 {
            -32700 => "Parse error",
            -32600 => "Invalid Request",
            -32601 => "Method not found",
            -32602 => "Invalid params",
            -32603 => "Internal error",
            _ => "Server error",
        }
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ErrorCode({})", self.0)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        ErrorCode(code)
    }
}

/// Where in a request's life an error arose.
///
/// Match on it to handle a whole class of failures at once.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{ErrorObject, ErrorStage};
///
/// let err = ErrorObject::invalid_params("missing field `a`");
/// assert_eq!(err.stage(), ErrorStage::Dispatch);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorStage {
    /// The frame could not be read as a request (-32700, -32600).
    Parse,
    /// The request was read but could not be routed: unknown method, params
    /// that do not fit, a handshake not yet done.
    Dispatch,
    /// The handler ran and failed: panicked, timed out, was cancelled, or the
    /// implementation refused it (-32603, -32099..=-32000, -32800).
    Execution,
    /// The handler returned one of its domain errors.
    Application,
}

/// The error object of a JSON-RPC response: `{"code", "message", "data"?}`.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{ErrorCode, ErrorObject};
///
/// let err = ErrorObject::new(-32010, "Negative input").with_data(&[1, 2]).unwrap();
/// assert_eq!(err.code, ErrorCode(-32010));
/// assert_eq!(
///     serde_json::to_string(&err).unwrap(),
///     r#"{"code":-32010,"message":"Negative input","data":[1,2]}"#
/// );
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description of the error.
    pub message: Cow<'static, str>,
    /// Further details, as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl ErrorObject {
    /// Builds an error with a code and a message and no data.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<Cow<'static, str>>) -> Self {
        ErrorObject {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`, serialized to JSON.
    ///
    /// # Errors
    ///
    /// Fails when `data` cannot be serialized (a map with non-string keys).
    pub fn with_data<T: Serialize + ?Sized>(mut self, data: &T) -> Result<Self, serde_json::Error> {
        self.data = Some(serde_json::value::to_raw_value(data)?);
        Ok(self)
    }

    /// Decodes the `data` member into `T`; `None` when there is no data.
    ///
    /// # Errors
    ///
    /// Fails when the data does not fit `T`.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>, serde_json::Error> {
        self.data
            .as_ref()
            .map(|d| serde_json::from_str(d.get()))
            .transpose()
    }

    /// The stage this error comes from, from its code.
    pub fn stage(&self) -> ErrorStage {
        self.code.stage()
    }

    /// -32700 with a detail message.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600 with a detail message.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// -32601 naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32602 with a detail message.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        )
    }

    /// -32603 with a detail message.
    pub fn internal_error(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }

    /// An error with one of the predefined codes and its standard message.
    pub(crate) fn standard(code: ErrorCode) -> Self {
        Self::new(code, code.default_message())
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// A domain error type that travels as a JSON-RPC error object, in both
/// directions.
///
/// Handlers return `Result<T, E>` with `E: RpcError`; the server turns an
/// `Err` into a wire error with [`into_error_object`](Self::into_error_object),
/// and a typed client turns a wire error back into `E` with
/// [`from_error_object`](Self::from_error_object) when its code is one of
/// `E`'s. Derive it with `#[derive(RpcError)]`, or implement it by hand.
///
/// [`ErrorObject`] implements it (every wire error is accepted as is), and so
/// does [`Infallible`] (no wire error is ever a domain error).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{ErrorObject, RpcError};
///
/// #[derive(Debug, PartialEq)]
/// struct Negative;
///
/// impl RpcError for Negative {
///     fn into_error_object(self) -> ErrorObject {
///         ErrorObject::new(-32010, "Negative input")
///     }
///     fn from_error_object(error: &ErrorObject) -> Option<Self> {
///         (error.code.0 == -32010).then_some(Negative)
///     }
/// }
///
/// let wire = Negative.into_error_object();
/// assert_eq!(Negative::from_error_object(&wire), Some(Negative));
/// ```
pub trait RpcError: Sized {
    /// Turns the error into the object sent on the wire.
    fn into_error_object(self) -> ErrorObject;

    /// Recognises a wire error as one of this type's values; `None` when the
    /// code is not one of this type's or its data does not decode.
    fn from_error_object(error: &ErrorObject) -> Option<Self>;
}

impl RpcError for ErrorObject {
    fn into_error_object(self) -> ErrorObject {
        self
    }

    fn from_error_object(error: &ErrorObject) -> Option<Self> {
        Some(error.clone())
    }
}

impl RpcError for Infallible {
    fn into_error_object(self) -> ErrorObject {
        match self {}
    }

    fn from_error_object(_: &ErrorObject) -> Option<Self> {
        None
    }
}

/// Why a connection ended.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CloseReason {
    /// This side closed it: `close`, `close_now`, or the last handle dropped.
    Local,
    /// The other side ended its stream cleanly.
    RemoteClosed,
    /// The transport failed.
    Transport(Arc<TransportError>),
    /// The other side asked this side to exit (LSP's `exit`): the process
    /// should exit with `code`.
    Exit {
        /// 0 when a shutdown came first, 1 otherwise.
        code: i32,
    },
}

impl CloseReason {
    /// The process exit code the close asks for: the `Exit` code, 0 for a
    /// clean end, 1 for a transport failure.
    pub fn exit_code(&self) -> i32 {
        match self {
            CloseReason::Exit { code } => *code,
            CloseReason::Transport(_) => 1,
            _ => 0,
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Local => f.write_str("the connection was closed locally"),
            CloseReason::RemoteClosed => f.write_str("the other side closed the connection"),
            CloseReason::Transport(e) => write!(f, "the transport failed: {e}"),
            CloseReason::Exit { code } => write!(f, "the other side asked to exit (code {code})"),
        }
    }
}

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
    /// The child process at the other end exited (its stdout ended, or it
    /// stopped reading its stdin): its exit status and what it wrote to
    /// stderr. See [`ChildProcess`](crate::ChildProcess).
    #[error("{0}")]
    ProcessExited(ProcessExit),
    /// The WebSocket connection failed: its handshake, a protocol violation,
    /// or a message over the size limit.
    #[error(transparent)]
    WebSocket(WebSocketError),
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
/// use jsonrpc_runtime::{ChildProcess, Config};
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
}

impl ProcessExit {
    /// How many bytes of a child's stderr are kept: 64 KiB.
    pub const STDERR_CAPTURE_LIMIT: usize = 64 * 1024;

    pub(crate) fn new(
        status: std::process::ExitStatus,
        stderr: String,
        stderr_truncated: bool,
    ) -> Self {
        ProcessExit {
            status,
            stderr,
            stderr_truncated,
        }
    }
}

impl fmt::Display for ProcessExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the child process exited ({})", self.status)?;
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
/// use jsonrpc_runtime::{CloseReason, TransportError};
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
    #[cfg_attr(not(feature = "websocket"), allow(dead_code))]
    pub(crate) fn new(
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

/// Why an outbound call failed. The caller always learns why.
///
/// `E` is the call's domain error type: a wire error whose code is one of
/// `E`'s comes back as [`CallError::Domain`]; any other wire error stays the
/// raw [`CallError::Rpc`], never rewritten.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{CallError, ErrorCode};
///
/// fn describe(err: &CallError) -> &'static str {
///     match err {
///         CallError::Rpc(e) if e.code == ErrorCode::METHOD_NOT_FOUND => "no such method",
///         CallError::Rpc(_) => "the peer answered with an error",
///         CallError::Closed(_) => "connection gone",
///         CallError::TimedOut => "too slow",
///         _ => "other",
///     }
/// }
/// # let _ = describe;
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum CallError<E = Infallible> {
    /// The peer answered with one of `E`'s errors.
    Domain(E),
    /// The peer answered with an error that is not one of `E`'s.
    Rpc(ErrorObject),
    /// The connection ended before the answer arrived.
    Closed(CloseReason),
    /// No answer within the request timeout.
    TimedOut,
    /// The call was cancelled before its answer arrived.
    Cancelled,
    /// The params could not be encoded, or do not encode to an object or an
    /// array as JSON-RPC requires.
    InvalidParams(serde_json::Error),
    /// The result did not decode into the expected type.
    InvalidResult(serde_json::Error),
    /// The peer's response was malformed (both `result` and `error`, say).
    InvalidResponse(ErrorObject),
    /// The id strategy produced an id already waiting for an answer.
    DuplicateId(Id),
}

impl<E> CallError<E> {
    /// The wire error, when the peer answered with one outside `E`.
    pub fn as_rpc(&self) -> Option<&ErrorObject> {
        match self {
            CallError::Rpc(e) => Some(e),
            _ => None,
        }
    }

    /// The domain error, when the peer answered with one of `E`'s.
    pub fn into_domain(self) -> Option<E> {
        match self {
            CallError::Domain(e) => Some(e),
            _ => None,
        }
    }
}

impl<E: fmt::Debug> fmt::Display for CallError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Domain(e) => write!(f, "the peer answered with a domain error: {e:?}"),
            CallError::Rpc(e) => write!(f, "the peer answered with an error: {e}"),
            CallError::Closed(reason) => write!(f, "no answer: {reason}"),
            CallError::TimedOut => f.write_str("no answer within the request timeout"),
            CallError::Cancelled => f.write_str("the call was cancelled"),
            CallError::InvalidParams(e) => write!(f, "the params could not be sent: {e}"),
            CallError::InvalidResult(e) => write!(f, "the result did not decode: {e}"),
            CallError::InvalidResponse(e) => write!(f, "the peer sent a malformed response: {e}"),
            CallError::DuplicateId(id) => write!(f, "the id {id} is already waiting for an answer"),
        }
    }
}

impl<E: fmt::Debug> std::error::Error for CallError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Rpc(e) | CallError::InvalidResponse(e) => Some(e),
            CallError::InvalidParams(e) | CallError::InvalidResult(e) => Some(e),
            CallError::Closed(CloseReason::Transport(e)) => Some(&**e),
            _ => None,
        }
    }
}

impl<E: RpcError + fmt::Debug> From<CallError<E>> for ErrorObject {
    /// Lets a handler pass a failed call on with `?`: an error answer travels
    /// on unchanged, anything else becomes -32603 describing the failure.
    fn from(error: CallError<E>) -> Self {
        match error {
            CallError::Domain(e) => e.into_error_object(),
            CallError::Rpc(e) => e,
            other => ErrorObject::internal_error(other),
        }
    }
}

/// Why a notification or a raw message could not be sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// The params could not be encoded, or do not encode to an object or an
    /// array as JSON-RPC requires.
    #[error("the params could not be sent: {0}")]
    InvalidParams(#[source] serde_json::Error),
    /// The connection is closed.
    #[error("not sent: {0}")]
    Closed(CloseReason),
}

impl<E> From<SendError> for CallError<E> {
    fn from(e: SendError) -> Self {
        match e {
            SendError::InvalidParams(e) => CallError::InvalidParams(e),
            SendError::Closed(r) => CallError::Closed(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_codes_exclude_predefined_and_reserved_block() {
        for code in [
            -32700, -32600, -32601, -32602, -32603, -32768, -32100, -32500,
        ] {
            assert!(!ErrorCode(code).is_available_to_applications(), "{code}");
        }
        for code in [-32099, -32000, -31999, -32800, 0, 1, 404] {
            assert!(ErrorCode(code).is_available_to_applications(), "{code}");
        }
    }
}
