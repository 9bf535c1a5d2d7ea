//! What a handler sees: the message's id, method and extras, its
//! cancellation, progress reporting, and a handle back to the other side.

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::connection::ConnectionInfo;
use crate::id::Id;
use crate::message::Extras;
use serde_json::Value;

use crate::peer::{Peer, SendError, Shared};

/// Re-exported for handlers that hand cancellation on to work they start.
pub use tokio_util::sync::CancellationToken;

/// What a handler knows about the message it serves, and its way back to the
/// other side.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Router};
///
/// // A handler that asks the other side a question while it runs.
/// let router = Router::new().request("greet", |(name,): (String,), ctx: Context| async move {
///     let title: String = ctx.peer().call("title", [&name]).await?;
///     Ok::<_, ErrorObject>(format!("Hello, {title} {name}"))
/// });
/// # let _ = router;
/// ```
#[derive(Clone)]
pub struct Context {
    pub(crate) id: Option<Id>,
    pub(crate) method: Arc<str>,
    pub(crate) extras: Option<Arc<Extras>>,
    pub(crate) cancel: CancelToken,
    pub(crate) peer: Peer,
    pub(crate) progress: Option<Arc<ProgressSink>>,
    /// Who is calling, for messages answered in process (the peer knows it
    /// otherwise).
    pub(crate) connection: Option<Arc<ConnectionInfo>>,
    /// Who sent this message, where it differs from the connection's
    /// caller (an MCP session's later `POST`s).
    pub(crate) caller: Option<Arc<ConnectionInfo>>,
}

impl Context {
    /// A context for invoking a route directly in a test, with no connection
    /// behind it: calls through [`Context::peer`] fail with
    /// [`CallError::Closed`](crate::CallError::Closed).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, Id, Router};
    /// use serde_json::value::RawValue;
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let router = Router::new()
    ///     .request("add", |(a, b): (i64, i64), _| async move { Ok::<_, jsonrpc_runtime::ErrorObject>(a + b) });
    /// let params = RawValue::from_string("[2, 3]".into()).unwrap();
    /// let result = router.invoke("add", Some(&params), Context::detached(Some(Id::from(1)))).await;
    /// assert_eq!(result.unwrap().get(), "5");
    /// # });
    /// ```
    pub fn detached(id: Option<Id>) -> Self {
        Context {
            id,
            method: Arc::from(""),
            extras: None,
            cancel: CancelToken::Own(CancellationToken::new()),
            peer: Peer::detached(),
            progress: None,
            connection: None,
            caller: None,
        }
    }

    /// A context for a message answered in process
    /// ([`Router::respond`](crate::Router::respond)): no connection behind
    /// it, a cancellation that never fires, and nothing allocated.
    pub(crate) fn in_process(
        id: Option<Id>,
        method: Arc<str>,
        extras: Option<Extras>,
        connection: Option<Arc<ConnectionInfo>>,
    ) -> Self {
        static NEVER: OnceLock<Arc<CancellationToken>> = OnceLock::new();
        let never = NEVER.get_or_init(|| Arc::new(CancellationToken::new()));
        Context {
            id,
            method,
            extras: extras.map(Arc::new),
            cancel: CancelToken::Shared(never.clone()),
            peer: Peer::detached(),
            progress: None,
            connection,
            caller: None,
        }
    }

    /// The request's id; `None` for a notification.
    pub fn id(&self) -> Option<&Id> {
        self.id.as_ref()
    }

    /// Who is calling: the client's address, the path and headers of the
    /// HTTP request the connection began with (a WebSocket handshake, an
    /// HTTP `POST`), and state a listener's `on_connect`
    /// hook attached, such as the authenticated user. Empty where nothing is
    /// known (see [`ConnectionInfo`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// let router = Router::new().request("whoami", |(): (), cx: Context| async move {
    ///     let addr = cx.connection().addr().map(|a| a.to_string());
    ///     let agent = cx.connection().header("user-agent").map(str::to_owned);
    ///     Ok::<_, ErrorObject>((addr, agent))
    /// });
    /// # let _ = router;
    /// ```
    pub fn connection(&self) -> &ConnectionInfo {
        match &self.connection {
            Some(info) => info,
            None => self.peer.connection(),
        }
    }

