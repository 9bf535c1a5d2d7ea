//! MCP over Streamable HTTP, the client side (feature `mcp-http`, and
//! `browser` on wasm32): each outbound message is a `POST`, answers come
//! back as JSON or SSE, the server's own messages on a `GET` stream. What
//! it does is documented on `McpHttpConnector`. One implementation runs on
//! any [`HttpClient`]: hyper's natively (with OAuth), `fetch` in the
//! browser (`McpFetchConnector`).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_sink::Sink;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Method, Request, Response, StatusCode, Uri};
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::post::{answered_ids, Failed, PostSlots};
use super::post::{failed_status, read_whole, HttpClient, ResponseBody};
use super::sse::SseDecoder;
use super::{Transport, TransportError};
use crate::codec::Frame;
use crate::message::{self, Classified, ClassifiedFrame, Dialect, ParseOptions, RawJson};
use crate::policy::CancellationPolicy;
use crate::Id;

#[cfg(all(feature = "browser", target_arch = "wasm32"))]
mod browser;
#[cfg(feature = "mcp-http")]
mod native;
#[cfg(feature = "mcp-http")]
mod oauth;
mod post;
mod stateless;
mod streams;

#[cfg(all(feature = "browser", target_arch = "wasm32"))]
pub use self::browser::McpFetchConnector;
#[cfg(feature = "mcp-http")]
pub use self::native::McpHttpConnector;
#[cfg(feature = "mcp-http")]
use self::oauth::Auth;
#[cfg(feature = "mcp-http")]
pub use self::oauth::{OAuthClient, MAX_AUTHORIZATIONS, MAX_OAUTH_DOCUMENT};
use self::post::Opening;
use self::stateless::{Listing, Stateless, ToolHeaders};

const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// How many times a broken SSE stream is reopened in a row before the
/// transport gives up on it.
const MAX_RECONNECTS: u32 = 3;

/// The first wait before reopening a stream (doubled each time, unless the
/// server asked for its own with `retry:`).
const FIRST_RECONNECT_DELAY: Duration = Duration::from_millis(100);

/// The longest wait before reopening a stream.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(5);

/// How many of the server's own messages (from the `GET` stream) wait for
/// the peer to read them before the stream is read no further.
const SERVER_QUEUE: usize = 64;

/// How long the `DELETE` that ends the session may take when the transport
/// closes.
const DELETE_TIMEOUT: Duration = Duration::from_secs(5);

/// What an MCP transport is made of besides its HTTP client: where it
/// posts and the connector's settings.
struct McpSettings {
    uri: Uri,
    /// Sent with every request.
    headers: HeaderMap,
    max_len: usize,
    /// Tokens got by OAuth, when the connector has its settings.
    #[cfg(feature = "mcp-http")]
    auth: Option<Auth>,
}

/// The transport over `client`: a sink that posts, a stream of what the
/// server sends.
fn mcp_transport<C: HttpClient>(client: C, settings: McpSettings) -> Transport {
    let (answers_tx, answers) = mpsc::unbounded_channel();
    let (server_tx, server) = mpsc::channel(SERVER_QUEUE);
    let (initializing, _) = watch::channel(false);
    let (opening, _) = watch::channel(false);
    let shared = Arc::new(McpClient {
        client,
        url: settings.uri.to_string(),
        uri: settings.uri,
        headers: settings.headers,
        max_len: settings.max_len,
        cancellation: CancellationPolicy::mcp(),
        session: Mutex::new(SessionHeaders::default()),
        initializing,
        opening,
        in_flight: Mutex::new(HashMap::new()),
        tools: ToolHeaders::default(),
        answers: answers_tx,
        server: server_tx,
        get_started: AtomicBool::new(false),
        ended: AtomicBool::new(false),
        dropped: CancellationToken::new(),
        #[cfg(feature = "mcp-http")]
        auth: settings.auth,
    });
    let sink = McpSink {
        client: shared,
        slots: PostSlots::new(),
        closing: None,
    };
    Transport::new(McpInbound { answers, server }, sink)
}

/// What every request of one transport shares.
struct McpClient<C> {
    client: C,
    uri: Uri,
    /// The endpoint's URL, for messages.
    url: String,
    /// The connector's headers, sent with every request.
    headers: HeaderMap,
    max_len: usize,
    cancellation: CancellationPolicy,
    session: Mutex<SessionHeaders>,
    /// True while an `initialize` is on its way: later `POST`s wait, so
    /// they carry the session id its answer brings.
    initializing: watch::Sender<bool>,
    /// True from `notifications/initialized` until the session's `GET`
    /// stream is open (or was refused): later `POST`s wait, so whatever
    /// the server sends outside their answers has a stream to go on.
    opening: watch::Sender<bool>,
    /// This side's requests whose `POST` is under way, and whether each
    /// was cancelled since (then it is owed no answer).
    in_flight: Mutex<HashMap<Id, bool>>,
    /// What the listed tools mirror into `Mcp-Param-*` headers.
    tools: ToolHeaders,
    answers: mpsc::UnboundedSender<Result<Frame, TransportError>>,
    server: mpsc::Sender<Bytes>,
    get_started: AtomicBool,
    /// Set once the server said the session is over.
    ended: AtomicBool,
    /// Fired when the transport is dropped: every task stops.
    dropped: CancellationToken,
    /// Tokens got by OAuth, when the connector has its settings.
    #[cfg(feature = "mcp-http")]
    auth: Option<Auth>,
}

