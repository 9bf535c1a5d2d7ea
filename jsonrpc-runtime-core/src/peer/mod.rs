//! The peer: the handle on one connection ([`Peer`]), the calls it makes
//! ([`Call`] and the other call futures, [`CallOptions`], progress streams)
//! and why they fail ([`CallError`], [`SendError`], [`CloseReason`]).
//!
//! A peer is the outbound half of a connection: it calls and notifies the
//! other side, and waits for answers in a table keyed by id (an entry is
//! made before its frame is written, so an answer can never arrive first).
//! Every outbound frame goes through one queue, bounded in bytes, to the
//! transport's sink. The sink is written by the connection's writer task,
//! or, at the end of a burst while that task is idle, by the reader's task
//! itself (so a request answered at once costs no extra wake-up); whichever
//! writes, frames leave in queue order and a burst shares one flush.
//!
//! What comes in (answers included) is read by the inbound pipeline, which
//! sits above this layer: the peer hands it the shared state and never
//! calls up into it.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use crate::rt::Instant;
use crate::rt::JoinHandle;
use bytes::Bytes;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::connection::ConnectionInfo;
use crate::id::Id;
use crate::message::Dialect;

mod batch;
mod call;
mod error;
mod futures;
#[cfg(feature = "tower")]
mod outbound;
mod outbox;
mod pending;
mod progress;
mod served;
mod subscribe;
mod writer;

pub use self::batch::Batch;
pub use self::call::CallOptions;
pub(crate) use self::call::{ids_from, IdSource};
pub use self::error::{CallError, CloseReason, SendError};
pub use self::futures::{Call, CallFuture, PendingCall};
#[cfg(feature = "tower")]
pub(crate) use self::outbound::{typed as typed_outbound, wrap as wrap_outbound, OutboundStack};
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub use self::outbound::{OutboundCall, OutboundResult, OutboundService};
/// Without the `tower` feature there are no outbound layers.
#[cfg(not(feature = "tower"))]
pub(crate) type OutboundStack = std::convert::Infallible;
pub(crate) use self::outbox::Outbox;
pub(crate) use self::pending::{Outcome, PendingTable};
pub(crate) use self::progress::ProgressSubscriptions;
pub use self::progress::{ProgressCall, ProgressSubscription};
pub use self::served::WhenFull;
pub(crate) use self::served::{Feed, Refused, ServedTable};
pub(crate) use self::subscribe::ClientTable;
pub use self::subscribe::{
    SubscribeOptions, Subscription, SubscriptionError, DEFAULT_SUBSCRIPTION_BUFFER,
};
pub(crate) use self::writer::flush_inline;

use self::writer::BoxSink;

/// A handle to one JSON-RPC connection.
///
/// Every peer is both ends at once: it serves the routes it was built with
/// and can call and notify the other side. Handles are cheap to clone; the
/// connection closes when the last handle (including the ones held by running
/// handlers) is dropped, when [`close`](Peer::close) or
/// [`close_now`](Peer::close_now) is called, or when the other side leaves.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let (client_side, server_side) = Transport::pair(64);
///
/// let router = Router::new()
///     .request("add", |(a, b): (i64, i64), _ctx: Context| async move { Ok::<_, ErrorObject>(a + b) });
/// let server = Peer::builder().router(router).spawn(server_side);
///
/// let client = Peer::spawn(client_side);
/// let sum: i64 = client.call("add", [2, 3]).await?;
/// assert_eq!(sum, 5);
///
/// client.close(std::time::Duration::from_secs(1)).await;
/// server.closed().await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Peer {
    shared: Arc<Shared>,
    _handle: Option<Arc<HandleGuard>>,
    /// The in-flight slot of the request whose handler holds this handle:
    /// lent back while a call of its waits for the other side.
    in_flight: Option<Arc<InFlightSlot>>,
    /// Whether a handler holds this handle: its calls back to the other side
    /// get [`Config::callback_timeout`] when nothing else sets one.
    in_handler: bool,
}

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

/// Dropping the last of these closes the connection.
struct HandleGuard {
    shared: Arc<Shared>,
}

impl Drop for HandleGuard {
    fn drop(&mut self) {
        self.shared.request_close(Duration::ZERO);
    }
}

