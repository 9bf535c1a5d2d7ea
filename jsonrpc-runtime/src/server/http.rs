//! JSON-RPC over HTTP (feature `http`): a server that answers each `POST`
//! body through a [`Router`], with a health endpoint for load balancers and
//! a graceful drain. The status codes and the order of the drain are
//! documented on [`HttpListener`].

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::rt::Instant;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{Admission, MakeRouter, MakeRouterDyn, Server, ServerShared};
use crate::config::Config;
use crate::connection::{ConnectHook, ConnectionInfo, PeerAddr, Refusal};
use crate::message::ParseOptions;
#[cfg(feature = "tower")]
use crate::router::Metrics;
use crate::router::Router;
use crate::transport::{Acceptor, OpenOptions};

mod answers;
mod connection;
mod cors;
mod linger;
mod origin;
mod rpc;

pub(crate) use self::answers::{is_json, not_allowed, read_body, refused, text};
pub(crate) use self::connection::Body;
pub(crate) use self::connection::{serve_http, HttpService};
use self::linger::Linger;
pub(crate) use self::origin::Origins;
use self::rpc::{RpcService, RpcSetup};

/// The path JSON-RPC requests are posted to unless
/// [`HttpListener::rpc_path`] says otherwise.
const DEFAULT_RPC_PATH: &str = "/";

/// The health endpoint's path unless [`HttpListener::health_path`] says
/// otherwise.
const DEFAULT_HEALTH_PATH: &str = "/health";

/// How long an idle HTTP/1 connection stays open once a drain begins, for
/// a request already on its way.
const DRAIN_LINGER: std::time::Duration = std::time::Duration::from_millis(500);

