//! Middleware: tower layers around every route of a router (feature
//! `tower`).
//!
//! [`Router::layer`] wraps each route in a [`tower::Layer`]: the innermost
//! service, [`RouteService`], decodes a [`RpcRequest`]'s params and runs the
//! route's handler; every layer around it sees the method, the id, the raw
//! params and the [`Context`], and the outcome: the encoded result or the
//! [`ErrorObject`] that goes on the wire. tower's own layers (timeout,
//! concurrency limit, rate limit) compose as they do for any service; an
//! error they add that is not an [`ErrorObject`] is answered -32603 with its
//! message. Routes of a router without layers run as before, at no cost.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use serde_json::value::RawValue;
use tower::{Layer, Service, ServiceExt as _};

use super::panic::{catch_panic, panic_answer};
use super::route::{encode_reply, ErasedRoute, Route, RouteKind};
use super::task::{Answer, BoxFuture};
use super::{Reply, Router};
use crate::context::Context;
use crate::id::Id;
use crate::message::ErrorObject;
use crate::message::{Dialect, RawJson};
use crate::rt::Instant;

/// What a layered route's services are called with: one inbound request or
/// notification.
#[derive(Debug)]
pub struct RpcRequest {
    /// The method, as routed.
    pub method: Arc<str>,
    /// The request's id; `None` for a notification.
    pub id: Option<Id>,
    /// The params as received.
    pub params: Option<Box<RawValue>>,
    /// The handler's context.
    pub ctx: Context,
}

/// What a layered route's services answer: the encoded result; the error
/// is the [`ErrorObject`] that goes on the wire.
pub type RpcResult = Result<Box<RawValue>, ErrorObject>;

/// The innermost service of a layered route: decodes the params and runs
/// the route's handler (a panic is answered -32603).
#[derive(Clone)]
pub struct RouteService {
    handler: Arc<dyn ErasedRoute>,
}

impl std::fmt::Debug for RouteService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouteService").finish_non_exhaustive()
    }
}

impl Service<RpcRequest> for RouteService {
    type Response = Box<RawValue>;
    type Error = ErrorObject;
    type Future = BoxFuture<RpcResult>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: RpcRequest) -> Self::Future {
        let method = request.method.clone();
        let started = self
            .handler
            .invoke(request.params.as_deref().map(RawJson::from), request.ctx);
        Box::pin(async move {
            match catch_panic(started?).await {
                Ok(outcome) => outcome,
                Err(panic) => Err(panic_answer(&method, &panic)),
            }
        })
    }
}

/// The wire error for what a layer failed with.
fn error_object(error: tower::BoxError) -> ErrorObject {
    match error.downcast::<ErrorObject>() {
        Ok(error) => *error,
        Err(other) => ErrorObject::internal_error(other),
    }
}

/// A route whose handler runs behind a service stack.
struct Layered<S> {
    service: S,
    kind: RouteKind,
}

impl<S> Layered<S>
where
    S: Service<RpcRequest, Response = Box<RawValue>> + Clone + Send + Sync + 'static,
    S::Error: Into<tower::BoxError>,
    S::Future: Send,
{
    fn call(&self, params: Option<RawJson<'_>>, ctx: Context) -> BoxFuture<RpcResult> {
        let params = match params.map(RawJson::to_raw_value).transpose() {
            Ok(params) => params,
            Err(e) => return Box::pin(std::future::ready(Err(ErrorObject::invalid_params(e)))),
        };
        let request = RpcRequest {
            method: ctx.method.clone(),
            id: ctx.id.clone(),
            params,
            ctx,
        };
        let service = self.service.clone();
        Box::pin(async move {
            service
                .oneshot(request)
                .await
                .map_err(|e| error_object(e.into()))
        })
    }
}

