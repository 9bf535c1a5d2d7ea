//! One message per `POST`, whatever sends it: hyper natively (feature
//! `http`), `fetch` in the browser (feature `browser`). What every such
//! client shares lives here: the sink that posts and the stream of answers,
//! the checks an answer passes, reading a body within a limit, and the
//! errors made up for the requests a `POST` left unanswered. A client
//! brings only its [`HttpClient`]: the MCP transport (`mcp_http`) runs on
//! the same one.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use futures_sink::Sink;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::{CancellationToken, PollSemaphore};

use super::{Transport, TransportError};
use crate::codec::Frame;
use crate::message::{self, Classified, ClassifiedFrame, Dialect, ParseOptions};
use crate::message::{ErrorCode, ErrorObject};
use crate::Id;

/// How many `POST`s one HTTP transport has in flight at most; the peer's
/// further messages wait in its outbound queue. Over HTTP/1.1 each one in
/// flight holds a connection of its own.
pub(crate) const MAX_POSTS_IN_FLIGHT: usize = 64;

/// How much of a failed answer's body is kept in its [`HttpFailure`].
pub(crate) const BODY_EXCERPT_LEN: usize = 1024;

/// `Send` where tasks may move between threads; anything in the browser,
/// where a `fetch` future holds JavaScript values and there is one thread.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub(crate) trait MaybeSend: Send {}
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl<T: Send> MaybeSend for T {}
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub(crate) trait MaybeSend {}
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
impl<T> MaybeSend for T {}

/// What sends HTTP requests: hyper's client natively, `fetch` in the
/// browser.
pub(crate) trait HttpClient: Send + Sync + 'static {
    /// A response's body, read as it arrives.
    type Body: ResponseBody;

    /// Sends `request`; the response once its head has arrived, or why
    /// none came (the connection could not be opened, or broke).
    fn send(
        &self,
        request: Request<Bytes>,
    ) -> impl Future<Output = Result<Response<Self::Body>, String>> + MaybeSend;
}

/// A response's body, chunk by chunk.
pub(crate) trait ResponseBody: MaybeSend + 'static {
    /// The next chunk, `None` at the end, or why the body broke.
    fn chunk(&mut self) -> impl Future<Output = Option<Result<Bytes, String>>> + MaybeSend;
}

/// A whole body, within `limit` bytes (a declared `Content-Length` over it
/// fails before anything is read).
pub(crate) async fn read_whole<B: ResponseBody>(
    url: &str,
    response: Response<B>,
    limit: usize,
) -> Result<Bytes, Failed> {
    let status = response.status().as_u16();
    if declared_len(response.headers()).is_some_and(|len| len > limit as u64) {
        return Err(Failed::too_large(url, status, limit));
    }
    match read_within(&mut response.into_body(), limit).await {
        Ok(body) => Ok(body),
        Err(Unread::TooLarge) => Err(Failed::too_large(url, status, limit)),
        Err(Unread::Broken(why)) => Err(Failed::unread(url, status, why)),
    }
}

/// Why [`read_within`] gave up on a body.
#[derive(Debug)]
pub(crate) enum Unread {
    /// It is over the limit.
    TooLarge,
    /// It broke before its end: why.
    Broken(String),
}

/// The rest of `body`, within `limit` bytes: a body that comes in one
/// chunk (the usual message) is kept as it came, more are joined. Reads the
/// answers of HTTP clients and the requests of HTTP servers.
pub(crate) async fn read_within<B: ResponseBody>(
    body: &mut B,
    limit: usize,
) -> Result<Bytes, Unread> {
    let mut whole = Bytes::new();
    let mut joined: Option<BytesMut> = None;
    while let Some(chunk) = body.chunk().await {
        let chunk = chunk.map_err(Unread::Broken)?;
        let len = joined.as_ref().map_or(whole.len(), BytesMut::len);
        if len + chunk.len() > limit {
            return Err(Unread::TooLarge);
        }
        match &mut joined {
            None if whole.is_empty() => whole = chunk,
            None => {
                let mut buffer = BytesMut::with_capacity(whole.len() + chunk.len());
                buffer.extend_from_slice(&whole);
                buffer.extend_from_slice(&chunk);
                joined = Some(buffer);
            }
            Some(buffer) => buffer.extend_from_slice(&chunk),
        }
    }
    Ok(joined.map_or(whole, BytesMut::freeze))
}

