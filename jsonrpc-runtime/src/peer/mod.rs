//! The peer: one connection, both ends at once.
//!
//! A peer owns one transport. Its reader task decodes frames and routes
//! them; its writer task owns the sink, writes every outbound frame in queue
//! order and flushes when the queue runs dry, so a burst shares one flush.
//! Outbound calls wait in a table keyed by id, registered before their frame
//! is written. Inbound requests run concurrently as their own tasks; inbound
//! notifications run one at a time, in arrival order, on a worker task, and a
//! request starts only after the notifications that arrived before it have
//! been handled. The reader never waits for a handler, so responses to calls
//! a handler makes are always read: a handler that calls back into the other
//! side cannot deadlock, also at the in-flight cap.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch, Notify, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, Gate, IdStrategy};
use crate::error::{CallError, CloseReason, RpcError, SendError};
use crate::id::Id;
use crate::message::{Dialect, Extras};
use crate::policy::ProgressPolicy;
use crate::router::Router;
use crate::transport::Transport;

mod pending;
mod progress;
mod reader;
mod writer;

use self::pending::{Outcome, PendingTable, RegisterError, TypedSlot};
pub use self::progress::ProgressCall;
pub(crate) use self::progress::ProgressSink;
use self::progress::ProgressSubscriptions;
pub(crate) use self::reader::RequestJob;

/// A handle to one JSON-RPC connection.
///
/// Every peer is both ends at once: it serves the routes it was built with
/// and can call and notify the other side. Handles are cheap to clone; the
/// connection closes when the last handle (including the ones held by running
/// handlers) is dropped, when [`close`](Peer::close) or
/// [`close_now`](Peer::close_now) is called, or when the other side leaves.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (client_side, server_side) = Transport::pair(64);
///
/// let router = Router::new()
///     .request("add", |(a, b): (i64, i64), _ctx: Context| async move { Ok::<_, ErrorObject>(a + b) });
/// let server = Peer::builder().router(router).spawn(server_side);
///
/// let client = Peer::connect(client_side);
/// let sum: i64 = client.call("add", [2, 3]).await?;
/// assert_eq!(sum, 5);
///
/// client.close(std::time::Duration::from_secs(1)).await;
/// server.closed().await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
    _handle: Option<Arc<HandleGuard>>,
}

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// Builds a [`Peer`]: its [`Config`] and its [`Router`].
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Config, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (a, _b) = Transport::pair(8);
/// let peer = Peer::builder().config(Config::default()).router(Router::new()).spawn(a);
/// # drop(peer);
/// # });
/// ```
#[derive(Debug, Default)]
pub struct PeerBuilder {
    config: Config,
    router: Router,
}

impl PeerBuilder {
    /// The connection's policies (default: [`Config::default`]).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The routes this side serves (default: none).
    pub fn router(mut self, router: Router) -> Self {
        self.router = router;
        self
    }

    /// Starts the connection's tasks on `transport` and returns a handle.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn(self, transport: Transport) -> Peer {
        let (tx, rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared::new(self.config, tx));
        let handle = Arc::new(HandleGuard {
            shared: shared.clone(),
        });
        let _ = shared.handles.set(Arc::downgrade(&handle));
        let writer = tokio::spawn(writer::run(transport.outbound, rx, shared.clone()));
        tokio::spawn(reader::run(
            shared.clone(),
            self.router,
            transport.inbound,
            writer,
        ));
        Peer {
            shared,
            _handle: Some(handle),
        }
    }

    /// Serves `transport` until the connection ends, and returns why it ended.
    ///
    /// This is how a long-lived server runs until the other side leaves: when
    /// the other side ends its stream, the peer lets the handlers already
    /// running finish, writes every answer owed, and returns
    /// [`CloseReason::RemoteClosed`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the last handle it holds, which closes the
    /// connection at once unless a handler still holds one.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub async fn serve(self, transport: Transport) -> CloseReason {
        let peer = self.spawn(transport);
        peer.closed().await
    }
}

/// Dropping the last of these closes the connection.
struct HandleGuard {
    shared: Arc<Shared>,
}

