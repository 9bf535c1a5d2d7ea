//! The inbound pipeline: from a frame to its answer.
//!
//! One task per connection reads frames, classifies each one
//! ([`message`](crate::message) documents the nine classification rules) and
//! walks every message through the admission steps below, in this order.
//! The first step that settles a message ends its walk.
//!
//! | # | step | a request | a notification |
//! |---|------|-----------|----------------|
//! | 1 | protocol notifications | – | the cancellation policy's notification cancels the request it names; the progress policy's notification feeds the call waiting for its token; neither goes further |
//! | 2 | closing | after a close was asked for: -32001 | dropped |
//! | 3 | gates | the user's [`Gate`](crate::policy::Gate): allowed, refused with its error, or dropped | allowed, or dropped |
//! | 4 | lifecycle | the [`Lifecycle`](crate::policy::Lifecycle) gate: refused before the handshake (-32002 for LSP and MCP), a second handshake refused, refused after shutdown | dropped before the handshake; the exit notification ends the connection (after its route, if any, runs) |
//! | 5 | route lookup | no route: -32601; a notification route: -32601; params that do not decode: -32602 | no route: dropped (or -32601 with id null under [`UnknownMethod::strict`](crate::config::UnknownMethod::strict)); params that do not decode: dropped |
//! | 6 | capacity | more than [`max_queued`](crate::Config::max_queued) requests and notifications waiting or running, or its params would take the bytes held past [`max_parked_bytes`](crate::Config::max_parked_bytes) or a [`SharedBudget`](crate::policy::SharedBudget): -32000 | the reader waits for room |
//! | 7 | run | after the notifications that came before it, within [`max_in_flight`](crate::Config::max_in_flight): the handler's first step on the reader (on a current-thread runtime; on a multi-thread one once the route's last 16 first steps took at most 100 µs each, see `router::Pace`), then a task of its own if it is not done | one at a time, in arrival order: the first step on the reader as for a request while none is waiting, else on the connection's notification worker |
//!
//! Responses to this side's calls skip the steps: they complete the call
//! waiting for their id. A request that was admitted gets exactly one answer,
//! decided in one place (`Connection::finish` in `job`) from how its handler
//! ended and the cancellation policy: a request the other side cancelled is
//! answered as the policy says (LSP: -32800; MCP: no answer) whatever its
//! handler returned, unless the policy lets the handler run on
//! ([`keep_running`](crate::policy::CancellationPolicy::keep_running)) and
//! the protocol allows an answer. A panicking handler is answered -32603,
//! and a handler stopped by the connection closing -32001.
//!
//! Before each frame, the reader waits while the connection's outbound
//! budget is spent ([`Config::outbound_budget`](crate::Config::outbound_budget)):
//! a peer that stops reading this side's answers stops being read.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Poll, Waker};
use std::time::Duration;

use crate::rt::JoinHandle;
use futures_core::Stream;
use futures_util::StreamExt as _;

use crate::codec::{Frame, FramingError};
use crate::config::Config;
use crate::id::Id;
use crate::message::ErrorObject;
use crate::peer::{CloseReason, Peer, Shared};
use crate::router::Router;
use crate::transport::{Transport, TransportError};

pub(crate) mod admit;
mod job;

use self::admit::Reader;
use self::job::Connection;

type BoxStream = Pin<Box<dyn Stream<Item = Result<Frame, TransportError>> + Send>>;

/// How long the writer gets to write what is queued once the connection is
/// done, before it is stopped.
const FINAL_FLUSH_LIMIT: Duration = Duration::from_secs(10);

/// Builds a [`Peer`]: its [`Config`] and its [`Router`].
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Config, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (a, _b) = Transport::pair(8);
/// let peer = Peer::builder().config(Config::default()).router(Router::new()).spawn(a);
/// # drop(peer);
/// # });
/// ```
#[derive(Default)]
pub struct PeerBuilder {
    config: Config,
    router: Router,
    #[cfg(feature = "tower")]
    outbound: Option<crate::peer::OutboundStack>,
}

