//! Routes: method names bound to typed handlers.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::Serialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::error::{ErrorObject, RpcError};
use crate::id::Id;
use crate::message::{self, Dialect, Extras, Response};
use crate::peer::{Peer, RequestJob};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a request handler produced: a result, a domain error, or a response
/// built by the handler itself.
///
/// Handlers usually return `Result<T, E>`; return `Reply` when a handler
/// needs [`Reply::Halt`].
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Reply, Response, Router};
///
/// let router = Router::new().request("add_or_halt", |(a, b): (i64, i64), ctx: Context| async move {
///     if a == 0 && b == 0 {
///         let id = ctx.id().cloned().unwrap_or_default();
///         return Reply::Halt(Response::error(id, ErrorObject::new(-32001, "Both zero")));
///     }
///     Reply::<i64, ErrorObject>::Ok(a + b)
/// });
/// # let _ = router;
/// ```
#[derive(Debug)]
pub enum Reply<T, E> {
    /// Answer with this result.
    Ok(T),
    /// Answer with this domain error.
    Err(E),
    /// Answer with this response as it is, skipping result encoding and error
    /// mapping.
    Halt(Response),
}

/// A handler's return value that becomes a reply: `Result<T, E>` or
/// [`Reply<T, E>`].
pub trait IntoReply: Send + 'static {
    /// The result type.
    type Ok: Serialize;
    /// The domain error type.
    type Err: RpcError;
    /// Converts into a [`Reply`].
    fn into_reply(self) -> Reply<Self::Ok, Self::Err>;
}

impl<T, E> IntoReply for Result<T, E>
where
    T: Serialize + Send + 'static,
    E: RpcError + Send + 'static,
{
    type Ok = T;
    type Err = E;
    fn into_reply(self) -> Reply<T, E> {
        match self {
            Ok(v) => Reply::Ok(v),
            Err(e) => Reply::Err(e),
        }
    }
}

impl<T, E> IntoReply for Reply<T, E>
where
    T: Serialize + Send + 'static,
    E: RpcError + Send + 'static,
{
    type Ok = T;
    type Err = E;
    fn into_reply(self) -> Reply<T, E> {
        self
    }
}

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
    pub(crate) cancel: CancellationToken,
    pub(crate) peer: Peer,
    pub(crate) progress: Option<Arc<crate::peer::ProgressSink>>,
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
            cancel: CancellationToken::new(),
            peer: Peer::detached(),
            progress: None,
        }
    }

    /// The request's id; `None` for a notification.
    pub fn id(&self) -> Option<&Id> {
        self.id.as_ref()
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
    /// connection has a [`ProgressPolicy`](crate::ProgressPolicy) and the
    /// caller sent one.
    pub fn progress_token(&self) -> Option<&Id> {
        self.progress.as_ref().and_then(|p| p.work.as_ref())
    }

    /// Reports progress to the caller, on the token it sent with the request,
    /// as the connection's [`ProgressPolicy`](crate::ProgressPolicy) spells
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
    /// [`SendError::InvalidParams`](crate::SendError::InvalidParams) when the
    /// value does not fit the policy (MCP wants an object whose `progress`
    /// increases), [`SendError::Closed`](crate::SendError::Closed) when the
    /// connection is closed.
    pub fn progress(&self, value: impl Serialize) -> Result<(), crate::SendError> {
        self.report(false, value)
    }

    /// Sends one partial result (LSP's `partialResultToken`), if the caller
    /// asked for them; like [`progress`](Context::progress) otherwise.
    ///
    /// # Errors
    ///
    /// As [`progress`](Context::progress).
    pub fn partial_result(&self, value: impl Serialize) -> Result<(), crate::SendError> {
        self.report(true, value)
    }

    fn report(&self, partial: bool, value: impl Serialize) -> Result<(), crate::SendError> {
        let Some(sink) = &self.progress else {
            return Ok(());
        };
        let value = serde_json::to_value(value).map_err(crate::SendError::InvalidParams)?;
        sink.send(self.peer.shared(), partial, value)
    }

    pub(crate) fn with_method(mut self, method: Arc<str>) -> Self {
        self.method = method;
        self
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

/// The kind of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteKind {
    Request,
    Notification,
}

/// A type-erased route: decodes params synchronously, then runs the handler.
pub(crate) trait ErasedRoute: Send + Sync + 'static {
    /// Decodes the params and starts the handler; the future yields the
    /// complete response envelope (requests) or nothing useful
    /// (notifications: the bytes are empty).
    fn start(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
        dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject>;

    /// Decodes the params and spawns the handler as `job`'s task, without
    /// boxing its future; on a decoding error, gives the job back.
    // The large `Err` is the job handed back by value on the rare error
    // path, which keeps the common path free of allocations.
    #[allow(clippy::result_large_err)]
    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
        dialect: Dialect,
        job: RequestJob,
    ) -> Result<(), (ErrorObject, RequestJob)>;

    /// Decodes the params and runs the handler, yielding the raw result.
    fn invoke(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject>;
}

/// A finished handler's answer, ready for the wire.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The response envelope; empty for a notification.
    pub(crate) body: Vec<u8>,
    /// Whether the answer is a success (the handshake gate wants to know).
    pub(crate) success: bool,
}

