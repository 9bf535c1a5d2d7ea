//! HTTP (feature `http`): a client transport that posts each outbound
//! message to a URL and reads each answer body as an inbound frame. What it
//! does with each kind of answer is documented on [`HttpConnector`].

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use futures_sink::Sink;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector as PlainConnector;
use hyper_util::client::legacy::{Client, ResponseFuture};
use hyper_util::rt::{TokioExecutor, TokioTimer};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::{CancellationToken, PollSemaphore};

use super::connect::{kind, scheme_is_secure, Connector};
use super::{Transport, TransportError};
use crate::codec::Frame;
use crate::Id;
use crate::message::{self, Classified, ClassifiedFrame, Dialect, ParseOptions};
use crate::message::{ErrorCode, ErrorObject};

/// How many `POST`s one HTTP transport has in flight at most; the peer's
/// further messages wait in its outbound queue. Over HTTP/1.1 each one in
/// flight holds a connection of its own.
pub(crate) const MAX_POSTS_IN_FLIGHT: usize = 64;

/// How much of a failed answer's body is kept in its [`HttpFailure`].
const BODY_EXCERPT_LEN: usize = 1024;

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
/// | any other status, a connection that failed (a certificate not trusted: rustls' reason is in the message), a body over the limit or not JSON-RPC | for each request the `POST` carried, an error response to its id, made up on this side: -32100 ([`ErrorCode::TRANSPORT_FAILED`]) with an [`HttpFailure`] (status, start of the body) as its data |
/// | a `2xx` answer that leaves out a request it carried | that request gets the same made-up error |
///
/// So a call over HTTP always ends: with its answer, with a
/// [`CallError::Rpc`](crate::CallError::Rpc) that
/// [`HttpFailure::from_error`] reads, or with the peer's request timeout
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
        Ok(post_transport(client, uri, self))
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

/// The transport over `client`: a sink that posts, a stream of answers.
fn post_transport(client: PostClient, uri: Uri, connector: HttpConnector) -> Transport {
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
    let poster = Arc::new(Poster {
        client,
        uri,
        max_answer_len: connector.max_frame_len,
        headers: connector.headers,
        dropped: CancellationToken::new(),
    });
    let sink = PostSink {
        poster,
        inbound: inbound_tx,
        permits: PollSemaphore::new(Arc::new(Semaphore::new(MAX_POSTS_IN_FLIGHT))),
        permit: None,
    };
    Transport::new(Answers(inbound_rx), sink)
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

/// Why a request sent over HTTP got no answer: the data of the -32100
/// ([`ErrorCode::TRANSPORT_FAILED`]) error its call fails with.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::HttpFailure;
/// use jsonrpc_runtime::{CallError, Peer};
///
/// # async fn run(peer: Peer) {
/// match peer.call::<i64>("subtract", [42, 23]).await {
///     Ok(n) => println!("{n}"),
///     Err(e) => match e.as_rpc().and_then(HttpFailure::from_error) {
///         Some(HttpFailure { status: Some(503), .. }) => println!("draining, try again"),
///         Some(failure) => println!("HTTP failed: {failure:?}"),
///         None => println!("{e}"),
///     },
/// }
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub struct HttpFailure {
    /// The status the server answered with; `None` when no answer came (the
    /// connection could not be opened, or broke).
    pub status: Option<u16>,
    /// The start of the answer's body (at most 1 KiB, invalid UTF-8
    /// replaced); empty when there was none.
    #[serde(default)]
    pub body: String,
}

impl HttpFailure {
    /// The failure an error describes, if it is one made up by the HTTP
    /// transport (code -32100 with an `HttpFailure` as its data).
    ///
    /// # Examples
    ///
    /// See [`HttpFailure`].
    pub fn from_error(error: &ErrorObject) -> Option<HttpFailure> {
        if error.code != ErrorCode::TRANSPORT_FAILED {
            return None;
        }
        serde_json::from_str(error.data.as_deref()?.get()).ok()
    }

    pub(crate) fn into_error(self, message: String) -> ErrorObject {
        let error = ErrorObject::new(ErrorCode::TRANSPORT_FAILED, message);
        match error.clone().with_data(&self) {
            Ok(with_data) => with_data,
            Err(_) => error,
        }
    }
}

/// The inbound half: answer bodies, and the errors made up for requests
/// that got none.
///
/// Unbounded on purpose: a bounded queue could deadlock the peer (its
/// reader waits for room in the outbound queue, the writer waits for a
/// `POST` slot, and the `POST`s wait for room here). It holds at most the
/// answers to what the peer sent, which its outbound budget bounds.
struct Answers(mpsc::UnboundedReceiver<Frame>);

impl Stream for Answers {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|frame| frame.map(Ok))
    }
}