impl std::fmt::Debug for PeerBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerBuilder")
            .field("config", &self.config)
            .field("router", &self.router)
            .finish_non_exhaustive()
    }
}

impl PeerBuilder {
    /// The connection's policies (default: [`Config::default`]).
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The routes this side serves (default: none).
    pub fn router(mut self, router: Router) -> Self {
        self.router = router;
        self
    }

    /// Wraps the calls this side makes in `layer` (feature `tower`): each
    /// awaited call ([`Peer::call`](crate::Peer::call),
    /// [`call_with`](crate::Peer::call_with), the request methods of an
    /// `#[rpc]` client) goes through the stack as an
    /// [`OutboundCall`](crate::peer::OutboundCall) (method, encoded
    /// params, options, peer), and its layers see the raw result or the
    /// error. tower's own layers (timeout, concurrency limit, rate limit,
    /// retry) compose as usual; a [`CallError`](crate::CallError) a layer
    /// returns reaches the caller as itself, any other error as
    /// [`CallError::Layer`](crate::CallError::Layer). Layers added later
    /// wrap the earlier ones. The stack is built afresh for each
    /// peer, so a concurrency limit counts one connection's calls.
    ///
    /// Calls [`start`](crate::peer::Call::start)ed for their id, and progress
    /// calls, are sent directly, without the layers (their handles need the
    /// id at once). A peer without layers sends every call directly, at no
    /// cost.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use jsonrpc_runtime::{ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let router = Router::new().request("add", |(a, b): (i64, i64), _| async move {
    ///     Ok::<_, ErrorObject>(a + b)
    /// });
    /// let (a, b) = Transport::pair(8);
    /// let _server = Peer::builder().router(router).spawn(b);
    /// let client = Peer::builder()
    ///     .outbound_layer(tower::limit::ConcurrencyLimitLayer::new(8))
    ///     .outbound_layer(tower::timeout::TimeoutLayer::new(Duration::from_secs(30)))
    ///     .spawn(a);
    /// assert_eq!(client.call::<i64>("add", (2, 3)).await?, 5);
    /// # Ok::<(), jsonrpc_runtime::CallError>(())
    /// # }).unwrap();
    /// ```
    #[cfg(feature = "tower")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
    pub fn outbound_layer<L>(mut self, layer: L) -> Self
    where
        L: tower::Layer<crate::peer::OutboundService> + Send + Sync + 'static,
        L::Service: tower::Service<crate::peer::OutboundCall, Response = Box<serde_json::value::RawValue>>
            + Clone
            + Send
            + Sync
            + 'static,
        <L::Service as tower::Service<crate::peer::OutboundCall>>::Error: Into<tower::BoxError>,
        <L::Service as tower::Service<crate::peer::OutboundCall>>::Future: Send + 'static,
    {
        self.outbound = Some(crate::peer::wrap_outbound(self.outbound.take(), layer));
        self
    }

    /// Starts the connection's tasks on `transport` and returns a handle.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn(self, transport: Transport) -> Peer {
        let PeerBuilder {
            config,
            mut router,
            #[cfg(feature = "tower")]
            outbound,
        } = self;
        #[cfg(not(feature = "tower"))]
        let outbound = None;
        if let Some(ping) = config.ping.as_deref().filter(|m| !router.contains(m)) {
            router = router.request(ping, |_: serde::de::IgnoredAny, _| async {
                Ok::<_, ErrorObject>(serde_json::Map::new())
            });
        }
        let (peer, shared, writer) =
            Peer::start(config, transport.connection, transport.outbound, outbound);
        let callers = transport.callers;
        crate::rt::spawn(run(shared, router, transport.inbound, callers, writer));
        peer
    }

    /// Serves `transport` until the connection ends, and returns why it ended.
    ///
    /// This is how a long-lived server runs until the other side leaves: when
    /// the other side ends its stream, the peer lets the handlers already
    /// running finish, writes every answer owed, and returns
    /// [`CloseReason::RemoteClosed`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the last handle it holds, which closes the
    /// connection at once unless a handler still holds one.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub async fn serve(self, transport: Transport) -> CloseReason {
        let peer = self.spawn(transport);
        peer.closed().await
    }
}