/// Serves a [`Router`] over HTTP: one JSON-RPC message or batch per `POST`.
///
/// Build it from an [`Acceptor`] whose connections are byte streams
/// ([`TcpAcceptor`](crate::transport::TcpAcceptor),
/// [`UnixAcceptor`](crate::transport::UnixAcceptor) for HTTP over a Unix
/// socket, or with the `tls` feature `TlsAcceptor` for HTTPS), set the [`Config`] (its parse options and
/// [`max_frame_len`](Config::max_frame_len), the body size cap), the paths and
/// an optional connection limit, then [`spawn`](Self::spawn) it. The
/// returned [`Server`] is the same as a [`Listener`](super::Listener)'s:
/// [`live_connections`](Server::live_connections),
/// [`shutdown`](Server::shutdown), and [`shutdown_all`](super::shutdown_all)
/// with the other sockets of the process.
///
/// HTTP/1.1 (with keep-alive) and HTTP/2 over cleartext with prior knowledge
/// (h2c) are served on the same port; the protocol is recognised from the
/// first bytes of each connection. Over TLS the same goes, and the acceptor
/// offers `h2` and `http/1.1` to clients through ALPN (see
/// [`Acceptor::offer_protocols`]); its handshake runs on the connection's
/// task, within its handshake timeout. Every `POST` body is one message or one
/// batch, answered by [`Router::respond_with`] with the config's
/// [`parse_options`](Config::parse_options):
///
/// | request | answer |
/// |---|---|
/// | `POST` to the RPC path (default `/`) with an answer owed | `200`, `Content-Type: application/json`, the response or the batch's array (JSON-RPC errors included: a body that is not JSON is `200` with -32700) |
/// | `POST` with only notifications (or responses) | `204`, no body |
/// | a body over [`Config::max_frame_len`] (8 MiB by default), by its `Content-Length` or while a chunked body is read | `413`, then the connection closes (HTTP/1.1: after a lingering close, below) |
/// | a `Content-Type` other than `application/json` (parameters such as `; charset=utf-8` are accepted; a charset other than UTF-8 is not) | `415` |
/// | another method on the RPC path | `405`, `Allow: POST` |
/// | a `POST` the [`on_connect`](HttpListener::on_connect) hook refused | the [`Refusal`]'s status, headers and reason |
/// | `GET` or `HEAD` on the health path (default `/health`) | `200` while serving, `503` once shutdown has begun |
/// | another method on the health path | `405`, `Allow: GET, HEAD` |
/// | `GET` or `HEAD` on the metrics path, when [`metrics`](Self::metrics) is set (feature `tower`) | `200`, Prometheus text |
/// | any other path | `404` |
///
/// # Refusals are read, not reset
///
/// A refusal (`413`, a hook's `401`, `415`, ...) is sent before the body is
/// read. Over HTTP/1.1 the connection then closes, lingering: the server
/// shuts its side (the client reads the whole answer, then the end of the
/// stream) and reads and drops what the client still sends, at most
/// 64 MiB and for at most 5 seconds, until the client ends its side; then
/// it closes the socket. Closing at once with the body unread would make
/// the kernel reset the connection, and a reset can destroy the answer
/// before the client reads it: a proxy such as nginx would answer `502`
/// and count the instance as failed. A client still sending past those
/// bounds may see a reset, after the answer had its time to arrive.
/// HTTP/2 refuses the rest of a body by resetting its stream only.
///
/// # No session, no calls back
///
/// HTTP has no connection a handler could call back on: each body is
/// answered on its own. Handlers get a [`Context`](crate::Context) with no
/// peer behind it: calls through [`Context::peer`](crate::Context::peer)
/// fail at once with [`CallError::Closed`](crate::CallError::Closed)
/// ([`CloseReason::Local`](crate::CloseReason::Local)), notifications with
/// [`SendError::Closed`](crate::peer::SendError::Closed), and the request's
/// cancellation never fires. The requests of a batch run one after
/// another; separate `POST`s run concurrently.
///
/// # Who is calling
///
/// Each `POST` is its own caller: the config's
/// [`on_connect`](HttpListener::on_connect) hook runs for each, on the client's
/// address and the request's URI and headers (a refusal is the HTTP
/// answer), and handlers read the result from
/// [`Context::connection`](crate::Context::connection). The config's
/// [`gate`](Config::gate) is built afresh for each `POST` and checks each
/// of its messages. Protocol state that belongs to a connection (a
/// [`Lifecycle`](crate::policy::Lifecycle), progress, cancellation
/// notifications) does not apply.
///
/// # Graceful shutdown
///
/// [`Server::shutdown`] (or [`shutdown_all`](super::shutdown_all) with other
/// servers) drains the server in this order:
///
/// 1. The socket stops accepting, together with every other server shut
///    down with it.
/// 2. The health path answers `503`, so a load balancer that probes over a
///    connection still open takes the instance out.
/// 3. Requests already accepted run to completion, and so do the
///    connections waiting in the socket's backlog when it closed (their
///    handshakes were complete; closing would reset them). An HTTP/1.1
///    connection stays open while the server has requests in flight, and
///    at least half a second, so it can carry a probe or a request already
///    on its way, but every response on it now says `Connection: close`: it
///    serves at most one more request. An HTTP/2 connection gets a `GOAWAY`
///    at once: the streams it already opened finish, new ones go elsewhere.
/// 4. Once no request is in flight, every connection still open is closed
///    (hyper's graceful shutdown: after the response being written, if any).
/// 5. When the grace period ends, whatever is left is cut off: running
///    handlers are dropped and their connections closed.
///
/// Dropping the [`Server`] stops everything at once.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::HttpListener;
/// use jsonrpc_runtime::transport::{HttpConnector, TcpAcceptor};
/// use jsonrpc_runtime::{Config, ErrorObject, Peer, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().request("subtract", |(a, b): (i64, i64), _| async move {
///     Ok::<_, ErrorObject>(a - b)
/// });
/// let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
/// let addr = acceptor.local_addr()?;
/// let server = HttpListener::new(acceptor).connection_limit(1000).spawn(router);
///
/// let client = Peer::spawn(HttpConnector::new(format!("http://{addr}/")).connect().await?);
/// let difference: i64 = client.call("subtract", [42, 23]).await?;
/// assert_eq!(difference, 19);
///
/// client.close(Duration::from_secs(1)).await;
/// server.shutdown(Duration::from_secs(5)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub struct HttpListener<A> {
    acceptor: A,
    config: Config,
    on_connect: Option<ConnectHook>,
    limit: Option<usize>,
    rpc_path: String,
    health_path: String,
    cors: Option<Origins>,
    #[cfg(feature = "tower")]
    metrics: Option<(String, Metrics)>,
}