/// The state shared by handles, the inbound pipeline, the writer and
/// handlers.
pub(crate) struct Shared {
    /// This connection's number in the process, for logs.
    pub(crate) connection: u64,
    /// Who is on the other side.
    pub(crate) info: ConnectionInfo,
    /// The config's outbound layers, built for this connection.
    #[cfg(feature = "tower")]
    pub(crate) outbound: Option<OutboundService>,
    pub(crate) config: Config,
    pub(crate) dialect: Dialect,
    pub(crate) outbox: Outbox,
    /// The transport's sink, written by the writer task (or the reader).
    pub(crate) sink: writer::SinkSlot,
    pub(crate) pending: PendingTable,
    ids: IdSource,
    /// Inbound requests and notifications accepted and not yet finished:
    /// changed only by [`Shared::work_started`] and [`Shared::work_done`].
    active: AtomicUsize,
    /// Woken when inbound work finishes or a call completes, while someone
    /// waits for that ([`Shared::wake_idle`]).
    pub(crate) idle: Notify,
    /// How many wait on `idle` ([`Shared::waiting_for_idle`]).
    idle_waiters: AtomicUsize,
    /// Fired to stop every running handler ([`Shared::abort_all_handlers`]).
    pub(crate) abort_handlers: CancellationToken,
    /// Set just before `abort_handlers` fires: a load is cheaper than the
    /// token's lock on a request's first step.
    aborting: AtomicBool,
    /// The same token, for handlers to share without a handle each.
    pub(crate) abort_shared: Arc<CancellationToken>,
    /// Fired when a close has been asked for; `deadline` says how long the
    /// grace lasts.
    pub(crate) close_requested: CancellationToken,
    /// Set just before `close_requested` fires: the reader checks it on
    /// every frame, and a load is cheaper than the token's lock.
    closing: AtomicBool,
    deadline: Mutex<Option<Instant>>,
    /// Fired when the pipeline has stopped reading: no new work can come,
    /// so nothing waits for room in the outbound budget any more (what is
    /// still owed is bounded by the work already running).
    pub(crate) read_done: CancellationToken,
    /// Fired when both tasks are done.
    pub(crate) done: CancellationToken,
    reason: OnceLock<CloseReason>,
    handles: OnceLock<Weak<HandleGuard>>,
    /// Progress streams of outbound calls, by token.
    progress_subscriptions: Mutex<ProgressSubscriptions>,
    /// Set for good once a call asks for progress: until then, an answer
    /// has no progress stream to end and takes no lock for it.
    progress_calls: AtomicBool,
    next_token: AtomicU64,
    /// Subscriptions this side serves.
    served: Mutex<ServedTable>,
    /// Subscriptions this side opened.
    pub(crate) subscribed: Arc<ClientTable>,
    /// Batches this side sent whose calls may still wait.
    pub(crate) sent_batches: batch::SentBatches,
}

/// A number for a new connection, unique in the process: the `connection`
/// field of the runtime's `tracing` events (peers, and each connection of an
/// HTTP server).
#[doc(hidden)]
pub fn next_connection_number() -> u64 {
    static CONNECTIONS: AtomicU64 = AtomicU64::new(1);
    CONNECTIONS.fetch_add(1, Ordering::Relaxed)
}

impl Shared {
    fn new(
        config: Config,
        info: ConnectionInfo,
        sink: Option<BoxSink>,
        outbound: Option<OutboundStack>,
    ) -> Self {
        #[cfg(not(feature = "tower"))]
        let _ = outbound;
        let outbox = Outbox::new(config.outbound_budget);
        let abort_handlers = CancellationToken::new();
        Shared {
            connection: next_connection_number(),
            info,
            #[cfg(feature = "tower")]
            outbound: outbound.as_ref().map(|make| make()),
            dialect: config.parse.dialect,
            ids: ids_from(&config.id_strategy),
            config,
            outbox,
            sink: sink.map(writer::SinkSlot::new).unwrap_or_default(),
            pending: PendingTable::default(),
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            idle_waiters: AtomicUsize::new(0),
            abort_shared: Arc::new(abort_handlers.clone()),
            abort_handlers,
            aborting: AtomicBool::new(false),
            close_requested: CancellationToken::new(),
            closing: AtomicBool::new(false),
            deadline: Mutex::new(None),
            read_done: CancellationToken::new(),
            done: CancellationToken::new(),
            reason: OnceLock::new(),
            handles: OnceLock::new(),
            progress_subscriptions: Mutex::new(ProgressSubscriptions::default()),
            progress_calls: AtomicBool::new(false),
            next_token: AtomicU64::new(1),
            served: Mutex::new(ServedTable::default()),
            subscribed: Arc::new(ClientTable::default()),
            sent_batches: batch::SentBatches::default(),
        }
    }

