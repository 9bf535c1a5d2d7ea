//! Servers: accept connections, run one peer per connection, shut down
//! gracefully.
//!
//! The TCP, Unix-socket, WebSocket and (feature `tls`) TLS servers are the
//! same [`Listener`] with a different [`Acceptor`]. With the `http` feature,
//! `HttpListener` serves a router over HTTP instead (one message or batch
//! per `POST`, no peer per connection), and with `mcp-http`,
//! `McpHttpListener` serves MCP over Streamable HTTP (a peer per session);
//! both return the same [`Server`], so [`shutdown_all`] stops them together
//! with the others. Accepting is split in two steps so that a
//! slow client never holds up the others: [`Acceptor::accept`] only takes
//! the next connection off the socket, and [`Acceptor::open`] (a WebSocket
//! handshake or a TLS handshake, say) runs on the connection's own task.

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::connection::{ConnectHook, ConnectionInfo, PeerAddr, Refusal};
use crate::peer::{CloseReason, Peer};
use crate::router::Router;
use crate::transport::{Acceptor, OpenOptions, Transport, TransportError};

#[cfg(feature = "http")]
mod http;
#[cfg(feature = "mcp-http")]
pub(crate) mod mcp_http;

#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use self::http::HttpListener;
#[cfg(feature = "mcp-http")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub use self::mcp_http::{
    AccessToken, McpHttpListener, ProtectedResource, SessionClose, TokenError, TokenValidator,
    Validation, DEFAULT_IDLE_TIMEOUT, DEFAULT_KEEP_ALIVE, DEFAULT_MAX_SESSIONS,
    DEFAULT_PROTOCOL_VERSIONS, DEFAULT_REPLAY_BUFFER, DEFAULT_STATELESS_VERSIONS,
};

/// The routes for each connection a [`Listener`] accepts.
///
/// A [`Router`] is cloned for each connection (its handlers are shared); a
/// closure `Fn(&PeerAddr) -> Router` builds one per connection, for routes
/// with per-connection state.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use jsonrpc_runtime::server::MakeRouter;
/// use jsonrpc_runtime::connection::PeerAddr;
/// use jsonrpc_runtime::{Context, ErrorObject, Router};
///
/// // Each connection counts its own calls.
/// let per_connection = |_addr: &PeerAddr| {
///     let calls = Arc::new(AtomicU64::new(0));
///     Router::new().request("count", move |(): (), _: Context| {
///         let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
///         async move { Ok::<_, ErrorObject>(n) }
///     })
/// };
/// let router = per_connection.make_router(&PeerAddr::Unix(None));
/// assert!(router.contains("count"));
/// ```
pub trait MakeRouter: Send + Sync + 'static {
    /// The routes for a connection from `addr`.
    fn make_router(&self, addr: &PeerAddr) -> Router;
}

impl MakeRouter for Router {
    fn make_router(&self, _addr: &PeerAddr) -> Router {
        self.clone()
    }
}

impl<F> MakeRouter for F
where
    F: Fn(&PeerAddr) -> Router + Send + Sync + 'static,
{
    fn make_router(&self, addr: &PeerAddr) -> Router {
        self(addr)
    }
}

/// Accepts connections and runs one [`Peer`] per connection.
///
/// Build it from an [`Acceptor`], set the peers' [`Config`] and an optional
/// connection limit, then [`spawn`](Self::spawn) it with a route table. The
/// returned [`Server`] counts live connections and shuts down gracefully.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector};
/// use jsonrpc_runtime::{ErrorObject, Peer, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().request("add", |(a, b): (i64, i64), _| async move {
///     Ok::<_, ErrorObject>(a + b)
/// });
/// let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
/// let addr = acceptor.local_addr()?;
/// let server = Listener::new(acceptor).connection_limit(100).spawn(router);
///
/// let client = Peer::spawn(TcpConnector::new(addr).connect().await?);
/// let sum: i64 = client.call("add", (2, 3)).await?;
/// assert_eq!(sum, 5);
///
/// client.close(Duration::from_secs(1)).await;
/// server.shutdown(Duration::from_secs(1)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Listener<A> {
    acceptor: A,
    config: Config,
    on_connect: Option<ConnectHook>,
    limit: Option<usize>,
    on_close: Option<OnClose>,
}

