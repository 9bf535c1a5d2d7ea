//! TLS over TCP (feature `tls`): the handshakes, and an acceptor for
//! [`Listener`](crate::server::Listener) and, with the `http` feature,
//! `HttpListener`.
//!
//! Messages are framed by the listener's codec, inside the TLS stream
//! (a [`TcpConnector`](super::TcpConnector) with `tls` settings is the
//! client). The
//! server's handshake never runs in the accept loop: an accepted
//! [`TlsConnection`] shakes hands on the connection's own task, when it is
//! opened or first read (so a client that connects and sends nothing holds
//! up no one), and gives up after the acceptor's
//! [`handshake_timeout`](TlsAcceptor::handshake_timeout). A handshake that
//! fails or times out drops that connection only (logged at `debug`).
//!
//! A peer that closes the TCP connection without TLS's `close_notify`
//! ends the stream as a plain end of stream would: every framing here
//! delimits its own messages, so a message cut short is still reported as
//! one, and clients that just exit are not logged as failures.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use crate::rt::Sleep;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ServerConfig};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};

use super::{Acceptor, OpenOptions, TcpAcceptor, TlsError, Transport, TransportError};
use crate::connection::PeerAddr;
use crate::tls::ServerTls;

#[cfg(feature = "http")]
pub(crate) mod https;

/// The default limit on a server handshake.
const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The name a server's certificate is checked against: a DNS name or an IP
/// address (`[::1]` as written in URLs is accepted).
pub(crate) fn server_name_of(host: &str) -> Result<ServerName<'static>, TransportError> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    ServerName::try_from(bare.to_owned())
        .map_err(|_| TransportError::Tls(TlsError::InvalidServerName(host.to_owned())))
}

/// The client side of a TLS handshake over `stream`.
pub(crate) async fn connect<S>(
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    stream: S,
) -> Result<EofIsEnd<tokio_rustls::client::TlsStream<S>>, TransportError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    tokio_rustls::TlsConnector::from(config)
        .connect(name, stream)
        .await
        .map(EofIsEnd)
        .map_err(TransportError::from_tls_io)
}

/// The server side of a TLS handshake over `stream`.
#[cfg_attr(not(feature = "websocket"), allow(dead_code))]
pub(crate) async fn accept<S>(
    config: Arc<ServerConfig>,
    stream: S,
) -> Result<EofIsEnd<tokio_rustls::server::TlsStream<S>>, TransportError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    tokio_rustls::TlsAcceptor::from(config)
        .accept(stream)
        .await
        .map(EofIsEnd)
        .map_err(TransportError::from_tls_io)
}

/// A bound TCP socket that a [`Listener`](crate::server::Listener) (or,
/// with the `http` feature, `HttpListener`) accepts TLS connections from.
///
/// Accepting takes the connection off the socket and nothing more: the
/// handshake runs on the connection's own task, limited by
/// [`handshake_timeout`](Self::handshake_timeout), so clients that are slow
/// to shake hands, or never do, hold up no one else.
///
/// With a [`Listener`](crate::server::Listener), messages are framed inside
/// the TLS stream as the listener's config says. With `HttpListener`, the
/// acceptor announces `h2` and `http/1.1` through ALPN (see
/// [`Acceptor::offer_protocols`]) and serves HTTPS.
///
/// # Examples
///
/// See the [`tls`](crate::tls) module for a listener and a client. HTTPS:
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::HttpListener;
/// use jsonrpc_runtime::tls::{ClientTls, ServerTls};
/// use jsonrpc_runtime::transport::{HttpConnector, TlsAcceptor};
/// use jsonrpc_runtime::{ErrorObject, Peer, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
/// let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
/// let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
///
/// let server_tls = ServerTls::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())?;
/// let acceptor = TlsAcceptor::bind("127.0.0.1:0", server_tls).await?
///     .handshake_timeout(Duration::from_secs(5));
/// let url = format!("https://localhost:{}/", acceptor.local_addr()?.port());
/// let server = HttpListener::new(acceptor).spawn(router);
///
/// let client_tls = ClientTls::from_roots_pem(cert_pem.as_bytes())?;
/// let client = Peer::spawn(HttpConnector::new(&url).tls(client_tls).connect().await?);
/// assert_eq!(client.call::<String>("ping", ()).await?, "pong");
/// client.close(Duration::from_secs(1)).await;
/// server.shutdown(Duration::from_secs(1)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub struct TlsAcceptor {
    tcp: TcpAcceptor,
    tls: ServerTls,
    /// `tls`'s config with the ALPN list offered, if any.
    config: Arc<ServerConfig>,
    handshake_timeout: Duration,
}

