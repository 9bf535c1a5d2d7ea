//! A connection's settings: [`Config`], with its presets for LSP and MCP,
//! the unknown-method policy and the id strategy.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::codec::{Framing, FramingCodec, DEFAULT_MAX_FRAME_LEN};
use crate::id::Id;
use crate::message::ErrorObject;
use crate::message::{
    Batches, Dialect, Extras, NullId, NullParams, ParamsShape, ParseOptions, Responses,
};
use crate::policy::{CancellationPolicy, Gate, Lifecycle, ProgressPolicy, SharedBudget};

mod strategies;

pub(crate) use self::strategies::IdKind;
pub use self::strategies::{IdStrategy, UnknownMethod};

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
/// use jsonrpc_runtime::config::UnknownMethod;
/// use jsonrpc_runtime::{Config, ErrorObject};
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
    #[doc(hidden)]
    pub max_frame_len: usize,
    pub(crate) unknown_method: UnknownMethod,
    #[doc(hidden)]
    pub gate: Option<GateFactory>,
    pub(crate) max_in_flight: Option<usize>,
    pub(crate) max_queued: usize,
    pub(crate) max_subscriptions: usize,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) callback_timeout: Option<Duration>,
    pub(crate) max_parked_bytes: usize,
    pub(crate) shared_budget: Option<SharedBudget>,
    pub(crate) id_strategy: IdStrategy,
    #[doc(hidden)]
    pub cancellation: Option<CancellationPolicy>,
    #[doc(hidden)]
    pub progress: Option<ProgressPolicy>,
    pub(crate) progress_resets_timeout: bool,
    pub(crate) lifecycle: Option<Lifecycle>,
    pub(crate) ping: Option<std::borrow::Cow<'static, str>>,
    pub(crate) outbound_budget: usize,
    pub(crate) extras: Extras,
    pub(crate) extras_for: Option<ExtrasFn>,
    pub(crate) skip_blank_lines: bool,
}

type ExtrasFn = Arc<dyn Fn(&Id) -> Extras + Send + Sync>;

/// The default [`Config::max_parked_bytes`]: 64 MiB.
pub const DEFAULT_MAX_PARKED_BYTES: usize = 64 << 20;

/// The default [`Config::callback_timeout`]: 5 minutes.
pub const DEFAULT_CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// The default [`Config::max_subscriptions`]: 1,024.
pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

