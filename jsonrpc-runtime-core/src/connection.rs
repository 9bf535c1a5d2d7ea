//! Who is calling: what a server knows about a connection
//! ([`ConnectionInfo`]: the client's address, and for HTTP and WebSocket the
//! request's path and headers), where it came from ([`PeerAddr`]), and the
//! refusal a listener's `on_connect` hook answers with ([`Refusal`]).
//!
//! Handlers read it from [`Context::connection`](crate::Context::connection),
//! gates from [`GateInput::connection`](crate::policy::GateInput), tower
//! layers through the request's context.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::{Extensions, StatusCode, Uri};

/// Where a connection came from.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::connection::PeerAddr;
///
/// let addr = PeerAddr::Tcp("127.0.0.1:4000".parse().unwrap());
/// assert_eq!(addr.to_string(), "127.0.0.1:4000");
/// assert_eq!(PeerAddr::Unix(None).to_string(), "(unnamed unix socket)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PeerAddr {
    /// A TCP (or WebSocket) client's address.
    Tcp(std::net::SocketAddr),
    /// A Unix-socket client's path; `None` for an unnamed socket, which is
    /// what clients almost always use.
    Unix(Option<PathBuf>),
}

impl fmt::Display for PeerAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerAddr::Tcp(addr) => fmt::Display::fmt(addr, f),
            PeerAddr::Unix(Some(path)) => fmt::Display::fmt(&path.display(), f),
            PeerAddr::Unix(None) => f.write_str("(unnamed unix socket)"),
        }
    }
}

/// What a server knows about one connection: where it came from, and for
/// connections that began with an HTTP request (a WebSocket handshake, each
/// `POST` of JSON-RPC over HTTP) the request's URI and headers. It also
/// carries typed state that a listener's `on_connect` hook (such as
/// `server::Listener::on_connect`) attached,
/// such as the authenticated user.
///
/// Every peer has one: [`Peer::connection`](crate::Peer::connection). For
/// transports that are not a server's connection (stdio, a child process,
/// an in-memory pair) it is empty unless the transport was given one with
/// [`Transport::with_connection`](crate::Transport::with_connection).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::connection::ConnectionInfo;
/// use jsonrpc_runtime::connection::PeerAddr;
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct User(String);
///
/// let mut info = ConnectionInfo::new().with_addr(PeerAddr::Tcp("127.0.0.1:5000".parse().unwrap()));
/// info.headers_mut().insert("authorization", "Bearer alice".parse().unwrap());
/// let token = info.bearer_token().unwrap().to_owned();
/// info.insert(User(token));
///
/// assert_eq!(info.get::<User>(), Some(&User("alice".into())));
/// assert_eq!(info.addr().unwrap().to_string(), "127.0.0.1:5000");
/// ```
#[derive(Clone, Debug, Default)]
pub struct ConnectionInfo {
    addr: Option<PeerAddr>,
    uri: Option<Uri>,
    headers: HeaderMap,
    extensions: Extensions,
    identity: Option<Arc<str>>,
}

impl ConnectionInfo {
    /// Nothing known: no address, no request, no state.
    ///
    /// # Examples
    ///
    /// See [`ConnectionInfo`].
    pub fn new() -> Self {
        ConnectionInfo::default()
    }

    /// The same, from the client's address.
    ///
    /// # Examples
    ///
    /// See [`ConnectionInfo`].
    #[must_use]
    pub fn with_addr(mut self, addr: PeerAddr) -> Self {
        self.addr = Some(addr);
        self
    }

    /// The same, with the HTTP request the connection began with.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::ConnectionInfo;
    ///
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("x-tenant", "blue".parse().unwrap());
    /// let info = ConnectionInfo::new().with_request("/rpc?v=2".parse().unwrap(), headers);
    /// assert_eq!(info.path(), Some("/rpc"));
    /// assert_eq!(info.header("X-Tenant"), Some("blue"));
    /// ```
    #[must_use]
    pub fn with_request(mut self, uri: Uri, headers: HeaderMap) -> Self {
        self.uri = Some(uri);
        self.headers = headers;
        self
    }

