//! Per-connection policies.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::codec::{Framing, DEFAULT_MAX_FRAME_LEN};
use crate::error::ErrorObject;
use crate::id::Id;
use crate::message::{Batches, Dialect, NullId, NullParams, ParseOptions};
use crate::policy::{CancellationPolicy, Lifecycle, ProgressPolicy};

type MethodFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;
type GateFactory = Arc<dyn Fn() -> Box<dyn Gate> + Send + Sync>;

/// The policies of one connection.
///
/// Start from [`Config::default`] (plain JSON-RPC 2.0: strict envelopes,
/// batches served, newline framing, no timeout, no in-flight cap) and change
/// what your protocol needs. Setters take and return `self`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::{Config, ErrorObject, UnknownMethod};
///
/// let config = Config::default()
///     .max_in_flight(64)
///     .request_timeout(Duration::from_secs(30))
///     .unknown_method(UnknownMethod::minimal().ignoring(|name| name.starts_with("$/")))
///     .require_handshake("initialize", ErrorObject::new(-32002, "Server not initialized"));
/// # let _ = config;
/// ```
#[derive(Clone)]
pub struct Config {
    pub(crate) parse: ParseOptions,
    pub(crate) framing: Framing,
    pub(crate) max_frame_len: usize,
    pub(crate) unknown_method: UnknownMethod,
    pub(crate) gate: Option<GateFactory>,
    pub(crate) max_in_flight: Option<usize>,
    pub(crate) max_queued: usize,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) id_strategy: IdStrategy,
    pub(crate) cancellation: Option<CancellationPolicy>,
    pub(crate) progress: Option<ProgressPolicy>,
    pub(crate) progress_resets_timeout: bool,
    pub(crate) lifecycle: Option<Lifecycle>,
    pub(crate) ping: Option<std::borrow::Cow<'static, str>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            parse: ParseOptions::default(),
            framing: Framing::NewlineDelimited,
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            unknown_method: UnknownMethod::minimal(),
            gate: None,
            max_in_flight: None,
            max_queued: 65_536,
            request_timeout: None,
            id_strategy: IdStrategy::Sequential,
            cancellation: None,
            progress: None,
            progress_resets_timeout: false,
            lifecycle: None,
            ping: None,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("parse", &self.parse)
            .field("framing", &self.framing)
            .field("max_frame_len", &self.max_frame_len)
            .field("unknown_method", &self.unknown_method)
            .field("gate", &self.gate.as_ref().map(|_| ".."))
            .field("max_in_flight", &self.max_in_flight)
            .field("max_queued", &self.max_queued)
            .field("request_timeout", &self.request_timeout)
            .field("id_strategy", &self.id_strategy)
            .field("cancellation", &self.cancellation)
            .field("progress", &self.progress)
            .field("progress_resets_timeout", &self.progress_resets_timeout)
            .field("lifecycle", &self.lifecycle)
            .field("ping", &self.ping)
            .finish()
    }
}

impl Config {
    /// The Language Server Protocol's rules: `Content-Length` framing,
    /// `$/cancelRequest` answered with -32800, `$/progress` on
    /// `workDoneToken`/`partialResultToken`, unknown `$/` notifications
    /// ignored (unknown `$/` requests still get -32601), and the
    /// [`Lifecycle::lsp`] handshake: requests before `initialize` refused with
    /// -32002 (`exit` excepted), `initialize` at most once, requests after
    /// `shutdown` refused with -32600, and `exit` ending the connection with
    /// code 0 after `shutdown`, else 1.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Config, Framing};
    ///
    /// let config = Config::lsp();
    /// # let _ = config;
    /// ```
    pub fn lsp() -> Self {
        Config::default()
            .framing(Framing::ContentLength)
            .cancellation(CancellationPolicy::lsp())
            .progress(ProgressPolicy::lsp())
            .unknown_method(UnknownMethod::minimal().ignoring(|name| name.starts_with("$/")))
            .lifecycle(Lifecycle::lsp())
    }