/// One method's route: its kind, its name and its type-erased handler.
#[doc(hidden)]
#[derive(Clone)]
pub struct Route {
    pub(crate) kind: RouteKind,
    pub(crate) name: Arc<str>,
    pub(crate) handler: Arc<dyn ErasedRoute>,
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .finish()
    }
}

impl Route {
    /// A request route, as [`Router::request`] registers it.
    pub fn request<P, R, F, Fut>(method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        R: IntoReply,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let handler = Arc::new(RequestRoute {
            handler,
            _marker: PhantomData,
        });
        Route {
            kind: RouteKind::Request,
            name: method.into(),
            handler,
        }
    }

    /// A notification route, as [`Router::notification`] registers it.
    pub fn notification<P, F, Fut>(method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(NotificationRoute {
            handler,
            _marker: PhantomData,
        });
        Route {
            kind: RouteKind::Notification,
            name: method.into(),
            handler,
        }
    }
}

/// A table from method name to handler.
///
/// Register typed request and notification handlers by hand, or let
/// `#[rpc]` generate the table from a trait. A handler is an async function
/// of its decoded params and a [`Context`]. Params are decoded with serde
/// from the request's object or array; a route whose params type is `()`
/// accepts params absent, `null`, `{}` or `[]`, and an `Option<T>` params
/// type accepts absent params as `None`.
///
/// Routers are cheap to clone (the handlers are shared), so one router can
/// serve many connections.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Router};
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct AddParams { a: i64, b: i64 }
///
/// #[derive(Deserialize)]
/// struct LogParams { message: String }
///
/// let router = Router::new()
///     .request("add", |p: AddParams, _ctx: Context| async move {
///         Ok::<_, ErrorObject>(p.a + p.b)
///     })
///     .notification("log", |p: LogParams, _ctx: Context| async move {
///         eprintln!("{}", p.message);
///     });
/// assert!(router.contains("add"));
/// ```
///
/// # Panics
///
/// Registering the same method name twice panics, naming the method: a route
/// is never overwritten silently.
#[derive(Clone, Default)]
pub struct Router {
    routes: HashMap<Arc<str>, Route>,
    /// Tables generated by `#[rpc]`: each dispatches with a `match`.
    tables: Vec<Arc<dyn RouteTable>>,
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<_> = self.methods().collect();
        names.sort_unstable();
        f.debug_struct("Router").field("methods", &names).finish()
    }
}

/// A fixed set of routes with its own lookup: what `#[rpc]` generates for
/// one trait, dispatching with a `match` on the method name.
#[doc(hidden)]
pub trait RouteTable: Send + Sync + 'static {
    /// The route for `method`, if this table has one.
    fn route(&self, method: &str) -> Option<&Route>;
    /// Every route of the table.
    fn routes(&self) -> &[Route];
}

impl Router {
    /// An empty router.
    pub fn new() -> Self {
        Router::default()
    }