    /// The client's address; `None` where there is none to know.
    pub fn addr(&self) -> Option<&PeerAddr> {
        self.addr.as_ref()
    }

    /// The URI of the HTTP request the connection began with (the WebSocket
    /// handshake's, the `POST`'s): usually just a path and a query.
    pub fn uri(&self) -> Option<&Uri> {
        self.uri.as_ref()
    }

    /// The path of that request, without its query.
    ///
    /// # Examples
    ///
    /// See [`with_request`](Self::with_request).
    pub fn path(&self) -> Option<&str> {
        self.uri.as_ref().map(Uri::path)
    }

    /// The headers of that request; empty for connections that did not
    /// begin with one.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The headers, to change before the connection is served (in a test,
    /// or a listener's `on_connect` hook that strips a secret).
    pub fn headers_mut(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }

    /// One header as text; `None` when it is absent or not visible ASCII.
    /// Names are case-insensitive.
    ///
    /// # Examples
    ///
    /// See [`with_request`](Self::with_request).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The token of an `Authorization: Bearer <token>` header (the scheme
    /// name is case-insensitive).
    ///
    /// # Examples
    ///
    /// See [`ConnectionInfo`].
    pub fn bearer_token(&self) -> Option<&str> {
        let value = self.header("authorization")?.trim_start();
        let (scheme, token) = value.split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| token.trim())
            .filter(|token| !token.is_empty())
    }

    /// State attached to the connection, by type.
    ///
    /// # Examples
    ///
    /// See [`ConnectionInfo`].
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// Attaches state to the connection, replacing (and returning) any value
    /// of the same type. Handlers read it with [`get`](Self::get).
    ///
    /// # Examples
    ///
    /// See [`ConnectionInfo`].
    pub fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        self.extensions.insert(value)
    }

    /// Says who the caller is, for state that belongs to one caller: a
    /// listener's `on_connect` hook that checked a credential sets it (a user name, an account id, a token's subject).
    /// The runtime compares identities and nothing more: an MCP session
    /// (`server::McpHttpListener`) belongs to the
    /// identity that sent its `initialize`, and a request with another one
    /// (or none, where the session has one) is answered as if the session
    /// did not exist. Two callers with the same identity are the same
    /// caller. Without a hook that sets one, every caller has none, and
    /// sessions are bound to nobody.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::{ConnectionInfo, Refusal};
    ///
    /// // Given to `McpHttpListener::on_connect`, say.
    /// let hook = |info: &mut ConnectionInfo| {
    ///     let user = match info.bearer_token() {
    ///         Some("token-of-alice") => "alice",
    ///         Some("token-of-bob") => "bob",
    ///         _ => return Err(Refusal::unauthorized("a valid bearer token is required")),
    ///     };
    ///     info.set_identity(user);
    ///     Ok(())
    /// };
    /// let mut info = ConnectionInfo::new();
    /// info.headers_mut().insert("authorization", "Bearer token-of-bob".parse().unwrap());
    /// hook(&mut info)?;
    /// assert_eq!(info.identity(), Some("bob"));
    /// # Ok::<(), Refusal>(())
    /// ```
    pub fn set_identity(&mut self, identity: impl Into<String>) {
        self.identity = Some(Arc::from(identity.into()));
    }

    /// The identity [`set_identity`](Self::set_identity) gave the caller;
    /// `None` if none was.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::ConnectionInfo;
    ///
    /// let mut info = ConnectionInfo::new();
    /// assert_eq!(info.identity(), None);
    /// info.set_identity("alice");
    /// assert_eq!(info.identity(), Some("alice"));
    /// ```
    pub fn identity(&self) -> Option<&str> {
        self.identity.as_deref()
    }

    /// All the attached state, as `http`'s type map.
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// All the attached state, to change.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }

    /// The identity, shared.
    #[doc(hidden)]
    pub fn shared_identity(&self) -> Option<Arc<str>> {
        self.identity.clone()
    }

    /// Fills in the address where none is known yet.
    #[doc(hidden)]
    pub fn set_addr_if_unknown(&mut self, addr: &PeerAddr) {
        if self.addr.is_none() {
            self.addr = Some(addr.clone());
        }
    }
}