impl TlsAcceptor {
    /// Binds a TCP socket to `addr` for TLS clients (port 0 picks a free
    /// port; see [`local_addr`](Self::local_addr)).
    ///
    /// # Examples
    ///
    /// See the [`tls`](crate::tls) module.
    ///
    /// # Errors
    ///
    /// Fails when the address does not resolve or cannot be bound.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is bound if the future is dropped.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn bind(addr: impl ToSocketAddrs, tls: ServerTls) -> io::Result<TlsAcceptor> {
        Ok(TlsAcceptor::from_listener(
            TcpListener::bind(addr).await?,
            tls,
        ))
    }

    /// An acceptor over a listener bound elsewhere.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::ServerTls;
    /// use jsonrpc_runtime::transport::TlsAcceptor;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// # let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// # let tls = ServerTls::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())?;
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let acceptor = TlsAcceptor::from_listener(listener, tls);
    /// # let _ = acceptor;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn from_listener(listener: TcpListener, tls: ServerTls) -> TlsAcceptor {
        TlsAcceptor {
            tcp: TcpAcceptor::from_listener(listener),
            config: tls.with_default_alpn(&[]),
            tls,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
        }
    }

    /// How long a client gets, from the moment it is accepted, to complete
    /// its handshake before its connection is dropped (default 10 seconds).
    ///
    /// # Examples
    ///
    /// See [`TlsAcceptor`].
    pub fn handshake_timeout(mut self, timeout: Duration) -> TlsAcceptor {
        self.handshake_timeout = timeout;
        self
    }

    /// The address the socket is bound to.
    ///
    /// # Errors
    ///
    /// The operating system's error, if it cannot tell.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }
}

impl Acceptor for TlsAcceptor {
    type Connection = TlsConnection;

    async fn accept(&mut self) -> io::Result<(TlsConnection, PeerAddr)> {
        let (stream, addr) = self.tcp.accept().await?;
        let connection = TlsConnection::new(stream, self.config.clone(), self.handshake_timeout);
        Ok((connection, addr))
    }

    fn open(
        &self,
        mut connection: TlsConnection,
        options: &OpenOptions,
    ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
        let codec = options.codec().clone();
        async move {
            std::future::poll_fn(|cx| connection.poll_handshake(cx))
                .await
                .map_err(TransportError::from_tls_io)?;
            let (read, write) = tokio::io::split(connection);
            Ok(Transport::from_io(read, write, codec))
        }
    }

    fn offer_protocols(&mut self, protocols: &[&[u8]]) {
        self.config = self.tls.with_default_alpn(protocols);
    }
}

/// A TLS connection a [`TlsAcceptor`] accepted. It shakes hands when it is
/// first read or written (or opened as a transport), within the acceptor's
/// [`handshake_timeout`](TlsAcceptor::handshake_timeout), then reads and
/// writes the decrypted stream.
///
/// A failed handshake is an I/O error from the read or write that ran it
/// (and from every later one); its source is the
/// [`TlsError`].
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::{Acceptor, TlsAcceptor, TlsConnection};
/// use tokio::io::{AsyncRead, AsyncWrite};
///
/// // What `HttpListener` needs from a connection.
/// fn byte_stream<A>(_: &A)
/// where
///     A: Acceptor,
///     A::Connection: AsyncRead + AsyncWrite + Unpin,
/// {
/// }
/// # fn check(acceptor: &TlsAcceptor) { byte_stream(acceptor) }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub struct TlsConnection {
    state: State,
}

