//! Routes: method names bound to typed handlers.
//!
//! A [`Router`] maps method names to routes; each route decodes its params
//! straight from the frame into the handler's type and encodes the
//! handler's [`Reply`]. The router never runs a connection: the inbound
//! pipeline hands it requests through the seam in `task`, and
//! [`Router::invoke`] runs one route in place.

use rustc_hash::FxHashMap;
use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::context::Context;
use crate::message::{DecodeParams, DecodedParams, RawJson};
use crate::message::{ErrorObject, RpcError};

#[cfg(feature = "tower")]
mod layer;
mod panic;
mod respond;
mod route;
mod subscription;
mod task;

#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use self::layer::{MethodStats, Metrics, MetricsService, RouteService, RpcRequest, RpcResult};

pub(crate) use self::panic::{catch_panic, first_step, panic_answer};
pub use self::route::Route;
pub(crate) use self::route::{ErasedRoute, Pace, RouteKind, Timed};
use self::route::{NotificationRoute, RequestRoute};
pub use self::subscription::{
    PendingSubscription, SubscriptionClosed, SubscriptionResult, SubscriptionSink, TrySendError,
    DEFAULT_FEED_CAPACITY,
};
pub(crate) use self::task::{
    Admission, Answer, BoxFuture, Ending, Held, Job, RequestTask, Runner, Ticket,
};
pub use crate::peer::WhenFull;