    /// Registers a request handler for `method`.
    ///
    /// The handler's `Err` values are mapped to wire errors by their
    /// [`RpcError`] impl; a panic in the handler is answered with -32603.
    ///
    /// # Panics
    ///
    /// Panics if `method` already has a route.
    #[track_caller]
    pub fn request<P, R, F, Fut>(self, method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        R: IntoReply,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        self.insert(
            method,
            RouteKind::Request,
            Arc::new(RequestRoute {
                handler,
                _marker: PhantomData,
            }),
        )
    }

    /// Registers a request handler for `method` whose error type is any
    /// `Serialize` value, mapped to the wire with `mapping`: every `Err(e)`
    /// becomes `mapping`'s code and message with `e` as the data.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{ErrorMapping, Router};
    /// use serde::Serialize;
    ///
    /// #[derive(Serialize)]
    /// struct Negative { value: i64 }
    ///
    /// let router = Router::new().request_mapped(
    ///     "sqrt",
    ///     |x: (f64,), _| async move {
    ///         if x.0 < 0.0 { Err(Negative { value: x.0 as i64 }) } else { Ok(x.0.sqrt()) }
    ///     },
    ///     ErrorMapping::new(-32010, "Negative input"),
    /// );
    /// # let _ = router;
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `method` already has a route.
    #[track_caller]
    pub fn request_mapped<P, T, E, F, Fut>(
        self,
        method: &str,
        handler: F,
        mapping: ErrorMapping,
    ) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        E: Serialize + Send + 'static,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        self.request(method, move |params: P, ctx: Context| {
            let fut = handler(params, ctx);
            let mapping = mapping.clone();
            async move { fut.await.map_err(|e| mapping.apply(&e)) }
        })
    }

    /// Registers a notification handler for `method`.
    ///
    /// Notifications run one at a time, in the order they arrived, and a
    /// request starts only after the notifications sent before it have been
    /// handled. Params that do not decode are logged and the notification is
    /// dropped (notifications are never answered).
    ///
    /// # Panics
    ///
    /// Panics if `method` already has a route.
    #[track_caller]
    pub fn notification<P, F, Fut>(self, method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.insert(
            method,
            RouteKind::Notification,
            Arc::new(NotificationRoute {
                handler,
                _marker: PhantomData,
            }),
        )
    }

    /// Adds every route of `other`.
    ///
    /// # Panics
    ///
    /// Panics if both routers have a route for the same method.
    #[track_caller]
    pub fn merge(mut self, other: Router) -> Self {
        for name in other.methods() {
            assert!(
                !self.contains(name),
                "the method `{name}` is registered twice"
            );
        }
        self.routes.extend(other.routes);
        self.tables.extend(other.tables);
        self
    }

    /// A router serving one generated table.
    #[doc(hidden)]
    pub fn from_table(table: impl RouteTable) -> Self {
        let mut router = Router::new();
        for (i, route) in table.routes().iter().enumerate() {
            let again = table.routes()[..i].iter().any(|r| r.name == route.name);
            assert!(!again, "the method `{}` is registered twice", route.name);
        }
        router.tables.push(Arc::new(table));
        router
    }

    /// Returns true when `method` has a route.
    pub fn contains(&self, method: &str) -> bool {
        self.get(method).is_some()
    }

    /// The registered method names, in no particular order.
    pub fn methods(&self) -> impl Iterator<Item = &str> {
        let tables = self
            .tables
            .iter()
            .flat_map(|t| t.routes().iter().map(|r| &*r.name));
        self.routes.keys().map(|k| &**k).chain(tables)
    }

    /// Runs the route for `method` directly: decodes `params`, calls the
    /// handler, and returns its encoded result or its wire error, with the
    /// route's own error mapping applied.
    ///
    /// This is how one route fans out to named sub-handlers (MCP's
    /// `tools/call` dispatching to tools) and how handlers are unit-tested
    /// without a transport (see [`Context::detached`]). A notification route
    /// yields `null`.
    ///
    /// # Errors
    ///
    /// -32601 when `method` has no route, -32602 when the params do not
    /// decode, -32603 when the handler panics, and the handler's own mapped
    /// errors.
    pub async fn invoke(
        &self,
        method: &str,
        params: Option<&RawValue>,
        ctx: Context,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let Some(route) = self.get(method) else {
            return Err(ErrorObject::method_not_found(method));
        };
        let ctx = ctx.with_method(route.name.clone());
        let fut = route.handler.invoke(params, ctx)?;
        match catch_panic(fut).await {
            Ok(outcome) => outcome,
            Err(panic) => Err(ErrorObject::internal_error(format!(
                "the handler panicked: {panic}"
            ))),
        }
    }

    pub(crate) fn get(&self, method: &str) -> Option<&Route> {
        if let Some(route) = self.tables.iter().find_map(|t| t.route(method)) {
            return Some(route);
        }
        if self.routes.is_empty() {
            return None;
        }
        self.routes.get(method)
    }

    #[track_caller]
    fn insert(mut self, method: &str, kind: RouteKind, handler: Arc<dyn ErasedRoute>) -> Self {
        assert!(
            !self.contains(method),
            "the method `{method}` is registered twice"
        );
        let name: Arc<str> = Arc::from(method);
        self.routes.insert(
            name.clone(),
            Route {
                kind,
                name,
                handler,
            },
        );
        self
    }
}

