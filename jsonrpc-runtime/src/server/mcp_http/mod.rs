//! MCP over Streamable HTTP (feature `mcp-http`): sessions, each one a
//! [`Peer`](crate::Peer), on one HTTP endpoint. What every request does is
//! documented on [`McpHttpListener`].

use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use self::service::{Manager, McpService, OnSessionClose};
use super::http::serve_http;
use super::{MakeRouter, Server, ServerShared};
use crate::config::Config;
use crate::connection::{ConnectHook, ConnectionInfo, PeerAddr, Refusal};
use crate::peer::CloseReason;
use crate::transport::{Acceptor, OpenOptions};

mod auth;

mod service;
pub(crate) mod session;
mod sessions;

use super::http::Origins;

pub use self::auth::{AccessToken, ProtectedResource, TokenError, TokenValidator, Validation};

/// The MCP endpoint's path unless [`McpHttpListener::path`] says otherwise.
const DEFAULT_PATH: &str = "/mcp";

/// The health endpoint's path unless [`McpHttpListener::health_path`] says
/// otherwise.
const DEFAULT_HEALTH_PATH: &str = "/health";

/// The default [`McpHttpListener::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 1000;

/// The default [`McpHttpListener::idle_timeout`]: ten minutes.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The default [`McpHttpListener::keep_alive`]: fifteen seconds.
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The default [`McpHttpListener::replay_buffer`]: 256 KiB per session.
pub const DEFAULT_REPLAY_BUFFER: usize = 256 * 1024;

/// The protocol versions a session accepts in `MCP-Protocol-Version` by
/// default (besides the one it negotiated): every published revision.
pub const DEFAULT_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The stateless revisions an [`McpHttpListener`] serves unless
/// [`stateless_versions`](McpHttpListener::stateless_versions) says
/// otherwise.
pub const DEFAULT_STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