    /// The Model Context Protocol's rules: newline-delimited framing,
    /// batches refused, `null` ids and `"params": null` refused,
    /// `notifications/cancelled` with no answer (and `initialize` never
    /// cancelled), `notifications/progress` with increasing `progress`, the
    /// [`Lifecycle::mcp`] handshake, and `ping` answered `{}` at any time
    /// (unless a route claims it). Unknown methods get -32601 and the session
    /// stays usable.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::mcp();
    /// # let _ = config;
    /// ```
    pub fn mcp() -> Self {
        Config::default()
            .framing(Framing::NewlineDelimited)
            .batches(Batches::Refuse)
            .null_id(NullId::Refuse)
            .null_params(NullParams::Refuse)
            .cancellation(CancellationPolicy::mcp())
            .progress(ProgressPolicy::mcp())
            .lifecycle(Lifecycle::mcp())
            .answer_ping("ping")
    }

    /// The client side of [`Config::lsp`]: the same framing, cancellation,
    /// progress and unknown-method rules, but no lifecycle gate (a client
    /// never receives `initialize`; the server's requests, such as
    /// `workspace/configuration`, must get through).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::lsp_client();
    /// # let _ = config;
    /// ```
    pub fn lsp_client() -> Self {
        Config {
            lifecycle: None,
            ..Config::lsp()
        }
    }

    /// The client side of [`Config::mcp`]: the same wire rules and `ping`
    /// answer, without the lifecycle gate.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::mcp_client();
    /// # let _ = config;
    /// ```
    pub fn mcp_client() -> Self {
        Config {
            lifecycle: None,
            ..Config::mcp()
        }
    }

