//! The settings of an MCP server's endpoint and sessions: paths, answer
//! format, instance tag, limits, timeouts, origins, protocol versions,
//! authorization.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

use super::{McpHttpListener, ProtectedResource, SessionClose};
use crate::server::http::checked_path;
use crate::server::http::Origins;
use crate::transport::Acceptor;

impl<A> McpHttpListener<A>
where
    A: Acceptor,
    A::Connection: AsyncRead + AsyncWrite + Unpin,
{
    /// The endpoint's path (default `/mcp`). The query string is ignored.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .path("/v1/mcp")
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
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.options.path = checked_path("path", path.into());
        self
    }

    /// The health endpoint's path (default `/health`), as for
    /// [`HttpListener::health_path`](crate::server::HttpListener::health_path).
    ///
    /// # Examples
    ///
    /// See [`path`](Self::path).
    ///
    /// # Panics
    ///
    /// Panics if `path` does not start with `/`.
    #[track_caller]
    pub fn health_path(mut self, path: impl Into<String>) -> Self {
        self.options.health_path = checked_path("health_path", path.into());
        self
    }

    /// Answers a `POST` that carries requests with one `application/json`
    /// body once every answer is in (`true`), instead of an SSE stream
    /// (`false`, the default, which clients of the official SDKs expect).
    /// Simpler for clients and proxies that do not read SSE; progress and
    /// server requests then travel only on the standalone `GET` stream.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .json_responses(true)
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn json_responses(mut self, json: bool) -> Self {
        self.options.json_responses = json;
        self
    }

    /// Starts every session id with `tag` and a dot (`a1.5f0c…`), so a load
    /// balancer can send a session's requests to the instance that made it
    /// (see [Several instances behind a load balancer](Self#several-instances-behind-a-load-balancer)).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .instance_tag("a1")
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `tag` is empty or holds anything but ASCII letters,
    /// digits, `-` and `_`.
    #[track_caller]
    pub fn instance_tag(mut self, tag: impl Into<String>) -> Self {
        let tag = tag.into();
        assert!(
            !tag.is_empty()
                && tag
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "an instance tag is ASCII letters, digits, `-` and `_`, got `{tag}`"
        );
        self.options.instance_tag = Some(tag);
        self
    }

    /// Holds at most `n` sessions at once (default
    /// [`DEFAULT_MAX_SESSIONS`](super::DEFAULT_MAX_SESSIONS)); an `initialize` past that gets `503`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .max_sessions(100)
    ///     .idle_timeout(Duration::from_secs(120))
    ///     .connection_limit(400)
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `n` is zero.
    #[track_caller]
    pub fn max_sessions(mut self, n: usize) -> Self {
        assert!(n > 0, "max_sessions must be at least 1");
        self.options.max_sessions = n;
        self
    }

    /// Ends a session after `timeout` with no request, no stream open and
    /// no request unanswered (default [`DEFAULT_IDLE_TIMEOUT`](super::DEFAULT_IDLE_TIMEOUT), ten
    /// minutes), so sessions clients abandon do not pile up.
    ///
    /// # Examples
    ///
    /// See [`max_sessions`](Self::max_sessions).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.options.idle_timeout = timeout;
        self
    }

    /// Sends a comment on an SSE stream that has carried nothing for
    /// `period` (default [`DEFAULT_KEEP_ALIVE`](super::DEFAULT_KEEP_ALIVE)), so proxies and clients do
    /// not time it out; `None` sends none.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .keep_alive(Duration::from_secs(30))
    ///     .replay_buffer(1 << 20)
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn keep_alive(mut self, period: impl Into<Option<Duration>>) -> Self {
        self.options.keep_alive = period.into();
        self
    }

    /// How many bytes of SSE events each session keeps for clients that
    /// resume a stream (default [`DEFAULT_REPLAY_BUFFER`](super::DEFAULT_REPLAY_BUFFER), 256 KiB); the
    /// oldest go first. Events not yet delivered to a live connection are
    /// never dropped (their own bound is the session's backpressure).
    ///
    /// # Examples
    ///
    /// See [`keep_alive`](Self::keep_alive).
    pub fn replay_buffer(mut self, bytes: usize) -> Self {
        self.options.replay_buffer = bytes;
        self
    }

    /// Lets requests whose `Origin` header is one of `origins` in (exactly,
    /// ignoring case: `https://app.example.com`, with a port when it has
    /// one); others get `403`. Requests without an `Origin` (clients that
    /// are not browsers) are always let in. The default lets in loopback
    /// origins only: `http` or `https` on `localhost`, `127.0.0.1` or
    /// `[::1]`, any port. This list replaces that default. Pages of the
    /// origins let in may also call from a browser: preflights are
    /// answered and responses name their origin (CORS), with
    /// `Mcp-Session-Id` readable.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
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
        self.options.origins = Origins::list(origins);
        self
    }

    /// Lets requests from any `Origin` in: for a server behind a proxy
    /// that checks origins itself, or one not meant for browsers.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .allow_any_origin()
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn allow_any_origin(mut self) -> Self {
        self.options.origins = Origins::Any;
        self
    }

    /// The protocol versions accepted in `MCP-Protocol-Version` besides the
    /// one each session negotiated (default [`DEFAULT_PROTOCOL_VERSIONS`](super::DEFAULT_PROTOCOL_VERSIONS)).
    /// The version a session speaks is decided by its `initialize` handler;
    /// this only screens the header.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .protocol_versions(["2025-06-18"])
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn protocol_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.protocol_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// The stateless revisions served (default
    /// [`DEFAULT_STATELESS_VERSIONS`](super::DEFAULT_STATELESS_VERSIONS):
    /// `2026-07-28`); none turns stateless serving off.
    ///
    /// A `POST` with no `Mcp-Session-Id` whose `MCP-Protocol-Version` is
    /// not one of the [session revisions](Self::protocol_versions) is
    /// stateless: one request, no handshake, answered on the `POST` (a
    /// stream when its `_meta` asks for progress or log messages, else one
    /// JSON body), with `404` for an unknown method and `400` for any
    /// other error. Before it reaches the routes, its headers are checked
    /// against its body: `MCP-Protocol-Version` against `_meta`'s revision
    /// and `Mcp-Method` and `Mcp-Name` against the method and the tool,
    /// prompt or resource (`400`, -32020, when they disagree or are
    /// missing), and the revision against this list (`400`, -32022, with
    /// the revisions served). The requests of one connection share a peer
    /// with no lifecycle; the protocol layer reads each one's `_meta`.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::McpHttpListener;
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // Sessions only, as before 2026-07-28.
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .stateless_versions(Vec::<String>::new())
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn stateless_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.stateless_versions = versions.into_iter().map(Into::into).collect();
        self
    }

    /// Makes the endpoint an OAuth 2.1 protected resource (the MCP
    /// authorization spec): every request needs a bearer token in its
    /// `Authorization` header that `resource`'s validator accepts, issued
    /// for this resource (RFC 8707 audience), unexpired, and granting the
    /// required scopes. The metadata (RFC 9728) is served, without a
    /// token, at [`ProtectedResource::metadata_url`]'s path and at the
    /// root `/.well-known/oauth-protected-resource`.
    ///
    /// Refusals tell the client what to do (RFC 6750 §3): no token gets
    /// `401` with `WWW-Authenticate: Bearer resource_metadata="…"` (and
    /// `scope="…"` when scopes are required); a token refused, for another
    /// audience or expired gets `401` with `error="invalid_token"`; one
    /// without a required scope gets `403` with
    /// `error="insufficient_scope"`. The token's [`AccessToken`](super::AccessToken) goes into
    /// the request's [`ConnectionInfo`](crate::connection::ConnectionInfo), its subject becomes the caller's
    /// identity (a session stays with its user), and the
    /// [`on_connect`](Self::on_connect) hook runs after.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::{AccessToken, McpHttpListener, ProtectedResource, TokenError};
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let resource = ProtectedResource::new(
    ///     "http://127.0.0.1:8080/mcp",
    ///     ["https://auth.example.com"],
    ///     |token: String| async move {
    ///         Err::<AccessToken, _>(TokenError::new(format!("no token is known here ({} bytes)", token.len())))
    ///     },
    /// );
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .protected_resource(resource)
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn protected_resource(mut self, resource: ProtectedResource) -> Self {
        self.options.auth = Some(resource);
        self
    }

    /// Calls `hook` with each session's id and why it ended, once it has.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::server::{McpHttpListener, SessionClose};
    /// use jsonrpc_runtime::transport::TcpAcceptor;
    /// use jsonrpc_runtime::Router;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpHttpListener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
    ///     .on_session_close(|id, why| {
    ///         if matches!(why, SessionClose::Idle) {
    ///             eprintln!("session {id} expired");
    ///         }
    ///     })
    ///     .spawn(Router::new());
    /// # drop(server);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    pub fn on_session_close(
        mut self,
        hook: impl Fn(&str, &SessionClose) + Send + Sync + 'static,
    ) -> Self {
        self.on_close = Some(Arc::new(hook));
        self
    }
}
