//! Where each message a session's peer writes goes: the stream of the
//! request it answers or reports on, the standalone stream, or parked until
//! a stream opens; and the bookkeeping of events, parking and eviction.

use super::*;

impl Core {
    /// Routes one message the session's peer wrote.
    pub(super) fn route(&self, message: Bytes) {
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
    /// stream if it is open, else the newest open POST stream (one whose
    /// body hyper has yet to poll included), else it waits (bounded) for a
    /// stream to open. One message waits whatever its size (it is within
    /// the frame cap); more wait within [`MAX_PARKED_BYTES`].
    pub(super) fn elsewhere(&self, state: &mut State, message: Bytes, request: Option<Id>) {
        let standalone = state
            .standalone
            .filter(|sid| state.streams.get(sid).is_some_and(|s| s.live.is_some()));
        let post = || {
            state
                .streams
                .iter()
                .rev()
                .find(|(_, s)| {
                    matches!(s.kind, Kind::Post) && !s.complete && (s.live.is_some() || !s.attached)
                })
                .map(|(sid, _)| *sid)
        };
        if let Some(sid) = standalone.or_else(post) {
            return self.push(state, sid, message, request);
        }
        let full = state.parked.len() >= MAX_PARKED
            || (!state.parked.is_empty() && state.parked_bytes + message.len() > MAX_PARKED_BYTES);
        if full {
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
    pub(super) fn unpark(&self, state: &mut State, sid: u64) {
        while let Some(parked) = state.parked.pop_front() {
            state.parked_bytes -= parked.message.len();
            self.push(state, sid, parked.message, parked.request);
        }
    }

    /// A message that cannot be delivered: a request fails (its call gets
    /// an error answer with [`ErrorCode::TRANSPORT_FAILED`]), anything else
    /// is dropped with a warning.
    pub(super) fn lost(&self, len: usize, request: Option<Id>, why: &str) {
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

    /// Appends an event to the stream `sid`, wakes its body, and keeps the
    /// session within its replay budget.
    pub(super) fn push(&self, state: &mut State, sid: u64, message: Bytes, request: Option<Id>) {
        self.append(state, sid, message, request);
        self.evict(state);
    }

    /// Appends an event to the stream `sid` and wakes its body.
    pub(super) fn append(&self, state: &mut State, sid: u64, message: Bytes, request: Option<Id>) {
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
        let sse = !matches!(stream.kind, Kind::Json(_));
        stream.wake();
        state.retained += len;
        if live {
            state.backlog += len;
        }
        if sse {
            state.order.push(seq, sid, &state.streams);
        }
    }

    /// One answer owed on the stream `sid` arrived (or is no longer owed).
    pub(super) fn answered(&self, state: &mut State, sid: u64) {
        if let Some(stream) = state.streams.get_mut(&sid) {
            stream.owed = stream.owed.saturating_sub(1);
        }
        self.settle(state, sid);
    }

    /// Completes the stream `sid` once nothing more is owed on it: a POST
    /// stream ends after its events, a JSON one hands its answers over.
    pub(super) fn settle(&self, state: &mut State, sid: u64) {
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
    pub(super) fn attach(&self, state: &mut State, sid: u64) -> u64 {
        let conn = state.next_conn;
        state.next_conn += 1;
        if let Some(stream) = state.streams.get_mut(&sid) {
            stream.live = Some(Live { conn, waker: None });
            stream.attached = true;
            state.backlog += stream.pending;
        }
        conn
    }

    pub(super) fn remove_stream(&self, state: &mut State, sid: u64) {
        if let Some(stream) = state.streams.remove(&sid) {
            state.retained -= stream.bytes;
            if !matches!(stream.kind, Kind::Json(_)) {
                state.order.forget(stream.events.len());
            }
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
    pub(super) fn poll_room(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut state = self.lock();
        if state.closed || state.backlog < BACKLOG_LIMIT {
            return Poll::Ready(());
        }
        state.sink_waker = Some(cx.waker().clone());
        Poll::Pending
    }
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
    pub(super) fn read(message: &[u8], progress: Option<&ProgressPolicy>) -> Probe {
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
                    .and_then(|p| p.parse(envelope.params.map(crate::message::RawJson::from)))
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