    /// Who sent the message in hand. For an MCP session over HTTP
    /// (`server::McpHttpListener`),
    /// [`connection`](Self::connection) is the caller of the session's
    /// `initialize` and this is the `POST` that carried this message: its
    /// address, headers (a refreshed token, say) and the state the
    /// listener's `on_connect` hook attached to it. Its
    /// [`identity`](ConnectionInfo::identity) is always the session's: a
    /// request from another one never reaches the session. Everywhere
    /// else every message comes from the connection's caller, and this is
    /// the same as [`connection`](Self::connection).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// let router = Router::new().request("whoami", |(): (), cx: Context| async move {
    ///     let opened_by = cx.connection().addr().map(|a| a.to_string());
    ///     let sent_by = cx.caller().addr().map(|a| a.to_string());
    ///     Ok::<_, ErrorObject>((cx.caller().identity().map(str::to_owned), opened_by, sent_by))
    /// });
    /// # let _ = router;
    /// ```
    pub fn caller(&self) -> &ConnectionInfo {
        match &self.caller {
            Some(info) => info,
            None => self.connection(),
        }
    }

    /// The method name the message was sent with.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Unknown top-level members of the inbound envelope.
    pub fn extras(&self) -> Option<&Extras> {
        self.extras.as_deref()
    }

    /// Fires when the request is cancelled or the connection closes without
    /// waiting for it. Race long work against
    /// [`cancelled()`](Cancellation::cancelled).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// let router = Router::new().request("wait", |(): (), ctx: Context| async move {
    ///     tokio::select! {
    ///         _ = ctx.cancellation().cancelled() => Err(ErrorObject::new(-32050, "stopped")),
    ///         _ = tokio::time::sleep(std::time::Duration::from_secs(5)) => Ok("done"),
    ///     }
    /// });
    /// # let _ = router;
    /// ```
    pub fn cancellation(&self) -> Cancellation<'_> {
        Cancellation(&self.cancel)
    }

    /// A handle to the connection, to call or notify the other side.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// The progress token the caller sent with this request, if the
    /// connection has a [`ProgressPolicy`](crate::policy::ProgressPolicy) and the
    /// caller sent one.
    pub fn progress_token(&self) -> Option<&Id> {
        self.progress.as_ref().and_then(|p| p.work.as_ref())
    }

    /// The partial-result token the caller sent with this request (LSP's
    /// `partialResultToken`), if the connection has a
    /// [`ProgressPolicy`](crate::policy::ProgressPolicy) and the caller sent
    /// one.
    pub fn partial_result_token(&self) -> Option<&Id> {
        self.progress.as_ref().and_then(|p| p.partial.as_ref())
    }

    /// Whether a [`partial_result`](Context::partial_result) of this request
    /// has gone out (LSP: the final answer must then be empty).
    pub fn partial_results_sent(&self) -> bool {
        self.progress.as_ref().is_some_and(|p| p.partials_sent())
    }

    /// Reports progress to the caller, on the token it sent with the request,
    /// as the connection's [`ProgressPolicy`](crate::policy::ProgressPolicy) spells
    /// it. Does nothing without a policy or a token, and after the handler
    /// has answered: reports always precede the answer on the wire.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// let router = Router::new().request("work", |(): (), ctx: Context| async move {
    ///     // LSP: a `$/progress` value; MCP: `{"progress": n, "total": m}`.
    ///     ctx.progress(serde_json::json!({"kind": "report", "percentage": 50})).ok();
    ///     Ok::<_, ErrorObject>(())
    /// });
    /// # let _ = router;
    /// ```
    ///
    /// # Errors
    ///
    /// [`SendError::InvalidParams`] when the value does not fit the policy
    /// (MCP wants an object whose `progress` increases), [`SendError::Full`]
    /// when the outbound budget is spent (a report never waits: the next one
    /// carries newer news), [`SendError::Closed`] when the connection is
    /// closed.
    pub fn progress(&self, value: impl Serialize) -> Result<(), SendError> {
        self.report(false, value)
    }

    /// Sends one partial result (LSP's `partialResultToken`), if the caller
    /// asked for them; like [`progress`](Context::progress) otherwise.
    ///
    /// # Errors
    ///
    /// As [`progress`](Context::progress).
    pub fn partial_result(&self, value: impl Serialize) -> Result<(), SendError> {
        self.report(true, value)
    }

    fn report(&self, partial: bool, value: impl Serialize) -> Result<(), SendError> {
        let Some(sink) = &self.progress else {
            return Ok(());
        };
        let value = serde_json::to_value(value).map_err(SendError::InvalidParams)?;
        sink.send(self.peer.shared(), partial, value)
    }

    pub(crate) fn with_method(mut self, method: Arc<str>) -> Self {
        self.method = method;
        self
    }
}

