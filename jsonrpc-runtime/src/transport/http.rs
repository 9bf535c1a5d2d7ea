//! HTTP (feature `http`): a client transport that posts each outbound
//! message to a URL and reads each answer body as an inbound frame. What it
//! does with each kind of answer is documented on [`HttpConnector`].

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, Uri};
use hyper_util::client::legacy::connect::HttpConnector as PlainConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::connect::{kind, scheme_is_secure, Connector};
use super::post::{post_transport, HttpClient, ResponseBody};
use super::{Transport, TransportError};

/// How long an idle keep-alive connection is kept for the next `POST`.
pub(crate) const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// A client transport that posts each message to an `http://` or
/// `https://` URL and reads the answers from the response bodies (see
/// [`Connector`] for the settings).
///
/// Nothing is connected yet: connections are opened by the first calls
/// and kept alive for the next ones, so a server that cannot be reached
/// shows up as the first call's error. Each message the peer sends is
/// one `POST` with `Content-Type: application/json`; up to 64 travel at
/// once (over HTTP/1.1, each on a connection of its own), more wait in
/// the peer's outbound queue. An answer body is accepted up to
/// [`max_frame_len`](Connector::max_frame_len). Over `https://` the
/// server's certificate is checked against the [`tls`](Connector::tls)
/// roots and the URL's host, and HTTP/2 is used when the server agrees to
/// it (ALPN `h2`), else HTTP/1.1. What comes back:
///
/// | answer | what the peer sees |
/// |---|---|
/// | `2xx` with a body | the body, as one frame (a response, or a batch's array) |
/// | `204`, or a `2xx` with an empty body | nothing: what was posted owed no answer |
/// | any other status, a connection that failed (a certificate not trusted: rustls' reason is in the message), a body over the limit or not JSON-RPC | for each request the `POST` carried, an error response to its id, made up on this side: -32100 ([`ErrorCode::TRANSPORT_FAILED`](crate::ErrorCode::TRANSPORT_FAILED)) with an [`HttpFailure`](crate::transport::HttpFailure) (status, start of the body) as its data |
/// | a `2xx` answer that leaves out a request it carried | that request gets the same made-up error |
///
/// So a call over HTTP always ends: with its answer, with a
/// [`CallError::Rpc`](crate::CallError::Rpc) that
/// [`HttpFailure::from_error`](crate::transport::HttpFailure::from_error) reads, or with the peer's request timeout
/// if one is set. The calls of other `POST`s are not affected, and the
/// transport stays usable: a `503` from a draining instance fails the
/// calls it carried, and the next call may reach another instance. A
/// notification whose `POST` fails is lost (and logged).
///
/// Every `POST` carries the connector's [`header`](Connector::header)s,
/// such as a [`bearer`](Connector::bearer) token.
///
/// # No calls from the server
///
/// Plain HTTP only lets the client speak first: the server cannot call or
/// notify the client outside an answer, so the routes of a peer over
/// HTTP are never called by a conforming server (one whose handlers
/// call back get [`CallError::Closed`](crate::CallError::Closed) there).
/// The transport never ends by itself: it lives until the peer closes,
/// and the peer only ever waits for the answers to its own calls.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::HttpConnector;
/// use jsonrpc_runtime::Peer;
/// # use jsonrpc_runtime::{server::HttpListener, transport::TcpAcceptor, ErrorObject, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
/// # let url = format!("http://{}/", acceptor.local_addr()?);
/// # let _server = HttpListener::new(acceptor).spawn(Router::new().request(
/// #     "subtract", |(a, b): (i64, i64), _| async move { Ok::<_, ErrorObject>(a - b) }));
/// // url: "http://127.0.0.1:8080/", say
/// let peer = Peer::spawn(HttpConnector::new(&url).bearer("secret").connect().await?);
/// let difference: i64 = peer.call("subtract", [42, 23]).await?;
/// assert_eq!(difference, 19);
///
/// assert!(HttpConnector::new("ftp://example.com/").connect().await.is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub type HttpConnector = Connector<kind::Http>;

#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl Connector<kind::Http> {
    /// The transport. Nothing is connected yet (see [`HttpConnector`]).
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] when the URL is not an `http://` or
    /// `https://` URL with a host, or is `https://` without TLS settings.
    ///
    /// # Panics
    ///
    /// Sending through the transport panics outside a tokio runtime (each
    /// `POST` runs on a task of its own).
    pub async fn connect(self) -> Result<Transport, TransportError> {
        let (client, uri) = PostClient::new(&self, &self.target.0)?;
        Ok(post_transport(
            client,
            uri,
            self.headers,
            self.max_frame_len,
        ))
    }
}

/// The client's pool settings, shared by both schemes.
fn client_builder() -> hyper_util::client::legacy::Builder {
    let mut builder = Client::builder(TokioExecutor::new());
    builder
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(POOL_IDLE_TIMEOUT);
    builder
}

/// The URL as a URI with a host, and whether it is `https://`.
fn parse_url(url: &str) -> Result<(Uri, bool), TransportError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| TransportError::Invalid(format!("`{url}` is not a URL: {e}")))?;
    let secure = scheme_is_secure(url, &uri, "http")?;
    if uri.host().is_none_or(str::is_empty) {
        return Err(TransportError::Invalid(format!("`{url}` has no host")));
    }
    Ok((uri, secure))
}

/// The client of one transport, for its URL's scheme.
pub(crate) enum PostClient {
    Http(Client<PlainConnector, Full<Bytes>>),
    #[cfg(feature = "tls")]
    Https(Client<super::tls::https::HttpsConnector, Full<Bytes>>),
}

impl PostClient {
    /// A client for `url` (`http://` or `https://`) with `connector`'s
    /// settings.
    pub(crate) fn new<K: kind::Secure>(
        connector: &Connector<K>,
        url: &str,
    ) -> Result<(PostClient, Uri), TransportError> {
        connector.check()?;
        let (uri, secure) = parse_url(url)?;
        if !secure {
            let mut plain = PlainConnector::new();
            plain.set_nodelay(true);
            return Ok((PostClient::Http(client_builder().build(plain)), uri));
        }
        #[cfg(feature = "tls")]
        {
            let tls = connector.tls_for(url)?;
            let https = super::tls::https::HttpsConnector::new(&tls);
            Ok((PostClient::Https(client_builder().build(https)), uri))
        }
        #[cfg(not(feature = "tls"))]
        Err(super::connect::needs_tls_feature(url))
    }
}

impl HttpClient for PostClient {
    type Body = Incoming;

    async fn send(&self, request: Request<Bytes>) -> Result<Response<Incoming>, String> {
        let request = request.map(Full::new);
        let sent = match self {
            PostClient::Http(client) => client.request(request).await,
            #[cfg(feature = "tls")]
            PostClient::Https(client) => client.request(request).await,
        };
        sent.map_err(|e| chain(&e))
    }
}

impl ResponseBody for Incoming {
    async fn chunk(&mut self) -> Option<Result<Bytes, String>> {
        loop {
            match self.frame().await? {
                // Trailers carry nothing of the message.
                Ok(frame) => match frame.into_data() {
                    Ok(data) => return Some(Ok(data)),
                    Err(_) => continue,
                },
                Err(e) => return Some(Err(chain(&e))),
            }
        }
    }
}

/// An error and its sources, `: `-separated (hyper's own messages are terse:
/// "client error (Connect)").
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        text.push_str(": ");
        text.push_str(&e.to_string());
        source = e.source();
    }
    text
}