impl<S> ErasedRoute for Layered<S>
where
    S: Service<RpcRequest, Response = Box<RawValue>> + Clone + Send + Sync + 'static,
    S::Error: Into<tower::BoxError>,
    S::Future: Send,
{
    fn start(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject> {
        let id = ctx.id.clone().unwrap_or(Id::NULL);
        let kind = self.kind;
        let outcome = self.call(params, ctx);
        Ok(Box::pin(async move {
            let outcome = outcome.await;
            if kind == RouteKind::Notification {
                return Answer {
                    body: bytes::Bytes::new(),
                    success: outcome.is_ok(),
                };
            }
            encode_reply::<(), ErrorObject>(dialect, &id, Reply::Raw(outcome))
        }))
    }

    fn invoke(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
    ) -> Result<BoxFuture<RpcResult>, ErrorObject> {
        Ok(self.call(params, ctx))
    }
}

impl Router {
    /// Wraps every route registered so far (hand-built or from `#[rpc]`) in
    /// `layer`: the route's [`RouteService`] becomes `layer.layer(..)`, which
    /// sees each [`RpcRequest`] and its outcome. Layers added later wrap the
    /// earlier ones; routes registered after this call are not wrapped.
    ///
    /// A layered route boxes its future and copies its params once; a
    /// router without layers pays nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::router::Metrics;
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let metrics = Metrics::new();
    /// let router = Router::new()
    ///     .request("add", |(a, b): (i64, i64), _: Context| async move {
    ///         Ok::<_, ErrorObject>(a + b)
    ///     })
    ///     .layer(metrics.clone())
    ///     // Any tower layer, for example a timeout:
    ///     .layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(5)));
    /// let answer = router.respond(br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}"#).await;
    /// assert_eq!(&answer.unwrap()[..], br#"{"jsonrpc":"2.0","id":1,"result":5}"#);
    /// assert!(metrics.render_prometheus().contains(r#"jsonrpc_requests_total{method="add",outcome="ok"} 1"#));
    /// # });
    /// ```
    #[must_use]
    pub fn layer<L>(self, layer: L) -> Router
    where
        L: Layer<RouteService>,
        L::Service: Service<RpcRequest, Response = Box<RawValue>> + Clone + Send + Sync + 'static,
        <L::Service as Service<RpcRequest>>::Error: Into<tower::BoxError>,
        <L::Service as Service<RpcRequest>>::Future: Send,
    {
        let routes: Vec<Route> = self.all_routes().cloned().collect();
        let mut layered = Router::new();
        for route in routes {
            // A subscription's routes run beside the request pipeline a
            // layer wraps: they are served as they are.
            if route.handler.is_subscription() {
                layered.insert_route(route);
                continue;
            }
            let service = layer.layer(RouteService {
                handler: route.handler.clone(),
            });
            layered.insert_route(Route {
                handler: Arc::new(Layered {
                    service,
                    kind: route.kind,
                }),
                ..route
            });
        }
        layered
    }
}

/// Per-method counts and latencies of every request through a router, as a
/// tower layer: `router.layer(metrics.clone())`, then read
/// [`render_prometheus`](Metrics::render_prometheus) (for a `/metrics`
/// endpoint) or [`snapshot`](Metrics::snapshot).
///
/// Clones share the same figures.
///
/// # Examples
///
/// See [`Router::layer`].
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    inner: Arc<Mutex<BTreeMap<Arc<str>, MethodStats>>>,
}

/// The figures of one method.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MethodStats {
    /// Requests and notifications answered with a result (or run, for a
    /// notification).
    pub ok: u64,
    /// Requests answered with an error.
    pub errors: u64,
    /// Requests and notifications whose handler was stopped before it
    /// ended: cancelled by the other side, cut off by the connection
    /// closing or a timeout layer, or dropped by the server. They are not in
    /// the histogram (they have no outcome to time).
    pub cancelled: u64,
    /// Time from the call into the route's services to its outcome, summed.
    pub total_time: Duration,
    /// How many took at most each of [`Metrics::BUCKETS`] seconds
    /// (cumulative, as Prometheus histograms count).
    pub buckets: [u64; 8],
}