/// A request's cancellation token: its own, when the other side can cancel
/// it, or the connection's, shared without the cost of a new token handle
/// (cloning a `CancellationToken` takes a lock; cloning this takes an
/// atomic increment).
#[derive(Debug, Clone)]
pub(crate) enum CancelToken {
    /// The connection's token: fires when the connection closes.
    Shared(Arc<CancellationToken>),
    /// A token of the request's own.
    Own(CancellationToken),
}

impl std::ops::Deref for CancelToken {
    type Target = CancellationToken;

    fn deref(&self) -> &CancellationToken {
        match self {
            CancelToken::Shared(token) => token,
            CancelToken::Own(token) => token,
        }
    }
}

/// A [`Context`] whose progress reports are checked to be `P`: what an
/// `#[rpc]` method declared with `progress = P` takes instead of
/// [`Context`], so that its handler cannot report anything else.
///
/// It dereferences to the [`Context`] for everything else (id,
/// cancellation, the peer handle).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{rpc, context::TypedContext};
///
/// #[rpc]
/// trait Indexer {
///     #[rpc(request = "index", progress = u32)]
///     async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32;
/// }
///
/// struct Files;
///
/// impl Indexer for Files {
///     async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32 {
///         for done in 1..=files {
///             ctx.progress(done).ok(); // `ctx.progress("half")` does not compile
///         }
///         files
///     }
/// }
/// # let _ = Files.into_router();
/// ```
pub struct TypedContext<P> {
    ctx: Context,
    _progress: std::marker::PhantomData<fn(P)>,
}

impl<P> fmt::Debug for TypedContext<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("TypedContext").field(&self.ctx).finish()
    }
}

impl<P> Clone for TypedContext<P> {
    fn clone(&self) -> Self {
        TypedContext::new(self.ctx.clone())
    }
}

impl<P> TypedContext<P> {
    /// Checks the progress reports of `ctx` to be `P`.
    pub fn new(ctx: Context) -> Self {
        TypedContext {
            ctx,
            _progress: std::marker::PhantomData,
        }
    }

    /// The untyped context.
    pub fn into_inner(self) -> Context {
        self.ctx
    }
}

impl<P: Serialize> TypedContext<P> {
    /// Reports progress to the caller, as [`Context::progress`] does.
    ///
    /// # Errors
    ///
    /// As [`Context::progress`].
    pub fn progress(&self, value: P) -> Result<(), SendError> {
        self.ctx.progress(value)
    }
}

impl<P> std::ops::Deref for TypedContext<P> {
    type Target = Context;

    fn deref(&self) -> &Context {
        &self.ctx
    }
}

/// A handler's view of its cancellation: it can wait for it and check it,
/// but not trigger it (see [`Context::cancellation`]).
#[derive(Debug, Clone, Copy)]
pub struct Cancellation<'a>(&'a CancellationToken);