impl Peer {
    /// Starts building a peer.
    pub fn builder() -> PeerBuilder {
        PeerBuilder::default()
    }

    /// Starts a peer with the default config and no routes on `transport`: a
    /// plain client. The transport is already connected; this starts the
    /// connection's tasks and returns the handle.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn(transport: Transport) -> Peer {
        Peer::builder().spawn(transport)
    }
}

/// Why the read loop stopped.
enum End {
    /// The other side ended its stream.
    Eof,
    /// The stream failed.
    Failed(TransportError),
    /// This side asked to close.
    Local,
}

/// Reads the connection until it ends, then shuts it down: the answers owed
/// are written, running handlers finish or are stopped, waiting calls fail.
async fn run(
    shared: Arc<Shared>,
    router: Router,
    mut inbound: BoxStream,
    callers: Option<crate::connection::CallerSlot>,
    writer: JoinHandle<()>,
) {
    let connection = Arc::new(Connection::new(shared.clone()));
    let (mut reader, worker) = Reader::new(connection.clone(), router, callers);
    let mut end = read(&shared, &mut reader, &mut inbound).await;
    if matches!(end, End::Local) {
        end = drain(&shared, &mut reader, &mut inbound).await;
    }
    drop(inbound);
    shut_down(&shared, reader, worker, writer, end).await;
}

/// Reads frames and hands them to the reader until the stream ends or this
/// side asks to close.
async fn read(shared: &Arc<Shared>, reader: &mut Reader, inbound: &mut BoxStream) -> End {
    // One wait for the close for the whole loop, registered with the
    // task's waker and polled again only when that waker changes; between
    // wake-ups an atomic load says whether the close came. (Making and
    // dropping one wait per frame, then polling one per frame, showed in the
    // profiles.)
    let closed = shared.close_requested.cancelled();
    tokio::pin!(closed);
    let mut registered: Option<Waker> = None;
    // Between the first frame of a burst and the end of the burst, the
    // reader holds the outbound queue: the answers it queues wait for it
    // to write them (`flush_inline`) instead of waking the writer one by
    // one. It lets go before anything that can wait.
    let mut holding = false;
    let end = loop {
        if shared.close_was_requested() {
            break End::Local;
        }
        if !shared.outbox.has_room() {
            if std::mem::take(&mut holding) {
                shared.outbox.release();
            }
            tokio::select! {
                biased;
                _ = &mut closed => break End::Local,
                _ = shared.outbox.room() => {}
            }
        }
        let next = std::future::poll_fn(|cx| {
            if let Poll::Ready(item) = inbound.poll_next_unpin(cx) {
                if !holding {
                    holding = true;
                    shared.outbox.hold();
                }
                return Poll::Ready(Some(item));
            }
            if std::mem::take(&mut holding) {
                crate::peer::flush_inline(shared, cx);
            }
            if !registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                if closed.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(None);
                }
                registered = Some(cx.waker().clone());
            }
            if shared.close_was_requested() {
                return Poll::Ready(None);
            }
            Poll::Pending
        });
        match next.await {
            Some(Some(Ok(frame))) => {
                crate::trace::frame_in(shared.connection, &frame);
                reader.on_frame(frame).await;
                if shared.subscribed.take_pressure() {
                    // A subscription's queue is filling from one burst:
                    // its consumer may be a task of this thread.
                    if std::mem::take(&mut holding) {
                        shared.outbox.release();
                    }
                    tokio::task::yield_now().await;
                }
            }
            Some(Some(Err(e))) => break End::Failed(e),
            Some(None) => break End::Eof,
            None => break End::Local,
        }
    };
    if holding {
        shared.outbox.release();
    }
    end
}