/// A code and message under which a route's `Serialize` error values travel
/// (see [`Router::request_mapped`]).
#[derive(Debug, Clone)]
pub struct ErrorMapping {
    code: crate::ErrorCode,
    message: std::borrow::Cow<'static, str>,
}

impl ErrorMapping {
    /// A mapping to `code` and `message`.
    ///
    /// # Panics
    ///
    /// Panics if `code` is one of the five predefined codes or inside the
    /// reserved block -32768..=-32100.
    #[track_caller]
    pub fn new(code: i64, message: impl Into<std::borrow::Cow<'static, str>>) -> Self {
        let code = crate::ErrorCode(code);
        assert!(
            code.is_available_to_applications(),
            "error code {code} is reserved by JSON-RPC 2.0; use a code outside -32768..=-32100"
        );
        ErrorMapping {
            code,
            message: message.into(),
        }
    }

    fn apply<E: Serialize>(&self, error: &E) -> ErrorObject {
        let object = ErrorObject::new(self.code, self.message.clone());
        match object.clone().with_data(error) {
            Ok(with_data) => with_data,
            Err(_) => object,
        }
    }
}

// ---------------------------------------------------------------------------
// Typed routes.

use std::marker::PhantomData;

struct RequestRoute<F, P> {
    handler: F,
    _marker: PhantomData<fn(P)>,
}

struct NotificationRoute<F, P> {
    handler: F,
    _marker: PhantomData<fn(P)>,
}

impl<P, R, F, Fut> ErasedRoute for RequestRoute<F, P>
where
    P: DeserializeOwned + Send + 'static,
    R: IntoReply,
    F: Fn(P, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    fn start(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
        dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let id = ctx.id.clone().unwrap_or(Id::NULL);
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            encode_reply(dialect, &id, fut.await.into_reply())
        }))
    }

    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
        dialect: Dialect,
        job: RequestJob,
    ) -> Result<(), (ErrorObject, RequestJob)> {
        let params = match decode_params::<P>(params) {
            Ok(params) => params,
            Err(error) => return Err((error, job)),
        };
        let id = job.id().clone();
        let fut = (self.handler)(params, ctx);
        job.spawn(async move { encode_reply(dialect, &id, fut.await.into_reply()) });
        Ok(())
    }

    fn invoke(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            match fut.await.into_reply() {
                Reply::Ok(v) => serde_json::value::to_raw_value(&v).map_err(|e| {
                    ErrorObject::internal_error(format!("the result could not be encoded: {e}"))
                }),
                Reply::Err(e) => Err(e.into_error_object()),
                Reply::Halt(response) => response.outcome,
            }
        }))
    }
}

impl<P, F, Fut> ErasedRoute for NotificationRoute<F, P>
where
    P: DeserializeOwned + Send + 'static,
    F: Fn(P, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    fn start(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
        _dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            fut.await;
            Answer {
                body: Vec::new(),
                success: true,
            }
        }))
    }

    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        _params: Option<&RawValue>,
        ctx: Context,
        _dialect: Dialect,
        job: RequestJob,
    ) -> Result<(), (ErrorObject, RequestJob)> {
        // The reader never sends a request to a notification route; refuse
        // like it would, should that change.
        Err((ErrorObject::method_not_found(ctx.method()), job))
    }

    fn invoke(
        &self,
        params: Option<&RawValue>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            fut.await;
            Ok(RawValue::NULL.to_owned())
        }))
    }
}