/// The headers every request after `initialize` carries.
#[derive(Default)]
struct SessionHeaders {
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
}

/// What this side is sending, as far as the transport cares.
#[derive(Default)]
struct Outgoing {
    requests: Vec<Id>,
    initialize: Option<Id>,
    initialized: bool,
    cancels: Vec<Id>,
    /// A request of the stateless revision: its headers.
    stateless: Option<Stateless>,
}

impl Outgoing {
    fn read(message: &[u8], cancellation: &CancellationPolicy, tools: &ToolHeaders) -> Outgoing {
        let mut out = Outgoing::default();
        let Ok(text) = std::str::from_utf8(message) else {
            return out;
        };
        let single = !text.trim_start().starts_with('[');
        let mut visit = |m: Classified<'_>| match m {
            Classified::Request {
                id, method, params, ..
            } => {
                if method == "initialize" {
                    out.initialize = Some(id.clone());
                }
                if single {
                    out.stateless = Stateless::read(&id, &method, params.map(RawJson::get), tools);
                }
                out.requests.push(id);
            }
            Classified::Notification { method, params, .. } => {
                out.initialized |= method == "notifications/initialized";
                if let Some(id) = (cancellation.method == method)
                    .then(|| cancellation.target(params))
                    .flatten()
                {
                    out.cancels.push(id);
                }
            }
            _ => {}
        };
        match message::classify_frame(text, &ParseOptions::default()) {
            ClassifiedFrame::Single(m) => visit(m),
            ClassifiedFrame::Batch(messages) => messages.into_iter().for_each(visit),
        }
        out
    }

    /// The answers among this message's that the transport reads too.
    fn watch(&self) -> Watch<'_> {
        Watch {
            initialize: self.initialize.as_ref(),
            listing: self.stateless.as_ref().and_then(|s| s.listing.as_ref()),
        }
    }
}

/// Answers the transport reads on their way to the peer: the one to
/// `initialize` (the session's revision), and the one to a stateless
/// `tools/list` (what the tools mirror into headers).
#[derive(Clone, Copy, Default)]
struct Watch<'a> {
    initialize: Option<&'a Id>,
    listing: Option<&'a Listing>,
}

/// How opening a `GET` stream went.
enum Opened<B> {
    Stream(B),
    /// `405`: the server offers no stream.
    NotOffered,
    /// `204`: the stream is over, nothing is left to replay.
    Over,
    /// `404`: the session is gone (the transport is ending).
    SessionGone,
}

/// Where a stream's messages go.
#[derive(Clone, Copy)]
enum Target {
    /// Answers to this side's `POST`s: never waited on.
    Answers,
    /// The server's own stream: bounded.
    Server,
}

impl<C: HttpClient> McpClient<C> {
    fn session(&self) -> MutexGuard<'_, SessionHeaders> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn in_flight(&self) -> MutexGuard<'_, HashMap<Id, bool>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request to the endpoint with the session's headers.
    fn request(&self, method: Method, body: Bytes) -> Request<Bytes> {
        let mut request = Request::new(body);
        *request.method_mut() = method;
        *request.uri_mut() = self.uri.clone();
        let session = self.session();
        let headers = request.headers_mut();
        headers.clone_from(&self.headers);
        if let Some(id) = &session.id {
            headers.insert(MCP_SESSION_ID, id.clone());
        }
        if let Some(version) = &session.version {
            headers.insert(MCP_PROTOCOL_VERSION, version.clone());
        }
        #[cfg(feature = "mcp-http")]
        if let Some(token) = self.auth.as_ref().and_then(Auth::header) {
            headers.insert(header::AUTHORIZATION, token);
        }
        request
    }

    /// The server said the session is over: the peer sees the transport
    /// fail with [`TransportError::SessionEnded`].
    fn session_ended(&self) {
        if self.ended.swap(true, Ordering::AcqRel) {
            return;
        }
        let session_id = self
            .session()
            .id
            .as_ref()
            .map(|id| String::from_utf8_lossy(id.as_bytes()).into_owned())
            .unwrap_or_default();
        tracing::debug!(session = %session_id, "the MCP server ended the session");
        let _ = self.answers.send(Err(TransportError::SessionEnded {
            url: self.url.clone(),
            session_id,
        }));
    }