/// Serves MCP over Streamable HTTP: every client session is a
/// [`Peer`](crate::Peer) with the routes and [`Config`] given (default
/// [`Config::mcp`]), reached through one endpoint (default `/mcp`).
///
/// Build it from an [`Acceptor`] whose connections are byte streams (a
/// [`TcpAcceptor`](crate::transport::TcpAcceptor) bound to a loopback
/// address unless the server must be reached from elsewhere), set the
/// options, then [`spawn`](Self::spawn) it. The returned [`Server`] drains
/// like the other servers' ([`Server::shutdown`],
/// [`shutdown_all`](super::shutdown_all)). HTTP/1.1 and h2c are served on
/// one port, as by [`HttpListener`](super::HttpListener), with the same
/// health endpoint (default `/health`: `200`, or `503` once draining) and
/// connection limit.
///
/// Because a session is a peer, everything a peer does works over HTTP:
/// [`Context`](crate::Context) with the request's id, progress
/// ([`Context::progress`](crate::Context::progress) reports travel on the
/// request's own stream), cancellation (`notifications/cancelled` stops the
/// handler), the lifecycle gate (requests before `initialize` get -32002),
/// and calls back to the client
/// (`ctx.peer().call("sampling/createMessage", …)`): they reach the client
/// on an SSE stream, and its answer, posted back, completes the call.
///
/// # The endpoint
///
/// | request | answer |
/// |---|---|
/// | `POST` of `initialize` alone, no `Mcp-Session-Id` | a new session: the answer (below) carries `Mcp-Session-Id` |
/// | `POST` with a request in it | `200`: an SSE stream (`text/event-stream`) that carries the answers, the progress of those requests and possibly requests and notifications of the server, and ends after the last answer; or, with [`json_responses`](Self::json_responses), one `application/json` body with the answer (an array for a batch) |
/// | `POST` of notifications and responses only | `202 Accepted`, no body, once the session's peer has taken them |
/// | `POST` whose every message is refused (not JSON, not JSON-RPC) | `400` with the error answers (-32700, -32600) |
/// | `GET` with `Accept: text/event-stream` | `200`: the session's standalone SSE stream, for the server's own requests and notifications; at most one per session (`409` for a second) |
/// | `GET` with `Last-Event-ID` | the stream that event was on, resumed after it (see below); `204` when that stream is over and nothing is left to replay |
/// | `DELETE` | `204`: the session ends (its running handlers are stopped) |
/// | any request (but `initialize`) with no `Mcp-Session-Id` | `400` |
/// | an `Mcp-Session-Id` that names no session (ended, expired, or never made), or a session of another identity (below) | `404`: the client starts over with `initialize` |
/// | with an `Mcp-Session-Id`: an `MCP-Protocol-Version` neither in [`protocol_versions`](Self::protocol_versions) nor the session's negotiated one | `400` (none at all: 2025-03-26 is assumed, and accepted) |
/// | no `Mcp-Session-Id` and an `MCP-Protocol-Version` that is not a session revision | a stateless request (below) |
/// | an `Origin` not allowed ([`allowed_origins`](Self::allowed_origins)) | `403` |
/// | a `POST` that does not accept both `application/json` and `text/event-stream`, a `GET` that does not accept `text/event-stream` (wildcards such as `*/*` count) | `406` |
/// | `initialize` over [`max_sessions`](Self::max_sessions), or while draining | `503` |
/// | a body over [`Config::max_frame_len`], another `Content-Type`, another method, another path | `413`, `415`, `405`, `404`, as for [`HttpListener`](super::HttpListener) (a refusal sent before its body was read closes with [a lingering close](super::HttpListener#refusals-are-read-not-reset)) |
///
/// The refusals above (`400`, `403`, `404`, `406`, `409`, `503`) carry a
/// JSON-RPC error with no id (code -32000) whose message says what to do.
///
/// Batches (a `POST` of a JSON array) are accepted whatever the
/// negotiated version: protocol revision 2025-03-26 allows them, 2025-06-18
/// dropped them, and serving them costs a 2025-06-18 client nothing. They
/// are split here, so the config's own batch setting does not apply. A
/// request whose id is still waiting for its answer in the session is
/// refused -32600 (its answer could not be told apart).
///
/// # Stateless requests
///
/// A `POST` with no `Mcp-Session-Id` whose `MCP-Protocol-Version` is not
/// one of the [session revisions](Self::protocol_versions) is a request of
/// the stateless revision (2026-07-28,
/// [`stateless_versions`](Self::stateless_versions)): one message, no
/// handshake, answered on that `POST`. Its headers must agree with its
/// body (`MCP-Protocol-Version` with `_meta`'s revision, `Mcp-Method` with
/// the method, `Mcp-Name` with the tool, prompt or resource: `400`,
/// -32020), and its revision must be served (`400`, -32022, with the
/// revisions served). The answer is one JSON body, `404` for -32601, `400`
/// for another error, `200` for a result; or a stream when the request's
/// `_meta` asks for progress or log messages. The stateless requests of
/// one connection share a peer with the routes and the config without its
/// lifecycle; the protocol layer (`jsonrpc-mcp`) reads each one's `_meta`.
///
/// # Where the server's messages go
///
/// The answer to a request goes on the stream of the `POST` that carried
/// it; a progress report goes on the stream of the request whose
/// `params._meta.progressToken` it names. Anything else the server sends
/// (a request such as `sampling/createMessage` or `roots/list`, a log
/// notification) goes on the standalone stream if it is open, else on the
/// newest open `POST` stream of the session, else it waits for a stream to
/// open, up to 64 messages (256 KiB). Past that, a request fails at once:
/// its call ends with [`CallError::Rpc`](crate::CallError::Rpc) carrying
/// [`ErrorCode::TRANSPORT_FAILED`](crate::ErrorCode::TRANSPORT_FAILED);
/// a notification is dropped with a warning. In JSON mode (no SSE on
/// `POST`s) progress and server requests can only travel on the
/// standalone stream.
///
/// A client that stops reading its streams stalls its own session (past
/// 256 KiB of undelivered events, the session's peer waits, as over a
/// socket): it never grows the server's memory.
///
/// # Resuming a stream
///
/// Every SSE event carries an id (`id: 3-17`: the stream's number and the
/// event's, unique in the session). When a stream's connection breaks, the
/// stream lives on: its events are kept (within the session's
/// [`replay_buffer`](Self::replay_buffer), oldest dropped first), and a
/// `GET` with `Last-Event-ID` replays what came after that event and goes
/// on with the stream. A request to the client that is dropped from a
/// full buffer before it was delivered fails as above. The standalone
/// stream reopened without `Last-Event-ID` goes on where its last
/// connection stopped.
///
/// # Sessions
///
/// A session belongs to whoever opened it. The config's
/// [`on_connect`](McpHttpListener::on_connect) hook runs for every request (a bearer
/// token goes with each), and the [identity](crate::connection::ConnectionInfo::set_identity)
/// it gives the caller of `initialize` is the session's: a request whose
/// caller has another identity (another user's valid token), or none, is
/// answered `404` exactly as for a session that does not exist. Not `403`:
/// that would tell whoever holds a stolen or guessed id that it names a
/// live session, and a client that switched users does the right thing on
/// a `404` (it starts a new session). Handlers read the session's caller
/// from [`Context::connection`](crate::Context::connection) and the caller
/// of the `POST` in hand from [`Context::caller`](crate::Context::caller).
/// Without a hook that sets identities, sessions are bound to nobody.
///
/// A session id is 32 hex digits from the operating system's random source,
/// after the [`instance_tag`](Self::instance_tag) if one is set. A session
/// ends with a `DELETE`, after [`idle_timeout`](Self::idle_timeout) with no
/// request, no stream open and no request unanswered, when its peer closes,
/// and when the server shuts down; [`on_session_close`](Self::on_session_close)
/// hears of each.
///
/// ## Several instances behind a load balancer
///
/// A session lives in the process that made it, so a balancer must send
/// every request of a session to that process. Give each instance its own
/// tag; its session ids start with it (`a1.5f0c…`), and the balancer routes
/// on the `Mcp-Session-Id` header. With nginx:
///
/// ```text
/// upstream mcp_any { server 10.0.0.1:8080; server 10.0.0.2:8080; }
/// map $http_mcp_session_id $mcp_upstream {
///     default   mcp_any;          # `initialize`: any instance
///     "~^a1\."  10.0.0.1:8080;    # started with .instance_tag("a1")
///     "~^b2\."  10.0.0.2:8080;    # started with .instance_tag("b2")
/// }
/// server {
///     location /mcp {
///         proxy_pass http://$mcp_upstream;
///         proxy_http_version 1.1;
///         proxy_buffering off;    # SSE events as they come
///         proxy_read_timeout 1h;
///     }
/// }
/// ```
///
/// # Security
///
/// Bind to a loopback address (`127.0.0.1`) unless the server must be
/// reached from elsewhere, and then put authentication in front of it. The
/// `Origin` check guards a local server against DNS rebinding: a web page
/// on another origin cannot drive it from a browser.
///
/// # Graceful shutdown
///
/// [`Server::shutdown`] stops accepting, turns the health endpoint to
/// `503`, refuses new sessions and new standalone streams with `503`, and
/// closes every session's peer with the grace period: requests already
/// running finish and their answers go out on their streams (new requests
/// get -32001), then every stream ends and the connections close. What is
/// still running when the grace period ends is cut off. A request posted as
/// its session's peer closed, which the peer never read, is answered -32001
/// on its stream too ("the session ended before this request was
/// answered"): every `POST` that opened a stream gets its answers. The same
/// holds for a session ended by `DELETE`.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::McpHttpListener;
/// use jsonrpc_runtime::transport::{McpHttpConnector, TcpAcceptor};
/// use jsonrpc_runtime::{Config, ErrorObject, Peer, Router};
/// use serde_json::{json, Value};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new()
///     .request("initialize", |_: Value, _| async move {
///         Ok::<_, ErrorObject>(json!({"protocolVersion": "2025-06-18", "capabilities": {}}))
///     })
///     .request("tools/list", |_: Value, _| async move {
///         Ok::<_, ErrorObject>(json!({"tools": []}))
///     });
/// let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
/// let url = format!("http://{}/mcp", acceptor.local_addr()?);
/// let server = McpHttpListener::new(acceptor).spawn(router);
///
/// let client = Peer::builder()
///     .config(Config::mcp_client())
///     .spawn(McpHttpConnector::new(&url).connect().await?);
/// let init: Value = client.call("initialize", json!({"protocolVersion": "2025-06-18"})).await?;
/// assert_eq!(init["protocolVersion"], "2025-06-18");
/// let tools: Value = client.call("tools/list", json!({})).await?;
/// assert_eq!(tools, json!({"tools": []}));
///
/// client.close(Duration::from_secs(1)).await;
/// server.shutdown(Duration::from_secs(5)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub struct McpHttpListener<A> {
    acceptor: A,
    config: Config,
    on_connect: Option<ConnectHook>,
    limit: Option<usize>,
    options: Options,
    on_close: Option<OnSessionClose>,
}