/// The failure a status that is not `2xx` means, with the start of its
/// body (the rest is not read).
pub(crate) async fn failed_status<B: ResponseBody>(url: &str, response: Response<B>) -> Failed {
    let status = response.status().as_u16();
    let mut body = response.into_body();
    let mut kept = Vec::new();
    while kept.len() < BODY_EXCERPT_LEN {
        match body.chunk().await {
            Some(Ok(chunk)) => {
                let room = BODY_EXCERPT_LEN - kept.len();
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Some(Err(_)) | None => break,
        }
    }
    Failed::status(url, status, excerpt(&kept))
}

/// A response's `Content-Length`, when it declares one.
fn declared_len(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
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
#[cfg_attr(docsrs, doc(cfg(any(feature = "http", feature = "browser"))))]
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

/// How one `POST` went.
pub(crate) enum Exchange {
    /// A `2xx` body: a response or a batch's array of them, and the ids it
    /// answers.
    Answer {
        status: u16,
        body: Bytes,
        answered: Vec<Id>,
    },
    /// `204`, or an empty `2xx` body.
    Nothing { status: u16 },
    /// Anything else: each request carried fails with this.
    Failed(Failed),
}

/// Why the requests of one `POST` got no answer.
pub(crate) struct Failed {
    pub(crate) failure: HttpFailure,
    pub(crate) message: String,
}

impl Failed {
    pub(crate) fn new(status: Option<u16>, body: String, message: String) -> Self {
        Failed {
            failure: HttpFailure { status, body },
            message,
        }
    }

    /// No answer came: the request could not be sent, or the connection
    /// broke.
    pub(crate) fn unsent(url: &str, why: impl std::fmt::Display) -> Self {
        let message = format!("the HTTP request to {url} failed: {why}");
        Failed::new(None, String::new(), message)
    }

    /// A status that is not `2xx`, with the start of its body.
    pub(crate) fn status(url: &str, status: u16, body: String) -> Self {
        let mut message = match http::StatusCode::from_u16(status) {
            Ok(code) => format!("HTTP {code} from {url}"),
            Err(_) => format!("HTTP {status} from {url}"),
        };
        if let Some(line) = body.lines().find(|l| !l.trim().is_empty()) {
            message.push_str(": ");
            message.push_str(line.trim());
        }
        Failed::new(Some(status), body, message)
    }

    /// A body over the size limit.
    pub(crate) fn too_large(url: &str, status: u16, limit: usize) -> Self {
        let message = format!("the answer from {url} is over the {limit}-byte limit");
        Failed::new(Some(status), String::new(), message)
    }

    /// A `2xx` body that is not JSON-RPC (a proxy's page, say).
    pub(crate) fn not_json_rpc(url: &str, status: u16, body: &[u8]) -> Self {
        let message = format!("the answer from {url} is not JSON-RPC");
        Failed::new(Some(status), excerpt(body), message)
    }

    /// A body that could not be read to its end.
    pub(crate) fn unread(url: &str, status: u16, why: impl std::fmt::Display) -> Self {
        let message = format!("reading the answer from {url} failed: {why}");
        Failed::new(Some(status), String::new(), message)
    }
}

/// What a `2xx` body read whole means: nothing (empty), an answer, or a
/// failure when it is not JSON-RPC.
pub(crate) fn answer(url: &str, status: u16, body: Bytes) -> Exchange {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Exchange::Nothing { status };
    }
    match answered_ids(&body) {
        Some(answered) => Exchange::Answer {
            status,
            body,
            answered,
        },
        None => Exchange::Failed(Failed::not_json_rpc(url, status, &body)),
    }
}

/// The transport that posts each message to `uri` with `client`, with
/// `headers`, and takes answers of at most `max_answer_len` bytes: a sink
/// that posts, a stream of answers.
pub(crate) fn post_transport<C: HttpClient>(
    client: C,
    uri: Uri,
    headers: HeaderMap,
    max_answer_len: usize,
) -> Transport {
    let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
    let poster = Arc::new(Poster {
        client,
        url: uri.to_string(),
        uri,
        headers,
        max_answer_len,
        dropped: CancellationToken::new(),
    });
    let sink = PostSink {
        poster,
        inbound: inbound_tx,
        slots: PostSlots::new(),
    };
    Transport::new(Answers(inbound_rx), sink)
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

/// The `POST`s a transport may have in flight ([`MAX_POSTS_IN_FLIGHT`]):
/// a sink is ready once it holds a slot, and each `POST` keeps its slot
/// until it is done.
pub(crate) struct PostSlots {
    permits: PollSemaphore,
    held: Option<OwnedSemaphorePermit>,
}

impl PostSlots {
    pub(crate) fn new() -> PostSlots {
        PostSlots {
            permits: PollSemaphore::new(Arc::new(Semaphore::new(MAX_POSTS_IN_FLIGHT))),
            held: None,
        }
    }

    /// A sink's `poll_ready`: ready once a slot is held.
    pub(crate) fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        if self.held.is_none() {
            match self.permits.poll_acquire(cx) {
                Poll::Ready(Some(permit)) => self.held = Some(permit),
                Poll::Ready(None) => return Poll::Ready(Err(TransportError::Closed)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }

    /// The slot `poll_ready` got, for the `POST` about to start.
    pub(crate) fn take(&mut self) -> Option<OwnedSemaphorePermit> {
        self.held.take()
    }
}

/// The outbound half: one `POST` per message, each on a task of its own.
struct PostSink<C> {
    poster: Arc<Poster<C>>,
    inbound: mpsc::UnboundedSender<Frame>,
    slots: PostSlots,
}

impl<C: HttpClient> Sink<Bytes> for PostSink<C> {
    type Error = TransportError;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.slots.poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, message: Bytes) -> Result<(), Self::Error> {
        let permit = self.slots.take();
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

impl<C> Drop for PostSink<C> {
    fn drop(&mut self) {
        // The peer is gone: nobody waits for the answers still coming.
        self.poster.dropped.cancel();
    }
}

/// What every `POST` of one transport shares.
struct Poster<C> {
    client: C,
    uri: Uri,
    /// The URL, for messages.
    url: String,
    /// The connector's headers, sent with every `POST`.
    headers: HeaderMap,
    max_answer_len: usize,
    /// Fired when the sink is dropped: `POST`s in flight are abandoned.
    dropped: CancellationToken,
}

impl<C: HttpClient> Poster<C> {
    /// Posts `message` and delivers what comes back; every request it
    /// carried is answered, by the server or by a made-up error.
    async fn post(&self, message: Bytes, inbound: &mpsc::UnboundedSender<Frame>) {
        let requests = request_ids(&message);
        let url = &self.url;
        // Why the requests left unanswered got no answer: made up only when
        // there are some.
        let (answered, unanswered) = match self.exchange(message).await {
            Exchange::Answer {
                status,
                body,
                answered,
            } => {
                let why = requests.iter().any(|id| !answered.contains(id)).then(|| {
                    Failed::new(
                        Some(status),
                        excerpt(&body),
                        format!("the answer from {url} holds no response to this request"),
                    )
                });
                let _ = inbound.send(Frame::Message(body));
                let Some(why) = why else { return };
                (answered, why)
            }
            Exchange::Nothing { .. } if requests.is_empty() => return,
            Exchange::Nothing { status } => {
                let why = Failed::new(
                    Some(status),
                    String::new(),
                    format!("{url} answered with no content, but this request is owed an answer"),
                );
                (Vec::new(), why)
            }
            Exchange::Failed(failed) if requests.is_empty() => {
                tracing::warn!(error = %failed.message, "a notification sent over HTTP was lost");
                return;
            }
            Exchange::Failed(failed) => (Vec::new(), failed),
        };
        let error = unanswered.failure.into_error(unanswered.message);
        for id in requests.iter().filter(|id| !answered.contains(id)) {
            let body = message::error_response(Dialect::Strict, id, &error);
            let _ = inbound.send(Frame::Message(body));
        }
    }

    /// Posts `message`; the answer, checked (see [`answer`]).
    async fn exchange(&self, message: Bytes) -> Exchange {
        let url = &self.url;
        let mut request = Request::new(message);
        *request.method_mut() = Method::POST;
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        headers.clone_from(&self.headers);
        let json = HeaderValue::from_static("application/json");
        headers.insert(header::CONTENT_TYPE, json.clone());
        headers.insert(header::ACCEPT, json);
        let response = match self.client.send(request).await {
            Ok(response) => response,
            Err(why) => return Exchange::Failed(Failed::unsent(url, why)),
        };
        let status = response.status();
        if !status.is_success() {
            return Exchange::Failed(failed_status(url, response).await);
        }
        if status == StatusCode::NO_CONTENT {
            return Exchange::Nothing {
                status: status.as_u16(),
            };
        }
        match read_whole(url, response, self.max_answer_len).await {
            Ok(body) => answer(url, status.as_u16(), body),
            Err(failed) => Exchange::Failed(failed),
        }
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

/// The ids an answer body responds to, in one parse with the check every
/// answer must pass: `None` when the body is not JSON-RPC (not UTF-8, not
/// JSON, not an object or an array, or an object with no id that is not a
/// message: a proxy's error page, say).
pub(crate) fn answered_ids(body: &[u8]) -> Option<Vec<Id>> {
    let text = std::str::from_utf8(body).ok()?;
    let ids = |m: Classified<'_>| match m {
        Classified::Response { id, .. } | Classified::BadResponse { id, .. } => Some(id),
        Classified::Ignored { id, .. } => id,
        _ => None,
    };
    match message::classify_frame(text, &ParseOptions::default()) {
        ClassifiedFrame::Single(Classified::Refused(refusal)) if refusal.id == Id::NULL => None,
        ClassifiedFrame::Single(m) => Some(ids(m).into_iter().collect()),
        ClassifiedFrame::Batch(messages) => Some(messages.into_iter().filter_map(ids).collect()),
    }
}

/// The start of a body, for an error message.
pub(crate) fn excerpt(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(BODY_EXCERPT_LEN)]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_checked_before_it_is_delivered() {
        let url = "http://example.invalid/";
        assert!(matches!(
            answer(url, 200, Bytes::from_static(b" \r\n")),
            Exchange::Nothing { status: 200 }
        ));
        let Exchange::Failed(failed) = answer(url, 200, Bytes::from_static(b"<html>502</html>"))
        else {
            panic!("an HTML page is not an answer");
        };
        assert_eq!(failed.failure.body, "<html>502</html>");
        assert!(
            failed.message.contains("not JSON-RPC"),
            "{}",
            failed.message
        );
        let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":2}"#);
        assert!(matches!(
            answer(url, 200, body),
            Exchange::Answer { status: 200, .. }
        ));
    }

    #[test]
    fn a_failed_status_keeps_the_first_line_of_its_body() {
        let failed = Failed::status("http://h/", 503, "\n  draining  \nmore".into());
        assert_eq!(
            failed.message,
            "HTTP 503 Service Unavailable from http://h/: draining"
        );
        assert_eq!(failed.failure.status, Some(503));
    }

    /// A body that arrives in the chunks given.
    struct Chunks(std::collections::VecDeque<Result<Bytes, String>>);

    impl ResponseBody for Chunks {
        async fn chunk(&mut self) -> Option<Result<Bytes, String>> {
            self.0.pop_front()
        }
    }

    fn response(chunks: Vec<Result<Bytes, String>>, declared: Option<usize>) -> Response<Chunks> {
        let mut response = Response::new(Chunks(chunks.into()));
        if let Some(len) = declared {
            response
                .headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        }
        response
    }

    fn block_on<F: Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime")
            .block_on(future)
    }

    /// `body` cut at `cuts` (offsets into it, in any order).
    fn cut(body: &[u8], cuts: &[usize]) -> Vec<Result<Bytes, String>> {
        let mut ends: Vec<usize> = cuts.iter().map(|&c| c.min(body.len())).collect();
        ends.push(body.len());
        ends.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for end in ends {
            chunks.push(Ok(Bytes::copy_from_slice(&body[start..end])));
            start = end;
        }
        chunks
    }

    /// One chunk is kept as it came, more are joined: whatever the cuts, the
    /// body read is the body sent (the plain concatenation), up to the limit
    /// and not one byte past it.
    #[test]
    fn a_body_read_whole_is_the_body_sent_across_the_limit_and_any_cuts() {
        let url = "http://h/";
        let mut limits = vec![1, 2, 1023, 1024, 1025];
        limits.extend((4..=20).map(|power| 1usize << power));
        for limit in limits {
            for len in [limit.saturating_sub(1), limit, limit + 1] {
                let body: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
                let cut_sets: [Vec<usize>; 4] = [
                    vec![],
                    vec![len / 2],
                    vec![1.min(len), len / 3, (2 * len) / 3],
                    (1..len).step_by((len / 7).max(1)).collect(),
                ];
                for cuts in &cut_sets {
                    let read = block_on(read_whole(url, response(cut(&body, cuts), None), limit));
                    match read {
                        Ok(read) => {
                            assert!(len <= limit, "{len} bytes read with a limit of {limit}");
                            assert_eq!(&read[..], &body[..], "{len} bytes cut at {cuts:?}");
                        }
                        Err(failed) => {
                            assert!(len > limit, "{len} bytes refused with a limit of {limit}");
                            assert!(failed.message.contains("limit"), "{}", failed.message);
                        }
                    }
                }
                // A declared length over the limit fails before reading.
                let declared = block_on(read_whole(url, response(Vec::new(), Some(len)), limit));
                assert_eq!(
                    declared.is_err(),
                    len > limit,
                    "declared {len}, limit {limit}"
                );
            }
        }
    }

    #[test]
    fn a_body_that_breaks_fails_with_why_and_a_failed_status_keeps_its_excerpt() {
        let url = "http://h/";
        let broken = vec![Ok(Bytes::from_static(b"{")), Err("reset".to_owned())];
        let Err(failed) = block_on(read_whole(url, response(broken, None), 1024)) else {
            panic!("a broken body is not a body");
        };
        assert!(failed.message.contains("reset"), "{}", failed.message);
        for len in [BODY_EXCERPT_LEN - 1, BODY_EXCERPT_LEN, BODY_EXCERPT_LEN + 1] {
            let body = vec![b'x'; len];
            let mut answer = response(cut(&body, &[len / 2]), None);
            *answer.status_mut() = StatusCode::BAD_GATEWAY;
            let failed = block_on(failed_status(url, answer));
            assert_eq!(failed.failure.status, Some(502));
            assert_eq!(failed.failure.body.len(), len.min(BODY_EXCERPT_LEN));
        }
    }
}
