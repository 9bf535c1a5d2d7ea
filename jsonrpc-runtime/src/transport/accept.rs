//! Accepting connections: what a server's listener needs from a socket.

use std::fmt;
use std::future::Future;
use std::io;
use std::path::PathBuf;

use super::{Transport, TransportError};
use crate::config::Config;

/// Where a connection came from.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::PeerAddr;
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
/// use jsonrpc_runtime::transport::{Acceptor, PeerAddr, TcpAcceptor, TransportError};
/// use jsonrpc_runtime::{Config, Transport};
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
///         config: &Config,
///     ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
///         self.0.open(stream, config)
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

    /// Turns an accepted connection into a transport, framed as `config`
    /// says. Runs on the connection's own task.
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
        config: &Config,
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