/// Why a listener's `on_connect` hook refused a connection, and what the
/// client is told.
///
/// Over HTTP (JSON-RPC over HTTP, the WebSocket handshake) the client gets
/// the status, the headers and the reason as a plain-text body. A raw socket
/// (TCP, Unix, TLS) has no way to say it: the connection is closed, and the
/// reason logged at `debug`.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::connection::Refusal;
///
/// let refusal = Refusal::unauthorized("a bearer token is required")
///     .header("www-authenticate", "Bearer realm=\"rpc\"");
/// assert_eq!(refusal.status().as_u16(), 401);
/// assert_eq!(refusal.reason(), "a bearer token is required");
/// ```
#[derive(Clone)]
pub struct Refusal {
    status: StatusCode,
    reason: Arc<str>,
    headers: HeaderMap,
}

impl Refusal {
    /// A refusal with this HTTP status (a 4xx or 5xx; anything else becomes
    /// `403`) and reason.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::Refusal;
    ///
    /// assert_eq!(Refusal::new(429, "slow down").status().as_u16(), 429);
    /// assert_eq!(Refusal::new(200, "not a refusal").status().as_u16(), 403);
    /// ```
    pub fn new(status: u16, reason: impl Into<String>) -> Self {
        let status = StatusCode::from_u16(status)
            .ok()
            .filter(|s| s.is_client_error() || s.is_server_error())
            .unwrap_or(StatusCode::FORBIDDEN);
        Refusal {
            status,
            reason: Arc::from(reason.into()),
            headers: HeaderMap::new(),
        }
    }

    /// `401 Unauthorized`: no credentials, or ones that are not valid.
    ///
    /// # Examples
    ///
    /// See [`Refusal`].
    pub fn unauthorized(reason: impl Into<String>) -> Self {
        Refusal::new(401, reason)
    }

    /// `403 Forbidden`: valid credentials without the right to connect.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::Refusal;
    ///
    /// assert_eq!(Refusal::forbidden("read-only key").status().as_u16(), 403);
    /// ```
    pub fn forbidden(reason: impl Into<String>) -> Self {
        Refusal::new(403, reason)
    }

    /// Adds a header to the HTTP answer (`WWW-Authenticate`, `Retry-After`).
    /// A name or value that is not valid in HTTP is skipped, with a warning
    /// in the log.
    ///
    /// # Examples
    ///
    /// See [`Refusal`].
    #[must_use]
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::try_from(name),
            HeaderValue::try_from(value.to_owned()),
        ) {
            (Ok(name), Ok(value)) => {
                self.headers.append(name, value);
            }
            _ => tracing::warn!(name, "skipping a refusal header that is not valid HTTP"),
        }
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The reason, sent as the body.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The headers added with [`header`](Self::header).
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }
}

impl fmt::Debug for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Refusal")
            .field("status", &self.status.as_u16())
            .field("reason", &self.reason)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused ({}): {}", self.status.as_u16(), self.reason)
    }
}

/// Where a transport whose messages come from several callers (the
/// requests of an MCP session over HTTP) leaves the caller of the frame it
/// just yielded, for the peer reading it to hand to that frame's handlers
/// ([`Context::caller`](crate::Context::caller)).
#[doc(hidden)]
pub type CallerSlot = Arc<std::sync::Mutex<Option<Arc<ConnectionInfo>>>>;

/// The hook a listener's `on_connect` installs: it vets each connection
/// before its first message is read.
#[doc(hidden)]
pub type ConnectHook = Arc<dyn Fn(&mut ConnectionInfo) -> Result<(), Refusal> + Send + Sync>;