/// A graceful close: keeps reading answers while running work and waiting
/// calls have time left, and says how the reading ended.
async fn drain(shared: &Arc<Shared>, reader: &mut Reader, inbound: &mut BoxStream) -> End {
    reader.closing = true;
    let _waiting = shared.waiting_for_idle();
    while !is_idle(shared) {
        let deadline = shared.close_deadline();
        tokio::select! {
            biased;
            _ = crate::rt::sleep_until(deadline) => break,
            _ = shared.idle.notified() => {}
            _ = shared.outbox.room(), if !shared.outbox.has_room() => {}
            item = inbound.next(), if shared.outbox.has_room() => match item {
                Some(Ok(frame)) => {
                    crate::trace::frame_in(shared.connection, &frame);
                    reader.on_frame(frame).await
                }
                Some(Err(e)) => return End::Failed(e),
                None => return End::Eof,
            },
        }
    }
    End::Local
}

/// Once nothing more is read: fails the waiting calls, lets the running
/// handlers finish (unless this side closes), writes what is owed and
/// stops the writer.
async fn shut_down(
    shared: &Arc<Shared>,
    reader: Reader,
    worker: JoinHandle<()>,
    writer: JoinHandle<()>,
    end: End,
) {
    shared.read_done.cancel();
    if let End::Failed(e) = &end {
        report_failure(shared, e);
    }
    let reason = shared.set_reason(match end {
        End::Eof => CloseReason::RemoteClosed,
        End::Failed(e) => CloseReason::Transport(Arc::new(e)),
        End::Local => CloseReason::Local,
    });
    tracing::debug!(connection = shared.connection, %reason, "the connection is closing");
    // Nothing more will be read: no waiting call can be answered, and no
    // progress report will come.
    shared.pending.close(&reason);
    shared.progress_subscriptions().end_all();
    shared.subscribed.close(&reason);

    // Answers already owed are still written: let running handlers finish,
    // unless (or until) this side asks to close.
    if !matches!(reason, CloseReason::Local) {
        let _waiting = shared.waiting_for_idle();
        while shared.active_work() > 0 {
            tokio::select! {
                biased;
                _ = shared.close_requested.cancelled(), if !shared.close_requested.is_cancelled() => {}
                _ = crate::rt::sleep_until(shared.close_deadline()), if shared.close_requested.is_cancelled() => break,
                _ = shared.idle.notified() => {}
            }
        }
    }
    shared.abort_all_handlers();
    drop(reader);
    let _ = worker.await;
    let waiting = shared.waiting_for_idle();
    while shared.active_work() > 0 {
        shared.idle.notified().await;
    }
    drop(waiting);

    shared.outbox.close();
    let abort = writer.abort_handle();
    if crate::rt::timeout(FINAL_FLUSH_LIMIT, writer).await.is_err() {
        tracing::warn!("the transport did not take the last frames in time; dropping them");
        abort.abort();
    }
    shared.done.cancel();
}

/// Says why the stream failed: in the log, and to the other side when it
/// broke the framing (it gets a -32700 before the connection closes).
fn report_failure(shared: &Shared, error: &TransportError) {
    match error {
        TransportError::Framing(FramingError::InvalidHeader(_)) => {
            tracing::warn!(%error, "closing the connection: its framing is broken");
            let answer = ErrorObject::parse_error(format_args!("{error}; closing the connection"));
            let body = crate::message::error_response(shared.dialect, &Id::NULL, &answer);
            if shared.send_now(body).is_err() {
                tracing::debug!(
                    "the framing error could not be answered: the connection is closed"
                );
            }
        }
        TransportError::WebSocket(_) => {
            tracing::warn!(%error, "closing the connection");
        }
        _ => tracing::debug!(%error, "the connection failed"),
    }
}

fn is_idle(shared: &Shared) -> bool {
    shared.active_work() == 0 && shared.pending.is_empty()
}