/// The hook [`Listener::on_close`] installs.
type OnClose = Arc<dyn Fn(&PeerAddr, &CloseReason) + Send + Sync>;

impl<A: fmt::Debug> fmt::Debug for Listener<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listener")
            .field("acceptor", &self.acceptor)
            .field("config", &self.config)
            .field("on_connect", &self.on_connect.as_ref().map(|_| "Fn"))
            .field("limit", &self.limit)
            .field("on_close", &self.on_close.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl<A: Acceptor> Listener<A> {
    /// A listener taking connections from `acceptor`, with the default
    /// config and no connection limit.
    pub fn new(acceptor: A) -> Self {
        Listener {
            acceptor,
            config: Config::default(),
            on_connect: None,
            limit: None,
            on_close: None,
        }
    }

    /// Calls `hook` with each connection's address and why it closed, once
    /// it has (for logs: a client that broke the framing, say, ends with
    /// [`CloseReason::Transport`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::Listener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::{CloseReason, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = Listener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .on_close(|addr, reason| {
    ///         if let CloseReason::Transport(e) = reason {
    ///             eprintln!("{addr}: {e}");
    ///         }
    ///     })
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn on_close(
        mut self,
        hook: impl Fn(&PeerAddr, &CloseReason) + Send + Sync + 'static,
    ) -> Self {
        self.on_close = Some(Arc::new(hook));
        self
    }

    /// Installs a hook that runs once for each connection, before any of its
    /// messages is read: it sees who is calling (the [`ConnectionInfo`]:
    /// the client's address, and for WebSocket the handshake's path and
    /// headers), can attach state that handlers read back with
    /// [`Context::connection`](crate::Context::connection) (the
    /// authenticated user), and can refuse the connection.
    ///
    /// Over TCP, Unix or TLS it runs once the connection is open, and a
    /// refused connection is closed (a raw socket has no way to say why;
    /// the reason is logged at `debug`). A `WebSocketAcceptor` runs it
    /// during the handshake, so a refused client gets the [`Refusal`]'s HTTP
    /// status, headers and reason instead of an upgrade.
    /// [`HttpListener::on_connect`](crate::server::HttpListener::on_connect)
    /// and `McpHttpListener::on_connect` run it for every `POST`.
    ///
    /// The hook is synchronous and runs on the connection's task: check a
    /// token's signature here, and leave slow lookups to a middleware layer
    /// or the handler, which can read the same [`ConnectionInfo`].
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(feature = "websocket")] {
    /// use jsonrpc_runtime::connection::Refusal;
    /// use jsonrpc_runtime::server::Listener;
    /// use jsonrpc_runtime::transport::WebSocketAcceptor;
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// #[derive(Clone)]
    /// struct User(String);
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let router = Router::new().request("whoami", |(): (), cx: Context| async move {
    ///     let user = cx.connection().get::<User>().map(|u| u.0.clone());
    ///     Ok::<_, ErrorObject>(user)
    /// });
    /// let server = Listener::new(WebSocketAcceptor::bind("127.0.0.1:0").await?)
    ///     .on_connect(|info| match info.bearer_token() {
    ///         Some("secret-for-alice") => {
    ///             info.insert(User("alice".into()));
    ///             Ok(())
    ///         }
    ///         _ => Err(Refusal::unauthorized("a valid bearer token is required")),
    ///     })
    ///     .spawn(router);
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// # }
    /// ```
    pub fn on_connect<F>(mut self, hook: F) -> Self
    where
        F: Fn(&mut ConnectionInfo) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.on_connect = Some(Arc::new(hook));
        self
    }

    /// The config of every connection's peer, including the framing of
    /// byte-stream sockets and the frame size cap (default:
    /// [`Config::default`]).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Serves at most `n` connections at once. While `n` are open, no more
    /// are accepted: new clients wait in the operating system's backlog
    /// until a connection ends.
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

    /// The acceptor, to read its local address for example.
    pub fn acceptor(&self) -> &A {
        &self.acceptor
    }

    /// Starts accepting: each connection gets a peer of its own serving the
    /// routes `routes` makes for it (a [`Router`] is cloned).
    ///
    /// The peer of a connection lives until the client leaves or the
    /// server shuts down. Dropping the returned [`Server`] stops it at once
    /// (see [`Server::shutdown`] for a graceful stop).
    ///
    /// # Examples
    ///
    /// See [`Listener`].
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn(self, routes: impl MakeRouter) -> Server {
        let shared = ServerShared::new();
        let setup = ConnectionSetup {
            open: OpenOptions::new(&self.config).with_hook(self.on_connect),
            config: self.config,
            routes: Arc::new(routes),
            on_close: self.on_close,
        };
        let serve = serve_peer(&shared, &setup);
        Server::start(self.acceptor, self.limit, shared, serve)
    }
}

/// A running [`Listener`] (or, with the `http` feature, `HttpListener`, and
/// with `mcp-http`, `McpHttpListener`): counts its connections and shuts
/// them down.
///
/// Dropping it stops accepting and closes every connection at once; an
/// acceptor with a socket file removes it.
///
/// # Examples
///
/// See [`Listener`].
#[must_use = "dropping the server stops it at once"]
pub struct Server {
    shared: Arc<ServerShared>,
    accept: Option<JoinHandle<()>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("live_connections", &self.live_connections())
            .finish_non_exhaustive()
    }
}

struct ServerShared {
    /// Stop accepting; each connection closes with `grace`.
    stop: CancellationToken,
    /// Close every connection now.
    abort: CancellationToken,
    grace: Mutex<Duration>,
    live: AtomicUsize,
    tracker: TaskTracker,
}

impl ServerShared {
    fn new() -> Arc<ServerShared> {
        Arc::new(ServerShared {
            stop: CancellationToken::new(),
            abort: CancellationToken::new(),
            grace: Mutex::new(Duration::ZERO),
            live: AtomicUsize::new(0),
            tracker: TaskTracker::new(),
        })
    }

    /// The grace period [`Server::shutdown`] was given.
    fn grace(&self) -> Duration {
        *self.grace.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resolves once a shutdown has begun and its grace has run out.
    async fn past_grace(&self) {
        self.stop.cancelled().await;
        crate::rt::sleep(self.grace()).await;
    }
}

impl Server {
    /// Starts accepting from `acceptor` with at most `limit` connections at
    /// once, handing each to `serve`.
    fn start<A: Acceptor>(
        acceptor: A,
        limit: Option<usize>,
        shared: Arc<ServerShared>,
        serve: impl FnMut(&A, A::Connection, PeerAddr, Admission) + Send + 'static,
    ) -> Server {
        let limit = limit.map(|n| Arc::new(Semaphore::new(n)));
        let accept = crate::rt::spawn(accept_loop(acceptor, limit, shared.clone(), serve));
        Server {
            shared,
            accept: Some(accept),
        }
    }

    /// How many connections are open right now (accepted and not yet
    /// ended, handshakes included).
    pub fn live_connections(&self) -> usize {
        self.shared.live.load(Ordering::Acquire)
    }

    /// Stops accepting, then closes every connection gracefully: each peer
    /// refuses new requests (with -32001) and gives the ones already
    /// running up to `grace` to finish, as
    /// [`Peer::close`](crate::Peer::close) does. Returns once every
    /// connection has ended and the socket is closed (a Unix socket's file
    /// removed). Connections already waiting in the socket's backlog when
    /// it stops are taken in and drained with the rest (their requests get
    /// the closing error), not reset. An HTTP server drains its own way
    /// within the same `grace`
    /// (its health endpoint answers 503, accepted requests finish; see
    /// `HttpListener`).
    ///
    /// # Examples
    ///
    /// See [`Listener`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the server: the connections still open
    /// are closed at once.
    pub async fn shutdown(self, grace: Duration) {
        shutdown_all([self], grace).await;
    }

    /// Stops accepting and asks every connection to close within `grace`.
    fn begin_shutdown(&self, grace: Duration) {
        *self.shared.grace.lock().unwrap_or_else(|p| p.into_inner()) = grace;
        self.shared.stop.cancel();
    }

    /// Waits for the accept loop and every connection to end.
    async fn finish_shutdown(mut self) {
        if let Some(accept) = self.accept.take() {
            let _ = accept.await;
        }
        self.shared.tracker.close();
        self.shared.tracker.wait().await;
    }
}

/// Shuts several servers down together: every one stops accepting at the
/// same moment, then their connections close gracefully as
/// [`Server::shutdown`] does, all within the same `grace`. Returns once every
/// connection of every server has ended.
///
/// Shutting servers down one after another would leave the later ones
/// accepting new clients while the earlier ones drain.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::{shutdown_all, Listener};
/// use jsonrpc_runtime::transport::{TcpAcceptor, UnixAcceptor};
/// use jsonrpc_runtime::Router;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let dir = std::env::temp_dir().join(format!("shutdown-all-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let router = Router::new();
/// let tcp = Listener::new(TcpAcceptor::bind("127.0.0.1:0").await?).spawn(router.clone());
/// let unix = Listener::new(UnixAcceptor::bind(dir.join("rpc.sock")).await?).spawn(router);
/// shutdown_all([tcp, unix], Duration::from_secs(1)).await;
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// # Cancel safety
///
/// Dropping the future drops the servers: the connections still open are
/// closed at once.
pub async fn shutdown_all(servers: impl IntoIterator<Item = Server>, grace: Duration) {
    let servers: Vec<Server> = servers.into_iter().collect();
    for server in &servers {
        server.begin_shutdown(grace);
    }
    futures_util::future::join_all(servers.into_iter().map(Server::finish_shutdown)).await;
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.abort.cancel();
        self.shared.stop.cancel();
    }
}

/// Counts one connection while it lives.
struct LiveGuard(Arc<ServerShared>);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Whether an accept error concerns one connection only.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// What every connection of a listener is set up with.
#[derive(Clone)]
struct ConnectionSetup {
    config: Config,
    open: OpenOptions,
    routes: Arc<dyn MakeRouterDyn>,
    on_close: Option<OnClose>,
}

/// What an accepted connection holds while it lives: its place in the live
/// count and, under a connection limit, its permit.
struct Admission {
    _live: LiveGuard,
    _permit: Option<OwnedSemaphorePermit>,
}

/// Accepts connections until the server stops, within the connection limit,
/// and hands each one to `serve` (which spawns its task on the server's
/// tracker). Errors about one connection are skipped; others (out of file
/// descriptors) back off and retry. The acceptor is dropped on the way out,
/// so the socket stops accepting (and a Unix socket's file goes) as soon as
/// the server stops.
async fn accept_loop<A: Acceptor>(
    mut acceptor: A,
    limit: Option<Arc<Semaphore>>,
    shared: Arc<ServerShared>,
    mut serve: impl FnMut(&A, A::Connection, PeerAddr, Admission),
) {
    const MIN_BACKOFF: Duration = Duration::from_millis(10);
    const MAX_BACKOFF: Duration = Duration::from_secs(1);
    let mut backoff = MIN_BACKOFF;
    loop {
        let permit = match &limit {
            Some(limit) => tokio::select! {
                biased;
                () = shared.stop.cancelled() => break,
                permit = limit.clone().acquire_owned() => permit.ok(),
            },
            None => None,
        };
        let accepted = tokio::select! {
            biased;
            () = shared.stop.cancelled() => break,
            accepted = acceptor.accept() => accepted,
        };
        let (connection, addr) = match accepted {
            Ok(accepted) => {
                backoff = MIN_BACKOFF;
                accepted
            }
            Err(e) if is_connection_error(&e) => {
                tracing::debug!(error = %e, "a client left before its connection was accepted");
                continue;
            }
            Err(e) => {
                // Out of file descriptors or memory: give the live
                // connections a moment to end, then try again.
                tracing::error!(error = %e, retry_in = ?backoff, "accepting a connection failed");
                tokio::select! {
                    () = shared.stop.cancelled() => break,
                    () = crate::rt::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
                continue;
            }
        };
        shared.live.fetch_add(1, Ordering::AcqRel);
        let admission = Admission {
            _live: LiveGuard(shared.clone()),
            _permit: permit,
        };
        serve(&acceptor, connection, addr, admission);
    }
    if !shared.abort.is_cancelled() {
        sweep_backlog(&mut acceptor, &shared, &mut serve).await;
    }
    // The acceptor (and a Unix socket's file) goes here.
    drop(acceptor);
}

/// The most connections taken from the backlog when a server stops.
const MAX_SWEPT: usize = 4096;

/// Takes in the connections waiting in the socket's backlog when the server
/// stopped: the operating system completed their handshakes, and their
/// clients have often sent a request already. Closing the socket would reset
/// them; served, they drain with the rest (an HTTP request is answered, a
/// peer's requests get the closing error). Only what is ready now is taken,
/// at most [`MAX_SWEPT`], past the connection limit if need be: the backlog
/// is bounded by the operating system, and these connections only drain.
async fn sweep_backlog<A: Acceptor>(
    acceptor: &mut A,
    shared: &Arc<ServerShared>,
    serve: &mut impl FnMut(&A, A::Connection, PeerAddr, Admission),
) {
    use futures_util::FutureExt as _;
    // Let the reactor see the connections that arrived since it last ran.
    tokio::task::yield_now().await;
    for _ in 0..MAX_SWEPT {
        let (connection, addr) = match acceptor.accept().now_or_never() {
            Some(Ok(accepted)) => accepted,
            Some(Err(e)) if is_connection_error(&e) => continue,
            _ => break,
        };
        tracing::debug!(%addr, "serving a connection from the backlog of a stopped server");
        shared.live.fetch_add(1, Ordering::AcqRel);
        let admission = Admission {
            _live: LiveGuard(shared.clone()),
            _permit: None,
        };
        serve(acceptor, connection, addr, admission);
    }
}

/// Runs one peer per connection: what [`Listener::spawn`] accepts with.
fn serve_peer<A: Acceptor>(
    shared: &Arc<ServerShared>,
    setup: &ConnectionSetup,
) -> impl FnMut(&A, A::Connection, PeerAddr, Admission) + use<A> {
    let (shared, setup) = (shared.clone(), setup.clone());
    move |acceptor, connection, addr, admission| {
        let open = acceptor.open(connection, &setup.open);
        let connection = Connection {
            shared: shared.clone(),
            setup: setup.clone(),
            addr,
            _admission: admission,
        };
        shared.tracker.spawn(connection.run(open));
    }
}

/// [`MakeRouter`] behind a pointer, so the accept loop is not generic over
/// it.
trait MakeRouterDyn: Send + Sync {
    fn make(&self, addr: &PeerAddr) -> Router;
}

impl<M: MakeRouter> MakeRouterDyn for M {
    fn make(&self, addr: &PeerAddr) -> Router {
        self.make_router(addr)
    }
}

/// One accepted connection's task.
struct Connection {
    shared: Arc<ServerShared>,
    setup: ConnectionSetup,
    addr: PeerAddr,
    _admission: Admission,
}

impl Connection {
    async fn run(self, open: impl Future<Output = Result<Transport, TransportError>>) {
        let shared = &self.shared;
        // A connection still opening when the server stops (or taken from
        // the backlog after) opens within the grace, then drains.
        let mut transport = tokio::select! {
            biased;
            () = shared.abort.cancelled() => return,
            () = shared.past_grace() => return,
            opened = open => match opened {
                Ok(transport) => transport,
                Err(e) => {
                    return tracing::debug!(addr = %self.addr, error = %e, "dropping a connection that did not open");
                }
            },
        };
        transport.connection.set_addr_if_unknown(&self.addr);
        if !transport.vetted {
            if let Err(refusal) = self.setup.open.vet(&mut transport.connection) {
                return tracing::debug!(addr = %self.addr, %refusal, "refusing a connection");
            }
        }
        let peer = Peer::builder()
            .config(self.setup.config.clone())
            .router(self.setup.routes.make(&self.addr))
            .spawn(transport);
        let reason = tokio::select! {
            reason = peer.closed() => reason,
            () = shared.stop.cancelled() => {
                let grace = shared.grace();
                tokio::select! {
                    _ = peer.close(grace) => {}
                    () = shared.abort.cancelled() => { peer.close_now().await; }
                }
                peer.closed().await
            }
        };
        if let Some(hook) = &self.setup.on_close {
            hook(&self.addr, &reason);
        }
    }
}