impl Drop for HandleGuard {
    fn drop(&mut self) {
        self.shared.request_close(Duration::ZERO);
    }
}

/// Messages to the writer task.
#[derive(Debug)]
pub(crate) enum Outbound {
    Frame(Bytes),
    /// Write what is queued before this, then close the sink.
    Close,
}

/// The state shared by handles, the reader, the writer and handlers.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) dialect: Dialect,
    pub(crate) outbound: mpsc::UnboundedSender<Outbound>,
    pub(crate) pending: PendingTable,
    next_id: AtomicU64,
    next_id_i32: AtomicU32,
    pub(crate) gate: Option<Box<dyn Gate>>,
    pub(crate) in_flight: Option<Arc<Semaphore>>,
    /// Inbound requests and notifications accepted and not yet finished.
    pub(crate) active: AtomicUsize,
    /// Woken when inbound work finishes or a call completes.
    pub(crate) idle: Notify,
    /// How many notifications have been handled, for request ordering.
    pub(crate) notifications_done: watch::Sender<u64>,
    /// Fired to stop every running handler.
    pub(crate) abort_handlers: CancellationToken,
    /// Fired when a close has been asked for; `deadline` says how long the
    /// grace lasts.
    pub(crate) close_requested: CancellationToken,
    pub(crate) deadline: Mutex<Option<Instant>>,
    /// Fired when both tasks are done.
    pub(crate) done: CancellationToken,
    pub(crate) reason: OnceLock<CloseReason>,
    handles: OnceLock<Weak<HandleGuard>>,
    /// Inbound requests that can be cancelled, by id.
    pub(crate) cancellable: Mutex<HashMap<Id, CancellationToken>>,
    /// Progress streams of outbound calls, by token.
    pub(crate) progress_subscriptions: Mutex<ProgressSubscriptions>,
    next_token: AtomicU64,
    /// Where the session is in its [`Lifecycle`](crate::Lifecycle).
    pub(crate) stage: std::sync::atomic::AtomicU8,
}

/// Lifecycle stages.
pub(crate) const STAGE_NEW: u8 = 0;
pub(crate) const STAGE_READY: u8 = 1;
pub(crate) const STAGE_SHUT_DOWN: u8 = 2;

impl Shared {
    fn new(config: Config, outbound: mpsc::UnboundedSender<Outbound>) -> Self {
        let gate = config.gate.as_ref().map(|make| make());
        Shared {
            dialect: config.parse.dialect,
            in_flight: config.max_in_flight.map(|n| Arc::new(Semaphore::new(n))),
            config,
            outbound,
            pending: PendingTable::default(),
            next_id: AtomicU64::new(1),
            next_id_i32: AtomicU32::new(1),
            gate,
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            notifications_done: watch::Sender::new(0),
            abort_handlers: CancellationToken::new(),
            close_requested: CancellationToken::new(),
            deadline: Mutex::new(None),
            done: CancellationToken::new(),
            reason: OnceLock::new(),
            handles: OnceLock::new(),
            cancellable: Mutex::new(HashMap::new()),
            progress_subscriptions: Mutex::new(ProgressSubscriptions::default()),
            next_token: AtomicU64::new(1),
            stage: std::sync::atomic::AtomicU8::new(STAGE_NEW),
        }
    }

