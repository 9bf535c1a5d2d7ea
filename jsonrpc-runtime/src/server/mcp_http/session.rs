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
use std::task::{ready, Context, Poll, Waker};
use std::time::Duration;

use crate::rt::{Instant, Sleep};
use bytes::Bytes;
use futures_sink::Sink;
use hyper::body::Frame;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::PollSender;

use super::Options;
use crate::codec::Frame as InboundFrame;
use crate::connection::{CallerSlot, ConnectionInfo};
use crate::message::{self, Dialect};
use crate::message::{ErrorCode, ErrorObject};
use crate::policy::ProgressPolicy;
use crate::transport::sse;
use crate::transport::TransportError;
use crate::Id;

mod body;
mod retention;
mod route;

pub(super) use self::body::{Busy, Feed, Posted, SessionInbound, SessionSink, SseBody};

/// Undelivered bytes on a session's live streams past which its peer's
/// writes wait: a client that stops reading stalls its session, it never
/// grows the server's memory.
pub(crate) const BACKLOG_LIMIT: usize = 256 * 1024;

/// At most this many messages wait for a stream to open, …
pub(super) const MAX_PARKED: usize = 64;

/// … holding at most this many bytes.
pub(crate) const MAX_PARKED_BYTES: usize = 256 * 1024;

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
    /// The SSE streams' events in the order eviction considers them.
    order: retention::Order,
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
    /// A connection had the stream once: without one now, its client is
    /// gone (and may resume), not yet there.
    attached: bool,
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
            attached: false,
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
                order: retention::Order::default(),
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
        let priming = priming(&state, sid);
        self.unpark(&mut state, sid);
        drop(state);
        SseBody::new(self.clone(), sid, conn, busy, Some(feed), keep_alive).priming(priming)
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
        let priming = priming(&state, sid);
        self.unpark(&mut state, sid);
        drop(state);
        let keep_alive = self.options.keep_alive;
        Ok(SseBody::new(self.clone(), sid, conn, busy, None, keep_alive).priming(priming))
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
}

/// How long a client waits before it reconnects a stream that broke, as
/// the priming event's `retry:` says.
pub(super) const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// The priming event of the stream `sid` as it opens (SEP-1699, from
/// 2025-11-25 on): an id to resume from (what was delivered so far) and
/// `retry:`, with empty data, so a client whose connection breaks before
/// the first event can still resume. `None` for earlier revisions, whose
/// clients may not skip an event without data.
fn priming(state: &State, sid: u64) -> Option<Bytes> {
    let primed = state
        .negotiated
        .as_deref()
        .is_some_and(|v| v >= "2025-11-25");
    let delivered = state.streams.get(&sid)?.delivered;
    primed.then(|| {
        Bytes::from(format!(
            "id: {}\nretry: {}\ndata: \n\n",
            event_id(sid, delivered),
            RECONNECT_AFTER.as_millis()
        ))
    })
}

fn event_id(sid: u64, seq: u64) -> String {
    format!("{sid}-{seq}")
}

fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (sid, seq) = id.trim().split_once('-')?;
    Some((sid.parse().ok()?, seq.parse().ok()?))
}