enum State {
    Handshaking {
        accept: Box<tokio_rustls::Accept<TcpStream>>,
        deadline: Pin<Box<Sleep>>,
        limit: Duration,
    },
    Ready(Box<tokio_rustls::server::TlsStream<TcpStream>>),
    /// The handshake failed with an error of this kind (reported once in
    /// full).
    Failed(io::ErrorKind),
}

impl std::fmt::Debug for TlsConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Handshaking { .. } => "handshaking",
            State::Ready(_) => "ready",
            State::Failed(_) => "failed",
        };
        f.debug_struct("TlsConnection")
            .field("state", &state)
            .finish()
    }
}

impl TlsConnection {
    fn new(stream: TcpStream, config: Arc<ServerConfig>, limit: Duration) -> TlsConnection {
        TlsConnection {
            state: State::Handshaking {
                accept: Box::new(tokio_rustls::TlsAcceptor::from(config).accept(stream)),
                deadline: Box::pin(crate::rt::sleep(limit)),
                limit,
            },
        }
    }

    /// Drives the handshake; ready once it is done. Its error's source is
    /// rustls' reason, or a [`TlsError::TimedOut`].
    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let (accept, deadline, limit) = match &mut self.state {
            State::Ready(_) => return Poll::Ready(Ok(())),
            State::Failed(kind) => {
                return Poll::Ready(Err(io::Error::new(
                    *kind,
                    "the TLS handshake failed earlier",
                )))
            }
            State::Handshaking {
                accept,
                deadline,
                limit,
            } => (accept, deadline, *limit),
        };
        match Pin::new(&mut **accept).poll(cx) {
            Poll::Ready(Ok(stream)) => {
                self.state = State::Ready(Box::new(stream));
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => {
                self.state = State::Failed(e.kind());
                Poll::Ready(Err(e))
            }
            Poll::Pending => {
                std::task::ready!(deadline.as_mut().poll(cx));
                self.state = State::Failed(io::ErrorKind::TimedOut);
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    TlsError::TimedOut(limit),
                )))
            }
        }
    }

    /// The TLS stream once the handshake is done.
    fn poll_stream(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<Pin<&mut tokio_rustls::server::TlsStream<TcpStream>>>> {
        std::task::ready!(self.poll_handshake(cx))?;
        match &mut self.state {
            State::Ready(stream) => Poll::Ready(Ok(Pin::new(&mut **stream))),
            _ => Poll::Ready(Err(io::Error::other("the TLS handshake did not complete"))),
        }
    }
}

impl AsyncRead for TlsConnection {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let stream = std::task::ready!(self.poll_stream(cx))?;
        eof_is_end(stream.poll_read(cx, buf))
    }
}

impl AsyncWrite for TlsConnection {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(self.poll_stream(cx))?.poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        std::task::ready!(self.poll_stream(cx))?.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        match &self.state {
            State::Ready(stream) => stream.is_write_vectored(),
            _ => false,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.state {
            State::Ready(stream) => Pin::new(&mut **stream).poll_flush(cx),
            // Nothing was written yet.
            _ => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.state {
            State::Ready(stream) => Pin::new(&mut **stream).poll_shutdown(cx),
            State::Handshaking { accept, .. } => match accept.get_mut() {
                Some(tcp) => Pin::new(tcp).poll_shutdown(cx),
                None => Poll::Ready(Ok(())),
            },
            State::Failed(_) => Poll::Ready(Ok(())),
        }
    }
}

/// A TLS stream whose end without `close_notify` reads as a plain end of
/// stream (see the module docs).
pub(crate) struct EofIsEnd<S>(pub(crate) S);

impl<S> EofIsEnd<S> {
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn get_ref(&self) -> &S {
        &self.0
    }
}

/// A read's result, with rustls' "closed without `close_notify`" as the end
/// of the stream.
fn eof_is_end(read: Poll<io::Result<()>>) -> Poll<io::Result<()>> {
    match read {
        Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
            tracing::trace!("the other side closed without TLS close_notify");
            Poll::Ready(Ok(()))
        }
        other => other,
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for EofIsEnd<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        eof_is_end(Pin::new(&mut self.0).poll_read(cx, buf))
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for EofIsEnd<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
