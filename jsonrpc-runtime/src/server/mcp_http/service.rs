//! The HTTP side of an MCP server: sessions by id, and what each `POST`,
//! `GET` and `DELETE` on the endpoint does (the table on
//! [`McpHttpListener`](super::McpHttpListener)).

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use crate::rt::Instant;
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::session::{
    Core, Feed, Posted as PostedMessage, PostedRequest, Refused, Resumed, SessionInbound,
    SessionSink, SseBody, INBOUND_QUEUE,
};
use super::{Options, SessionClose};
use crate::config::Config;
use crate::connection::{CallerSlot, ConnectionInfo, PeerAddr};
use crate::message::ErrorObject;
use crate::message::{self, Batches, Classified, ClassifiedFrame, Dialect, ParseOptions};
use crate::peer::Peer;
use crate::policy::{CancellationPolicy, ProgressPolicy};
use crate::server::http::{is_json, not_allowed, read_body, refused, text, HttpService};
use crate::server::{MakeRouterDyn, ServerShared};
use crate::transport::{OpenOptions, Transport};
use crate::Id;

mod answers;
mod posted;
mod stateless;

pub(super) use self::answers::McpBody;
use self::answers::{empty, json, refuse, session_not_found, sse, HttpRefusal};
use self::posted::{answer_body, Posted, Posting};

/// The session header.
pub(super) const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The protocol version header.
const MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The SSE resumption header.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// The hook [`McpHttpListener::on_session_close`](super::McpHttpListener::on_session_close)
/// installs.
pub(super) type OnSessionClose = Arc<dyn Fn(&str, &SessionClose) + Send + Sync>;

/// What every connection of one MCP server shares: its sessions.
pub(super) struct Manager {
    pub(super) server: Arc<ServerShared>,
    /// The `on_connect` hook.
    pub(super) open: OpenOptions,
    pub(super) config: Config,
    /// The config of the peers that serve stateless requests: `config`
    /// without its lifecycle (a stateless request needs no handshake) and
    /// without the `ping` answer (a stateless client has no `ping`).
    pub(super) stateless_config: Config,
    pub(super) routes: Arc<dyn MakeRouterDyn>,
    pub(super) options: Arc<Options>,
    pub(super) on_close: Option<OnSessionClose>,
    pub(super) sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
}

/// One session: its peer, its streams, and the way in.
pub(super) struct Session {
    id: Arc<str>,
    peer: Peer,
    core: Arc<Core>,
    posted: mpsc::Sender<PostedMessage>,
    /// Fired by `DELETE`.
    deleted: CancellationToken,
    /// The identity of the caller that sent `initialize`: only callers
    /// with the same one reach the session.
    identity: Option<Arc<str>>,
    /// Whether it serves this connection's stateless requests: it has no
    /// id a client knows, and its end is no session's.
    stateless: bool,
}

/// Answers the MCP endpoint on one connection.
pub(super) struct McpService {
    pub(super) manager: Arc<Manager>,
    pub(super) addr: PeerAddr,
    /// The peer that serves this connection's stateless requests, made by
    /// the first; it ends with the connection.
    pub(super) stateless: std::sync::OnceLock<Arc<Session>>,
}

impl Drop for McpService {
    fn drop(&mut self) {
        if let Some(session) = self.stateless.get() {
            session.deleted.cancel();
        }
    }
}

impl HttpService for McpService {
    type Body = McpBody;

    async fn call(&self, request: Request<Incoming>) -> Response<McpBody> {
        let manager = &self.manager;
        let auth = manager.options.auth.as_ref();
        if let Some(auth) = auth.filter(|a| a.serves_metadata(request.uri().path())) {
            return match *request.method() {
                Method::GET => auth
                    .metadata_response()
                    .map(|b| McpBody::Full(Full::new(b))),
                _ => not_allowed("GET").map(McpBody::from),
            };
        }
        if request.uri().path() != manager.options.path {
            return text(StatusCode::NOT_FOUND, "not found\n").map(McpBody::from);
        }
        if !manager
            .options
            .origins
            .allows(request.headers().get(header::ORIGIN))
        {
            return refuse(
                StatusCode::FORBIDDEN,
                "this `Origin` is not allowed to use this MCP server".to_owned(),
            );
        }
        // The config's `on_connect` hook vets every request (a bearer token
        // goes with each); the caller of `initialize` becomes the session's.
        let mut caller = ConnectionInfo::new()
            .with_addr(self.addr.clone())
            .with_request(request.uri().clone(), request.headers().clone());
        let authorized = match auth {
            Some(auth) => auth.authorize(&mut caller).await,
            None => Ok(()),
        };
        if let Err(refusal) = authorized.and_then(|()| manager.open.vet(&mut caller)) {
            crate::trace::http_refused(0, refusal.status(), refusal.reason());
            return refused(&refusal).map(McpBody::from);
        }
        match *request.method() {
            Method::POST => self.post(request, Arc::new(caller)).await,
            Method::GET => self.get(&request, &caller),
            Method::DELETE => self.delete(&request, &caller),
            _ => not_allowed("GET, POST, DELETE").map(McpBody::from),
        }
    }
}