/// The outbound half: one `POST` per message, each on a task of its own.
struct PostSink {
    poster: Arc<Poster>,
    inbound: mpsc::UnboundedSender<Frame>,
    permits: PollSemaphore,
    permit: Option<OwnedSemaphorePermit>,
}

impl Sink<Bytes> for PostSink {
    type Error = TransportError;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.permit.is_none() {
            match self.permits.poll_acquire(cx) {
                Poll::Ready(Some(permit)) => self.permit = Some(permit),
                Poll::Ready(None) => return Poll::Ready(Err(TransportError::Closed)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(mut self: Pin<&mut Self>, message: Bytes) -> Result<(), Self::Error> {
        let permit = self.permit.take();
        let poster = self.poster.clone();
        let inbound = self.inbound.clone();
        crate::rt::spawn(async move {
            tokio::select! {
                biased;
                () = poster.dropped.cancelled() => {}
                () = poster.post(message, &inbound) => {}
            }
            drop(permit);
        });
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Each message is on its way as soon as it is sent.
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

impl Drop for PostSink {
    fn drop(&mut self) {
        // The peer is gone: nobody waits for the answers still coming.
        self.poster.dropped.cancel();
    }
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

    pub(crate) fn request(&self, request: Request<Full<Bytes>>) -> ResponseFuture {
        match self {
            PostClient::Http(client) => client.request(request),
            #[cfg(feature = "tls")]
            PostClient::Https(client) => client.request(request),
        }
    }
}

/// What every `POST` of one transport shares.
struct Poster {
    client: PostClient,
    uri: Uri,
    max_answer_len: usize,
    /// The connector's headers, sent with every `POST`.
    headers: HeaderMap,
    /// Fired when the sink is dropped: `POST`s in flight are abandoned.
    dropped: CancellationToken,
}

/// How one `POST` went.
enum Exchange {
    /// A `2xx` body: a response or a batch's array of them.
    Answer { status: u16, body: Bytes },
    /// `204`, or an empty `2xx` body.
    Nothing { status: u16 },
    /// Anything else: each request carried fails with this.
    Failed(Failed),
}

/// Why the requests of one `POST` got no answer.
struct Failed {
    failure: HttpFailure,
    message: String,
}

impl Failed {
    fn new(status: Option<u16>, body: String, message: String) -> Self {
        Failed {
            failure: HttpFailure { status, body },
            message,
        }
    }
}

impl Poster {
    /// Posts `message` and delivers what comes back; every request it
    /// carried is answered, by the server or by a made-up error.
    async fn post(&self, message: Bytes, inbound: &mpsc::UnboundedSender<Frame>) {
        let requests = request_ids(&message);
        let (answered, unanswered) = match self.exchange(message).await {
            Exchange::Answer { status, body } => {
                let answered = response_ids(&body);
                let why = Failed::new(
                    Some(status),
                    excerpt(&body),
                    format!(
                        "the answer from {} holds no response to this request",
                        self.uri
                    ),
                );
                let _ = inbound.send(Frame::Message(body));
                (answered, why)
            }
            Exchange::Nothing { status } => {
                let why = Failed::new(
                    Some(status),
                    String::new(),
                    format!(
                        "{} answered with no content, but this request is owed an answer",
                        self.uri
                    ),
                );
                (Vec::new(), why)
            }
            Exchange::Failed(failed) => {
                if requests.is_empty() {
                    tracing::warn!(error = %failed.message, "a notification sent over HTTP was lost");
                }
                (Vec::new(), failed)
            }
        };
        if requests.iter().all(|id| answered.contains(id)) {
            return;
        }
        let error = unanswered.failure.into_error(unanswered.message);
        for id in requests.iter().filter(|id| !answered.contains(id)) {
            let body = message::error_response(Dialect::Strict, id, &error);
            let _ = inbound.send(Frame::Message(body));
        }
    }

    async fn exchange(&self, message: Bytes) -> Exchange {
        let mut request = Request::new(Full::new(message));
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        headers.clone_from(&self.headers);
        let json = HeaderValue::from_static("application/json");
        headers.insert(header::CONTENT_TYPE, json.clone());
        headers.insert(header::ACCEPT, json);
        let response = match self.client.request(request).await {
            Ok(response) => response,
            Err(e) => {
                let message = format!("the HTTP request to {} failed: {}", self.uri, chain(&e));
                return Exchange::Failed(Failed::new(None, String::new(), message));
            }
        };
        let status = response.status();
        if !status.is_success() {
            let body = read_excerpt(response.into_body()).await;
            let mut message = format!("HTTP {status} from {}", self.uri);
            if let Some(line) = body.lines().find(|l| !l.trim().is_empty()) {
                message.push_str(": ");
                message.push_str(line.trim());
            }
            return Exchange::Failed(Failed::new(Some(status.as_u16()), body, message));
        }
        let status = status.as_u16();
        if status == StatusCode::NO_CONTENT {
            return Exchange::Nothing { status };
        }
        let too_large = || {
            let message = format!(
                "the answer from {} is over the {}-byte limit",
                self.uri, self.max_answer_len
            );
            Exchange::Failed(Failed::new(Some(status), String::new(), message))
        };
        let body = response.into_body();
        if body.size_hint().lower() > self.max_answer_len as u64 {
            return too_large();
        }
        let body = match Limited::new(body, self.max_answer_len).collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) if e.is::<LengthLimitError>() => return too_large(),
            Err(e) => {
                let message = format!("reading the answer from {} failed: {e}", self.uri);
                return Exchange::Failed(Failed::new(Some(status), String::new(), message));
            }
        };
        if body.iter().all(u8::is_ascii_whitespace) {
            return Exchange::Nothing { status };
        }
        if !is_json_rpc(&body) {
            let message = format!("the answer from {} is not JSON-RPC", self.uri);
            return Exchange::Failed(Failed::new(Some(status), excerpt(&body), message));
        }
        Exchange::Answer { status, body }
    }
}

/// The ids of the requests in a message or batch this side sent.
fn request_ids(message: &[u8]) -> Vec<Id> {
    let Ok(text) = std::str::from_utf8(message) else {
        return Vec::new();
    };
    let ids = |m: Classified<'_>| match m {
        Classified::Request { id, .. } => Some(id),
        _ => None,
    };
    match message::classify_frame(text, &ParseOptions::default()) {
        ClassifiedFrame::Single(m) => ids(m).into_iter().collect(),
        ClassifiedFrame::Batch(messages) => messages.into_iter().filter_map(ids).collect(),
    }
}

/// The ids an answer body responds to.
pub(crate) fn response_ids(body: &[u8]) -> Vec<Id> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Vec::new();
    };
    let ids = |m: Classified<'_>| match m {
        Classified::Response { id, .. } | Classified::BadResponse { id, .. } => Some(id),
        Classified::Ignored { id, .. } => id,
        _ => None,
    };
    match message::classify_frame(text, &ParseOptions::default()) {
        ClassifiedFrame::Single(m) => ids(m).into_iter().collect(),
        ClassifiedFrame::Batch(messages) => messages.into_iter().filter_map(ids).collect(),
    }
}

/// Whether a body is a JSON object or array, as every answer must be.
pub(crate) fn is_json_rpc(body: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(body) else {
        return false;
    };
    // Not JSON, not an object or an array, or an object with no id that
    // is not a message (a proxy's error page, say).
    !matches!(
        message::classify_frame(text, &ParseOptions::default()),
        ClassifiedFrame::Single(Classified::Refused(refusal)) if refusal.id == Id::NULL
    )
}

/// The start of a body, for an error message.
pub(crate) fn excerpt(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(BODY_EXCERPT_LEN)]).into_owned()
}

/// Reads the start of a failed answer's body; the rest is dropped.
pub(crate) async fn read_excerpt(mut body: Incoming) -> String {
    let mut kept = BytesMut::new();
    while kept.len() < BODY_EXCERPT_LEN {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let room = BODY_EXCERPT_LEN - kept.len();
                    kept.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            Some(Err(_)) | None => break,
        }
    }
    excerpt(&kept)
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