    pub(crate) fn progress_subscriptions(
        &self,
    ) -> std::sync::MutexGuard<'_, ProgressSubscriptions> {
        self.progress_subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Ends the progress stream of the call `id`, if it has one.
    pub(crate) fn end_call_progress(&self, id: &Id) {
        if self.progress_calls.load(Ordering::Acquire) {
            self.progress_subscriptions().end_call(id);
        }
    }

    /// Marks that a call asked for progress (see `progress_calls`).
    pub(crate) fn progress_call_made(&self) {
        self.progress_calls.store(true, Ordering::Release);
    }

    fn next_progress_token(&self) -> Id {
        Id::from(format!(
            "progress-{}",
            self.next_token.fetch_add(1, Ordering::Relaxed)
        ))
    }

    /// Asks the pipeline to close, keeping the earliest deadline asked for.
    pub(crate) fn request_close(&self, grace: Duration) {
        let deadline = Instant::now() + grace;
        {
            let mut slot = self.deadline.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none_or(|d| deadline < d) {
                *slot = Some(deadline);
            }
        }
        self.closing.store(true, Ordering::Release);
        self.close_requested.cancel();
        // Wake the pipeline if it is waiting for in-flight work to finish.
        self.wake_idle();
    }

    /// Stops every running handler.
    pub(crate) fn abort_all_handlers(&self) {
        self.aborting.store(true, Ordering::Release);
        self.abort_handlers.cancel();
    }

    /// Whether [`abort_all_handlers`](Self::abort_all_handlers) was called.
    pub(crate) fn handlers_aborted(&self) -> bool {
        self.aborting.load(Ordering::Acquire)
    }

    /// Whether a close has been asked for ([`request_close`](Self::request_close)).
    pub(crate) fn close_was_requested(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    /// One more piece of inbound work: a request or a notification
    /// accepted, to be finished by [`work_done`](Self::work_done).
    #[inline]
    pub(crate) fn work_started(&self) {
        self.active.fetch_add(1, Ordering::AcqRel);
    }

    /// A piece of inbound work is over (answered, or dropped before it
    /// ran): wakes whoever waits for the connection to go idle.
    #[inline]
    pub(crate) fn work_done(&self) {
        self.active.fetch_sub(1, Ordering::AcqRel);
        self.wake_idle();
    }

    /// How many pieces of inbound work are accepted and not finished.
    #[inline]
    pub(crate) fn active_work(&self) -> usize {
        self.active.load(Ordering::Acquire)
    }

    /// Wakes whoever waits for inbound work to finish or calls to complete
    /// (the closing pipeline; a reader holding back a flood of
    /// notifications). Nearly free when nobody waits, which is nearly always.
    pub(crate) fn wake_idle(&self) {
        // Pairs with the fence in `waiting_for_idle`: either this sees the
        // waiter, or the waiter sees the change made before this call.
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.idle_waiters.load(Ordering::SeqCst) > 0 {
            self.idle.notify_one();
        }
    }

    /// Marks the caller as waiting on `idle` until the guard drops: from
    /// then on every [`wake_idle`](Self::wake_idle) notifies. Check the
    /// condition waited for after taking the guard.
    pub(crate) fn waiting_for_idle(&self) -> IdleWaiter<'_> {
        self.idle_waiters.fetch_add(1, Ordering::SeqCst);
        std::sync::atomic::fence(Ordering::SeqCst);
        IdleWaiter(self)
    }