impl McpService {
    async fn post(
        &self,
        request: Request<Incoming>,
        caller: Arc<ConnectionInfo>,
    ) -> Response<McpBody> {
        let manager = &self.manager;
        let headers = request.headers();
        if !accepts(headers, "application/json") || !accepts(headers, "text/event-stream") {
            return refuse(
                StatusCode::NOT_ACCEPTABLE,
                "a POST must accept both `application/json` and `text/event-stream`".to_owned(),
            );
        }
        if !is_json(headers.get(header::CONTENT_TYPE)) {
            return text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send JSON-RPC messages as `Content-Type: application/json`\n",
            )
            .map(McpBody::from);
        }
        if manager.is_stateless(headers) {
            return self.post_stateless(request, caller).await;
        }
        let session = match manager.session_of(headers, &caller) {
            Ok(session) => session,
            Err(refused) => return refused.into_response(),
        };
        if let Some(session) = &session {
            if let Err(refused) = manager.check_version(session, headers) {
                return refused.into_response();
            }
        }
        let body = match read_body(request.into_body(), manager.config.max_frame_len).await {
            Ok(body) => body,
            Err(refused) => return refused.map(McpBody::from),
        };
        let posted = match Posted::read(&body, manager) {
            Ok(posted) => posted,
            Err(answer) => return json(StatusCode::BAD_REQUEST, answer),
        };
        match session {
            Some(session) => {
                session
                    .post(posted, manager, caller, Answers::Session)
                    .await
            }
            None => {
                if !posted.is_initialize() {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        "no `Mcp-Session-Id`: start a session by posting `initialize` alone"
                            .to_owned(),
                    );
                }
                let session = match manager.open_session(&self.addr, (*caller).clone()) {
                    Ok(session) => session,
                    Err(refused) => return refused.into_response(),
                };
                if let Some(Posting::Request { id, .. }) = posted.messages.first() {
                    session.core.set_initialize(id.clone());
                }
                let mut response = session
                    .post(posted, manager, caller, Answers::Session)
                    .await;
                if let Ok(id) = HeaderValue::from_str(&session.id) {
                    response.headers_mut().insert(MCP_SESSION_ID, id);
                }
                response
            }
        }
    }

    fn get(&self, request: &Request<Incoming>, caller: &ConnectionInfo) -> Response<McpBody> {
        let manager = &self.manager;
        let headers = request.headers();
        if !accepts(headers, "text/event-stream") {
            return refuse(
                StatusCode::NOT_ACCEPTABLE,
                "a GET opens an SSE stream: it must accept `text/event-stream`".to_owned(),
            );
        }
        let session = match manager.required_session(headers, caller) {
            Ok(session) => session,
            Err(refused) => return refused.into_response(),
        };
        let opened = match headers.get(LAST_EVENT_ID) {
            Some(last) => {
                let Ok(last) = last.to_str() else {
                    return refuse(
                        StatusCode::BAD_REQUEST,
                        "`Last-Event-ID` is not an event id of this server".to_owned(),
                    );
                };
                session.core.resume(last)
            }
            None if manager.server.stop.is_cancelled() => {
                return refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server is shutting down".to_owned(),
                )
            }
            None => session.core.open_standalone().map(Resumed::Stream),
        };
        match opened {
            Ok(Resumed::Stream(body)) => sse(body),
            Ok(Resumed::Ended) => empty(StatusCode::NO_CONTENT),
            Err(Refused::Conflict) => refuse(
                StatusCode::CONFLICT,
                "this stream already has a connection open".to_owned(),
            ),
            Err(Refused::UnknownEvent) => refuse(
                StatusCode::BAD_REQUEST,
                "`Last-Event-ID` names no stream of this session".to_owned(),
            ),
            Err(Refused::Gone) => session_not_found(),
        }
    }

    fn delete(&self, request: &Request<Incoming>, caller: &ConnectionInfo) -> Response<McpBody> {
        let manager = &self.manager;
        let session = match manager.required_session(request.headers(), caller) {
            Ok(session) => session,
            Err(refused) => return refused.into_response(),
        };
        manager.forget(&session);
        session.deleted.cancel();
        empty(StatusCode::NO_CONTENT)
    }
}

