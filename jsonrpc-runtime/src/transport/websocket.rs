//! WebSocket (feature `websocket`): a connector, server and client
//! handshakes over any stream, and an acceptor for
//! [`Listener`](crate::server::Listener). With the `tls` feature, the
//! connector and the acceptor also speak `wss://`.
//!
//! One JSON-RPC message (or batch) travels in each text message. The rules
//! at the edges:
//!
//! * A binary message is refused as one message: the peer answers it with
//!   -32600 "binary messages are not accepted, send JSON text" and keeps
//!   serving.
//! * A message or frame over the frame cap
//!   (the connector's [`max_frame_len`](Connector::max_frame_len), the
//!   listener config's [`max_frame_len`](crate::Config::max_frame_len))
//!   cannot be skipped (its bytes are not read, so the stream is out of step): it is answered with
//!   -32600 naming the limit, then the connection is closed with code 1009
//!   ("message too big"), and it ends with a [`TransportError::WebSocket`]
//!   whose [`close_code`](WebSocketError::close_code) is 1009.
//!   Text that is not UTF-8 closes with 1007, a protocol violation with 1002.
//! * Pings are answered with pongs as they are read.
//! * A close frame from the other side ends the connection cleanly
//!   ([`CloseReason::RemoteClosed`](crate::CloseReason::RemoteClosed)); the
//!   reply echoes its code (1000 for a normal close). Closing from this side
//!   sends code 1000.
//! * After sending its close frame, this side waits up to two seconds for
//!   the other side's reply (reading and dropping whatever still arrives),
//!   so the other side sees a clean close rather than a reset.
//!
//! The two halves of the transport share the WebSocket behind a mutex held
//! only for the length of one poll, so a read never waits for a write.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use crate::rt::Sleep;
use bytes::Bytes;
use futures_core::Stream;
use futures_sink::Sink;
use futures_util::StreamExt as _;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream, ToSocketAddrs};
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::error::{CapacityError, ProtocolError};
use tokio_tungstenite::tungstenite::handshake::client::Request;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Response};
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use super::connect::{host_and_port, kind, scheme_is_secure, Connector};
use super::{Acceptor, OpenOptions, Transport, TransportError, WebSocketError};
use crate::codec::{Frame, FrameRefusal};
use crate::connection::{ConnectionInfo, PeerAddr};

mod halves;

use self::halves::websocket_transport;

/// How long this side waits for the other side's close reply.
const CLOSE_LINGER: Duration = Duration::from_secs(2);