    pub(crate) fn close_deadline(&self) -> Instant {
        self.deadline
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(Instant::now)
    }

    /// Records why the connection ended; the first reason wins.
    pub(crate) fn set_reason(&self, reason: CloseReason) -> CloseReason {
        self.reason.get_or_init(|| reason).clone()
    }

    pub(crate) fn reason_or_local(&self) -> CloseReason {
        self.reason.get().cloned().unwrap_or(CloseReason::Local)
    }

    /// Queues one frame for the writer without waiting for room.
    pub(crate) fn send_now(&self, body: Bytes) -> Result<(), SendError> {
        self.outbox
            .push(body)
            .map_err(|_| SendError::Closed(self.reason_or_local()))
    }

    /// Queues one frame without waiting for room, and writes it on the
    /// caller's task when the writer is idle and the reader is not in a
    /// burst (`flush_inline`); otherwise as [`send_now`](Self::send_now).
    pub(crate) fn send_inline(
        &self,
        body: Bytes,
        cx: &mut std::task::Context<'_>,
    ) -> Result<(), SendError> {
        if self.outbox.held() {
            // The reader writes what it queued at the end of its burst.
            return self.send_now(body);
        }
        self.outbox.hold();
        if let Err(e) = self.send_now(body) {
            self.outbox.release();
            return Err(e);
        }
        flush_inline(self, cx);
        Ok(())
    }

    /// Waits until the outbound budget has room, or the pipeline has
    /// stopped reading.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub(crate) async fn room(&self) {
        if self.outbox.has_room() {
            return;
        }
        tokio::select! {
            _ = self.outbox.room() => {}
            _ = self.read_done.cancelled() => {}
        }
    }

    /// Queues one frame for the writer once the outbound budget has room.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: nothing is queued until it completes.
    pub(crate) async fn send(&self, body: Bytes) -> Result<(), SendError> {
        self.room().await;
        self.send_now(body)
    }

    /// A new handle for a handler's context, unless every handle is gone
    /// (then the connection is closing and the context gets a handle that
    /// does not keep it open).
    pub(crate) fn handle(self: &Arc<Self>, in_flight: Option<Arc<InFlightSlot>>) -> Peer {
        let guard = self.handles.get().and_then(Weak::upgrade);
        Peer {
            shared: self.clone(),
            _handle: guard,
            in_flight,
            in_handler: true,
        }
    }
}

/// The in-flight cap's permit of one running request (see
/// [`Config::max_in_flight`]): held while the handler runs, lent back to the
/// cap while a call the handler made on its own connection waits for the
/// other side, so that side's requests can be served meanwhile.
#[derive(Debug)]
pub(crate) struct InFlightSlot {
    semaphore: Arc<Semaphore>,
    permit: Mutex<Option<OwnedSemaphorePermit>>,
    /// Set when the request has finished: a permit taken back late is let go.
    finished: AtomicBool,
}