/// The settings of an MCP server's sessions.
#[derive(Debug, Clone)]
struct Options {
    path: String,
    health_path: String,
    json_responses: bool,
    instance_tag: Option<String>,
    max_sessions: usize,
    idle_timeout: Duration,
    keep_alive: Option<Duration>,
    replay_buffer: usize,
    origins: Origins,
    protocol_versions: Vec<String>,
    stateless_versions: Vec<String>,
    auth: Option<ProtectedResource>,
}

/// Why an MCP session ended (see [`McpHttpListener::on_session_close`]).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::server::SessionClose;
///
/// fn log(id: &str, why: &SessionClose) {
///     match why {
///         SessionClose::Closed(reason) => eprintln!("session {id}: {reason}"),
///         other => eprintln!("session {id} ended: {other}"),
///     }
/// }
/// log("a1.5f0c", &SessionClose::Idle);
/// assert_eq!(SessionClose::Deleted.to_string(), "the client deleted it");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub enum SessionClose {
    /// The client ended it with `DELETE`.
    Deleted,
    /// It was idle for the [idle timeout](McpHttpListener::idle_timeout).
    Idle,
    /// The server shut down.
    Shutdown,
    /// Its peer closed (a lifecycle's exit, say).
    Closed(CloseReason),
}

impl fmt::Display for SessionClose {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionClose::Deleted => f.write_str("the client deleted it"),
            SessionClose::Idle => f.write_str("it was idle too long"),
            SessionClose::Shutdown => f.write_str("the server shut down"),
            SessionClose::Closed(reason) => write!(f, "its peer closed: {reason}"),
        }
    }
}

