//! One MCP session's streams: where each message its peer writes goes, the
//! events kept for resumption, and the SSE bodies that carry them.
//!
//! A session's peer writes into [`SessionSink`]; every message is routed
//! at once ([`Core::route`]) into a stream's event queue, or parked. Each
//! stream keeps its events in order of their sequence number (unique in
//! the session); a live [`SseBody`] hands them to hyper one by one and
//! moves the stream's `delivered` cursor. Events already delivered stay
//! for a client that resumes (`Last-Event-ID`), within the session's replay
//! budget; undelivered events on a live stream are never evicted, and their
//! bytes hold the sink back (backpressure) past [`BACKLOG_LIMIT`].

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures_sink::Sink;
use hyper::body::Frame;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::{Instant, Sleep};
use tokio_util::sync::PollSender;

use super::Options;
use crate::codec::Frame as InboundFrame;
use crate::error::{ErrorCode, ErrorObject};
use crate::id::Id;
use crate::message::{self, Dialect};
use crate::policy::ProgressPolicy;
use crate::transport::sse;
use crate::transport::TransportError;

/// Undelivered bytes on a session's live streams past which its peer's
/// writes wait: a client that stops reading stalls its session, it never
/// grows the server's memory.
pub(super) const BACKLOG_LIMIT: usize = 256 * 1024;

/// At most this many messages wait for a stream to open, …
pub(super) const MAX_PARKED: usize = 64;

/// … holding at most this many bytes.
pub(super) const MAX_PARKED_BYTES: usize = 256 * 1024;

/// How many POSTed messages wait for the session's peer to read them.
pub(super) const INBOUND_QUEUE: usize = 64;

/// The state one session's streams share with its sink and bodies.
pub(super) struct Core {
    pub(super) session_id: Arc<str>,
    options: Arc<Options>,
    state: Mutex<State>,
    /// Woken when the session's activity changes (a stream opens or
    /// closes, a request ends), for the idle timer.
    pub(super) activity: Notify,
    /// Answers made up on this side (a server-to-client request that could
    /// not be delivered), read by the peer as if the client had sent them.
    injected: mpsc::UnboundedSender<Bytes>,
    dialect: Dialect,
    progress: Option<ProgressPolicy>,
}

/// What a session's streams hold.
struct State {
    streams: BTreeMap<u64, Stream>,
    next_stream: u64,
    next_seq: u64,
    next_conn: u64,
    /// Requests the client sent that are not answered yet: the stream
    /// their answer goes to.
    requests: HashMap<Id, Pending>,
    /// Progress tokens of those requests: the stream their reports go to.
    progress: HashMap<Id, u64>,
    /// The standalone (`GET`) stream, live or waiting for a resume.
    standalone: Option<u64>,
    /// Messages with no stream to go to yet.
    parked: VecDeque<Parked>,
    parked_bytes: usize,
    /// Bytes of every event kept, delivered or not.
    retained: usize,
    /// Undelivered bytes on live streams.
    backlog: usize,
    sink_waker: Option<Waker>,
    /// POSTs being handled and bodies open.
    busy: usize,
    last_active: Instant,
    /// The id of the session's `initialize` request, until it is answered.
    initialize: Option<Id>,
    /// The protocol version the `initialize` answer chose.
    negotiated: Option<String>,
    /// The peer is done: no more events.
    closed: bool,
}

/// Where the answer to one of the client's requests goes.
struct Pending {
    stream: u64,
    token: Option<Id>,
    /// Whether a cancellation can take it back (`initialize` cannot).
    cancellable: bool,
}

struct Parked {
    message: Bytes,
    request: Option<Id>,
}

/// One stream: a POST's answers (SSE or JSON), or the standalone stream.
struct Stream {
    kind: Kind,
    events: VecDeque<Event>,
    /// Bytes of `events`.
    bytes: usize,
    /// Bytes of the events after `delivered`.
    pending: usize,
    /// The last sequence number handed to a body (or that a resuming
    /// client says it has).
    delivered: u64,
    /// The last sequence number evicted from `events`.
    evicted: u64,
    live: Option<Live>,
    /// Answers still owed on a POST stream.
    owed: usize,
    /// No more events will come.
    complete: bool,
}

