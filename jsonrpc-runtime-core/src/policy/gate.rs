//! Gates: checks on every inbound message before it is routed.

use crate::connection::ConnectionInfo;
use crate::id::Id;
use crate::message::ErrorObject;

/// An inbound message as a [`Gate`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct GateInput<'a> {
    /// The method name.
    pub method: &'a str,
    /// The request id; `None` for a notification.
    pub id: Option<&'a Id>,
    /// Who is calling (see [`ConnectionInfo`]): a gate can allow methods by
    /// the state a listener's `on_connect` hook
    /// attached.
    pub connection: &'a ConnectionInfo,
}

/// A gate's verdict on one inbound message.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Decision {
    /// Route it.
    Allow,
    /// Answer a request with this error without routing it (a notification
    /// is dropped).
    Reject(ErrorObject),
    /// Drop it without an answer.
    Drop,
}

/// A check that runs on every inbound request and notification before it is
/// routed: authentication, rate limits, protocol handshakes.
///
/// A gate is built per connection (see [`Config::gate`](crate::Config::gate)), so it may keep
/// per-connection state.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::policy::{Decision, Gate, GateInput};
/// use jsonrpc_runtime::{Config, ErrorObject};
///
/// struct ReadOnly;
///
/// impl Gate for ReadOnly {
///     fn check(&self, input: GateInput<'_>) -> Decision {
///         if input.method.starts_with("write/") {
///             Decision::Reject(ErrorObject::new(-32050, "read-only connection"))
///         } else {
///             Decision::Allow
///         }
///     }
/// }
///
/// let config = Config::default().gate(|| ReadOnly);
/// # let _ = config;
/// ```
pub trait Gate: Send + Sync + 'static {
    /// Decides what happens to one inbound message.
    fn check(&self, input: GateInput<'_>) -> Decision;

    /// Told when a request this gate allowed has been answered, and whether
    /// the answer was a success.
    fn answered(&self, method: &str, success: bool) {
        let _ = (method, success);
    }
}