impl<A: fmt::Debug> fmt::Debug for McpHttpListener<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHttpListener")
            .field("acceptor", &self.acceptor)
            .field("config", &self.config)
            .field("limit", &self.limit)
            .field("options", &self.options)
            .field("on_close", &self.on_close.as_ref().map(|_| "Fn"))
            .finish()
    }
}

impl<A> McpHttpListener<A>
where
    A: Acceptor,
    A::Connection: AsyncRead + AsyncWrite + Unpin,
{
    /// A server taking connections from `acceptor`: sessions on
    /// [`Config::mcp`], the endpoint at `/mcp`, health at `/health`, SSE
    /// answers, loopback origins only, and the defaults of every other
    /// setting.
    ///
    /// # Examples
    ///
    /// See [`McpHttpListener`].
    pub fn new(mut acceptor: A) -> Self {
        acceptor.offer_protocols(&[b"h2", b"http/1.1"]);
        McpHttpListener {
            acceptor,
            config: Config::mcp(),
            on_connect: None,
            limit: None,
            options: Options {
                path: DEFAULT_PATH.to_owned(),
                health_path: DEFAULT_HEALTH_PATH.to_owned(),
                json_responses: false,
                instance_tag: None,
                max_sessions: DEFAULT_MAX_SESSIONS,
                idle_timeout: DEFAULT_IDLE_TIMEOUT,
                keep_alive: Some(DEFAULT_KEEP_ALIVE),
                replay_buffer: DEFAULT_REPLAY_BUFFER,
                origins: Origins::Loopback,
                protocol_versions: DEFAULT_PROTOCOL_VERSIONS.map(str::to_owned).to_vec(),
                stateless_versions: DEFAULT_STATELESS_VERSIONS.map(str::to_owned).to_vec(),
                auth: None,
            },
            on_close: None,
        }
    }

    /// The config of every session's peer (default [`Config::mcp`]): its
    /// policies, and [`max_frame_len`](Config::max_frame_len) as the
    /// largest body accepted. Its framing and batch settings do not apply.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::{Config, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .config(Config::mcp().max_frame_len(1 << 20).callback_timeout(Duration::from_secs(60)))
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Vets every request with `hook` before its messages are read, as
    /// [`HttpListener::on_connect`](super::HttpListener::on_connect) does;
    /// an identity it sets ([`ConnectionInfo::set_identity`]) binds the
    /// session `initialize` opens to that caller.
    ///
    /// # Examples
    ///
    /// See [`ConnectionInfo::set_identity`].
    pub fn on_connect<F>(mut self, hook: F) -> Self
    where
        F: Fn(&mut ConnectionInfo) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.on_connect = Some(Arc::new(hook));
        self
    }

    /// Serves at most `n` connections at once (see
    /// [`HttpListener::connection_limit`](super::HttpListener::connection_limit)).
    /// A client holds one per open stream over HTTP/1.1.
    ///
    /// # Examples
    ///
    /// See [`max_sessions`](Self::max_sessions).
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
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let listener = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?);
    /// println!("MCP at http://{}/mcp", listener.acceptor().local_addr()?);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn acceptor(&self) -> &A {
        &self.acceptor
    }

    /// Starts accepting: each session's peer serves the routes `routes`
    /// makes for it (a [`Router`](crate::Router) is cloned; a closure gets
    /// the address of the client that sent `initialize`).
    ///
    /// Dropping the returned [`Server`] stops it at once (see
    /// [`Server::shutdown`] for a graceful stop).
    ///
    /// # Examples
    ///
    /// See [`McpHttpListener`].
    ///
    /// # Panics
    ///
    /// Panics if the endpoint and the health endpoint have the same path,
    /// and outside a tokio runtime.
    #[track_caller]
    pub fn spawn(self, routes: impl MakeRouter) -> Server {
        assert_ne!(
            self.options.path, self.options.health_path,
            "the MCP path and the health path must differ"
        );
        let shared = ServerShared::new();
        let health_path = self.options.health_path.clone();
        let cors = Some(self.options.origins.clone());
        let manager = Arc::new(Manager {
            server: shared.clone(),
            open: OpenOptions::default().with_hook(self.on_connect),
            stateless_config: self.config.clone().stateless(),
            config: self.config,
            routes: Arc::new(routes),
            options: Arc::new(self.options),
            on_close: self.on_close,
            sessions: Mutex::default(),
        });
        let make = move |addr: &PeerAddr| McpService {
            manager: manager.clone(),
            addr: addr.clone(),
            stateless: std::sync::OnceLock::new(),
        };
        serve_http(self.acceptor, self.limit, health_path, cors, shared, make)
    }
}