impl InFlightSlot {
    pub(crate) fn new(semaphore: Arc<Semaphore>) -> Self {
        InFlightSlot {
            semaphore,
            permit: Mutex::new(None),
            finished: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<OwnedSemaphorePermit>> {
        self.permit.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for a permit and keeps it; false if `stop` fired first.
    pub(crate) async fn acquire(&self, stop: &CancellationToken) -> bool {
        let permit = tokio::select! {
            permit = self.semaphore.clone().acquire_owned() => permit.ok(),
            _ = stop.cancelled() => None,
        };
        let acquired = permit.is_some();
        *self.lock() = permit;
        acquired
    }

    /// Gives the permit back to the cap; true if there was one.
    fn lend(&self) -> bool {
        self.lock().take().is_some()
    }

    /// Takes a permit again after [`lend`](Self::lend).
    async fn reclaim(&self) {
        if let Ok(permit) = self.semaphore.clone().acquire_owned().await {
            if !self.finished.load(Ordering::Acquire) {
                *self.lock() = Some(permit);
            }
        }
    }

    /// The request is done: its permit goes back for good.
    pub(crate) fn finish(&self) {
        self.finished.store(true, Ordering::Release);
        self.lock().take();
    }
}

impl Peer {
    /// The timeout of a call that sets none itself: the config's
    /// [`request_timeout`](Config::request_timeout), else, for a call a
    /// handler makes back to the other side, its
    /// [`callback_timeout`](Config::callback_timeout).
    pub(crate) fn default_timeout(&self) -> Option<std::time::Duration> {
        let config = &self.shared.config;
        match config.request_timeout {
            Some(timeout) => Some(timeout),
            None if self.in_handler => config.callback_timeout,
            None => None,
        }
    }

    /// Starts the writer on `sink` and returns the first handle, the state
    /// the inbound pipeline shares, and the writer's task.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub(crate) fn start(
        config: Config,
        info: ConnectionInfo,
        sink: BoxSink,
        outbound: Option<OutboundStack>,
    ) -> (Peer, Arc<Shared>, JoinHandle<()>) {
        let shared = Arc::new(Shared::new(config, info, Some(sink), outbound));
        let handle = Arc::new(HandleGuard {
            shared: shared.clone(),
        });
        let _ = shared.handles.set(Arc::downgrade(&handle));
        let writer = crate::rt::spawn(writer::run(shared.clone()));
        let peer = Peer {
            shared: shared.clone(),
            _handle: Some(handle),
            in_flight: None,
            in_handler: false,
        };
        (peer, shared, writer)
    }

    /// A handle with no connection behind it: every call fails with
    /// [`CallError::Closed`]. For [`Context::detached`](crate::Context::detached).
    pub(crate) fn detached() -> Peer {
        // One closed connection serves every detached handle.
        static DETACHED: OnceLock<Arc<Shared>> = OnceLock::new();
        let shared = DETACHED.get_or_init(|| {
            let shared = Shared::new(Config::default(), ConnectionInfo::new(), None, None);
            shared.outbox.writer_gone();
            shared.set_reason(CloseReason::Local);
            shared.pending.close(&CloseReason::Local);
            shared.done.cancel();
            Arc::new(shared)
        });
        Peer {
            shared: shared.clone(),
            _handle: None,
            in_flight: None,
            in_handler: false,
        }
    }

    /// Closes the connection gracefully: new inbound requests are refused
    /// with -32001, while requests already running and calls already waiting
    /// get up to `grace` to finish (responses keep being read). Then the rest
    /// is stopped: running handlers are cancelled and answered -32001,
    /// waiting calls fail with [`CallError::Closed`], queued frames are
    /// written, and the transport is closed. Returns when all of that is done.
    ///
    /// # Cancel safety
    ///
    /// The close goes on if the future is dropped.
    pub async fn close(&self, grace: Duration) -> CloseReason {
        self.shared.request_close(grace);
        self.closed().await
    }

    /// Closes the connection at once: `close(Duration::ZERO)`.
    ///
    /// # Cancel safety
    ///
    /// The close goes on if the future is dropped.
    pub async fn close_now(&self) -> CloseReason {
        self.close(Duration::ZERO).await
    }

    /// Waits until the connection has ended, and returns why.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub fn closed(&self) -> impl Future<Output = CloseReason> + Send + 'static + use<> {
        let shared = self.shared.clone();
        async move {
            shared.done.cancelled().await;
            shared.reason_or_local()
        }
    }

    /// What is known about the other side: its address, and for a
    /// connection that began with an HTTP request (a WebSocket handshake)
    /// the request's path and headers, with any state a
    /// listener's `on_connect` hook attached. Empty for a client's own peer
    /// and for transports that know nothing (see [`ConnectionInfo`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Peer, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, _b) = Transport::pair(8);
    /// let peer = Peer::spawn(a);
    /// assert!(peer.connection().headers().is_empty());
    /// # });
    /// ```
    pub fn connection(&self) -> &ConnectionInfo {
        &self.shared.info
    }

    /// Returns true once the connection has ended.
    pub fn is_closed(&self) -> bool {
        self.shared.done.is_cancelled()
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

/// A waiter on [`Shared::idle`], counted while it lives.
pub(crate) struct IdleWaiter<'a>(&'a Shared);

impl Drop for IdleWaiter<'_> {
    fn drop(&mut self) {
        self.0.idle_waiters.fetch_sub(1, Ordering::SeqCst);
    }
}
