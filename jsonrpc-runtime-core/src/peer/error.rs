//! What callers see: why a call or a send failed, and why a connection ended.

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;

use crate::id::Id;
use crate::message::{ErrorCode, ErrorObject, RpcError};
use crate::transport::TransportError;

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
    /// The peer answered with an error that is not one of `E`'s, or the
    /// transport failed the call
    /// ([`ErrorCode::TRANSPORT_FAILED`](crate::ErrorCode::TRANSPORT_FAILED),
    /// -32100: a `POST` answered with a non-2xx status, a connection that
    /// could not be opened). A transport failure is never a `Domain` error,
    /// even for an `E` that takes every code such as [`ErrorObject`]: it
    /// did not come from the method.
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
    /// A message could not be sent for another reason (a notification sent
    /// with `?` in a function that returns `CallError`).
    NotSent(SendError),
    /// The connection was lost after the call was sent and before its
    /// answer came: the other side may or may not have run it. A
    /// [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer) never sends
    /// it again by itself.
    Interrupted(CloseReason),
    /// A [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer) had no
    /// connection (and was not asked to wait for one, or waited its time):
    /// the call was never sent. Carries the last failure to connect, if
    /// there was one.
    NotConnected(Option<Arc<TransportError>>),
    /// A layer of the config's
    /// [`outbound_layer`](crate::PeerBuilder::outbound_layer) stack failed the
    /// call with an error of its own (a rate limit, a circuit breaker).
    Layer(Box<dyn std::error::Error + Send + Sync>),
}

impl<E: RpcError> CallError<E> {
    /// The error an error answer becomes: one of `E`'s, unless it is not
    /// one of them or a transport failure made up on this side.
    pub(crate) fn from_answer(error: ErrorObject) -> Self {
        if error.code == ErrorCode::TRANSPORT_FAILED {
            return CallError::Rpc(error);
        }
        match E::from_error_object(&error) {
            Some(domain) => CallError::Domain(domain),
            None => CallError::Rpc(error),
        }
    }
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
            CallError::NotSent(e) => fmt::Display::fmt(e, f),
            CallError::Layer(e) => write!(f, "an outbound layer failed the call: {e}"),
            CallError::Interrupted(reason) => write!(
                f,
                "the connection was lost before the answer came ({reason}): \
                 the call may or may not have run"
            ),
            CallError::NotConnected(Some(e)) => write!(f, "not sent: not connected ({e})"),
            CallError::NotConnected(None) => f.write_str("not sent: not connected"),
        }
    }
}

impl<E: fmt::Debug> std::error::Error for CallError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CallError::Rpc(e) | CallError::InvalidResponse(e) => Some(e),
            CallError::InvalidParams(e) | CallError::InvalidResult(e) => Some(e),
            CallError::Closed(CloseReason::Transport(e))
            | CallError::Interrupted(CloseReason::Transport(e))
            | CallError::NotConnected(Some(e)) => Some(&**e),
            CallError::NotSent(e) => Some(e),
            CallError::Layer(e) => Some(&**e),
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

/// Why a notification, a progress report, a cancellation or a raw message
/// was not sent.
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
    /// The outbound budget is spent: the other side is not reading as fast
    /// as this side writes. Only progress reports fail this way (they are
    /// advisory, and the next report carries newer news); everything else
    /// waits for room. See
    /// [`Config::outbound_budget`](crate::Config::outbound_budget).
    #[error("not sent: the outbound budget is spent (the other side is not reading)")]
    Full,
    /// The connection has no cancellation policy, so nothing can tell the
    /// other side to stop: nothing was sent and the call keeps waiting. Set
    /// one with [`Config::cancellation`](crate::Config::cancellation).
    #[error(
        "not sent: the connection has no cancellation policy, so the other side cannot be told"
    )]
    NoCancellationPolicy,
}

impl From<SendError> for ErrorObject {
    /// Lets a handler pass a failed send on with `?`, as -32603.
    fn from(error: SendError) -> Self {
        ErrorObject::internal_error(error)
    }
}

impl<E> From<SendError> for CallError<E> {
    fn from(e: SendError) -> Self {
        match e {
            SendError::InvalidParams(e) => CallError::InvalidParams(e),
            SendError::Closed(reason) => CallError::Closed(reason),
            other => CallError::NotSent(other),
        }
    }
}