impl<'a> Cancellation<'a> {
    /// Completes when the request is cancelled or the connection closes
    /// without waiting for it. The future borrows the [`Context`], not this
    /// view, so `ctx.cancellation().cancelled()` can be awaited in place.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub fn cancelled(self) -> tokio_util::sync::WaitForCancellationFuture<'a> {
        self.0.cancelled()
    }

    /// Returns true once the request is cancelled.
    pub fn is_cancelled(self) -> bool {
        self.0.is_cancelled()
    }

    /// A new token that is cancelled with this one, to hand to work the
    /// handler starts (cancelling the new token affects only it).
    pub fn child_token(self) -> CancellationToken {
        self.0.child_token()
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("extras", &self.extras)
            .finish_non_exhaustive()
    }
}

/// The handler side: where `Context::progress` sends reports for one
/// inbound request.
#[derive(Debug)]
pub(crate) struct ProgressSink {
    pub(crate) work: Option<Id>,
    pub(crate) partial: Option<Id>,
    state: std::sync::Mutex<SinkState>,
    /// A test's record of the reports instead of the wire (see
    /// [`TestContext`]).
    record: Option<Record>,
}

#[derive(Debug, Default)]
struct SinkState {
    /// Set just before the answer is queued: later reports are dropped, so
    /// none can follow the answer.
    finished: bool,
    last: Option<f64>,
    /// Whether a partial result went out.
    partials: bool,
}

impl ProgressSink {
    pub(crate) fn new(work: Option<Id>, partial: Option<Id>) -> Self {
        ProgressSink {
            work,
            partial,
            state: std::sync::Mutex::new(SinkState::default()),
            record: None,
        }
    }