    /// Registers a waiting call under `id` (before its frame is written).
    fn register<R, E>(
        &self,
        id: &Id,
    ) -> Result<oneshot::Receiver<Result<R, CallError<E>>>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        match self
            .pending
            .register(id.clone(), Box::new(TypedSlot::<R, E>::new(tx)))
        {
            Ok(()) => Ok(rx),
            Err(RegisterError::Closed(reason)) => Err(CallError::Closed(reason)),
            Err(RegisterError::Duplicate) => Err(CallError::DuplicateId(id.clone())),
        }
    }

    /// Sends the policy's cancellation for an outbound call, if there is a
    /// policy; without an answer to wait for, fails the call at once.
    pub(crate) fn cancel_call(&self, id: &Id, reason: Option<&str>) -> Result<(), SendError> {
        let Some(policy) = &self.config.cancellation else {
            return Ok(());
        };
        let params = policy.params(id, reason);
        let body = crate::message::call_body(
            self.dialect,
            None,
            &policy.method,
            Some(&params),
            &Extras::new(),
        )
        .map_err(SendError::InvalidParams)?;
        let sent = self.send_frame(body);
        if policy.answer.is_none() {
            if let Some(slot) = self.pending.take(id) {
                slot.complete(Outcome::Cancelled);
            }
            self.progress_subscriptions().end_call(id);
        }
        sent
    }

    pub(crate) fn progress_subscriptions(
        &self,
    ) -> std::sync::MutexGuard<'_, ProgressSubscriptions> {
        self.progress_subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn cancellable(&self) -> std::sync::MutexGuard<'_, HashMap<Id, CancellationToken>> {
        self.cancellable.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn next_progress_token(&self) -> Id {
        Id::from(format!(
            "progress-{}",
            self.next_token.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Asks the reader to close, keeping the earliest deadline asked for.
    pub(crate) fn request_close(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        {
            let mut slot = self.deadline.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none_or(|d| deadline < d) {
                *slot = Some(deadline);
            }
        }
        self.close_requested.cancel();
        // Wake the reader if it is waiting for in-flight work to finish.
        self.idle.notify_one();
    }

    pub(crate) fn close_deadline(&self) -> Instant {
        self.deadline
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(Instant::now)
    }

    /// Records why the connection ended; the first reason wins.
    pub(crate) fn set_reason(&self, reason: CloseReason) -> CloseReason {
        self.reason.get_or_init(|| reason).clone()
    }

    fn reason_or_local(&self) -> CloseReason {
        self.reason.get().cloned().unwrap_or(CloseReason::Local)
    }

    /// Queues one frame for the writer.
    pub(crate) fn send_frame(&self, body: Vec<u8>) -> Result<(), SendError> {
        self.outbound
            .send(Outbound::Frame(Bytes::from(body)))
            .map_err(|_| SendError::Closed(self.reason_or_local()))
    }

    /// A new handle for a handler's context, unless every handle is gone
    /// (then the connection is closing and the context gets a handle that
    /// does not keep it open).
    pub(crate) fn handle(self: &Arc<Self>) -> Peer {
        let guard = self.handles.get().and_then(Weak::upgrade);
        Peer {
            shared: self.clone(),
            _handle: guard,
        }
    }

    fn next_id(&self) -> Id {
        match &self.config.id_strategy {
            IdStrategy::Sequential => Id::from(self.next_id.fetch_add(1, Ordering::Relaxed)),
            IdStrategy::SequentialI32 => {
                let mut current = self.next_id_i32.load(Ordering::Relaxed);
                loop {
                    let next = if current >= i32::MAX as u32 {
                        1
                    } else {
                        current + 1
                    };
                    match self.next_id_i32.compare_exchange_weak(
                        current,
                        next,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => return Id::from(current),
                        Err(actual) => current = actual,
                    }
                }
            }
            IdStrategy::Custom(generate) => generate(),
        }
    }
}

/// Options for one outbound call (see [`Peer::call_with`]).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::CallOptions;
///
/// let mut extras = jsonrpc_runtime::Extras::new();
/// extras.insert("sessionId".into(), "abc123".into());
/// let options = CallOptions::default().timeout(Duration::from_secs(5)).extras(extras);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    timeout: Option<Option<Duration>>,
    extras: Extras,
}

impl CallOptions {
    /// Fails the call with [`CallError::TimedOut`] after `timeout`,
    /// overriding the config's request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Waits for the answer as long as it takes, overriding the config's
    /// request timeout.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Top-level members to add to the request envelope (a session id, a
    /// trace token).
    pub fn extras(mut self, extras: Extras) -> Self {
        self.extras = extras;
        self
    }
}

/// Forgets a call dropped (or timed out) before its answer: removes its
/// table entry and, under a cancellation policy, tells the other side.
struct PendingGuard<'a> {
    shared: &'a Shared,
    id: Option<Id>,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            forget_call(self.shared, &id);
        }
    }
}