    /// Hands one message of a stream or body, which answers the requests
    /// `answered`, to the peer; returns those ids.
    async fn deliver(
        &self,
        message: Bytes,
        answered: Vec<Id>,
        target: Target,
        watch: Watch<'_>,
    ) -> Vec<Id> {
        if let Some(id) = watch.initialize.filter(|id| answered.contains(id)) {
            self.negotiated(&message, id);
        }
        if let Some(listing) = watch.listing {
            self.tools.learn(&message, listing);
        }
        match target {
            Target::Answers => {
                let _ = self.answers.send(Ok(Frame::Message(message)));
            }
            Target::Server => {
                let _ = self.server.send(message).await;
            }
        }
        answered
    }

    /// Takes the protocol version from the answer to `initialize`.
    fn negotiated(&self, message: &[u8], id: &Id) {
        #[derive(Deserialize)]
        struct Answer {
            id: Id,
            result: InitializeResult,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct InitializeResult {
            protocol_version: String,
        }
        let version = serde_json::from_slice::<Answer>(message)
            .ok()
            .filter(|a| a.id == *id)
            .and_then(|a| HeaderValue::from_str(&a.result.protocol_version).ok());
        if let Some(version) = version {
            self.session().version = Some(version);
        }
    }

    /// Ends the session with `DELETE` (a `405` means the server keeps it).
    async fn delete(&self) {
        if self.session().id.is_none() || self.ended.load(Ordering::Acquire) {
            return;
        }
        let request = self.request(Method::DELETE, Bytes::new());
        match crate::rt::timeout(DELETE_TIMEOUT, self.client.send(request)).await {
            Ok(Ok(response)) if response.status().is_success() => {}
            Ok(Ok(response)) => tracing::debug!(
                status = %response.status(),
                "the MCP server did not end the session on DELETE"
            ),
            Ok(Err(why)) => tracing::debug!(error = %why, "ending the MCP session failed"),
            Err(_) => tracing::debug!("ending the MCP session timed out"),
        }
    }
}

/// The media type of a response (`text/event-stream`), lowercase, without
/// parameters.
fn media_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = value.split(';').next()?.trim();
    Some(essence.to_ascii_lowercase())
}

/// The inbound half: answers to `POST`s (never waited on, as for
/// [`HttpConnector`](super::HttpConnector): they are bounded by what the peer sent), then the
/// server's own messages (bounded).
struct McpInbound {
    answers: mpsc::UnboundedReceiver<Result<Frame, TransportError>>,
    server: mpsc::Receiver<Bytes>,
}

impl Stream for McpInbound {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let answers = self.answers.poll_recv(cx);
        if let Poll::Ready(Some(item)) = answers {
            return Poll::Ready(Some(item));
        }
        match self.server.poll_recv(cx) {
            Poll::Ready(Some(message)) => Poll::Ready(Some(Ok(Frame::Message(message)))),
            Poll::Ready(None) if answers.is_ready() => Poll::Ready(None),
            _ => Poll::Pending,
        }
    }
}

/// The outbound half: one `POST` per message, each on a task of its own.
struct McpSink<C> {
    client: Arc<McpClient<C>>,
    slots: PostSlots,
    /// Set once closing: the `DELETE` that ends the session, on a task of
    /// its own (in the browser its future holds JavaScript values, which
    /// the sink may not).
    closing: Option<oneshot::Receiver<()>>,
}

impl<C: HttpClient> Sink<Bytes> for McpSink<C> {
    type Error = TransportError;

    fn poll_ready(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.slots.poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, message: Bytes) -> Result<(), Self::Error> {
        let permit = self.slots.take();
        let client = self.client.clone();
        let outgoing = Outgoing::read(&message, &client.cancellation, &client.tools);
        {
            let mut in_flight = client.in_flight();
            for id in &outgoing.cancels {
                if let Some(cancelled) = in_flight.get_mut(id) {
                    *cancelled = true;
                }
            }
            for id in &outgoing.requests {
                in_flight.insert(id.clone(), false);
            }
        }
        if outgoing.initialize.is_some() {
            client.initializing.send_replace(true);
        }
        if outgoing.initialized && !client.get_started.load(Ordering::Acquire) {
            client.opening.send_replace(true);
        }
        crate::rt::spawn(async move {
            tokio::select! {
                biased;
                () = client.dropped.cancelled() => {}
                () = client.post(message, outgoing) => {}
            }
            drop(permit);
        });
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Each message is on its way as soon as it is sent.
        Poll::Ready(Ok(()))
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let client = self.client.clone();
        let closing = self.closing.get_or_insert_with(|| {
            let (done, closed) = oneshot::channel();
            crate::rt::spawn(async move {
                client.delete().await;
                let _ = done.send(());
            });
            closed
        });
        match std::future::Future::poll(Pin::new(closing), cx) {
            // Ended, or the task is gone (the runtime is shutting down).
            Poll::Ready(_) => {
                self.client.dropped.cancel();
                Poll::Ready(Ok(()))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<C> Drop for McpSink<C> {
    fn drop(&mut self) {
        // The peer is gone: nobody waits for what is still coming.
        self.client.dropped.cancel();
    }
}