impl Manager {
    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session a request names: `None` without the header, `404` for
    /// an id that names no live session, or one that belongs to another
    /// identity than the caller's (see [`ConnectionInfo::set_identity`]).
    fn session_of(
        &self,
        headers: &HeaderMap,
        caller: &ConnectionInfo,
    ) -> Result<Option<Arc<Session>>, HttpRefusal> {
        let Some(id) = headers.get(MCP_SESSION_ID) else {
            return Ok(None);
        };
        let session = id.to_str().ok().and_then(|id| self.lock().get(id).cloned());
        match session {
            Some(session) if session.identity.as_deref() == caller.identity() => Ok(Some(session)),
            Some(session) => {
                tracing::debug!(
                    target: "jsonrpc_runtime::protocol",
                    session = %session.id,
                    "a request named a session of another identity: answered as an unknown session"
                );
                Err(HttpRefusal::no_session())
            }
            None => Err(HttpRefusal::no_session()),
        }
    }

    /// The session a `GET` or `DELETE` must name (`400` without one), with
    /// its protocol version checked.
    fn required_session(
        &self,
        headers: &HeaderMap,
        caller: &ConnectionInfo,
    ) -> Result<Arc<Session>, HttpRefusal> {
        let Some(session) = self.session_of(headers, caller)? else {
            return Err(HttpRefusal(
                StatusCode::BAD_REQUEST,
                "no `Mcp-Session-Id`: start a session by posting `initialize`".to_owned(),
            ));
        };
        self.check_version(&session, headers)?;
        Ok(session)
    }

    /// `400` for an `MCP-Protocol-Version` that is neither one this server
    /// lists nor the one the session negotiated; none at all is fine (the
    /// client speaks 2025-03-26).
    fn check_version(&self, session: &Session, headers: &HeaderMap) -> Result<(), HttpRefusal> {
        let Some(version) = headers.get(MCP_PROTOCOL_VERSION) else {
            return Ok(());
        };
        let version = version.to_str().unwrap_or_default().trim();
        let listed = self.options.protocol_versions.iter().any(|v| v == version);
        if listed || session.core.negotiated().as_deref() == Some(version) {
            return Ok(());
        }
        Err(HttpRefusal(
            StatusCode::BAD_REQUEST,
            format!(
                "unsupported `MCP-Protocol-Version: {version}`; this server speaks {}",
                self.options.protocol_versions.join(", ")
            ),
        ))
    }

