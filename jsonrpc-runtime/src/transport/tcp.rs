//! TCP: a connector and an acceptor for [`Listener`](crate::server::Listener).
//!
//! Messages are framed as the config says (newline-delimited by default).
//! Nagle's algorithm is turned off on every connection: the peer already
//! batches a burst of messages into one write, and a lone request must not
//! wait for the previous one to be acknowledged.

use std::future::Future;
use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

use super::Transport;
use super::TransportError;
use super::{Acceptor, PeerAddr};
use crate::config::Config;
use crate::connection::ConnectionInfo;

impl Transport {
    /// Connects to a TCP server, framed as `config` says.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::{Config, Peer, Transport};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let transport = Transport::connect_tcp("127.0.0.1:9000", &Config::default()).await?;
    /// let peer = Peer::spawn(transport);
    /// let sum: i64 = peer.call("add", [2, 3]).await?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// Fails when the address does not resolve or nothing accepts the
    /// connection.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the connection attempt.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn connect_tcp(addr: impl ToSocketAddrs, config: &Config) -> io::Result<Transport> {
        let stream = TcpStream::connect(addr).await?;
        Ok(Transport::tcp(stream, config))
    }

    /// A transport over a connected TCP stream, framed as `config` says.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::{Config, Transport};
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let stream = tokio::net::TcpStream::connect("127.0.0.1:9000").await?;
    /// let transport = Transport::tcp(stream, &Config::default());
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    pub fn tcp(stream: TcpStream, config: &Config) -> Transport {
        set_nodelay(&stream);
        let peer = stream.peer_addr();
        let (read, write) = stream.into_split();
        let transport = Transport::from_io(read, write, config.codec());
        match peer {
            Ok(addr) => {
                transport.with_connection(ConnectionInfo::new().with_addr(PeerAddr::Tcp(addr)))
            }
            Err(_) => transport,
        }
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
        config: &Config,
    ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
        std::future::ready(Ok(Transport::tcp(stream, config)))
    }
}

pub(super) fn set_nodelay(stream: &TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "could not turn off Nagle's algorithm");
    }
}