/// The default limit on a server handshake.
const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to a WebSocket server at a `ws://` or `wss://` URL (see
/// [`Connector`] for the settings).
///
/// Framing is WebSocket's: one JSON-RPC message in each text message, at
/// most [`max_frame_len`](Connector::max_frame_len) bytes. The
/// [`header`](Connector::header)s (a [`bearer`](Connector::bearer) token,
/// say) go with the handshake.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::{WebSocketAcceptor, WebSocketConnector};
/// use jsonrpc_runtime::{ErrorObject, Peer, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
/// let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await?;
/// let url = format!("ws://{}/", acceptor.local_addr()?);
/// let server = Listener::new(acceptor).spawn(router);
///
/// let client = Peer::spawn(WebSocketConnector::new(&url).bearer("secret").connect().await?);
/// assert_eq!(client.call::<String>("ping", ()).await?, "pong");
/// client.close(Duration::from_secs(1)).await;
/// server.shutdown(Duration::from_secs(1)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "websocket")))]
pub type WebSocketConnector = Connector<kind::WebSocket>;

#[cfg_attr(docsrs, doc(cfg(feature = "websocket")))]
impl Connector<kind::WebSocket> {
    /// A client that connects through this connector, and again each
    /// time the connection is lost: see
    /// [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use jsonrpc_runtime::transport::WebSocketConnector;
    ///
    /// # async fn demo() -> Result<(), jsonrpc_runtime::CallError> {
    /// let client = WebSocketConnector::new("ws://127.0.0.1:7000/")
    ///     .reconnecting()
    ///     .queue_for(Duration::from_secs(5))
    ///     .spawn();
    /// let sum: i64 = client.call("add", [2, 3]).await?;
    /// # Ok(()) }
    /// ```
    pub fn reconnecting(self) -> crate::reconnect::ReconnectBuilder {
        crate::reconnect::ReconnectingPeer::builder(move || self.clone().connect())
    }

    /// Connects and runs the handshake; for `wss://`, the TLS handshake
    /// first (ALPN `http/1.1`), checking the server's certificate against
    /// the [`tls`](Self::tls) roots and the URL's host.
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] for a URL that is not `ws://` or
    /// `wss://` (or `wss://` without TLS settings); an I/O error when the
    /// TCP connection fails; [`TransportError::Tls`] when the TLS handshake
    /// fails; [`TransportError::WebSocket`] when the server refuses the
    /// handshake.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the connection attempt.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        let request = self.request()?;
        let url = &self.target.0;
        let secure = scheme_is_secure(url, request.uri(), "ws")?;
        let (host, port) = host_and_port(request.uri(), if secure { 443 } else { 80 });
        if !secure {
            let stream = TcpStream::connect((host.as_str(), port)).await?;
            super::set_nodelay(&stream);
            return client_handshake(request, stream, self.max_frame_len).await;
        }
        #[cfg(feature = "tls")]
        {
            let tls = self.tls_for(url)?;
            let name = super::tls::server_name_of(&host)?;
            let stream = TcpStream::connect((host.as_str(), port)).await?;
            super::set_nodelay(&stream);
            let tls = tls.with_default_alpn(&[crate::tls::alpn::HTTP_1_1]);
            let stream = super::tls::connect(tls, name, stream).await?;
            client_handshake(request, stream, self.max_frame_len).await
        }
        #[cfg(not(feature = "tls"))]
        Err(super::connect::needs_tls_feature(url))
    }

    /// Runs the client side of the handshake over an already connected
    /// `stream` (a TLS stream opened by hand, a Unix socket), for the URL's
    /// path and host.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::transport::{OpenOptions, WebSocketAcceptor, WebSocketConnector};
    /// use jsonrpc_runtime::{ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    /// let server = tokio::spawn(async move {
    ///     WebSocketAcceptor::handshake(server_io, &OpenOptions::default()).await
    /// });
    /// let client = WebSocketConnector::new("ws://localhost/").handshake(client_io).await?;
    /// let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
    /// let _server = Peer::builder().router(router).spawn(server.await??);
    /// let client = Peer::spawn(client);
    /// assert_eq!(client.call::<String>("ping", ()).await?, "pong");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] when the URL is invalid;
    /// [`TransportError::WebSocket`] when the server refuses the handshake.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops `stream`.
    pub async fn handshake<S>(self, stream: S) -> Result<Transport, TransportError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let request = self.request()?;
        client_handshake(request, stream, self.max_frame_len).await
    }

    /// The handshake request: the URL with the headers.
    fn request(&self) -> Result<Request, TransportError> {
        self.check()?;
        let url = &self.target.0;
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|e| TransportError::Invalid(format!("`{url}` is not a WebSocket URL: {e}")))?;
        request.headers_mut().extend(self.headers.clone());
        Ok(request)
    }
}