    /// A session lifecycle (handshake, shutdown, exit); default none.
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = Some(lifecycle);
        self
    }

    /// Answers requests for `method` with `{}` when no route claims it, at
    /// any point of the lifecycle: a liveness check.
    pub fn answer_ping(mut self, method: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        self.ping = Some(method.into());
        self
    }

    /// Strict or lenient envelopes (default strict).
    pub fn dialect(mut self, dialect: Dialect) -> Self {
        self.parse.dialect = dialect;
        self
    }

    /// Serve or refuse batches (default serve).
    pub fn batches(mut self, batches: Batches) -> Self {
        self.parse.batches = batches;
        self
    }

    /// Serve or refuse requests with `"id": null` (default serve).
    pub fn null_id(mut self, null_id: NullId) -> Self {
        self.parse.null_id = null_id;
        self
    }

    /// Read `"params": null` on a request as absent, or refuse it (default
    /// absent).
    pub fn null_params(mut self, null_params: NullParams) -> Self {
        self.parse.null_params = null_params;
        self
    }

    /// The framing used by transports built from this config, such as
    /// [`Transport::stdio`](crate::Transport::stdio) (default
    /// newline-delimited).
    pub fn framing(mut self, framing: Framing) -> Self {
        self.framing = framing;
        self
    }

    /// The largest inbound frame in bytes (default 8 MiB). A longer one is
    /// answered with an error and skipped.
    pub fn max_frame_len(mut self, max_frame_len: usize) -> Self {
        self.max_frame_len = max_frame_len;
        self
    }

    /// What to do with methods that have no route.
    pub fn unknown_method(mut self, policy: UnknownMethod) -> Self {
        self.unknown_method = policy;
        self
    }

    /// Installs a gate, built afresh for each connection by `make`, that sees
    /// every inbound request and notification before it is routed.
    pub fn gate<G, F>(mut self, make: F) -> Self
    where
        G: Gate,
        F: Fn() -> G + Send + Sync + 'static,
    {
        self.gate = Some(Arc::new(move || Box::new(make()) as Box<dyn Gate>));
        self
    }

    /// Refuses every request with `rejection` until a request for `method`
    /// has been answered successfully once; notifications before then are
    /// dropped. See [`Handshake`] to let some methods through.
    pub fn require_handshake(self, method: &str, rejection: ErrorObject) -> Self {
        let gate = Handshake::new(method, rejection);
        self.gate(move || gate.clone())
    }

    /// At most `n` inbound requests run at once; more wait their turn.
    ///
    /// Responses and notifications are read regardless, so a handler that
    /// calls the other side while the cap is reached cannot deadlock.
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero.
    #[track_caller]
    pub fn max_in_flight(mut self, n: usize) -> Self {
        assert!(n > 0, "max_in_flight must be at least 1");
        self.max_in_flight = Some(n);
        self
    }

    /// At most `n` inbound requests may be waiting or running at once
    /// (default 65,536). A request past that is answered at once with
    /// -32000 "server overloaded", so a flood cannot grow memory without
    /// bound. Notifications past that make the reader wait.
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero.
    #[track_caller]
    pub fn max_queued(mut self, n: usize) -> Self {
        assert!(n > 0, "max_queued must be at least 1");
        self.max_queued = n;
        self
    }

    /// Outbound calls fail with [`CallError::TimedOut`](crate::CallError::TimedOut)
    /// when no answer arrives within `timeout` (default: no timeout).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// How outbound request ids are made (default sequential from 1).
    pub fn id_strategy(mut self, strategy: IdStrategy) -> Self {
        self.id_strategy = strategy;
        self
    }

    /// How cancellation travels (default: none, so
    /// [`Peer::cancel`](crate::Peer::cancel) sends nothing and an inbound
    /// cancellation is an ordinary notification).
    pub fn cancellation(mut self, policy: CancellationPolicy) -> Self {
        self.cancellation = Some(policy);
        self
    }

    /// How progress travels (default: none, so
    /// [`Context::progress`](crate::Context::progress) sends nothing).
    pub fn progress(mut self, policy: ProgressPolicy) -> Self {
        self.progress = Some(policy);
        self
    }

    /// Whether a progress report for an outbound call restarts its timeout
    /// (default false), so long work that keeps reporting is not cut off.
    pub fn progress_resets_timeout(mut self, resets: bool) -> Self {
        self.progress_resets_timeout = resets;
        self
    }

    /// The classification rules in force.
    pub fn parse_options(&self) -> ParseOptions {
        self.parse
    }
}

/// What to do with a method that has no route.
///
/// Requests whose names start with `rpc.` are reserved by JSON-RPC 2.0 and
/// are answered -32601 unless a route claims them.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::UnknownMethod;
///
/// // LSP: notifications such as `$/setTrace` may be ignored silently.
/// let policy = UnknownMethod::strict().ignoring(|name| name.starts_with("$/"));
/// # let _ = policy;
/// ```
#[derive(Clone)]
pub struct UnknownMethod {
    pub(crate) refuse_notifications: bool,
    pub(crate) ignore: Option<MethodFilter>,
}

impl UnknownMethod {
    /// Requests get -32601; notifications are dropped. The default.
    pub fn minimal() -> Self {
        UnknownMethod {
            refuse_notifications: false,
            ignore: None,
        }
    }

    /// Requests get -32601; notifications are refused too, with a -32601
    /// error response carrying id `null` (JSON-RPC 2.0 never answers
    /// notifications, so use this only with peers that expect it).
    pub fn strict() -> Self {
        UnknownMethod {
            refuse_notifications: true,
            ignore: None,
        }
    }

    /// Unknown notifications whose name matches `predicate` are always
    /// dropped silently, whatever the policy says for the others.
    pub fn ignoring(mut self, predicate: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.ignore = Some(Arc::new(predicate));
        self
    }

    pub(crate) fn refuses_notification(&self, method: &str) -> bool {
        self.refuse_notifications && !self.ignore.as_ref().is_some_and(|ignore| ignore(method))
    }
}

impl fmt::Debug for UnknownMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownMethod")
            .field("refuse_notifications", &self.refuse_notifications)
            .field("ignore", &self.ignore.as_ref().map(|_| ".."))
            .finish()
    }
}