enum Kind {
    Post,
    Standalone,
    /// A POST answered with one JSON body: what is collected goes to the
    /// waiting handler when the last answer arrives.
    Json(Option<oneshot::Sender<Vec<Bytes>>>),
}

struct Live {
    conn: u64,
    waker: Option<Waker>,
}

struct Event {
    seq: u64,
    message: Bytes,
    /// The id of a server-to-client request it carries, so one that is
    /// lost is failed rather than waited for.
    request: Option<Id>,
}

impl Stream {
    fn new(kind: Kind) -> Self {
        Stream {
            kind,
            events: VecDeque::new(),
            bytes: 0,
            pending: 0,
            delivered: 0,
            evicted: 0,
            live: None,
            owed: 0,
            complete: false,
        }
    }

    fn is_sse_open(&self) -> bool {
        !self.complete && !matches!(self.kind, Kind::Json(_))
    }

    fn wake(&mut self) {
        if let Some(waker) = self.live.as_mut().and_then(|l| l.waker.take()) {
            waker.wake();
        }
    }
}

/// One request of a POST, as the session registers it.
pub(super) struct PostedRequest {
    pub(super) id: Id,
    pub(super) token: Option<Id>,
    pub(super) cancellable: bool,
}

/// Why a stream could not be opened or resumed.
pub(super) enum Refused {
    /// The session has ended.
    Gone,
    /// The stream already has a live connection.
    Conflict,
    /// The `Last-Event-ID` names no stream of this session.
    UnknownEvent,
}

/// What a resumption finds.
pub(super) enum Resumed {
    /// The stream goes on (replaying what the client missed).
    Stream(SseBody),
    /// The stream is over and nothing is left to replay.
    Ended,
}