/// Writes a handler's reply as a complete response envelope.
pub(crate) fn encode_reply<T: Serialize, E: RpcError>(
    dialect: Dialect,
    id: &Id,
    reply: Reply<T, E>,
) -> Answer {
    match reply {
        Reply::Ok(value) => match message::result_body(dialect, id, &value) {
            Ok(body) => Answer {
                body,
                success: true,
            },
            Err(e) => Answer {
                body: message::error_response(
                    dialect,
                    id,
                    &ErrorObject::internal_error(format!("the result could not be encoded: {e}")),
                ),
                success: false,
            },
        },
        Reply::Err(e) => Answer {
            body: message::error_response(dialect, id, &e.into_error_object()),
            success: false,
        },
        Reply::Halt(response) => {
            let success = response.outcome.is_ok();
            Answer {
                body: crate::Message::Response(response).to_json(dialect),
                success,
            }
        }
    }
}

/// Decodes params into `P`.
///
/// Absent params decode as nothing: `()` and `Option<T>` accept them, a
/// struct gets its defaults or a "missing field" error. `{}` and `[]` are
/// also accepted where `()` is expected.
pub(crate) fn decode_params<P: DeserializeOwned>(
    params: Option<&RawValue>,
) -> Result<P, ErrorObject> {
    match params {
        None => P::deserialize(Absent).map_err(ErrorObject::invalid_params),
        Some(raw) => serde_json::from_str::<P>(raw.get()).or_else(|e| {
            if is_empty_container(raw.get()) {
                P::deserialize(Absent).map_err(|_| ErrorObject::invalid_params(e))
            } else {
                Err(ErrorObject::invalid_params(e))
            }
        }),
    }
}

fn is_empty_container(text: &str) -> bool {
    let text = text.trim();
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('[').and_then(|t| t.strip_suffix(']')));
    inner.is_some_and(|inner| inner.trim().is_empty())
}

/// A deserializer for params that were not sent.
struct Absent;

impl<'de> serde::Deserializer<'de> for Absent {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    fn deserialize_map<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let empty: HashMap<String, ()> = HashMap::new();
        visitor
            .visit_map(serde::de::value::MapDeserializer::new(
                empty
                    .into_iter()
                    .map(|(k, v)| (k.into_deserializer(), v.into_deserializer())),
            ))
            .map_err(|e: serde::de::value::Error| serde::de::Error::custom(e))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_seq<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let empty: Vec<()> = Vec::new();
        visitor
            .visit_seq(serde::de::value::SeqDeserializer::new(
                empty.into_iter().map(|v| v.into_deserializer()),
            ))
            .map_err(|e: serde::de::value::Error| serde::de::Error::custom(e))
    }

    fn deserialize_tuple<V: serde::de::Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct enum identifier ignored_any
    }
}

/// Awaits `fut`, turning a panic into its message.
pub(crate) async fn catch_panic<T>(fut: impl Future<Output = T>) -> Result<T, String> {
    use futures_util::FutureExt as _;
    std::panic::AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .map_err(|payload| {
            payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string panic payload".to_owned())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn unit_params_accept_every_empty_form() {
        decode_params::<()>(None).unwrap();
        for text in ["null", "{}", "[]", "{ }", "[\n]"] {
            decode_params::<()>(Some(&raw(text))).unwrap();
        }
        assert!(decode_params::<()>(Some(&raw("[1]"))).is_err());
    }

    #[test]
    fn absent_params_fill_options_and_report_missing_fields() {
        #[derive(serde::Deserialize)]
        struct Opt {
            #[allow(dead_code)]
            a: Option<i32>,
        }
        #[derive(serde::Deserialize, Debug)]
        struct Req {
            #[allow(dead_code)]
            a: i32,
        }
        decode_params::<Opt>(None).unwrap();
        assert_eq!(decode_params::<Option<i32>>(None).unwrap(), None);
        let err = decode_params::<Req>(None).unwrap_err();
        assert!(err.message.contains("missing field `a`"), "{}", err.message);
    }
}
