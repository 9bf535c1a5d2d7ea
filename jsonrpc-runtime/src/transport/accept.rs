//! Accepting connections: what a server's listener needs from a socket.

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::Arc;

use super::{Transport, TransportError};
use crate::codec::FramingCodec;
use crate::connection::{ConnectHook, ConnectionInfo, PeerAddr, Refusal};

/// How an [`Acceptor`] opens each connection: the framer of byte-stream
/// connections, and the hook that vets who is calling.
///
/// A [`Listener`](crate::server::Listener) makes one from its config's
/// [`codec`](crate::Config::codec) and its
/// [`on_connect`](crate::server::Listener::on_connect) hook; call
/// [`WebSocketAcceptor::handshake`](crate::transport::WebSocketAcceptor::handshake) with
/// one to run a handshake by hand.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::codec::ContentLengthCodec;
/// use jsonrpc_runtime::connection::{ConnectionInfo, Refusal};
/// use jsonrpc_runtime::transport::OpenOptions;
///
/// let options = OpenOptions::new(ContentLengthCodec::new())
///     .on_connect(|info| match info.bearer_token() {
///         Some("secret") => Ok(()),
///         _ => Err(Refusal::unauthorized("a bearer token is required")),
///     });
/// assert!(options.vet(&mut ConnectionInfo::new()).is_err());
/// ```
#[derive(Clone, Default)]
pub struct OpenOptions {
    codec: FramingCodec,
    on_connect: Option<ConnectHook>,
}

impl OpenOptions {
    /// Opens connections framed by `codec` (a `&Config` converts), with no
    /// hook.
    pub fn new(codec: impl Into<FramingCodec>) -> Self {
        OpenOptions {
            codec: codec.into(),
            on_connect: None,
        }
    }

    /// Vets each connection with `hook` before its first message is read
    /// (see [`Listener::on_connect`](crate::server::Listener::on_connect)).
    pub fn on_connect<F>(mut self, hook: F) -> Self
    where
        F: Fn(&mut ConnectionInfo) -> Result<(), Refusal> + Send + Sync + 'static,
    {
        self.on_connect = Some(Arc::new(hook));
        self
    }

    #[cfg(feature = "server")]
    pub(crate) fn with_hook(mut self, hook: Option<ConnectHook>) -> Self {
        self.on_connect = hook;
        self
    }

    /// The framer of byte-stream connections.
    pub fn codec(&self) -> &FramingCodec {
        &self.codec
    }

    /// Runs the hook on `info`, if there is one.
    ///
    /// # Errors
    ///
    /// The hook's refusal.
    pub fn vet(&self, info: &mut ConnectionInfo) -> Result<(), Refusal> {
        match &self.on_connect {
            Some(hook) => hook(info),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenOptions")
            .field("codec", &self.codec)
            .field("on_connect", &self.on_connect.as_ref().map(|_| ".."))
            .finish()
    }
}

/// A source of connections for a server's
/// [`Listener`](crate::server::Listener): a bound socket.
///
/// Implemented by [`TcpAcceptor`](crate::transport::TcpAcceptor),
/// [`UnixAcceptor`](crate::transport::UnixAcceptor), with the `websocket`
/// feature `WebSocketAcceptor`, and with the `tls` feature `TlsAcceptor`.
/// Implement it to serve another kind of socket (a vsock).
///
/// # Examples
///
/// A TCP acceptor that only lets local clients in:
///
/// ```
/// use std::future::Future;
/// use jsonrpc_runtime::connection::PeerAddr;
/// use jsonrpc_runtime::transport::{Acceptor, OpenOptions, TcpAcceptor, TransportError};
/// use jsonrpc_runtime::Transport;
/// use tokio::net::TcpStream;
///
/// struct LocalOnly(TcpAcceptor);
///
/// impl Acceptor for LocalOnly {
///     type Connection = TcpStream;
///
///     async fn accept(&mut self) -> std::io::Result<(TcpStream, PeerAddr)> {
///         loop {
///             let (stream, addr) = self.0.accept().await?;
///             if matches!(&addr, PeerAddr::Tcp(a) if a.ip().is_loopback()) {
///                 return Ok((stream, addr));
///             }
///         }
///     }
///
///     fn open(
///         &self,
///         stream: TcpStream,
///         options: &OpenOptions,
///     ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
///         self.0.open(stream, options)
///     }
/// }
/// ```
pub trait Acceptor: Send + 'static {
    /// An accepted connection, before it is a transport.
    type Connection: Send + 'static;

    /// Waits for the next connection and returns it with the client's
    /// address.
    ///
    /// Errors about one connection only (the client gave up before it was
    /// accepted) are skipped by the listener; others (out of file
    /// descriptors) make it wait a little and try again.
    ///
    /// # Errors
    ///
    /// The socket's accept error.
    ///
    /// # Cancel safety
    ///
    /// Must be cancel safe: the listener drops the future at shutdown.
    fn accept(&mut self) -> impl Future<Output = io::Result<(Self::Connection, PeerAddr)>> + Send;

    /// Turns an accepted connection into a transport, framed by
    /// `options`' codec; an acceptor whose handshake can answer a refusal
    /// (WebSocket's) runs `options`' hook during it. Runs on the
    /// connection's own task.
    ///
    /// # Errors
    ///
    /// A failed handshake; the connection is then dropped.
    ///
    /// # Cancel safety
    ///
    /// The returned future is dropped at shutdown; dropping it must drop
    /// the connection.
    fn open(
        &self,
        connection: Self::Connection,
        options: &OpenOptions,
    ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static;

    /// Tells the acceptor which application protocols the server speaks, in
    /// order of preference, for acceptors that agree on one with each client
    /// (TLS's ALPN): `HttpListener` calls it with `h2` and `http/1.1`. The
    /// default ignores it; an acceptor that wraps another passes it on.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::transport::{Acceptor, TcpAcceptor};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
    /// // Plain TCP agrees on nothing: ignored.
    /// acceptor.offer_protocols(&[b"h2", b"http/1.1"]);
    /// # Ok::<(), std::io::Error>(())
    /// # }).unwrap();
    /// ```
    fn offer_protocols(&mut self, protocols: &[&[u8]]) {
        let _ = protocols;
    }
}
