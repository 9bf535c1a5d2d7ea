//! The settings about who is on the other side and what goes with each
//! call: the hook that vets accepted connections, the headers clients send,
//! and the layers around outbound calls.

use super::*;

impl Config {
    /// Installs a hook that runs once for each connection a server accepts,
    /// before any of its messages is read: it sees who is calling (the
    /// [`ConnectionInfo`]: the client's address, and for WebSocket and HTTP
    /// the request's path and headers), can attach state that handlers read
    /// back with [`Context::connection`](crate::Context::connection) (the
    /// authenticated user), and can refuse the connection.
    ///
    /// Where it runs:
    ///
    /// - a [`Listener`](crate::server::Listener) over TCP, Unix or TLS: once
    ///   the connection is open; a refused connection is closed (a raw
    ///   socket has no way to say why; the reason is logged at `debug`);
    /// - a WebSocket acceptor: during the handshake, so a refused client
    ///   gets the [`Refusal`]'s HTTP status, headers and reason instead of
    ///   an upgrade;
    /// - [`HttpListener`](crate::server::HttpListener) (feature `http`): for
    ///   every `POST`, since each is answered on its own; a refusal is the
    ///   HTTP answer.
    ///
    /// Peers that are not a server's connections (stdio, child processes,
    /// in-memory pairs) never run it. The hook is synchronous and runs on
    /// the connection's task: check a token's signature here, and leave
    /// slow lookups to a middleware layer or the handler, which can read
    /// the same [`ConnectionInfo`].
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::connection::Refusal;
    /// use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
    ///
    /// #[derive(Clone)]
    /// struct User(String);
    ///
    /// let config = Config::default().on_connect(|info| {
    ///     match info.bearer_token() {
    ///         Some("secret-for-alice") => {
    ///             info.insert(User("alice".into()));
    ///             Ok(())
    ///         }
    ///         _ => Err(Refusal::unauthorized("a valid bearer token is required")),
    ///     }
    /// });
    /// let router = Router::new().request("whoami", |(): (), cx: Context| async move {
    ///     let user = cx.connection().get::<User>().map(|u| u.0.clone());
    ///     Ok::<_, ErrorObject>(user)
    /// });
    /// # let _ = (config, router);
    /// ```
    pub fn on_connect<F>(mut self, hook: F) -> Self
    where
        F: Fn(&mut ConnectionInfo) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.on_connect = Some(Arc::new(hook));
        self
    }

    /// Wraps the calls this side makes in `layer` (feature `tower`): each
    /// awaited call ([`Peer::call`](crate::Peer::call),
    /// [`call_with`](crate::Peer::call_with), the request methods of an
    /// `#[rpc]` client) goes through the stack as an
    /// [`OutboundCall`](crate::router::OutboundCall) (method, encoded
    /// params, options, peer), and its layers see the raw result or the
    /// error. tower's own layers (timeout, concurrency limit, rate limit,
    /// retry) compose as usual; a [`CallError`](crate::CallError) a layer
    /// returns reaches the caller as itself, any other error as
    /// [`CallError::Layer`](crate::CallError::Layer). Layers added later
    /// wrap the earlier ones. The stack is built afresh for each
    /// connection, so a concurrency limit counts one connection's calls.
    ///
    /// Calls [`start`](crate::Call::start)ed for their id, and progress
    /// calls, are sent directly, without the layers (their handles need the
    /// id at once). A config without layers sends every call directly, at
    /// no cost.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::{Config, ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let config = Config::default()
    ///     .outbound_layer(tower::limit::ConcurrencyLimitLayer::new(8))
    ///     .outbound_layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(30)));
    /// let router = Router::new().request("add", |(a, b): (i64, i64), _| async move {
    ///     Ok::<_, ErrorObject>(a + b)
    /// });
    /// let (a, b) = Transport::pair(8);
    /// let _server = Peer::builder().router(router).spawn(b);
    /// let client = Peer::builder().config(config).spawn(a);
    /// assert_eq!(client.call::<i64>("add", (2, 3)).await?, 5);
    /// # Ok::<(), jsonrpc_runtime::CallError>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tower")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub fn outbound_layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<crate::router::OutboundService> + Send + Sync + 'static,
        L::Service: tower::Service<crate::router::OutboundCall, Response = Box<serde_json::value::RawValue>>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<crate::router::OutboundCall>>::Error: Into<tower::BoxError>,
        <L::Service as tower::Service<crate::router::OutboundCall>>::Future: Send + 'static,
    {
        self.outbound = Some(crate::peer::wrap_outbound(self.outbound.take(), layer));
        self
    }

    /// Runs the [`on_connect`](Self::on_connect) hook, if there is one.
    pub(crate) fn vet(&self, info: &mut ConnectionInfo) -> Result<(), Refusal> {
        match &self.on_connect {
            Some(hook) => hook(info),
            None => Ok(()),
        }
    }

    /// Adds a header to the HTTP requests this config's clients send: every
    /// `POST` of the HTTP client, and the WebSocket handshake. Repeated
    /// names are all sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::http::{HeaderName, HeaderValue};
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default()
    ///     .request_header(HeaderName::from_static("x-tenant"), HeaderValue::from_static("blue"));
    /// # let _ = config;
    /// ```
    pub fn request_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.request_headers.append(name, value);
        self
    }

    /// Sends `Authorization: Bearer <token>` with this config's client
    /// requests (see [`request_header`](Self::request_header)), replacing an
    /// earlier one. The value is marked sensitive: it is left out of
    /// `Debug` output.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Config;
    ///
    /// let config = Config::default().bearer_auth("secret-for-alice")?;
    /// assert!(!format!("{config:?}").contains("secret-for-alice"));
    /// # Ok::<(), jsonrpc_runtime::http::header::InvalidHeaderValue>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The token holds characters a header cannot carry (a newline).
    pub fn bearer_auth(mut self, token: &str) -> Result<Self, InvalidHeaderValue> {
        let mut value = HeaderValue::try_from(format!("Bearer {token}"))?;
        value.set_sensitive(true);
        self.request_headers.insert(AUTHORIZATION, value);
        Ok(self)
    }
}
