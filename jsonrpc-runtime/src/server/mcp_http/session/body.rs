//! What carries a session's events and messages: the SSE bodies hyper
//! sends, the feed of a POST's messages to the peer, and the peer's own
//! transport halves.

use super::*;

/// Counts one POST or body as activity while it lives.
pub(in crate::server::mcp_http) struct Busy(pub(super) Arc<Core>);

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
/// Messages of a POST still to hand to the session's peer (when its queue
/// was full), and the requests among them. Dropped before it is done (its
/// client left), it takes back the requests it never handed over.
pub(in crate::server::mcp_http) struct Feed {
    core: Arc<Core>,
    messages: VecDeque<(Bytes, Option<Id>)>,
    sender: Option<PollSender<Posted>>,
    /// Who posted them.
    caller: Arc<ConnectionInfo>,
}

/// A posted message and the caller of the `POST` that carried it.
pub(in crate::server::mcp_http) type Posted = (Bytes, Arc<ConnectionInfo>);

impl Feed {
    pub(in crate::server::mcp_http) fn new(
        core: Arc<Core>,
        messages: VecDeque<(Bytes, Option<Id>)>,
        sender: mpsc::Sender<Posted>,
        caller: Arc<ConnectionInfo>,
    ) -> Self {
        Feed {
            core,
            caller,
            sender: (!messages.is_empty()).then(|| PollSender::new(sender)),
            messages,
        }
    }

    /// Hands what it can to the peer; `Ready` once everything is handed
    /// over or the peer is gone.
    pub(in crate::server::mcp_http) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(sender) = &mut self.sender else {
            return Poll::Ready(());
        };
        while !self.messages.is_empty() {
            match sender.poll_reserve(cx) {
                Poll::Ready(Ok(())) => {
                    if let Some((message, _)) = self.messages.pop_front() {
                        let _ = sender.send_item((message, self.caller.clone()));
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
pub(in crate::server::mcp_http) struct SseBody {
    core: Arc<Core>,
    stream: u64,
    conn: u64,
    feed: Option<Feed>,
    keep_alive: Option<(Duration, Pin<Box<Sleep>>)>,
    /// The priming event, sent before any other.
    priming: Option<Bytes>,
    /// The stream ended and every event was handed over.
    finished: bool,
    _busy: Busy,
}

impl SseBody {
    pub(super) fn new(
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
            keep_alive: keep_alive.map(|period| (period, Box::pin(crate::rt::sleep(period)))),
            priming: None,
            finished: false,
            _busy: busy,
        }
    }

    /// Sends `priming` (see `session::priming`) before the first event.
    pub(super) fn priming(mut self, priming: Option<Bytes>) -> Self {
        self.priming = priming;
        self
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
        if let Some(priming) = this.priming.take() {
            return Poll::Ready(Some(Ok(Frame::data(priming))));
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
pub(in crate::server::mcp_http) struct SessionSink(pub(in crate::server::mcp_http) Arc<Core>);

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
pub(in crate::server::mcp_http) struct SessionInbound {
    pub(in crate::server::mcp_http) posted: mpsc::Receiver<Posted>,
    pub(in crate::server::mcp_http) injected: mpsc::UnboundedReceiver<Bytes>,
    /// Where each posted message's caller is left for the peer.
    pub(in crate::server::mcp_http) callers: CallerSlot,
}

impl futures_core::Stream for SessionInbound {
    type Item = Result<InboundFrame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Poll::Ready(Some(message)) = self.injected.poll_recv(cx) {
            *self.callers.lock().unwrap_or_else(|p| p.into_inner()) = None;
            return Poll::Ready(Some(Ok(InboundFrame::Message(message))));
        }
        let posted = ready!(self.posted.poll_recv(cx));
        Poll::Ready(posted.map(|(message, caller)| {
            *self.callers.lock().unwrap_or_else(|p| p.into_inner()) = Some(caller);
            Ok(InboundFrame::Message(message))
        }))
    }
}
