//! Clients: one builder per kind of connection, [`Connector`].
//!
//! A connector holds what its kind needs (the framer for TCP and Unix
//! sockets; the request headers and the frame cap for WebSocket and HTTP;
//! TLS settings where TLS applies), and [`connect`](Connector::connect)
//! opens the connection. For URLs the scheme decides: `ws://` or `wss://`,
//! `http://` or `https://`. Settings that cannot be used (a URL of another
//! scheme, a bearer token a header cannot carry, `wss://` without TLS
//! settings) are reported by `connect`, as [`TransportError::Invalid`], so
//! a chain of settings ends in one `?`.

use std::fmt;

use http::header::{HeaderMap, HeaderName, HeaderValue, AUTHORIZATION};

use super::TransportError;
use crate::codec::{FramingCodec, DEFAULT_MAX_FRAME_LEN};

/// The kinds of [`Connector`]: marker types, named in the aliases
/// ([`TcpConnector`](super::TcpConnector) and the others).
pub mod kind {
    mod sealed {
        pub trait Sealed {}
    }

    /// A kind of connection.
    pub trait Kind: sealed::Sealed {}

    /// A byte stream framed by a codec: TCP, Unix sockets.
    pub trait Framed: Kind {}

    /// A connection that begins with an HTTP request: WebSocket, HTTP, MCP
    /// Streamable HTTP. It carries request headers, and its target is a URL.
    pub trait Web: Kind {
        #[doc(hidden)]
        fn from_url(url: String) -> Self;
    }

    /// A connection TLS can secure.
    pub trait Secure: Kind {}

    macro_rules! kinds {
        ($(#[doc = $doc:literal] #[cfg($cfg:meta)] $name:ident($target:ty): $($trait:ident),*;)*) => {$(
            #[doc = $doc]
            #[cfg($cfg)]
            #[cfg_attr(docsrs, doc(cfg($cfg)))]
            #[derive(Debug, Clone)]
            pub struct $name(pub(crate) $target);
            #[cfg($cfg)]
            impl sealed::Sealed for $name {}
            #[cfg($cfg)]
            impl Kind for $name {}
            $(#[cfg($cfg)] impl $trait for $name { kinds!(@body $trait); })*
        )*};
        (@body Web) => {
            fn from_url(url: String) -> Self {
                Self(url)
            }
        };
        (@body $other:ident) => {};
    }

    kinds! {
        /// TCP, to a `host:port` address.
        #[cfg(feature = "tcp")]
        Tcp(String): Framed, Secure;
        /// A Unix domain socket, at a path.
        #[cfg(all(unix, feature = "unix"))]
        Unix(std::path::PathBuf): Framed;
        /// JSON-RPC over HTTP through the browser's `fetch`, at a URL.
        #[cfg(all(feature = "browser", target_arch = "wasm32"))]
        Fetch(String): Web;
        /// MCP Streamable HTTP through the browser's `fetch`, at a URL.
        #[cfg(all(feature = "browser", target_arch = "wasm32"))]
        McpFetch(String): Web;
        /// WebSocket, at a `ws://` or `wss://` URL.
        #[cfg(feature = "websocket")]
        WebSocket(String): Web, Secure;
        /// JSON-RPC over HTTP, at an `http://` or `https://` URL.
        #[cfg(feature = "http")]
        Http(String): Web, Secure;
        /// MCP Streamable HTTP, at an `http://` or `https://` endpoint.
        #[cfg(feature = "mcp-http")]
        McpHttp(String): Web, Secure;
    }
}

/// Opens a client connection of kind `K`: build it with the alias of its
/// kind, change what you need, then [`connect`](Self::connect).
///
/// | alias | target | settings |
/// |---|---|---|
/// | [`TcpConnector`](super::TcpConnector) | `host:port` | codec, TLS, server name |
/// | [`UnixConnector`](super::UnixConnector) | a path | codec |
/// | `WebSocketConnector` (feature `websocket`) | `ws://` or `wss://` URL | headers, bearer token, frame cap, TLS |
/// | `HttpConnector` (feature `http`) | `http://` or `https://` URL | headers, bearer token, frame cap, TLS |
/// | `McpHttpConnector` (feature `mcp-http`) | `http://` or `https://` endpoint | headers, bearer token, OAuth ([`OAuthClient`](super::OAuthClient)), frame cap, TLS |
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::codec::Framing;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::{TcpAcceptor, TcpConnector};
/// use jsonrpc_runtime::{Config, ErrorObject, Peer, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
/// let addr = acceptor.local_addr()?;
/// let router = Router::new().request("add", |(a, b): (i64, i64), _| async move {
///     Ok::<_, ErrorObject>(a + b)
/// });
/// let config = Config::default().framing(Framing::ContentLength);
/// let _server = Listener::new(acceptor).config(config.clone()).spawn(router);
///
/// // The same framing on both ends: `Content-Length`, from the config.
/// let transport = TcpConnector::new(addr).codec(&config).connect().await?;
/// let client = Peer::spawn(transport);
/// assert_eq!(client.call::<i64>("add", (2, 3)).await?, 5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Connector<K> {
    pub(crate) target: K,
    pub(crate) codec: FramingCodec,
    pub(crate) headers: HeaderMap,
    pub(crate) max_frame_len: usize,
    /// The first setting that cannot be used, reported by `connect`.
    pub(crate) invalid: Option<String>,
    #[cfg(feature = "tls")]
    pub(crate) tls: Option<crate::tls::ClientTls>,
    #[cfg(feature = "tls")]
    pub(crate) server_name: Option<String>,
    /// OAuth for an MCP server that wants tokens.
    #[cfg(feature = "mcp-http")]
    pub(crate) oauth: Option<super::OAuthClient>,
}