/// How outbound request ids are made.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum IdStrategy {
    /// 1, 2, 3, … as integers (u64). The default.
    #[default]
    Sequential,
    /// 1, 2, 3, … up to `i32::MAX`, then 1 again, for peers that store ids
    /// in 32 bits.
    SequentialI32,
    /// Ids from a generator, for peers that want strings or their own scheme.
    /// An id still waiting for its answer is never reused: the call fails with
    /// [`CallError::DuplicateId`](crate::CallError::DuplicateId) instead.
    Custom(Arc<dyn Fn() -> Id + Send + Sync>),
}

impl IdStrategy {
    /// A strategy that calls `generate` for each id.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use jsonrpc_runtime::{Config, Id, IdStrategy};
    ///
    /// let next = AtomicU64::new(0);
    /// let strategy = IdStrategy::custom(move || {
    ///     Id::from(format!("req-{}", next.fetch_add(1, Ordering::Relaxed)))
    /// });
    /// let config = Config::default().id_strategy(strategy);
    /// # let _ = config;
    /// ```
    pub fn custom(generate: impl Fn() -> Id + Send + Sync + 'static) -> Self {
        IdStrategy::Custom(Arc::new(generate))
    }
}

impl fmt::Debug for IdStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdStrategy::Sequential => f.write_str("Sequential"),
            IdStrategy::SequentialI32 => f.write_str("SequentialI32"),
            IdStrategy::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}

/// An inbound message as a [`Gate`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct GateInput<'a> {
    /// The method name.
    pub method: &'a str,
    /// The request id; `None` for a notification.
    pub id: Option<&'a Id>,
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
/// A gate is built per connection (see [`Config::gate`]), so it may keep
/// per-connection state.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Config, Decision, ErrorObject, Gate, GateInput};
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

/// The gate behind [`Config::require_handshake`]: every request is refused
/// until one request for the handshake method has been answered
/// successfully; notifications before then are dropped, except the ones
/// named with [`Handshake::allow`].
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Config, ErrorObject, Handshake};
///
/// let handshake = Handshake::new("initialize", ErrorObject::new(-32002, "Server not initialized"))
///     .allow("exit");
/// let config = Config::default().gate(move || handshake.clone());
/// # let _ = config;
/// ```
#[derive(Debug)]
pub struct Handshake {
    method: Arc<str>,
    rejection: ErrorObject,
    allowed: Arc<[Arc<str>]>,
    done: AtomicBool,
}

impl Handshake {
    /// A gate that waits for `method` and refuses requests with `rejection`
    /// until then.
    pub fn new(method: &str, rejection: ErrorObject) -> Self {
        Handshake {
            method: method.into(),
            rejection,
            allowed: Arc::new([]),
            done: AtomicBool::new(false),
        }
    }

    /// Lets `method` through before the handshake too.
    pub fn allow(mut self, method: &str) -> Self {
        let mut allowed = self.allowed.to_vec();
        allowed.push(method.into());
        self.allowed = allowed.into();
        self
    }
}

impl Clone for Handshake {
    /// A copy for a new connection: the handshake starts over.
    fn clone(&self) -> Self {
        Handshake {
            method: self.method.clone(),
            rejection: self.rejection.clone(),
            allowed: self.allowed.clone(),
            done: AtomicBool::new(false),
        }
    }
}

impl Gate for Handshake {
    fn check(&self, input: GateInput<'_>) -> Decision {
        if self.done.load(Ordering::Acquire)
            || *input.method == *self.method
            || self.allowed.iter().any(|m| **m == *input.method)
        {
            return Decision::Allow;
        }
        match input.id {
            Some(_) => Decision::Reject(self.rejection.clone()),
            None => Decision::Drop,
        }
    }

    fn answered(&self, method: &str, success: bool) {
        if success && *method == *self.method {
            self.done.store(true, Ordering::Release);
        }
    }
}