    /// Starts a session for an `initialize` from `addr`: `503` while the
    /// server drains or when it has as many sessions as it may.
    fn open_session(
        self: &Arc<Self>,
        addr: &PeerAddr,
        caller: ConnectionInfo,
    ) -> Result<Arc<Session>, HttpRefusal> {
        if self.server.stop.is_cancelled() {
            return Err(HttpRefusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down".to_owned(),
            ));
        }
        let id = match new_session_id(self.options.instance_tag.as_deref()) {
            Ok(id) => Arc::<str>::from(id),
            Err(e) => {
                tracing::error!(error = %e, "no random bytes for a session id");
                return Err(HttpRefusal(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "no session id could be made".to_owned(),
                ));
            }
        };
        let mut sessions = self.lock();
        if sessions.len() >= self.options.max_sessions {
            return Err(HttpRefusal(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "this server has {} sessions, as many as it takes; try again later",
                    sessions.len()
                ),
            ));
        }
        let session = Arc::new(self.spawn_session(id.clone(), addr, caller, false));
        sessions.insert(id, session.clone());
        drop(sessions);
        self.server
            .tracker
            .spawn(supervise(self.clone(), session.clone()));
        Ok(session)
    }

    /// A session's peer: the server's routes and config, on a transport
    /// whose inbound side is what the client posts and whose outbound side
    /// routes each message to a stream.
    fn spawn_session(
        &self,
        id: Arc<str>,
        addr: &PeerAddr,
        caller: ConnectionInfo,
        stateless: bool,
    ) -> Session {
        let identity = caller.shared_identity();
        let (posted_tx, posted) = mpsc::channel(INBOUND_QUEUE);
        let (injected_tx, injected) = mpsc::unbounded_channel();
        let core = Arc::new(Core::new(
            id.clone(),
            self.options.clone(),
            injected_tx,
            self.config.parse_options().dialect,
            self.config.progress.clone(),
        ));
        let callers = CallerSlot::default();
        let mut transport = Transport::new(
            SessionInbound {
                posted,
                injected,
                callers: callers.clone(),
            },
            SessionSink(core.clone()),
        )
        .with_connection(caller);
        transport.callers = Some(callers);
        let config = if stateless {
            &self.stateless_config
        } else {
            &self.config
        };
        let peer = Peer::builder()
            .config(config.clone())
            .router(self.routes.make(addr))
            .spawn(transport);
        Session {
            id,
            peer,
            core,
            posted: posted_tx,
            deleted: CancellationToken::new(),
            identity,
            stateless,
        }
    }

    /// Takes a session out of the table: later requests naming it get `404`.
    fn forget(&self, session: &Session) {
        let mut sessions = self.lock();
        if sessions
            .get(&session.id)
            .is_some_and(|s| Arc::ptr_eq(&s.core, &session.core))
        {
            sessions.remove(&session.id);
        }
    }

    fn cancellation(&self) -> Option<&CancellationPolicy> {
        self.config.cancellation.as_ref()
    }

    fn progress(&self) -> Option<&ProgressPolicy> {
        self.config.progress.as_ref()
    }

    fn dialect(&self) -> Dialect {
        self.config.parse_options().dialect
    }
}

/// Runs a session until it is deleted, idle too long, closed by its peer,
/// or the server shuts down; then takes it out of the table, ends its
/// streams, and tells the hook.
async fn supervise(manager: Arc<Manager>, session: Arc<Session>) {
    let server = &manager.server;
    let idle_timeout = manager.options.idle_timeout;
    let why = loop {
        let idle_at = session.core.idle_since().map(|since| since + idle_timeout);
        let activity = session.core.activity.notified();
        tokio::select! {
            biased;
            () = server.abort.cancelled() => {
                session.peer.close_now().await;
                break SessionClose::Shutdown;
            }
            () = server.stop.cancelled() => {
                let grace = server.grace();
                tokio::select! {
                    _ = session.peer.close(grace) => {}
                    () = server.abort.cancelled() => { session.peer.close_now().await; }
                }
                break SessionClose::Shutdown;
            }
            () = session.deleted.cancelled() => {
                session.peer.close_now().await;
                break SessionClose::Deleted;
            }
            reason = session.peer.closed() => break SessionClose::Closed(reason),
            () = sleep_until(idle_at) => {
                let idle = session
                    .core
                    .idle_since()
                    .is_some_and(|since| since + idle_timeout <= Instant::now());
                if idle {
                    manager.forget(&session);
                    session.peer.close_now().await;
                    break SessionClose::Idle;
                }
            }
            () = activity => {}
        }
    };
    manager.forget(&session);
    session.core.finish();
    if session.stateless {
        return;
    }
    tracing::debug!(session = %session.id, reason = %why, "an MCP session ended");
    if let Some(hook) = &manager.on_close {
        hook(&session.id, &why);
    }
}

/// How a POST's answers go back.
#[derive(Debug, Clone, Copy)]
enum Answers {
    /// A session's: one JSON body or a stream, as the listener says.
    Session,
    /// A stateless request's: a stream when it may be told about as it
    /// runs (progress, logs), else one JSON body whose status says how it
    /// ended.
    Stateless { sse: bool },
}