impl Metrics {
    /// The histogram's upper bounds, in seconds.
    pub const BUCKETS: [f64; 8] = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0];

    /// Empty figures.
    pub fn new() -> Self {
        Metrics::default()
    }

    /// The figures of every method seen so far, by name.
    pub fn snapshot(&self) -> BTreeMap<Arc<str>, MethodStats> {
        self.lock().clone()
    }

    /// The figures in Prometheus' text format, each metric with its
    /// `# HELP` and `# TYPE` lines: `jsonrpc_requests_total` by method and
    /// outcome (`ok`, `error`, `cancelled`), and the
    /// `jsonrpc_request_duration_seconds` histogram by method (requests that
    /// ended with an answer).
    pub fn render_prometheus(&self) -> String {
        let stats = self.lock();
        let stats = stats.iter().map(|(method, s)| (escape_label(method), s));
        let mut out = String::new();
        out.push_str(
            "# HELP jsonrpc_requests_total JSON-RPC requests and notifications handled, \
             by method and outcome (ok, error, cancelled: stopped before it ended).\n",
        );
        out.push_str("# TYPE jsonrpc_requests_total counter\n");
        let stats: Vec<_> = stats.collect();
        for (method, s) in &stats {
            let _ = writeln!(
                out,
                "jsonrpc_requests_total{{method=\"{method}\",outcome=\"ok\"}} {}",
                s.ok
            );
            let _ = writeln!(
                out,
                "jsonrpc_requests_total{{method=\"{method}\",outcome=\"error\"}} {}",
                s.errors
            );
            let _ = writeln!(
                out,
                "jsonrpc_requests_total{{method=\"{method}\",outcome=\"cancelled\"}} {}",
                s.cancelled
            );
        }
        out.push_str(
            "# HELP jsonrpc_request_duration_seconds Time from a request's call into its \
             route to its outcome, by method (cancelled requests left out).\n",
        );
        out.push_str("# TYPE jsonrpc_request_duration_seconds histogram\n");
        for (method, s) in &stats {
            for (bound, count) in Metrics::BUCKETS.iter().zip(s.buckets) {
                let _ = writeln!(
                    out,
                    "jsonrpc_request_duration_seconds_bucket{{method=\"{method}\",le=\"{bound}\"}} {count}"
                );
            }
            let count = s.ok + s.errors;
            let _ = writeln!(
                out,
                "jsonrpc_request_duration_seconds_bucket{{method=\"{method}\",le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "jsonrpc_request_duration_seconds_sum{{method=\"{method}\"}} {}",
                s.total_time.as_secs_f64()
            );
            let _ = writeln!(
                out,
                "jsonrpc_request_duration_seconds_count{{method=\"{method}\"}} {count}"
            );
        }
        out
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<Arc<str>, MethodStats>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn record_cancelled(&self, method: &Arc<str>) {
        self.lock().entry(method.clone()).or_default().cancelled += 1;
    }

    fn record(&self, method: &Arc<str>, ok: bool, took: Duration) {
        let mut stats = self.lock();
        let s = stats.entry(method.clone()).or_default();
        if ok {
            s.ok += 1;
        } else {
            s.errors += 1;
        }
        s.total_time += took;
        let secs = took.as_secs_f64();
        for (bound, count) in Metrics::BUCKETS.iter().zip(s.buckets.iter_mut()) {
            if secs <= *bound {
                *count += 1;
            }
        }
    }
}

/// A method name as a Prometheus label value: backslash, double quote and
/// newline escaped.
fn escape_label(method: &str) -> std::borrow::Cow<'_, str> {
    if !method.contains(['\\', '"', '\n']) {
        return method.into();
    }
    let mut escaped = String::with_capacity(method.len() + 2);
    for c in method.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            '\n' => escaped.push_str("\\n"),
            c => escaped.push(c),
        }
    }
    escaped.into()
}

impl<S> Layer<S> for Metrics {
    type Service = MetricsService<S>;

    fn layer(&self, inner: S) -> MetricsService<S> {
        MetricsService {
            inner,
            metrics: self.clone(),
        }
    }
}

/// The service [`Metrics`] wraps a route in.
#[derive(Clone, Debug)]
pub struct MetricsService<S> {
    inner: S,
    metrics: Metrics,
}

impl<S> Service<RpcRequest> for MetricsService<S>
where
    S: Service<RpcRequest, Response = Box<RawValue>>,
    S::Future: Send + 'static,
    S::Error: 'static,
{
    type Response = Box<RawValue>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Box<RawValue>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: RpcRequest) -> Self::Future {
        // Made out here and moved in: a future dropped before its first
        // poll counts as cancelled too.
        let mut running = Running {
            method: request.method.clone(),
            metrics: Some(self.metrics.clone()),
        };
        let started = Instant::now();
        let fut = self.inner.call(request);
        Box::pin(async move {
            let outcome = fut.await;
            if let Some(metrics) = running.metrics.take() {
                metrics.record(&running.method, outcome.is_ok(), started.elapsed());
            }
            outcome
        })
    }
}

/// A request the metrics layer has not seen end: dropped as it is, it
/// counts as cancelled.
struct Running {
    method: Arc<str>,
    /// Taken when the request ends.
    metrics: Option<Metrics>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(metrics) = self.metrics.take() {
            metrics.record_cancelled(&self.method);
        }
    }
}