/// The default [`Config::outbound_budget`]: 1 MiB.
pub const DEFAULT_OUTBOUND_BUDGET: usize = 1024 * 1024;

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
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            request_timeout: None,
            callback_timeout: Some(DEFAULT_CALLBACK_TIMEOUT),
            max_parked_bytes: DEFAULT_MAX_PARKED_BYTES,
            shared_budget: None,
            id_strategy: IdStrategy::sequential(),
            cancellation: None,
            progress: None,
            progress_resets_timeout: false,
            lifecycle: None,
            ping: None,
            outbound_budget: DEFAULT_OUTBOUND_BUDGET,
            extras: Extras::new(),
            extras_for: None,
            skip_blank_lines: false,
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
            .field("max_subscriptions", &self.max_subscriptions)
            .field("request_timeout", &self.request_timeout)
            .field("callback_timeout", &self.callback_timeout)
            .field("max_parked_bytes", &self.max_parked_bytes)
            .field("shared_budget", &self.shared_budget)
            .field("id_strategy", &self.id_strategy)
            .field("cancellation", &self.cancellation)
            .field("progress", &self.progress)
            .field("progress_resets_timeout", &self.progress_resets_timeout)
            .field("lifecycle", &self.lifecycle)
            .field("ping", &self.ping)
            .field("outbound_budget", &self.outbound_budget)
            .field("extras", &self.extras)
            .field("extras_for", &self.extras_for.as_ref().map(|_| ".."))
            .field("skip_blank_lines", &self.skip_blank_lines)
            .finish_non_exhaustive()
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
    /// use jsonrpc_runtime::Config;
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
    /// A line is classified by the MCP server's nine rules, which differ
    /// from plain JSON-RPC 2.0 in three places: a null id is refused -32600
    /// (id null) before any other rule, responses included
    /// ([`NullId::RefuseAll`]); params must be an object, absent params
    /// reach the handler as `{}`, and an array is -32602 for a request while
    /// a notification runs with `{}` ([`ParamsShape::Object`]); and a message
    /// with no `method` but a `result` or an `error` is the client's response
    /// and is never answered, however malformed ([`Responses::NeverAnswered`]).
    /// [`Config::mcp_client`] keeps the default for the last and refuses null
    /// ids on requests only.
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
            .null_id(NullId::RefuseAll)
            .null_params(NullParams::Refuse)
            .params_shape(ParamsShape::Object)
            .responses(Responses::NeverAnswered)
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
        // A server's error answer to an unreadable message carries a null
        // id; a client takes it as a response (and answers no response).
        .null_id(NullId::Refuse)
        .responses(Responses::Checked)
    }

    /// A session lifecycle (handshake, shutdown, exit); default none.
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = Some(lifecycle);
        self
    }

    /// This config without its lifecycle and its `ping` answer: for the
    /// peer that serves an MCP server's stateless requests (2026-07-28),
    /// which have no handshake and no `ping`.
    #[doc(hidden)]
    pub fn stateless(mut self) -> Self {
        self.lifecycle = None;
        self.ping = None;
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

    /// The most elements a batch may hold (default
    /// [`DEFAULT_MAX_BATCH_LEN`](crate::message::DEFAULT_MAX_BATCH_LEN),
    /// 1,000). A longer batch is answered with one -32600 error and none of
    /// its elements runs; its answers, however many, are also bounded by the
    /// [outbound budget](Config::outbound_budget).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default().max_batch_len(100);
    /// assert_eq!(config.parse_options().max_batch_len, 100);
    /// ```
    pub fn max_batch_len(mut self, len: usize) -> Self {
        self.parse.max_batch_len = len;
        self
    }

    /// Serve or refuse requests with `"id": null` (default serve).
    pub fn null_id(mut self, null_id: NullId) -> Self {
        self.parse.null_id = null_id;
        self
    }

    /// Objects and arrays as params, or objects only with `{}` for absent
    /// params (default objects and arrays; [`Config::mcp`] takes objects
    /// only).
    pub fn params_shape(mut self, shape: ParamsShape) -> Self {
        self.parse.params = shape;
        self
    }

    /// Whether malformed responses are answered -32600 or never answered
    /// (default answered; [`Config::mcp`] never answers them).
    pub fn responses(mut self, responses: Responses) -> Self {
        self.parse.responses = responses;
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

    /// Whether newline-delimited transports built from this config skip
    /// lines that hold only whitespace (default false: an empty line is
    /// answered with a parse error). See
    /// [`LineCodec::skip_blank_lines`](crate::codec::LineCodec::skip_blank_lines).
    pub fn skip_blank_lines(mut self, skip: bool) -> Self {
        self.skip_blank_lines = skip;
        self
    }

    /// The framer this config describes ([`framing`](Self::framing),
    /// [`max_frame_len`](Self::max_frame_len),
    /// [`skip_blank_lines`](Self::skip_blank_lines)), for a transport:
    /// every transport that frames a byte stream takes one (a `&Config`
    /// converts too).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::FramingCodec;
    /// use jsonrpc_runtime::Config;
    ///
    /// assert!(matches!(Config::lsp().codec(), FramingCodec::ContentLength(_)));
    /// let codec: FramingCodec = (&Config::mcp()).into();
    /// assert!(matches!(codec, FramingCodec::Lines(_)));
    /// ```
    pub fn codec(&self) -> FramingCodec {
        match self.framing.codec(self.max_frame_len) {
            FramingCodec::Lines(lines) => {
                FramingCodec::Lines(lines.skip_blank_lines(self.skip_blank_lines))
            }
            other => other,
        }
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
    /// dropped. Short for a [`Lifecycle::new`] with nothing else; build the
    /// [`Lifecycle`] to let some methods through before the handshake.
    pub fn require_handshake(self, method: &str, rejection: ErrorObject) -> Self {
        self.lifecycle(Lifecycle::new(method.to_owned(), rejection))
    }

    /// At most `n` inbound requests run at once; more wait their turn.
    ///
    /// Responses and notifications are read regardless. A handler that is
    /// waiting for the answer to a call it made on this connection (through
    /// [`Context::peer`](crate::Context::peer)) does not count while it
    /// waits, so when the other side must first make requests of its own to
    /// answer it (a callback calling back), those are served: call-backs
    /// nested to any depth cannot deadlock on the cap. Work a handler hands
    /// to another task does not get this exemption.
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

    /// At most `n` subscriptions may be open (or being opened) on one
    /// connection at once (default [`DEFAULT_MAX_SUBSCRIPTIONS`], 1,024).
    /// A subscribe request past that is answered with -32000 "server
    /// overloaded", naming the cap; `0` refuses every subscription.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default().max_subscriptions(64);
    /// # let _ = config;
    /// ```
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n;
        self
    }

    /// Inbound requests waiting or running on this connection may hold at
    /// most `bytes` of params in all (default [`DEFAULT_MAX_PARKED_BYTES`],
    /// 64 MiB; a request's bytes are the length of its params as received).
    /// A request past that is answered at once with -32000 "server
    /// overloaded"; one request on its own is always let through.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default().max_parked_bytes(16 << 20);
    /// # let _ = config;
    /// ```
    pub fn max_parked_bytes(mut self, bytes: usize) -> Self {
        self.max_parked_bytes = bytes;
        self
    }

    /// Counts this connection's inbound requests (and the bytes of their
    /// params) in `budget` as well, which every connection given the same
    /// budget shares: a cap across a whole server (see [`SharedBudget`]).
    pub fn shared_budget(mut self, budget: SharedBudget) -> Self {
        self.shared_budget = Some(budget);
        self
    }

    /// Outbound calls fail with [`CallError::TimedOut`](crate::CallError::TimedOut)
    /// when no answer arrives within `timeout` (default: no timeout).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }

    /// Calls a handler makes back to the other side (through
    /// [`Context::peer`](crate::Context::peer)) fail with
    /// [`CallError::TimedOut`](crate::CallError::TimedOut) when no answer
    /// arrives within `timeout` (default [`DEFAULT_CALLBACK_TIMEOUT`], five
    /// minutes; `None`: wait as long as the connection lives). A call's own
    /// timeout, then [`request_timeout`](Config::request_timeout), take
    /// precedence.
    ///
    /// A client that never answers would otherwise hold the handler, its
    /// request's slot and its memory for as long as the connection lives.
    /// Five minutes leaves room for a person to answer a prompt (LSP's
    /// `window/showMessageRequest`, MCP elicitation).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default().callback_timeout(Duration::from_secs(30));
    /// let patient = Config::default().callback_timeout(None);
    /// # let _ = (config, patient);
    /// ```
    pub fn callback_timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.callback_timeout = timeout.into();
        self
    }

    /// How outbound request ids are made (default sequential from 1).
    pub fn id_strategy(mut self, strategy: IdStrategy) -> Self {
        self.id_strategy = strategy;
        self
    }

    /// How cancellation travels (default: none, so
    /// [`Peer::cancel`](crate::Peer::cancel) fails with
    /// [`SendError::NoCancellationPolicy`](crate::peer::SendError::NoCancellationPolicy),
    /// a call given up on is given up locally only, and an inbound
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

    /// How many bytes of outbound frames may wait for the transport (default
    /// [`DEFAULT_OUTBOUND_BUDGET`], 1 MiB).
    ///
    /// When the other side reads slower than this side writes, frames queue
    /// up to this budget; past it, this side stops reading new messages,
    /// request handlers wait to queue their answers, and
    /// [`Peer::call`](crate::Peer::call) and
    /// [`Peer::notify`](crate::Peer::notify) wait for room, so the other
    /// side's writes stall in the transport instead of growing this side's
    /// memory. Progress reports are not waited for: one that finds the
    /// budget spent fails with [`SendError::Full`](crate::peer::SendError::Full).
    /// One frame larger than the budget is still written whole.
    ///
    /// # Panics
    ///
    /// Panics if `bytes` is zero.
    #[track_caller]
    pub fn outbound_budget(mut self, bytes: usize) -> Self {
        assert!(bytes > 0, "the outbound budget must be at least 1 byte");
        self.outbound_budget = bytes;
        self
    }

    /// Top-level members added to every request and notification this side
    /// sends (a session id, a client name), unless a call gives its own with
    /// [`CallOptions::extras`](crate::peer::CallOptions::extras).
    ///
    /// # Panics
    ///
    /// Panics if a member is one the envelope owns: `jsonrpc`, `id`,
    /// `method`, `params`, `result` or `error`.
    #[track_caller]
    pub fn extras(mut self, extras: Extras) -> Self {
        if let Some(reserved) = extras
            .keys()
            .find(|k| crate::message::is_reserved_member(k))
        {
            panic!("the extra member `{reserved}` is part of the JSON-RPC envelope; choose another name");
        }
        self.extras = extras;
        self
    }

    /// Top-level members computed for each outbound request from its id (a
    /// trace id derived from the request, say), added to those of
    /// [`extras`](Config::extras) (a computed member wins over a fixed one of
    /// the same name); a call that gives its own with
    /// [`CallOptions::extras`](crate::peer::CallOptions::extras) uses only those.
    /// A member the envelope owns makes the call fail with
    /// [`CallError::InvalidParams`](crate::CallError::InvalidParams).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::message::Extras;
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default().extras_for(|id| {
    ///     let mut extras = Extras::new();
    ///     extras.insert("traceId".into(), format!("trace-{id}").into());
    ///     extras
    /// });
    /// # let _ = config;
    /// ```
    pub fn extras_for(mut self, extras: impl Fn(&Id) -> Extras + Send + Sync + 'static) -> Self {
        self.extras_for = Some(Arc::new(extras));
        self
    }

    /// The extras of the outbound request `id`: the call's own, or the
    /// config's fixed and computed ones.
    pub(crate) fn request_extras<'a>(
        &'a self,
        id: &Id,
        given: Option<&'a Extras>,
    ) -> std::borrow::Cow<'a, Extras> {
        match (given, &self.extras_for) {
            (Some(given), _) => std::borrow::Cow::Borrowed(given),
            (None, None) => std::borrow::Cow::Borrowed(&self.extras),
            (None, Some(compute)) => {
                let mut extras = self.extras.clone();
                extras.extend(compute(id));
                std::borrow::Cow::Owned(extras)
            }
        }
    }

    /// The classification rules in force.
    pub fn parse_options(&self) -> ParseOptions {
        self.parse
    }
}

impl From<&Config> for FramingCodec {
    fn from(config: &Config) -> Self {
        config.codec()
    }
}