/// Waits until `at`, or forever.
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => crate::rt::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl Session {
    /// Hands a POST's messages to the peer and answers: `202` when nothing
    /// is owed, else a stream (or one JSON body) with the answers.
    async fn post(
        self: &Arc<Self>,
        posted: Posted,
        manager: &Manager,
        caller: Arc<ConnectionInfo>,
        mode: Answers,
    ) -> Response<McpBody> {
        let _busy = self.core.busy();
        let batch = posted.batch;
        let mut requests = Vec::new();
        let mut refusals = Vec::new();
        let mut feed = VecDeque::new();
        let mut cancels = Vec::new();
        for message in posted.messages {
            match message {
                Posting::Request {
                    raw,
                    id,
                    token,
                    cancellable,
                } => {
                    requests.push(PostedRequest {
                        id: id.clone(),
                        token,
                        cancellable,
                    });
                    feed.push_back((raw, Some(id)));
                }
                Posting::Notification { raw, cancels: id } => {
                    cancels.extend(id);
                    feed.push_back((raw, None));
                }
                Posting::Response { raw } => feed.push_back((raw, None)),
                Posting::Refused { answer } => refusals.push(answer),
            }
        }
        for id in &cancels {
            self.core.cancelled(id);
        }
        if requests.is_empty() {
            for (message, _) in feed {
                if self.posted.send((message, caller.clone())).await.is_err() {
                    return session_not_found();
                }
            }
            if refusals.is_empty() {
                return empty(StatusCode::ACCEPTED);
            }
            return json(StatusCode::BAD_REQUEST, answer_body(batch, refusals));
        }
        let json_mode = match mode {
            Answers::Session => manager.options.json_responses,
            Answers::Stateless { sse } => !sse,
        };
        let (sid, answers, accepted) = match self.core.open_post(requests, refusals, json_mode) {
            Ok(opened) => opened,
            Err(_) => return session_not_found(),
        };
        // A request refused as a duplicate never reaches the peer.
        let mut accepted = accepted.into_iter();
        feed.retain(|(_, id)| id.is_none() || accepted.next().unwrap_or(false));
        match answers {
            Some(answers) => {
                let mut feed = Feed::new(self.core.clone(), feed, self.posted.clone(), caller);
                std::future::poll_fn(|cx| feed.poll(cx)).await;
                match answers.await {
                    Ok(answers) if !answers.is_empty() => {
                        let body = answer_body(batch, answers);
                        let status = match mode {
                            Answers::Session => StatusCode::OK,
                            Answers::Stateless { .. } => stateless::status_of(&body),
                        };
                        json(status, body)
                    }
                    _ if self.core.is_closed() => session_not_found(),
                    // Every request was cancelled: nothing to say.
                    _ => empty(StatusCode::ACCEPTED),
                }
            }
            None => {
                // What the peer's queue takes now goes at once; the rest
                // is handed over by the stream's body, so a full queue
                // never holds the answers back from the client.
                while let Some((message, id)) = feed.pop_front() {
                    match self.posted.try_send((message, caller.clone())) {
                        Ok(()) => {}
                        Err(mpsc::error::TrySendError::Full((message, _)))
                        | Err(mpsc::error::TrySendError::Closed((message, _))) => {
                            feed.push_front((message, id));
                            break;
                        }
                    }
                }
                let feed = Feed::new(self.core.clone(), feed, self.posted.clone(), caller);
                sse(self.core.post_body(sid, feed, manager.options.keep_alive))
            }
        }
    }
}

/// Whether the `Accept` headers take `wanted` (`type/subtype`), directly or
/// through a wildcard, with a quality above zero.
fn accepts(headers: &HeaderMap, wanted: &str) -> bool {
    let Some((wanted_type, wanted_sub)) = wanted.split_once('/') else {
        return false;
    };
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.split_once('=').is_some_and(|(name, q)| {
                    name.trim().eq_ignore_ascii_case("q")
                        && q.trim().parse::<f32>().is_ok_and(|q| q <= 0.0)
                })
            });
            let Some((kind, sub)) = media.split_once('/') else {
                return false;
            };
            !refused
                && (kind == "*" && sub == "*"
                    || kind.eq_ignore_ascii_case(wanted_type)
                        && (sub == "*" || sub.eq_ignore_ascii_case(wanted_sub)))
        })
}

/// `tag.` and 32 hex digits from the operating system's random source.
fn new_session_id(tag: Option<&str>) -> Result<String, getrandom::Error> {
    let mut random = [0u8; 16];
    getrandom::fill(&mut random)?;
    let mut id = String::with_capacity(48);
    if let Some(tag) = tag {
        id.push_str(tag);
        id.push('.');
    }
    for byte in random {
        let _ = write!(id, "{byte:02x}");
    }
    Ok(id)
}
