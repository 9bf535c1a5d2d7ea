//! TCP: a connector and an acceptor for [`Listener`](crate::server::Listener).
//!
//! Messages are framed by a codec (newline-delimited by default).
//! Nagle's algorithm is turned off on every connection: the peer already
//! batches a burst of messages into one write, and a lone request must not
//! wait for the previous one to be acknowledged.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

use super::connect::{kind, Connector};
use super::{set_nodelay, Acceptor, OpenOptions, Transport, TransportError};
use crate::connection::PeerAddr;

/// Connects to a TCP server (see [`Connector`] for the settings).
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::transport::TcpConnector;
/// use jsonrpc_runtime::Peer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let peer = Peer::spawn(TcpConnector::new("127.0.0.1:9000").connect().await?);
/// let sum: i64 = peer.call("add", [2, 3]).await?;
/// # Ok(())
/// # }
/// ```
pub type TcpConnector = Connector<kind::Tcp>;

impl Connector<kind::Tcp> {
    /// A client that connects through this connector, and again each
    /// time the connection is lost: see
    /// [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use jsonrpc_runtime::transport::TcpConnector;
    ///
    /// # async fn demo() -> Result<(), jsonrpc_runtime::CallError> {
    /// let client = TcpConnector::new("127.0.0.1:7000")
    ///     .reconnecting()
    ///     .queue_for(Duration::from_secs(5))
    ///     .spawn();
    /// let sum: i64 = client.call("add", [2, 3]).await?;
    /// # Ok(()) }
    /// ```
    pub fn reconnecting(self) -> crate::reconnect::ReconnectBuilder {
        crate::reconnect::ReconnectingPeer::builder(move || self.clone().connect())
    }

    /// A connector to `addr` (`host:port`; a `SocketAddr`), framed
    /// newline-delimited unless [`codec`](Self::codec) says otherwise.
    pub fn new(addr: impl fmt::Display) -> Self {
        Connector::with_target(kind::Tcp(addr.to_string()))
    }

    /// The name the server's certificate is checked against (feature
    /// `tls`; default: the address's host).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn server_name(mut self, name: &str) -> Self {
        self.server_name = Some(name.to_owned());
        self
    }

    /// Connects, and with [`tls`](Self::tls) settings runs the TLS
    /// handshake (no ALPN protocol is offered).
    ///
    /// # Errors
    ///
    /// An I/O error when the address does not resolve or nothing accepts
    /// the connection; [`TransportError::Tls`] when the TLS handshake fails
    /// (a certificate the client does not trust is
    /// [`TlsError::Handshake`](crate::transport::TlsError::Handshake) with
    /// rustls' `InvalidCertificate`) or the server name is neither a DNS
    /// name nor an IP address.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the connection attempt.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        self.check()?;
        #[cfg(feature = "tls")]
        if let Some(tls) = &self.tls {
            let host = self
                .server_name
                .as_deref()
                .unwrap_or_else(|| host_of(&self.target.0));
            let name = super::tls::server_name_of(host)?;
            let stream = TcpStream::connect(self.target.0.as_str()).await?;
            set_nodelay(&stream);
            let stream = super::tls::connect(tls.with_default_alpn(&[]), name, stream).await?;
            let (read, write) = tokio::io::split(stream);
            return Ok(Transport::from_io(read, write, self.codec));
        }
        let stream = TcpStream::connect(self.target.0.as_str()).await?;
        Ok(Transport::from_tcp(stream, self.codec))
    }
}

/// The host of a `host:port` address.
#[cfg(feature = "tls")]
fn host_of(addr: &str) -> &str {
    match addr.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => host,
        _ => addr,
    }
}

/// A bound TCP socket that a [`Listener`](crate::server::Listener) accepts
/// connections from.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::TcpAcceptor;
/// use jsonrpc_runtime::Router;
///
/// # async fn run() -> std::io::Result<()> {
/// let acceptor = TcpAcceptor::bind("127.0.0.1:9000").await?;
/// println!("listening on {}", acceptor.local_addr()?);
/// let server = Listener::new(acceptor).spawn(Router::new());
/// // ... until it is time to stop:
/// tokio::time::sleep(Duration::from_secs(60)).await;
/// server.shutdown(Duration::from_secs(5)).await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TcpAcceptor {
    listener: TcpListener,
}

impl TcpAcceptor {
    /// Binds a TCP socket to `addr` (port 0 picks a free port; see
    /// [`local_addr`](Self::local_addr)).
    ///
    /// # Errors
    ///
    /// Fails when the address does not resolve or cannot be bound (in use,
    /// not permitted).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is bound if the future is dropped.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<TcpAcceptor> {
        Ok(TcpAcceptor {
            listener: TcpListener::bind(addr).await?,
        })
    }

    /// An acceptor over a listener bound elsewhere (with socket options of
    /// your choice, or inherited from a service manager).
    pub fn from_listener(listener: TcpListener) -> TcpAcceptor {
        TcpAcceptor { listener }
    }

    /// The address the socket is bound to.
    ///
    /// # Errors
    ///
    /// The operating system's error, if it cannot tell.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

impl Acceptor for TcpAcceptor {
    type Connection = TcpStream;

    async fn accept(&mut self) -> io::Result<(TcpStream, PeerAddr)> {
        let (stream, addr) = self.listener.accept().await?;
        // Here rather than in `open` only, for servers that take the
        // stream as it is (HTTP).
        set_nodelay(&stream);
        Ok((stream, PeerAddr::Tcp(addr)))
    }

    fn open(
        &self,
        stream: TcpStream,
        options: &OpenOptions,
    ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
        std::future::ready(Ok(Transport::from_tcp(stream, options.codec().clone())))
    }
}