impl<K: fmt::Debug> fmt::Debug for Connector<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connector")
            .field("target", &self.target)
            .field("codec", &self.codec)
            .field("headers", &self.headers)
            .field("max_frame_len", &self.max_frame_len)
            .finish_non_exhaustive()
    }
}

// The kinds are all behind features.
#[cfg_attr(not(any(feature = "tcp", feature = "unix")), allow(dead_code))]
impl<K: kind::Kind> Connector<K> {
    pub(crate) fn with_target(target: K) -> Self {
        Connector {
            target,
            codec: FramingCodec::default(),
            headers: HeaderMap::new(),
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
            invalid: None,
            #[cfg(feature = "tls")]
            tls: None,
            #[cfg(feature = "tls")]
            server_name: None,
            #[cfg(feature = "mcp-http")]
            oauth: None,
        }
    }

    /// The first setting that cannot be used, as the error `connect`
    /// returns.
    pub(crate) fn check(&self) -> Result<(), TransportError> {
        match &self.invalid {
            Some(why) => Err(TransportError::Invalid(why.clone())),
            None => Ok(()),
        }
    }
}

impl<K: kind::Framed> Connector<K> {
    /// The framer (default newline-delimited, 8 MiB cap); a `&Config`
    /// converts, so `.codec(&Config::lsp())` frames as the preset says.
    pub fn codec(mut self, codec: impl Into<FramingCodec>) -> Self {
        self.codec = codec.into();
        self
    }
}

impl<K: kind::Web> Connector<K> {
    /// A connector to `url`, whose scheme decides TLS: `ws://` or `wss://`
    /// for WebSocket, `http://` or `https://` for HTTP and MCP Streamable
    /// HTTP (`http://127.0.0.1:8080/mcp`, say). A URL of another scheme is
    /// refused by [`connect`](Self::connect).
    pub fn new(url: impl Into<String>) -> Self {
        Connector::with_target(K::from_url(url.into()))
    }

    /// Adds a header to the request that opens the connection (the
    /// WebSocket handshake) or to every request (each `POST` over HTTP).
    /// Repeated names are all sent.
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.append(name, value);
        self
    }

    /// Sends `Authorization: Bearer <token>` (see [`header`](Self::header)),
    /// replacing an earlier one. The value is marked sensitive: it is left
    /// out of `Debug` output. A token a header cannot carry (a newline) is
    /// reported by `connect`.
    pub fn bearer(mut self, token: &str) -> Self {
        match HeaderValue::try_from(format!("Bearer {token}")) {
            Ok(mut value) => {
                value.set_sensitive(true);
                self.headers.insert(AUTHORIZATION, value);
            }
            Err(_) => {
                self.invalid.get_or_insert_with(|| {
                    "the bearer token holds characters a header cannot carry".to_owned()
                });
            }
        }
        self
    }

    /// The largest message accepted from the server, in bytes (default
    /// 8 MiB): a WebSocket message, an HTTP answer body, an SSE event.
    pub fn max_frame_len(mut self, len: usize) -> Self {
        self.max_frame_len = len;
        self
    }
}

#[cfg(feature = "tls")]
impl<K: kind::Secure> Connector<K> {
    /// The TLS settings: the roots the server's certificate is checked
    /// against (feature `tls`). Required for TCP over TLS, `wss://` and
    /// `https://`, unless the `tls-webpki-roots` feature supplies
    /// Mozilla's roots; a `ws://` or `http://` URL ignores them.
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls(mut self, tls: crate::tls::ClientTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The TLS settings for a secure target, or the error that says what is
    /// missing.
    #[cfg(any(feature = "websocket", feature = "http"))]
    pub(crate) fn tls_for(&self, target: &str) -> Result<crate::tls::ClientTls, TransportError> {
        if let Some(tls) = &self.tls {
            return Ok(tls.clone());
        }
        #[cfg(feature = "tls-webpki-roots")]
        {
            let _ = target;
            Ok(crate::tls::ClientTls::webpki_roots())
        }
        #[cfg(not(feature = "tls-webpki-roots"))]
        Err(TransportError::Invalid(format!(
            "`{target}` needs TLS settings: `.tls(ClientTls::from_roots_pem_file(..)?)`, \
             or the `tls-webpki-roots` feature"
        )))
    }
}

/// The error for a secure URL in a build without the `tls` feature.
#[cfg(all(not(feature = "tls"), any(feature = "websocket", feature = "http")))]
pub(crate) fn needs_tls_feature(url: &str) -> TransportError {
    TransportError::Invalid(format!(
        "`{url}` needs TLS, which needs the runtime's `tls` feature"
    ))
}

/// The host and port of a URL, brackets stripped from an IPv6 host.
#[cfg(feature = "websocket")]
pub(crate) fn host_and_port(uri: &http::Uri, default_port: u16) -> (String, u16) {
    let host = uri.host().unwrap_or_default();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
        .to_owned();
    (host, uri.port_u16().unwrap_or(default_port))
}

/// Whether `url` is secure: `plain` (`ws`, `http`) or its secure twin
/// (`wss`, `https`); anything else is an error naming both.
#[cfg(any(feature = "websocket", feature = "http"))]
pub(crate) fn scheme_is_secure(
    url: &str,
    uri: &http::Uri,
    plain: &str,
) -> Result<bool, TransportError> {
    match uri.scheme_str() {
        Some(s) if s == plain => Ok(false),
        Some(s) if s.len() == plain.len() + 1 && s.starts_with(plain) && s.ends_with('s') => {
            Ok(true)
        }
        _ => Err(TransportError::Invalid(format!(
            "`{url}` is not a `{plain}://` or `{plain}s://` URL"
        ))),
    }
}