/// A bound TCP socket that a [`Listener`](crate::server::Listener) accepts
/// WebSocket connections from. The handshake runs on each connection's own
/// task, limited by [`handshake_timeout`](Self::handshake_timeout).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::WebSocketAcceptor;
/// use jsonrpc_runtime::transport::WebSocketConnector;
/// use jsonrpc_runtime::{ErrorObject, Peer, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
/// let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await?;
/// let url = format!("ws://{}/", acceptor.local_addr()?);
/// let server = Listener::new(acceptor).spawn(router);
///
/// let client = Peer::spawn(WebSocketConnector::new(&url).connect().await?);
/// assert_eq!(client.call::<String>("ping", ()).await?, "pong");
/// client.close(Duration::from_secs(1)).await;
/// server.shutdown(Duration::from_secs(1)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Debug)]
pub struct WebSocketAcceptor {
    listener: TcpListener,
    handshake_timeout: Duration,
    /// The TLS settings for `wss://`, with ALPN `http/1.1`.
    #[cfg(feature = "tls")]
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl WebSocketAcceptor {
    /// Runs the server side of a WebSocket handshake over `stream` (an
    /// accepted TCP or TLS stream), and returns the transport. Any request
    /// path is accepted. The handshake's path and headers become the
    /// transport's [`connection`](Transport::connection), and `options`'
    /// [`on_connect`](OpenOptions::on_connect) hook decides on them: a
    /// refused client gets the refusal's HTTP status instead of an upgrade.
    /// Messages are capped at the codec's
    /// [`max_frame_len`](crate::codec::FramingCodec::max_frame_len).
    ///
    /// # Examples
    ///
    /// See [`WebSocketConnector::handshake`](Connector::handshake).
    ///
    /// # Errors
    ///
    /// [`TransportError::WebSocket`] when the client's request is not a
    /// valid WebSocket handshake or the `on_connect` hook refused it.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future drops `stream`.
    pub async fn handshake<S>(stream: S, options: &OpenOptions) -> Result<Transport, TransportError>
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        server_handshake(stream, options, ConnectionInfo::new()).await
    }
}

impl WebSocketAcceptor {
    /// Binds a TCP socket to `addr` for WebSocket clients (port 0 picks a
    /// free port; see [`local_addr`](Self::local_addr)).
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
    pub async fn bind(addr: impl ToSocketAddrs) -> io::Result<WebSocketAcceptor> {
        Ok(WebSocketAcceptor::from_listener(
            TcpListener::bind(addr).await?,
        ))
    }

    /// An acceptor over a listener bound elsewhere.
    pub fn from_listener(listener: TcpListener) -> WebSocketAcceptor {
        WebSocketAcceptor {
            listener,
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            #[cfg(feature = "tls")]
            tls: None,
        }
    }

    /// Serves WebSocket over TLS (`wss://`): each connection's TLS
    /// handshake, then its WebSocket handshake, run on its own task, both
    /// within [`handshake_timeout`](Self::handshake_timeout). The acceptor
    /// offers `http/1.1` through ALPN unless `tls` has an ALPN list.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::server::Listener;
    /// use jsonrpc_runtime::tls::{ClientTls, ServerTls};
    /// use jsonrpc_runtime::transport::{WebSocketAcceptor, WebSocketConnector};
    /// use jsonrpc_runtime::{ErrorObject, Peer, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    /// let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
    ///
    /// let server_tls = ServerTls::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())?;
    /// let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await?.tls(server_tls);
    /// let url = format!("wss://localhost:{}/", acceptor.local_addr()?.port());
    /// let server = Listener::new(acceptor).spawn(router);
    ///
    /// let client_tls = ClientTls::from_roots_pem(cert_pem.as_bytes())?;
    /// let transport = WebSocketConnector::new(&url).tls(client_tls).connect().await?;
    /// let client = Peer::spawn(transport);
    /// assert_eq!(client.call::<String>("ping", ()).await?, "pong");
    /// client.close(Duration::from_secs(1)).await;
    /// server.shutdown(Duration::from_secs(1)).await;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls(mut self, tls: crate::tls::ServerTls) -> WebSocketAcceptor {
        self.tls = Some(tls.with_default_alpn(&[crate::tls::alpn::HTTP_1_1]));
        self
    }

    /// How long a client gets to complete its handshake before its
    /// connection is dropped (default 10 seconds).
    pub fn handshake_timeout(mut self, timeout: Duration) -> WebSocketAcceptor {
        self.handshake_timeout = timeout;
        self
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

impl Acceptor for WebSocketAcceptor {
    type Connection = TcpStream;

    async fn accept(&mut self) -> io::Result<(TcpStream, PeerAddr)> {
        let (stream, addr) = self.listener.accept().await?;
        Ok((stream, PeerAddr::Tcp(addr)))
    }

    fn open(
        &self,
        stream: TcpStream,
        options: &OpenOptions,
    ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
        let options = options.clone();
        let limit = self.handshake_timeout;
        #[cfg(feature = "tls")]
        let tls = self.tls.clone();
        async move {
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "could not turn off Nagle's algorithm");
            }
            let mut info = ConnectionInfo::new();
            if let Ok(addr) = stream.peer_addr() {
                info = info.with_addr(PeerAddr::Tcp(addr));
            }
            let handshake = async {
                #[cfg(feature = "tls")]
                if let Some(tls) = tls {
                    let stream = super::tls::accept(tls, stream).await?;
                    return server_handshake(stream, &options, info).await;
                }
                server_handshake(stream, &options, info).await
            };
            match crate::rt::timeout(limit, handshake).await {
                Ok(opened) => opened,
                Err(_) => Err(ws_error(
                    format!("the client did not complete its handshake within {limit:?}"),
                    None,
                    None,
                )),
            }
        }
    }
}