/// What a request handler produced: a result, a domain error, or an
/// answer the handler built itself.
///
/// Handlers usually return `Result<T, E>`; return `Reply` when a handler
/// needs [`Reply::Raw`] (to pass on JSON it already has, or an error object
/// outside its error type).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Reply, Router};
/// use serde_json::value::RawValue;
///
/// let router = Router::new().request("add_or_raw", |(a, b): (i64, i64), _ctx: Context| async move {
///     if a == 0 && b == 0 {
///         return Reply::Raw(Err(ErrorObject::new(-32001, "Both zero")));
///     }
///     if a < 0 {
///         // JSON from elsewhere, sent as it is.
///         let raw = RawValue::from_string("{\"cached\": true}".to_owned()).unwrap();
///         return Reply::Raw(Ok(raw));
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
    /// Answer with this raw result or error object as it is, skipping result
    /// encoding and error mapping. The answer carries the request's id.
    Raw(Result<Box<RawValue>, ErrorObject>),
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
    routes: FxHashMap<Arc<str>, Route>,
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
    /// The trait the table serves, as `Trait<Args>` (for messages, and to
    /// tell two instances of one generic trait apart).
    fn service(&self) -> &str {
        ""
    }
    /// The table's type: one per `#[rpc]` trait, whatever implements it.
    fn table_type(&self) -> TypeId {
        TypeId::of::<Self>()
    }
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
    /// use jsonrpc_runtime::router::ErrorMapping;
    /// use jsonrpc_runtime::Router;
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
    /// A generated `into_router` already serves the trait's `#[rpc]`
    /// supertraits; merge is for routers of unrelated traits and routes
    /// written by hand:
    ///
    /// ```
    /// # use jsonrpc_runtime::{rpc, Context, ErrorObject, Router};
    /// #[rpc]
    /// trait Base {
    ///     #[rpc(request = "ping")]
    ///     async fn ping(&self) -> String;
    /// }
    ///
    /// #[rpc]
    /// trait Full: Base {
    ///     #[rpc(request = "add")]
    ///     async fn add(&self, a: i64, b: i64) -> i64;
    /// }
    ///
    /// struct Service;
    /// impl Base for Service {
    ///     async fn ping(&self) -> String { "pong".into() }
    /// }
    /// impl Full for Service {
    ///     async fn add(&self, a: i64, b: i64) -> i64 { a + b }
    /// }
    ///
    /// let health = Router::new().request("health", |(): (), _: Context| async {
    ///     Ok::<_, ErrorObject>("ok")
    /// });
    /// let router = Full::into_router(Service).merge(health);
    /// assert!(router.contains("ping") && router.contains("add") && router.contains("health"));
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if both routers have a route for the same method; use
    /// [`try_merge`](Router::try_merge) to get an error instead.
    #[track_caller]
    pub fn merge(self, other: Router) -> Self {
        match self.try_merge(other) {
            Ok(router) => router,
            Err(e) => panic!("{e}"),
        }
    }

    /// Adds every route of `other`, unless both routers have a route for
    /// the same method.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// let ping = || Router::new().request("ping", |(): (), _: Context| async { Ok::<_, ErrorObject>("pong") });
    /// let err = ping().try_merge(ping()).unwrap_err();
    /// assert_eq!(err.method(), "ping");
    /// ```
    ///
    /// # Errors
    ///
    /// [`MergeError`] naming the first method both routers have; neither
    /// router is changed (both are dropped).
    pub fn try_merge(mut self, other: Router) -> Result<Self, MergeError> {
        if let Some(name) = other.methods().find(|name| self.contains(name)) {
            return Err(MergeError {
                method: name.to_owned(),
            });
        }
        self.routes.extend(other.routes);
        self.tables.extend(other.tables);
        Ok(self)
    }

    /// Adds the routes of an `#[rpc]` supertrait's router (what a
    /// generated `into_router` does for each supertrait). A table `self`
    /// already serves, the same trait reached through two supertraits (a
    /// diamond), is skipped; any other method both have is a mistake.
    ///
    /// # Panics
    ///
    /// Panics, naming both traits, if a method of `other` is already served
    /// by another table or route of `self`.
    #[track_caller]
    pub(crate) fn merge_supertrait(mut self, other: Router) -> Self {
        for table in other.tables {
            let same = |t: &Arc<dyn RouteTable>| {
                t.table_type() == table.table_type() && t.service() == table.service()
            };
            if self.tables.iter().any(same) {
                continue;
            }
            for route in table.routes() {
                if let Some(first) = self.tables.iter().find(|t| t.route(&route.name).is_some()) {
                    panic!(
                        "the method `{}` is served by both `{}` and `{}`: a trait is served \
                         together with its supertraits, so their wire names must differ",
                        route.name,
                        first.service(),
                        table.service(),
                    );
                }
                assert!(
                    !self.routes.contains_key(&route.name),
                    "the method `{}` is registered twice",
                    route.name
                );
            }
            self.tables.push(table);
        }
        for (name, route) in other.routes {
            assert!(
                !self.contains(&name),
                "the method `{name}` is registered twice"
            );
            self.routes.insert(name, route);
        }
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

    /// Every route, of the map and of the generated tables.
    #[cfg(feature = "tower")]
    pub(crate) fn all_routes(&self) -> impl Iterator<Item = &Route> {
        self.routes
            .values()
            .chain(self.tables.iter().flat_map(|t| t.routes().iter()))
    }

    /// Adds a route built elsewhere (a layered copy of one of this router's).
    #[cfg(feature = "tower")]
    pub(crate) fn insert_route(&mut self, route: Route) {
        self.routes.insert(route.name.clone(), route);
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
        let fut = route.handler.invoke(params.map(RawJson::from), ctx)?;
        match catch_panic(fut).await {
            Ok(outcome) => outcome,
            Err(panic) => Err(panic_answer(method, &panic)),
        }
    }

    /// The route a request for `method` goes to, which must be a request
    /// route: the routing step of admission, on a connection and in process
    /// alike.
    #[inline]
    pub(crate) fn request_route(&self, method: &str) -> Result<&Route, ErrorObject> {
        match self.get(method) {
            Some(route) if route.kind == RouteKind::Request => Ok(route),
            Some(_) => Err(ErrorObject::new(
                crate::message::ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: `{method}` is a notification; send it without an id"),
            )),
            None => Err(ErrorObject::method_not_found(method)),
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
        self.routes
            .insert(name.clone(), Route::new(kind, name, handler));
        self
    }
}

/// Two routers merged with [`Router::try_merge`] both have a route for
/// one method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    method: String,
}

impl MergeError {
    /// The method both routers have.
    pub fn method(&self) -> &str {
        &self.method
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the method `{}` is registered twice: both routers have a route for it",
            self.method
        )
    }
}

impl std::error::Error for MergeError {}

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

/// The route of the method decodes a large frame's params while the frame is
/// classified.
impl DecodeParams for Router {
    fn decode_params(&self, method: &str, text: &str) -> Option<(DecodedParams, usize)> {
        self.get(method)?.handler.decode(text)
    }
}