impl Core {
    pub(super) fn new(
        session_id: Arc<str>,
        options: Arc<Options>,
        injected: mpsc::UnboundedSender<Bytes>,
        dialect: Dialect,
        progress: Option<ProgressPolicy>,
    ) -> Self {
        Core {
            session_id,
            options,
            state: Mutex::new(State {
                streams: BTreeMap::new(),
                next_stream: 1,
                next_seq: 1,
                next_conn: 1,
                requests: HashMap::new(),
                progress: HashMap::new(),
                standalone: None,
                parked: VecDeque::new(),
                parked_bytes: 0,
                retained: 0,
                backlog: 0,
                sink_waker: None,
                busy: 0,
                last_active: Instant::now(),
                initialize: None,
                negotiated: None,
                closed: false,
            }),
            activity: Notify::new(),
            injected,
            dialect,
            progress,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers the id of the session's `initialize` request, so its
    /// answer's protocol version is read.
    pub(super) fn set_initialize(&self, id: Id) {
        self.lock().initialize = Some(id);
    }

    /// The protocol version the session negotiated, once answered.
    pub(super) fn negotiated(&self) -> Option<String> {
        self.lock().negotiated.clone()
    }

    /// Whether the session's peer is done.
    pub(super) fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// When the session turns idle, if nothing is going on now: no POST
    /// being handled, no stream open, no request unanswered.
    pub(super) fn idle_since(&self) -> Option<Instant> {
        let state = self.lock();
        (state.busy == 0 && state.requests.is_empty() && !state.closed).then_some(state.last_active)
    }

    /// Counts a POST being handled (or a body open) until the guard drops.
    pub(super) fn busy(self: &Arc<Self>) -> Busy {
        self.lock().busy += 1;
        self.activity.notify_one();
        Busy(self.clone())
    }

    /// Opens the stream a POST's answers go to, with `requests` registered
    /// to it and `refusals` (answers made on this side) as its first
    /// events. A request whose id already waits for its answer in the
    /// session (or comes twice) is refused too, and not registered. `json`:
    /// the answers are collected for one JSON body instead, and come
    /// through the receiver.
    ///
    /// Returns the stream's number, for JSON the receiver, and for each
    /// request whether it was registered.
    #[allow(clippy::type_complexity)]
    pub(super) fn open_post(
        self: &Arc<Self>,
        requests: Vec<PostedRequest>,
        mut refusals: Vec<Bytes>,
        json: bool,
    ) -> Result<(u64, Option<oneshot::Receiver<Vec<Bytes>>>, Vec<bool>), Refused> {
        let mut state = self.lock();
        if state.closed {
            return Err(Refused::Gone);
        }
        let (kind, receiver) = if json {
            let (tx, rx) = oneshot::channel();
            (Kind::Json(Some(tx)), Some(rx))
        } else {
            (Kind::Post, None)
        };
        let sid = state.next_stream;
        state.next_stream += 1;
        state.streams.insert(sid, Stream::new(kind));
        let mut accepted = Vec::with_capacity(requests.len());
        for request in requests {
            if state.requests.contains_key(&request.id) {
                let error = ErrorObject::invalid_request(format!(
                    "a request with id {} is already waiting for its answer in this session",
                    request.id
                ));
                refusals.push(message::error_response(self.dialect, &request.id, &error));
                accepted.push(false);
                continue;
            }
            accepted.push(true);
            if let Some(token) = &request.token {
                state.progress.insert(token.clone(), sid);
            }
            state.requests.insert(
                request.id,
                Pending {
                    stream: sid,
                    token: request.token,
                    cancellable: request.cancellable,
                },
            );
        }
        if let Some(stream) = state.streams.get_mut(&sid) {
            stream.owed = accepted.iter().filter(|a| **a).count();
        }
        for refusal in refusals {
            self.push(&mut state, sid, refusal, None);
        }
        self.settle(&mut state, sid);
        Ok((sid, receiver, accepted))
    }

    /// A live body for the POST stream `sid` just opened, which first
    /// hands `unfed` to the session's peer.
    pub(super) fn post_body(
        self: &Arc<Self>,
        sid: u64,
        feed: Feed,
        keep_alive: Option<Duration>,
    ) -> SseBody {
        let busy = self.busy();
        let mut state = self.lock();
        let conn = self.attach(&mut state, sid);
        self.unpark(&mut state, sid);
        drop(state);
        SseBody::new(self.clone(), sid, conn, busy, Some(feed), keep_alive)
    }

    /// Opens (or reopens) the standalone stream.
    pub(super) fn open_standalone(self: &Arc<Self>) -> Result<SseBody, Refused> {
        let busy = self.busy();
        let mut state = self.lock();
        if state.closed {
            return Err(Refused::Gone);
        }
        let sid = match state
            .standalone
            .filter(|sid| state.streams.contains_key(sid))
        {
            Some(sid) if state.streams[&sid].live.is_some() => return Err(Refused::Conflict),
            Some(sid) => sid,
            None => {
                let sid = state.next_stream;
                state.next_stream += 1;
                state.streams.insert(sid, Stream::new(Kind::Standalone));
                state.standalone = Some(sid);
                sid
            }
        };
        let conn = self.attach(&mut state, sid);
        self.unpark(&mut state, sid);
        drop(state);
        let keep_alive = self.options.keep_alive;
        Ok(SseBody::new(
            self.clone(),
            sid,
            conn,
            busy,
            None,
            keep_alive,
        ))
    }

    /// Resumes the stream a `Last-Event-ID` names, after that event.
    pub(super) fn resume(self: &Arc<Self>, last_event_id: &str) -> Result<Resumed, Refused> {
        let (sid, seq) = parse_event_id(last_event_id).ok_or(Refused::UnknownEvent)?;
        let busy = self.busy();
        let mut state = self.lock();
        if state.closed {
            return Err(Refused::Gone);
        }
        let Some(stream) = state.streams.get_mut(&sid) else {
            // A stream of this session that is over (delivered whole, or
            // evicted): nothing left to replay.
            return if sid > 0 && sid < state.next_stream {
                Ok(Resumed::Ended)
            } else {
                Err(Refused::UnknownEvent)
            };
        };
        if matches!(stream.kind, Kind::Json(_)) {
            return Err(Refused::UnknownEvent);
        }
        if stream.live.is_some() {
            return Err(Refused::Conflict);
        }
        if stream.evicted > seq {
            tracing::warn!(
                session = %self.session_id,
                last_event_id,
                "a client resumes a stream from an event no longer kept; the events between are lost"
            );
        }
        stream.delivered = seq;
        stream.pending = stream
            .events
            .iter()
            .filter(|e| e.seq > seq)
            .map(|e| e.message.len())
            .sum();
        if stream.complete && stream.pending == 0 {
            self.remove_stream(&mut state, sid);
            return Ok(Resumed::Ended);
        }
        let conn = self.attach(&mut state, sid);
        if state.streams[&sid].is_sse_open() {
            self.unpark(&mut state, sid);
        }
        drop(state);
        let keep_alive = self.options.keep_alive;
        Ok(Resumed::Stream(SseBody::new(
            self.clone(),
            sid,
            conn,
            busy,
            None,
            keep_alive,
        )))
    }

    /// Takes back the requests a POST registered but could not hand to the
    /// peer (its client left first): nothing will answer them.
    fn forget(&self, ids: &[Id]) {
        let mut state = self.lock();
        for id in ids {
            if let Some(pending) = state.requests.remove(id) {
                if let Some(token) = &pending.token {
                    state.progress.remove(token);
                }
                self.answered(&mut state, pending.stream);
            }
        }
        drop(state);
        self.activity.notify_one();
    }

    /// Answers the requests a POST registered but could not hand to the
    /// peer, which is gone (the session is ending): each gets
    /// [`ErrorCode::SERVER_CLOSING`] on its stream, so its client learns
    /// that it was never run rather than waiting for an answer.
    fn unread(&self, ids: &[Id]) {
        let mut state = self.lock();
        for id in ids {
            if let Some(pending) = state.requests.remove(id) {
                self.refuse_unanswered(&mut state, id, pending);
            }
        }
        drop(state);
        self.activity.notify_one();
    }

    /// Answers one request the session's peer will never answer with
    /// [`ErrorCode::SERVER_CLOSING`], on the stream its answer was owed to.
    fn refuse_unanswered(&self, state: &mut State, id: &Id, pending: Pending) {
        if let Some(token) = &pending.token {
            state.progress.remove(token);
        }
        let error = ErrorObject::new(
            ErrorCode::SERVER_CLOSING,
            "the session ended before this request was answered; start a new session",
        );
        let answer = message::error_response(self.dialect, id, &error);
        self.push(state, pending.stream, answer, None);
        self.answered(state, pending.stream);
    }

    /// The client cancelled `id` and the protocol answers cancelled
    /// requests with nothing: its stream stops waiting for an answer.
    pub(super) fn cancelled(&self, id: &Id) {
        let mut state = self.lock();
        if !state.requests.get(id).is_some_and(|p| p.cancellable) {
            return;
        }
        if let Some(pending) = state.requests.remove(id) {
            if let Some(token) = &pending.token {
                state.progress.remove(token);
            }
            self.answered(&mut state, pending.stream);
        }
        drop(state);
        self.activity.notify_one();
    }

    /// The peer is done (or the session ends): a request it never answered
    /// (one posted as it closed, still unread) is answered with
    /// [`ErrorCode::SERVER_CLOSING`], every stream ends once its events are
    /// delivered, and nothing waits for room any more.
    pub(super) fn finish(&self) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        let unanswered: Vec<(Id, Pending)> = state.requests.drain().collect();
        for (id, pending) in unanswered {
            self.refuse_unanswered(&mut state, &id, pending);
        }
        state.closed = true;
        state.progress.clear();
        state.parked.clear();
        state.parked_bytes = 0;
        let sids: Vec<u64> = state.streams.keys().copied().collect();
        for sid in sids {
            if let Some(stream) = state.streams.get_mut(&sid) {
                stream.owed = 0;
            }
            self.settle(&mut state, sid);
        }
        if let Some(waker) = state.sink_waker.take() {
            waker.wake();
        }
        drop(state);
        self.activity.notify_one();
    }

    /// Routes one message the session's peer wrote.
    fn route(&self, message: Bytes) {
        let probe = Probe::read(&message, self.progress.as_ref());
        let mut state = self.lock();
        if state.closed {
            return tracing::debug!(
                session = %self.session_id,
                "a message written after the session ended is dropped"
            );
        }
        match probe {
            Probe::Response(Some(id)) => {
                let Some(pending) = state.requests.remove(&id) else {
                    // A request the client cancelled, or whose POST left
                    // before the server read it.
                    return tracing::debug!(
                        session = %self.session_id,
                        %id,
                        "an answer no stream waits for is dropped"
                    );
                };
                if let Some(token) = &pending.token {
                    state.progress.remove(token);
                }
                if state.initialize.as_ref() == Some(&id) {
                    state.initialize = None;
                    state.negotiated = negotiated_version(&message);
                }
                self.push(&mut state, pending.stream, message, None);
                self.answered(&mut state, pending.stream);
                drop(state);
                self.activity.notify_one();
            }
            Probe::Progress(token) => {
                let sid = state
                    .progress
                    .get(&token)
                    .copied()
                    .filter(|sid| state.streams.get(sid).is_some_and(Stream::is_sse_open));
                match sid {
                    Some(sid) => self.push(&mut state, sid, message, None),
                    None => self.elsewhere(&mut state, message, None),
                }
            }
            Probe::Response(None) => self.elsewhere(&mut state, message, None),
            Probe::Other { request } => self.elsewhere(&mut state, message, request),
        }
    }

    /// A message that belongs to no request of the client: the standalone
    /// stream if it is open, else the newest open POST stream, else it
    /// waits (bounded) for a stream to open.
    fn elsewhere(&self, state: &mut State, message: Bytes, request: Option<Id>) {
        let standalone = state
            .standalone
            .filter(|sid| state.streams.get(sid).is_some_and(|s| s.live.is_some()));
        let post = || {
            state
                .streams
                .iter()
                .rev()
                .find(|(_, s)| matches!(s.kind, Kind::Post) && !s.complete && s.live.is_some())
                .map(|(sid, _)| *sid)
        };
        if let Some(sid) = standalone.or_else(post) {
            return self.push(state, sid, message, request);
        }
        if state.parked.len() >= MAX_PARKED || state.parked_bytes + message.len() > MAX_PARKED_BYTES
        {
            return self.lost(
                message.len(),
                request,
                "no stream is open and too many messages already wait for one",
            );
        }
        state.parked_bytes += message.len();
        state.parked.push_back(Parked { message, request });
    }

    /// Moves the parked messages into the stream `sid`, which just opened.
    fn unpark(&self, state: &mut State, sid: u64) {
        while let Some(parked) = state.parked.pop_front() {
            state.parked_bytes -= parked.message.len();
            self.push(state, sid, parked.message, parked.request);
        }
    }

    /// A message that cannot be delivered: a request fails (its call gets
    /// an error answer with [`ErrorCode::TRANSPORT_FAILED`]), anything else
    /// is dropped with a warning.
    fn lost(&self, len: usize, request: Option<Id>, why: &str) {
        match request {
            Some(id) => {
                tracing::warn!(session = %self.session_id, %id, "a request to the client is not delivered: {why}");
                let error = ErrorObject::new(
                    ErrorCode::TRANSPORT_FAILED,
                    format!("the request could not be delivered to the client: {why}"),
                );
                let _ = self
                    .injected
                    .send(message::error_response(self.dialect, &id, &error));
            }
            None => tracing::warn!(
                session = %self.session_id,
                bytes = len,
                "a message to the client is dropped: {why}"
            ),
        }
    }

    /// Appends an event to the stream `sid` and wakes its body.
    fn push(&self, state: &mut State, sid: u64, message: Bytes, request: Option<Id>) {
        let seq = state.next_seq;
        let Some(stream) = state.streams.get_mut(&sid) else {
            return self.lost(message.len(), request, "its stream is gone");
        };
        state.next_seq += 1;
        let len = message.len();
        stream.events.push_back(Event {
            seq,
            message,
            request,
        });
        stream.bytes += len;
        stream.pending += len;
        let live = stream.live.is_some();
        stream.wake();
        state.retained += len;
        if live {
            state.backlog += len;
        }
        self.evict(state);
    }

    /// Drops the oldest events while the session keeps more than its replay
    /// budget: delivered ones, or those of streams with no connection.
    fn evict(&self, state: &mut State) {
        while state.retained > self.options.replay_buffer {
            let victim = state
                .streams
                .iter()
                .filter(|(_, s)| !matches!(s.kind, Kind::Json(_)))
                .filter_map(|(sid, s)| {
                    let front = s.events.front()?;
                    (front.seq <= s.delivered || s.live.is_none()).then_some((front.seq, *sid))
                })
                .min();
            let Some((_, sid)) = victim else { break };
            let Some(stream) = state.streams.get_mut(&sid) else {
                break;
            };
            let Some(event) = stream.events.pop_front() else {
                break;
            };
            let len = event.message.len();
            stream.bytes -= len;
            stream.evicted = event.seq;
            state.retained -= len;
            if event.seq > stream.delivered {
                stream.pending -= len;
                self.lost(
                    len,
                    event.request,
                    "its stream lost its connection and the replay buffer is full",
                );
            }
            let stream = &state.streams[&sid];
            if stream.events.is_empty() && stream.complete && stream.live.is_none() {
                self.remove_stream(state, sid);
            }
        }
    }

    /// One answer owed on the stream `sid` arrived (or is no longer owed).
    fn answered(&self, state: &mut State, sid: u64) {
        if let Some(stream) = state.streams.get_mut(&sid) {
            stream.owed = stream.owed.saturating_sub(1);
        }
        self.settle(state, sid);
    }

    /// Completes the stream `sid` once nothing more is owed on it: a POST
    /// stream ends after its events, a JSON one hands its answers over.
    fn settle(&self, state: &mut State, sid: u64) {
        let Some(stream) = state.streams.get_mut(&sid) else {
            return;
        };
        let done = match stream.kind {
            Kind::Standalone => state.closed,
            Kind::Post | Kind::Json(_) => stream.owed == 0,
        };
        if !done || stream.complete {
            return;
        }
        stream.complete = true;
        stream.wake();
        if let Kind::Json(sender) = &mut stream.kind {
            let sender = sender.take();
            let answers = stream.events.drain(..).map(|e| e.message).collect();
            self.remove_stream(state, sid);
            if let Some(sender) = sender {
                let _ = sender.send(answers);
            }
        }
    }

    /// Gives the stream `sid` a live connection; returns its number.
    fn attach(&self, state: &mut State, sid: u64) -> u64 {
        let conn = state.next_conn;
        state.next_conn += 1;
        if let Some(stream) = state.streams.get_mut(&sid) {
            stream.live = Some(Live { conn, waker: None });
            state.backlog += stream.pending;
        }
        conn
    }

    fn remove_stream(&self, state: &mut State, sid: u64) {
        if let Some(stream) = state.streams.remove(&sid) {
            state.retained -= stream.bytes;
            if stream.live.is_some() {
                state.backlog -= stream.pending;
            }
            if state.standalone == Some(sid) {
                state.standalone = None;
            }
            // Requests still routed to it have nowhere to go.
            state.requests.retain(|_, p| p.stream != sid);
            state.progress.retain(|_, s| *s != sid);
        }
    }

    /// Whether the sink may take another message.
    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if state.closed || state.backlog < BACKLOG_LIMIT {
            return Poll::Ready(());
        }
        state.sink_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// Counts one POST or body as activity while it lives.
pub(super) struct Busy(Arc<Core>);

impl Drop for Busy {
    fn drop(&mut self) {
        {
            let mut state = self.0.lock();
            state.busy -= 1;
            state.last_active = Instant::now();
        }
        self.0.activity.notify_one();
    }
}

/// `"{stream}-{seq}"`: the SSE id of an event.
fn event_id(sid: u64, seq: u64) -> String {
    format!("{sid}-{seq}")
}

fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (sid, seq) = id.trim().split_once('-')?;
    Some((sid.parse().ok()?, seq.parse().ok()?))
}

/// What the router needs to know of an outbound message.
enum Probe {
    /// An answer to the client's request `id` (`None`: an answer to a
    /// message that had no readable id).
    Response(Option<Id>),
    /// A progress report on the token.
    Progress(Id),
    /// A request (with its id) or a notification of the server's own.
    Other { request: Option<Id> },
}

impl Probe {
    fn read(message: &[u8], progress: Option<&ProgressPolicy>) -> Probe {
        #[derive(Deserialize)]
        struct Envelope<'a> {
            #[serde(default)]
            id: Option<Id>,
            #[serde(default, borrow)]
            method: Option<std::borrow::Cow<'a, str>>,
            #[serde(default, borrow)]
            params: Option<&'a RawValue>,
        }
        let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(message) else {
            return Probe::Other { request: None };
        };
        match envelope.method {
            None => Probe::Response(envelope.id),
            Some(method) if envelope.id.is_none() => {
                let token = progress
                    .filter(|p| p.method == method)
                    .and_then(|p| p.parse(envelope.params))
                    .map(|(token, _)| token);
                match token {
                    Some(token) => Probe::Progress(token),
                    None => Probe::Other { request: None },
                }
            }
            Some(_) => Probe::Other {
                request: envelope.id,
            },
        }
    }
}