/// The server side of the handshake: records the request in `info`, runs
/// the `on_connect` hook of `options` on it, and answers a refusal with its
/// HTTP status.
async fn server_handshake<S>(
    stream: S,
    options: &OpenOptions,
    mut info: ConnectionInfo,
) -> Result<Transport, TransportError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut refused = None;
    // The error type is tungstenite's, sent as the HTTP answer.
    #[allow(clippy::result_large_err)]
    let vet = |request: &Request, response: Response| {
        let uri = request.uri().clone();
        let headers = request.headers().clone();
        info = std::mem::take(&mut info).with_request(uri, headers);
        match options.vet(&mut info) {
            Ok(()) => Ok(response),
            Err(refusal) => {
                let mut answer = ErrorResponse::new(Some(format!("{}\n", refusal.reason())));
                *answer.status_mut() = refusal.status();
                answer.headers_mut().extend(refusal.headers().clone());
                refused = Some(refusal);
                Err(answer)
            }
        }
    };
    let accepted = tokio_tungstenite::accept_hdr_async_with_config(
        stream,
        vet,
        Some(ws_config(options.codec().max_frame_len())),
    )
    .await;
    if let Some(refusal) = refused {
        return Err(ws_error(refusal.to_string(), None, None));
    }
    let ws = accepted.map_err(|e| handshake_error("the client's WebSocket handshake failed", e))?;
    let mut transport = websocket_transport(ws).with_connection(info);
    transport.vetted = true;
    Ok(transport)
}

/// The client side of the handshake.
async fn client_handshake<S>(
    request: Request,
    stream: S,
    max_frame_len: usize,
) -> Result<Transport, TransportError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (ws, _response) = tokio_tungstenite::client_async_with_config(
        request,
        stream,
        Some(ws_config(max_frame_len)),
    )
    .await
    .map_err(|e| handshake_error("the WebSocket handshake failed", e))?;
    Ok(websocket_transport(ws))
}

/// The WebSocket settings: the frame cap, and buffers sized for an idle
/// connection to stay small (tungstenite's defaults reserve 128 KiB to read
/// into and gather up to 128 KiB before writing). Reads come in chunks of
/// 4 KiB; writes gather up to 8 KiB, so bursts of small frames still go out
/// in few writes.
fn ws_config(max_frame_len: usize) -> WebSocketConfig {
    WebSocketConfig::default()
        .max_message_size(Some(max_frame_len))
        .max_frame_size(Some(max_frame_len))
        .read_buffer_size(WS_READ_BUFFER)
        .write_buffer_size(WS_WRITE_BUFFER)
}

/// The chunk a WebSocket connection reads in.
pub(crate) const WS_READ_BUFFER: usize = 4 * 1024;

/// What a WebSocket connection gathers before it writes.
pub(crate) const WS_WRITE_BUFFER: usize = 8 * 1024;

fn ws_error(
    message: impl Into<String>,
    close_code: Option<u16>,
    source: Option<WsError>,
) -> TransportError {
    TransportError::WebSocket(WebSocketError::new(
        message,
        close_code,
        source.map(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>),
    ))
}

fn handshake_error(context: &str, e: WsError) -> TransportError {
    match e {
        WsError::Io(e) => TransportError::from(e),
        e => ws_error(format!("{context}: {e}"), None, Some(e)),
    }
}