    /// Sends one report on `token` (the work-done or the partial-result one).
    pub(crate) fn send(
        &self,
        shared: &Shared,
        partial: bool,
        value: Value,
    ) -> Result<(), SendError> {
        let token = if partial { &self.partial } else { &self.work };
        if let (Some(record), Some(_)) = (&self.record, token) {
            record
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((partial, value));
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.partials |= partial;
            return Ok(());
        }
        let (Some(policy), Some(token)) = (&shared.config.progress, token) else {
            return Ok(());
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.finished {
            return Ok(());
        }
        if let (Some(member), false) = (&policy.increasing, partial) {
            let Some(now) = value.get(&**member).and_then(Value::as_f64) else {
                return Err(SendError::InvalidParams(serde::ser::Error::custom(
                    format!("a progress value needs a numeric `{member}` member"),
                )));
            };
            if state.last.is_some_and(|last| now <= last) {
                return Err(SendError::InvalidParams(serde::ser::Error::custom(
                    format!(
                        "progress must increase: `{member}` went from {} to {now}",
                        state.last.unwrap_or_default()
                    ),
                )));
            }
            state.last = Some(now);
        }
        let params = policy
            .params(token, value)
            .map_err(|e| SendError::InvalidParams(serde::ser::Error::custom(e.message)))?;
        let body = shared
            .message_frame(
                None,
                &policy.method,
                &params,
                &crate::message::Extras::new(),
            )
            .map_err(SendError::InvalidParams)?;
        // Advisory: a report never waits for room, it fails instead.
        if !shared.outbox.has_room() {
            return Err(SendError::Full);
        }
        // Queued under the lock, so `finish` orders the answer after it.
        shared.send_now(body)?;
        state.partials |= partial;
        Ok(())
    }

    fn partials_sent(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .partials
    }

    pub(crate) fn finish(&self) {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished = true;
    }
}

/// Reports recorded by a [`TestContext`]: whether each is a partial result,
/// and its value.
type Record = Arc<std::sync::Mutex<Vec<(bool, Value)>>>;

/// A [`Context`] for unit-testing a handler without a connection: an id, a
/// method, extras, a cancellation the test fires, and the progress reports
/// the handler made, to read back.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::context::TestContext;
/// use jsonrpc_runtime::{Context, ErrorObject, Router};
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().request("count", |(n,): (u32,), ctx: Context| async move {
///     for done in 1..=n {
///         if ctx.cancellation().is_cancelled() {
///             return Err(ErrorObject::new(-32800, "cancelled"));
///         }
///         ctx.progress(json!({"done": done})).ok();
///     }
///     Ok(n)
/// });
/// let test = TestContext::new().id(7).progress_token("t");
/// let params = serde_json::value::to_raw_value(&json!([2])).unwrap();
/// let out = router.invoke("count", Some(&params), test.context()).await.unwrap();
/// assert_eq!(out.get(), "2");
/// assert_eq!(test.progress(), [json!({"done": 1}), json!({"done": 2})]);
///
/// test.cancel();
/// let err = router.invoke("count", Some(&params), test.context()).await.unwrap_err();
/// assert_eq!(err.code.0, -32800);
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct TestContext {
    id: Option<Id>,
    method: Option<Arc<str>>,
    extras: Option<Extras>,
    cancel: CancellationToken,
    work: Option<Id>,
    partial: Option<Id>,
    reports: Record,
    connection: Option<Arc<ConnectionInfo>>,
}

impl TestContext {
    /// A context with no id (a notification's), no extras and no tokens.
    pub fn new() -> Self {
        TestContext::default()
    }

    /// What [`Context::connection`] reports: who is calling.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::context::TestContext;
    /// use jsonrpc_runtime::connection::ConnectionInfo;
    ///
    /// let mut info = ConnectionInfo::new();
    /// info.insert(42_u32);
    /// let cx = TestContext::new().connection(info).context();
    /// assert_eq!(cx.connection().get::<u32>(), Some(&42));
    /// ```
    pub fn connection(mut self, connection: ConnectionInfo) -> Self {
        self.connection = Some(Arc::new(connection));
        self
    }

    /// The request's id.
    pub fn id(mut self, id: impl Into<Id>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The method name the handler sees (a route sets its own when invoked
    /// through [`Router::invoke`](crate::Router::invoke)).
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.into());
        self
    }

    /// Unknown top-level members of the envelope the handler sees.
    pub fn extras(mut self, extras: Extras) -> Self {
        self.extras = Some(extras);
        self
    }

    /// The progress token the caller sent: the handler's
    /// [`Context::progress`] reports are recorded for [`progress`](Self::progress).
    pub fn progress_token(mut self, token: impl Into<Id>) -> Self {
        self.work = Some(token.into());
        self
    }

    /// The partial-result token the caller sent: the handler's
    /// [`Context::partial_result`] reports are recorded for
    /// [`partial_results`](Self::partial_results).
    pub fn partial_result_token(mut self, token: impl Into<Id>) -> Self {
        self.partial = Some(token.into());
        self
    }

    /// A context to hand to a handler; every context made from this test
    /// context shares its cancellation and its record of reports.
    pub fn context(&self) -> Context {
        let progress = (self.work.is_some() || self.partial.is_some()).then(|| {
            let mut sink = ProgressSink::new(self.work.clone(), self.partial.clone());
            sink.record = Some(self.reports.clone());
            Arc::new(sink)
        });
        Context {
            id: self.id.clone(),
            method: self.method.clone().unwrap_or_else(|| Arc::from("")),
            extras: self.extras.clone().map(Arc::new),
            cancel: CancelToken::Own(self.cancel.clone()),
            peer: Peer::detached(),
            progress,
            connection: self.connection.clone(),
            caller: None,
        }
    }

    /// Cancels the request, as the other side would: the handler's
    /// [`Context::cancellation`] fires.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The progress reports made so far, in order.
    pub fn progress(&self) -> Vec<Value> {
        self.recorded(false)
    }

    /// The partial results reported so far, in order.
    pub fn partial_results(&self) -> Vec<Value> {
        self.recorded(true)
    }

    fn recorded(&self, partial: bool) -> Vec<Value> {
        let reports = self.reports.lock().unwrap_or_else(|p| p.into_inner());
        reports
            .iter()
            .filter(|(p, _)| *p == partial)
            .map(|(_, v)| v.clone())
            .collect()
    }
}