/// The `protocolVersion` of an `initialize` answer.
fn negotiated_version(message: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Answer {
        result: InitializeResult,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct InitializeResult {
        protocol_version: String,
    }
    serde_json::from_slice::<Answer>(message)
        .ok()
        .map(|a| a.result.protocol_version)
}

/// Messages of a POST still to hand to the session's peer (when its queue
/// was full), and the requests among them. Dropped before it is done (its
/// client left), it takes back the requests it never handed over.
pub(super) struct Feed {
    core: Arc<Core>,
    messages: VecDeque<(Bytes, Option<Id>)>,
    sender: Option<PollSender<Bytes>>,
}

impl Feed {
    pub(super) fn new(
        core: Arc<Core>,
        messages: VecDeque<(Bytes, Option<Id>)>,
        sender: mpsc::Sender<Bytes>,
    ) -> Self {
        Feed {
            core,
            sender: (!messages.is_empty()).then(|| PollSender::new(sender)),
            messages,
        }
    }

    /// Hands what it can to the peer; `Ready` once everything is handed
    /// over or the peer is gone.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(sender) = &mut self.sender else {
            return Poll::Ready(());
        };
        while !self.messages.is_empty() {
            match sender.poll_reserve(cx) {
                Poll::Ready(Ok(())) => {
                    if let Some((message, _)) = self.messages.pop_front() {
                        let _ = sender.send_item(message);
                    }
                }
                Poll::Ready(Err(_)) => {
                    // The peer is gone: its session is ending, and the
                    // client still waits for these answers.
                    let ids: Vec<Id> = self.messages.drain(..).filter_map(|(_, id)| id).collect();
                    if !ids.is_empty() {
                        self.core.unread(&ids);
                    }
                    break;
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        self.sender = None;
        Poll::Ready(())
    }

    /// The messages will never reach the peer: their requests are owed
    /// nothing.
    fn abandon(&mut self) {
        let ids: Vec<Id> = self.messages.drain(..).filter_map(|(_, id)| id).collect();
        if !ids.is_empty() {
            self.core.forget(&ids);
        }
        self.sender = None;
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        self.abandon();
    }
}

/// The body of an SSE response: one stream's events as they come, with
/// keep-alive comments in between.
pub(super) struct SseBody {
    core: Arc<Core>,
    stream: u64,
    conn: u64,
    feed: Option<Feed>,
    keep_alive: Option<(Duration, Pin<Box<Sleep>>)>,
    /// The stream ended and every event was handed over.
    finished: bool,
    _busy: Busy,
}

impl SseBody {
    fn new(
        core: Arc<Core>,
        stream: u64,
        conn: u64,
        busy: Busy,
        feed: Option<Feed>,
        keep_alive: Option<Duration>,
    ) -> Self {
        SseBody {
            core,
            stream,
            conn,
            feed,
            keep_alive: keep_alive.map(|period| (period, Box::pin(tokio::time::sleep(period)))),
            finished: false,
            _busy: busy,
        }
    }

    fn reset_keep_alive(&mut self) {
        if let Some((period, sleep)) = &mut self.keep_alive {
            sleep.as_mut().reset(Instant::now() + *period);
        }
    }

    /// The next event for this connection, or whether the stream is over.
    fn next_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        let core = self.core.clone();
        let mut state = core.lock();
        let state = &mut *state;
        let Some(stream) = state.streams.get_mut(&self.stream) else {
            return Poll::Ready(None);
        };
        if stream.live.as_ref().is_none_or(|l| l.conn != self.conn) {
            return Poll::Ready(None);
        }
        let next = stream.events.partition_point(|e| e.seq <= stream.delivered);
        if let Some(event) = stream.events.get(next) {
            let len = event.message.len();
            let frame = sse::encode_event(Some(&event_id(self.stream, event.seq)), &event.message);
            stream.delivered = event.seq;
            stream.pending -= len;
            state.backlog -= len;
            if let Some(waker) = state.sink_waker.take() {
                waker.wake();
            }
            return Poll::Ready(Some(frame));
        }
        if stream.complete {
            self.finished = true;
            return Poll::Ready(None);
        }
        if let Some(live) = &mut stream.live {
            live.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

impl hyper::body::Body for SseBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if this.finished {
            return Poll::Ready(None);
        }
        if let Some(feed) = &mut this.feed {
            if feed.poll(cx).is_ready() {
                this.feed = None;
            }
        }
        match this.next_event(cx) {
            Poll::Ready(Some(frame)) => {
                this.reset_keep_alive();
                return Poll::Ready(Some(Ok(Frame::data(frame))));
            }
            Poll::Ready(None) => {
                this.finished = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if let Some((period, sleep)) = &mut this.keep_alive {
            if sleep.as_mut().poll(cx).is_ready() {
                sleep.as_mut().reset(Instant::now() + *period);
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(sse::KEEP_ALIVE)))));
            }
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.finished
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        let core = self.core.clone();
        let mut state = core.lock();
        let state = &mut *state;
        let Some(stream) = state.streams.get_mut(&self.stream) else {
            return;
        };
        if stream.live.as_ref().is_none_or(|l| l.conn != self.conn) {
            return;
        }
        stream.live = None;
        state.backlog -= stream.pending;
        if let Some(waker) = state.sink_waker.take() {
            waker.wake();
        }
        if !self.finished {
            tracing::debug!(
                session = %core.session_id,
                stream = self.stream,
                "an SSE stream lost its connection; its events are kept for a resumption"
            );
        }
        if stream.complete && stream.events.is_empty() {
            // Nothing to replay, nothing to come.
            core.remove_stream(state, self.stream);
        } else {
            // Even a stream handed over whole is kept (within the replay
            // budget): what hyper wrote may not have reached the client.
            core.evict(state);
        }
    }
}

/// What the session's peer writes: each message is routed as it comes.
pub(super) struct SessionSink(pub(super) Arc<Core>);

impl Sink<Bytes> for SessionSink {
    type Error = TransportError;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.poll_room(cx).map(Ok)
    }

    fn start_send(self: Pin<&mut Self>, message: Bytes) -> Result<(), Self::Error> {
        self.0.route(message);
        Ok(())
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.0.finish();
        Poll::Ready(Ok(()))
    }
}

impl Drop for SessionSink {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// What the session's peer reads: the client's POSTed messages, and the
/// answers made up on this side.
pub(super) struct SessionInbound {
    pub(super) posted: mpsc::Receiver<Bytes>,
    pub(super) injected: mpsc::UnboundedReceiver<Bytes>,
}

impl futures_core::Stream for SessionInbound {
    type Item = Result<InboundFrame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Poll::Ready(Some(message)) = self.injected.poll_recv(cx) {
            return Poll::Ready(Some(Ok(InboundFrame::Message(message))));
        }
        self.posted
            .poll_recv(cx)
            .map(|message| message.map(|m| Ok(InboundFrame::Message(m))))
    }
}