/// The work of [`PendingGuard`], shared with [`ProgressCall`].
pub(crate) fn forget_call(shared: &Shared, id: &Id) {
    if shared.pending.take(id).is_some() {
        shared.progress_subscriptions().end_call(id);
        if !shared.done.is_cancelled() {
            let _ = shared.cancel_call(id, Some("the caller stopped waiting"));
        }
    }
}

impl Peer {
    /// Starts building a peer.
    pub fn builder() -> PeerBuilder {
        PeerBuilder::default()
    }

    /// A peer with the default config and no routes: a plain client.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn connect(transport: Transport) -> Peer {
        Peer::builder().spawn(transport)
    }

    /// A handle with no connection behind it: every call fails with
    /// [`CallError::Closed`]. For [`Context::detached`](crate::Context::detached).
    pub(crate) fn detached() -> Peer {
        let (tx, _) = mpsc::unbounded_channel();
        let shared = Shared::new(Config::default(), tx);
        shared.set_reason(CloseReason::Local);
        shared.pending.close(&CloseReason::Local);
        shared.done.cancel();
        Peer {
            shared: Arc::new(shared),
            _handle: None,
        }
    }

    /// Calls `method` with `params` and waits for the typed result.
    ///
    /// `params` must serialize to a JSON object or array, or to `null` (then
    /// no params are sent): `()`, a tuple, a `Vec`, a struct, a map. Any
    /// error answer comes back as [`CallError::Rpc`]; use
    /// [`call_with`](Peer::call_with) to decode domain errors.
    ///
    /// # Examples
    ///
    /// See [`Peer`].
    ///
    /// # Errors
    ///
    /// Every way a call can fail is a [`CallError`] variant: an error
    /// answer, the connection closing, the timeout, params that do not
    /// encode, a result that does not decode.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future forgets the call: its table entry is removed and a
    /// late answer is dropped.
    pub async fn call<R>(&self, method: &str, params: impl Serialize) -> Result<R, CallError>
    where
        R: DeserializeOwned + Send + 'static,
    {
        self.call_with(method, params, CallOptions::default()).await
    }

    /// Calls `method` with per-call options, decoding error answers whose
    /// code is one of `E`'s as [`CallError::Domain`].
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{CallError, CallOptions, ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, b) = Transport::pair(8);
    /// let router = Router::new().request("fail", |(): (), _| async {
    ///     Err::<(), _>(ErrorObject::new(-32010, "Negative input"))
    /// });
    /// let _server = Peer::builder().router(router).spawn(b);
    /// let client = Peer::connect(a);
    /// let err = client.call_with::<(), ErrorObject>("fail", (), CallOptions::default()).await.unwrap_err();
    /// assert!(matches!(err, CallError::Domain(e) if e.code.0 == -32010));
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`call`](Peer::call).
    ///
    /// # Cancel safety
    ///
    /// As [`call`](Peer::call).
    pub async fn call_with<R, E>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
    ) -> Result<R, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
    {
        let shared = &*self.shared;
        let id = shared.next_id();
        let body = crate::message::call_body(
            shared.dialect,
            Some(&id),
            method,
            Some(&params),
            &options.extras,
        )
        .map_err(CallError::InvalidParams)?;
        drop(params);

        let rx = shared.register::<R, E>(&id)?;
        let mut guard = PendingGuard {
            shared,
            id: Some(id),
        };
        shared.send_frame(body)?;

        let timeout = options.timeout.unwrap_or(shared.config.request_timeout);
        let answer = match timeout {
            Some(limit) => match tokio::time::timeout(limit, rx).await {
                Ok(answer) => answer,
                Err(_) => return Err(CallError::TimedOut),
            },
            None => rx.await,
        };
        // The slot was taken by whoever answered; nothing to remove.
        guard.id = None;
        shared.idle.notify_one();
        answer.unwrap_or_else(|_| Err(CallError::Closed(shared.reason_or_local())))
    }

    /// Cancels an outbound call that is still waiting, as the config's
    /// [`CancellationPolicy`](crate::CancellationPolicy) says: the
    /// cancellation notification is sent, and when the policy expects no
    /// answer (MCP) the call fails at once with [`CallError::Cancelled`];
    /// when it does (LSP) the call ends with the other side's answer. Without
    /// a policy nothing is sent.
    ///
    /// Dropping a call's future (or its timeout firing) cancels it the same
    /// way, so `tokio::time::timeout(d, peer.call(..))` tells the other side.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] when the connection is closed.
    pub fn cancel(&self, id: &Id, reason: Option<&str>) -> Result<(), SendError> {
        self.shared.cancel_call(id, reason)
    }

    /// Calls `method` with a fresh progress token attached where the config's
    /// [`ProgressPolicy`](crate::ProgressPolicy) says requests carry it, and
    /// returns at once with a [`ProgressCall`]: read the progress values as
    /// they come, then await the result. Without a policy the progress stream
    /// is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, ProgressPolicy, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let config = Config::default().progress(ProgressPolicy::lsp());
    /// let router = Router::new().request("count", |p: serde_json::Value, ctx: Context| async move {
    ///     for step in 1..=3 {
    ///         ctx.progress(step).unwrap();
    ///     }
    ///     Ok::<_, ErrorObject>("done")
    /// });
    /// let (a, b) = Transport::pair(16);
    /// let _server = Peer::builder().config(config.clone()).router(router).spawn(b);
    /// let client = Peer::builder().config(config).spawn(a);
    ///
    /// let mut call = client
    ///     .call_with_progress::<String, ErrorObject, u32>("count", serde_json::json!({}), Default::default())
    ///     .unwrap();
    /// let mut seen = Vec::new();
    /// while let Some(step) = call.next_progress().await {
    ///     seen.push(step.unwrap());
    /// }
    /// assert_eq!(seen, [1, 2, 3]);
    /// assert_eq!(call.result().await.unwrap(), "done");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`CallError::InvalidParams`] when the params do not encode to an
    /// object (a token needs somewhere to go) and [`CallError::Closed`] when
    /// the connection is closed; every later failure comes from
    /// [`ProgressCall::result`].
    pub fn call_with_progress<R, E, P>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
    ) -> Result<ProgressCall<R, E, P>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: DeserializeOwned,
    {
        self.start_progress_call(method, params, options, |p| Some(&p.token_path))
    }

    /// Calls `method` asking for partial results (LSP's
    /// `partialResultToken`), and returns a [`ProgressCall`] whose progress
    /// values are the partial results; the final answer comes from
    /// [`ProgressCall::result`]. Without a policy that has partial results,
    /// this is a plain call with an empty progress stream.
    ///
    /// # Errors
    ///
    /// As [`call_with_progress`](Peer::call_with_progress).
    pub fn call_partial_results<R, E, P>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
    ) -> Result<ProgressCall<R, E, P>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: DeserializeOwned,
    {
        self.start_progress_call(method, params, options, |p| p.partial_path.as_deref())
    }

    fn start_progress_call<R, E, P>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
        token_path: fn(&ProgressPolicy) -> Option<&[std::borrow::Cow<'static, str>]>,
    ) -> Result<ProgressCall<R, E, P>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: DeserializeOwned,
    {
        let shared = &self.shared;
        let id = shared.next_id();
        let mut params = serde_json::to_value(&params).map_err(CallError::InvalidParams)?;
        let token_path = shared.config.progress.as_ref().and_then(token_path);
        let token = match token_path {
            Some(path) => {
                let token = shared.next_progress_token();
                ProgressPolicy::attach(path, &mut params, &token)
                    .map_err(|e| CallError::InvalidParams(serde::ser::Error::custom(e.message)))?;
                Some(token)
            }
            None => None,
        };
        let body = crate::message::call_body(
            shared.dialect,
            Some(&id),
            method,
            Some(&params),
            &options.extras,
        )
        .map_err(CallError::InvalidParams)?;
        let rx = shared.register::<R, E>(&id)?;
        let (progress, activity) = shared
            .progress_subscriptions()
            .subscribe(token.clone(), id.clone());
        if let Err(e) = shared.send_frame(body) {
            shared.pending.remove(&id);
            shared.progress_subscriptions().end_call(&id);
            return Err(e.into());
        }
        let timeout = options.timeout.unwrap_or(shared.config.request_timeout);
        Ok(ProgressCall::new(
            shared.clone(),
            id,
            token,
            rx,
            progress,
            activity,
            timeout,
            shared.config.progress_resets_timeout,
        ))
    }

    /// Sends a notification: fire and forget.
    ///
    /// The frame is queued for the writer at once; it is written even if
    /// this handle is dropped right after.
    ///
    /// # Errors
    ///
    /// [`SendError::InvalidParams`] when `params` do not encode to an object,
    /// an array or `null`; [`SendError::Closed`] when the connection is
    /// closed.
    pub fn notify(&self, method: &str, params: impl Serialize) -> Result<(), SendError> {
        self.notify_with(method, params, &Extras::new())
    }

    /// Sends a notification with extra top-level members.
    ///
    /// # Errors
    ///
    /// As [`notify`](Peer::notify).
    pub fn notify_with(
        &self,
        method: &str,
        params: impl Serialize,
        extras: &Extras,
    ) -> Result<(), SendError> {
        let body =
            crate::message::call_body(self.shared.dialect, None, method, Some(&params), extras)
                .map_err(SendError::InvalidParams)?;
        self.shared.send_frame(body)
    }

    /// Sends a request with an id of the caller's choosing, without waiting
    /// for its answer: no table entry is made, so the answer, when it
    /// comes, is logged and dropped. For forwarding a request whose id
    /// belongs to a third party, or ids dictated by a protocol.
    ///
    /// # Errors
    ///
    /// As [`notify`](Peer::notify).
    pub fn send_unmatched(
        &self,
        id: Id,
        method: &str,
        params: impl Serialize,
    ) -> Result<(), SendError> {
        let body = crate::message::call_body(
            self.shared.dialect,
            Some(&id),
            method,
            Some(&params),
            &Extras::new(),
        )
        .map_err(SendError::InvalidParams)?;
        self.shared.send_frame(body)
    }

    /// Closes the connection gracefully: new inbound requests are refused
    /// with -32001, while requests already running and calls already waiting
    /// get up to `grace` to finish (responses keep being read). Then the rest
    /// is stopped: running handlers are cancelled and answered -32001,
    /// waiting calls fail with [`CallError::Closed`], queued frames are
    /// written, and the transport is closed. Returns when all of that is done.
    ///
    /// # Cancel safety
    ///
    /// The close goes on if the future is dropped.
    pub async fn close(&self, grace: Duration) -> CloseReason {
        self.shared.request_close(grace);
        self.closed().await
    }

    /// Closes the connection at once: `close(Duration::ZERO)`.
    ///
    /// # Cancel safety
    ///
    /// The close goes on if the future is dropped.
    pub async fn close_now(&self) -> CloseReason {
        self.close(Duration::ZERO).await
    }

    /// Waits until the connection has ended, and returns why.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub fn closed(&self) -> impl Future<Output = CloseReason> + Send + 'static {
        let shared = self.shared.clone();
        async move {
            shared.done.cancelled().await;
            shared.reason_or_local()
        }
    }

    pub(crate) fn shared(&self) -> &Shared {
        &self.shared
    }

    /// Returns true once the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.done.is_cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_i32_ids_wrap_to_one_after_i32_max() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let shared = Shared::new(Config::default().id_strategy(IdStrategy::SequentialI32), tx);
        shared
            .next_id_i32
            .store(i32::MAX as u32 - 1, Ordering::Relaxed);
        let ids: Vec<Id> = (0..3).map(|_| shared.next_id()).collect();
        assert_eq!(
            ids,
            [Id::from(i32::MAX - 1), Id::from(i32::MAX), Id::from(1)]
        );
    }

    #[test]
    fn sequential_ids_start_at_one() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let shared = Shared::new(Config::default(), tx);
        assert_eq!(shared.next_id(), Id::from(1));
        assert_eq!(shared.next_id(), Id::from(2));
    }
}