impl<A: fmt::Debug> fmt::Debug for HttpListener<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpListener")
            .field("acceptor", &self.acceptor)
            .field("config", &self.config)
            .field("limit", &self.limit)
            .field("rpc_path", &self.rpc_path)
            .field("health_path", &self.health_path)
            .field("cors", &self.cors)
            .finish()
    }
}

impl<A> HttpListener<A>
where
    A: Acceptor,
    A::Connection: AsyncRead + AsyncWrite + Unpin,
{
    /// A server taking connections from `acceptor`, with the default config,
    /// requests posted to `/`, health at `/health`, and no connection limit.
    ///
    /// # Examples
    ///
    /// See [`HttpListener`].
    pub fn new(mut acceptor: A) -> Self {
        acceptor.offer_protocols(&[b"h2", b"http/1.1"]);
        HttpListener {
            acceptor,
            config: Config::default(),
            on_connect: None,
            limit: None,
            rpc_path: DEFAULT_RPC_PATH.to_owned(),
            health_path: DEFAULT_HEALTH_PATH.to_owned(),
            cors: None,
            #[cfg(feature = "tower")]
            metrics: None,
        }
    }

    /// The config requests are read with: its
    /// [`parse_options`](Config::parse_options) (batches, null ids, the
    /// dialect of error answers) and its
    /// [`max_frame_len`](Config::max_frame_len), the largest body accepted
    /// (larger ones get `413`). Its framing and connection policies do not
    /// apply to HTTP.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::{Config, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .config(Config::default().max_frame_len(64 * 1024))
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Vets every `POST` with `hook` before its messages are read, as
    /// [`Listener::on_connect`](crate::server::Listener::on_connect) vets a
    /// connection: the [`ConnectionInfo`] holds the client's address and the
    /// request's path and headers, and a [`Refusal`] is the HTTP answer
    /// (its status, headers and reason).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::Refusal;
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .on_connect(|info| match info.bearer_token() {
    ///         Some("secret") => Ok(()),
    ///         _ => Err(Refusal::unauthorized("a bearer token is required")),
    ///     })
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn on_connect<F>(mut self, hook: F) -> Self
    where
        F: Fn(&mut ConnectionInfo) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.on_connect = Some(Arc::new(hook));
        self
    }

    /// Serves at most `n` connections at once. While `n` are open, no more
    /// are accepted: new clients wait in the operating system's backlog
    /// until a connection ends. HTTP clients keep connections open between
    /// requests (keep-alive), so count clients, not requests.
    ///
    /// # Examples
    ///
    /// See [`HttpListener`].
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero.
    #[track_caller]
    pub fn connection_limit(mut self, n: usize) -> Self {
        assert!(n > 0, "connection_limit must be at least 1");
        self.limit = Some(n);
        self
    }

    /// The path JSON-RPC requests are posted to (default `/`). The query
    /// string is ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .rpc_path("/rpc")
    ///     .health_path("/healthz")
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `path` does not start with `/`.
    #[track_caller]
    pub fn rpc_path(mut self, path: impl Into<String>) -> Self {
        self.rpc_path = checked_path("rpc_path", path.into());
        self
    }

    /// The path of the health endpoint (default `/health`): `GET` or `HEAD`
    /// answers `200` while the server serves and `503` once its shutdown has
    /// begun.
    ///
    /// # Examples
    ///
    /// See [`rpc_path`](Self::rpc_path).
    ///
    /// # Panics
    ///
    /// Panics if `path` does not start with `/`.
    #[track_caller]
    pub fn health_path(mut self, path: impl Into<String>) -> Self {
        self.health_path = checked_path("health_path", path.into());
        self
    }

    /// Serves `metrics` at `path` (say `/metrics`) in Prometheus' text
    /// format, for `GET` and `HEAD`: the figures of the routes the
    /// [`Metrics`] layer wraps (install it with
    /// [`Router::layer`](crate::Router::layer) on the router this server
    /// is spawned with). It keeps answering while the server drains.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::router::Metrics;
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::{ErrorObject, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let metrics = Metrics::new();
    /// let router = Router::new()
    ///     .request("add", |(a, b): (i64, i64), _| async move { Ok::<_, ErrorObject>(a + b) })
    ///     .layer(metrics.clone());
    /// let server = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .metrics("/metrics", metrics)
    ///     .spawn(router);
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `path` does not start with `/`.
    #[cfg(feature = "tower")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    #[track_caller]
    pub fn metrics(mut self, path: impl Into<String>, metrics: Metrics) -> Self {
        self.metrics = Some((checked_path("metrics path", path.into()), metrics));
        self
    }

    /// Lets pages of these origins call the server from a browser (CORS:
    /// `fetch` from `https://app.example.com` to this server, say). Their
    /// preflights are answered and their responses name their origin;
    /// requests from other pages are still served, but the browser keeps
    /// the answers from the page. By default no other origin is named, so
    /// only pages the server itself serves can read its answers.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .allowed_origins(["https://app.example.com", "http://localhost:5173"])
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.cors = Some(Origins::list(origins));
        self
    }

    /// Lets pages of any origin call the server from a browser (see
    /// [`allowed_origins`](Self::allowed_origins)): for a public API, or a
    /// development server.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .allow_any_origin()
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn allow_any_origin(mut self) -> Self {
        self.cors = Some(Origins::Any);
        self
    }

    /// The acceptor, to read its local address for example.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::HttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let listener = HttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?);
    /// println!("listening on http://{}/", listener.acceptor().local_addr()?);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn acceptor(&self) -> &A {
        &self.acceptor
    }

    /// Starts accepting: each connection's requests are answered by the
    /// routes `routes` makes for it (a [`Router`] is cloned; a closure gets
    /// the client's address).
    ///
    /// Dropping the returned [`Server`] stops it at once (see
    /// [`Server::shutdown`] for a graceful stop).
    ///
    /// # Examples
    ///
    /// See [`HttpListener`].
    ///
    /// # Panics
    ///
    /// Panics if the RPC path and the health path are the same, and outside
    /// a tokio runtime.
    #[track_caller]
    pub fn spawn(self, routes: impl MakeRouter) -> Server {
        assert_ne!(
            self.rpc_path, self.health_path,
            "the RPC path and the health path must differ"
        );
        #[cfg(feature = "tower")]
        if let Some((path, _)) = &self.metrics {
            assert!(
                path != &self.rpc_path && path != &self.health_path,
                "the metrics path must differ from the RPC and health paths"
            );
        }
        let rpc = Arc::new(RpcSetup {
            parse: self.config.parse_options(),
            max_body: self.config.max_frame_len,
            rpc_path: self.rpc_path,
            routes: Arc::new(routes),
            open: OpenOptions::default().with_hook(self.on_connect),
            config: self.config,
            #[cfg(feature = "tower")]
            metrics: self.metrics,
        });
        let make = move |addr: &PeerAddr| RpcService {
            router: rpc.routes.make(addr),
            number: crate::peer::next_connection_number(),
            addr: addr.clone(),
            setup: rpc.clone(),
        };
        serve_http(
            self.acceptor,
            self.limit,
            self.health_path,
            self.cors,
            ServerShared::new(),
            make,
        )
    }
}

#[track_caller]
pub(crate) fn checked_path(what: &str, path: String) -> String {
    assert!(
        path.starts_with('/'),
        "{what} must start with `/`, got `{path}`"
    );
    path
}
