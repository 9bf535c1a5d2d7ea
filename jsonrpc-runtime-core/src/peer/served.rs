//! Subscriptions this side serves: the connection's table of them, and each
//! one's feed, the bounded queue its items wait in on their way to the
//! outbound queue.
//!
//! A feed holds encoded item frames, at most its capacity of them; its
//! pump moves them to the connection's outbound queue as that has room, so
//! a client that stops reading first fills the outbound budget, then the
//! feed, and then the feed's [`WhenFull`] policy decides. The pump is the
//! task the subscription's handler runs on (`router::subscription` joins
//! the two), so a subscription costs one task.
//!
//! The wire format is the one Ethereum-style nodes and jsonrpsee use: an
//! item is `{"method": <notification>, "params": {"subscription": <id>,
//! "result": <item>}}`, and a subscription the server ends gets one last
//! notification with `error` in place of `result` (`null` when it simply
//! finished).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rustc_hash::FxHashMap;
use serde::Serialize;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::Shared;
use crate::id::Id;
use crate::message::ErrorObject;

/// What a full feed does with one more item.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::router::WhenFull;
///
/// assert_eq!(WhenFull::default(), WhenFull::Wait);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WhenFull {
    /// `send` waits until the client has read enough to make room: the
    /// handler goes at the client's pace. The default.
    #[default]
    Wait,
    /// The oldest item waiting is dropped to make room (and counted in
    /// [`SubscriptionSink::dropped`](crate::router::SubscriptionSink::dropped)):
    /// for feeds where only the latest value matters.
    DropOldest,
    /// The subscription ends: the items already waiting go out, then a last
    /// notification whose `error` says the client read too slowly.
    Close,
}

/// The connection's subscriptions, by id.
#[derive(Default)]
pub(crate) struct ServedTable {
    feeds: FxHashMap<Id, Arc<Feed>>,
    /// Subscriptions open or being opened: the per-connection cap counts
    /// these.
    seats: usize,
    next: u64,
}

/// A seat at the table was refused: the cap is reached.
pub(crate) struct Full;

impl ServedTable {
    /// Takes a seat for a subscription being opened, unless `cap` are taken.
    pub(crate) fn reserve(&mut self, cap: usize) -> Result<(), Full> {
        if self.seats >= cap {
            return Err(Full);
        }
        self.seats += 1;
        Ok(())
    }

    /// Gives back a seat taken by [`reserve`](Self::reserve).
    pub(crate) fn release(&mut self) {
        self.seats = self.seats.saturating_sub(1);
    }

    /// A fresh id for a subscription of this connection.
    pub(crate) fn next_id(&mut self) -> Id {
        self.next += 1;
        Id::from(self.next)
    }

    pub(crate) fn insert(&mut self, feed: Arc<Feed>) {
        self.feeds.insert(feed.id.clone(), feed);
    }

    /// Removes the subscription `id` if `unsubscribe` is its unsubscribe
    /// method, and stops its feed; true if it was open.
    pub(crate) fn unsubscribe(&mut self, id: &Id, unsubscribe: &str) -> bool {
        match self.feeds.get(id) {
            Some(feed) if &*feed.unsubscribe == unsubscribe => {
                let feed = self.feeds.remove(id).expect("just found");
                feed.stop();
                true
            }
            _ => false,
        }
    }

    /// Removes an ended feed, giving back its seat.
    fn remove(&mut self, feed: &Feed) {
        if self
            .feeds
            .get(&feed.id)
            .is_some_and(|f| std::ptr::eq(&**f, feed))
        {
            self.feeds.remove(&feed.id);
        }
        self.release();
    }
}

/// One subscription's queue of encoded items.
pub(crate) struct Feed {
    pub(crate) id: Id,
    pub(crate) notification: Arc<str>,
    pub(crate) unsubscribe: Arc<str>,
    capacity: usize,
    policy: WhenFull,
    state: Mutex<FeedState>,
    /// Woken when an item is queued or the feed ends (the pump waits).
    ready: Notify,
    /// Woken when the pump takes an item (senders under `Wait` wait).
    room: Notify,
    /// Fired when the subscription is over for the handler: unsubscribed,
    /// the connection gone, or ended.
    stopped: CancellationToken,
    /// Fired by [`stop`](Feed::stop) alone: the pump drops what is queued.
    halted: CancellationToken,
    dropped: AtomicU64,
}

#[derive(Default)]
struct FeedState {
    items: VecDeque<Bytes>,
    /// Set when the handler is done: the pump sends what is queued, then
    /// this frame (the closing notification), and stops.
    last: Option<Bytes>,
    finished: bool,
}

/// Why an item was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The feed is full (under `Wait`, for `try_send`).
    Full,
    /// The subscription is over.
    Stopped,
}

impl Feed {
    pub(crate) fn new(
        id: Id,
        notification: Arc<str>,
        unsubscribe: Arc<str>,
        capacity: usize,
        policy: WhenFull,
    ) -> Self {
        Feed {
            id,
            notification,
            unsubscribe,
            capacity: capacity.max(1),
            policy,
            state: Mutex::new(FeedState::default()),
            ready: Notify::new(),
            room: Notify::new(),
            stopped: CancellationToken::new(),
            halted: CancellationToken::new(),
            dropped: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The frame of one item.
    pub(crate) fn item_frame<T: Serialize + ?Sized>(
        &self,
        shared: &Shared,
        item: &T,
    ) -> Result<Bytes, serde_json::Error> {
        #[derive(Serialize)]
        struct Payload<'a, T: ?Sized> {
            subscription: &'a Id,
            result: &'a T,
        }
        let payload = Payload {
            subscription: &self.id,
            result: item,
        };
        shared.message_frame(None, &self.notification, &payload, &shared.config.extras)
    }

    /// The closing notification: `error` is `null` for a subscription that
    /// finished, else why it ended.
    fn closing_frame(&self, shared: &Shared, error: Option<&ErrorObject>) -> Option<Bytes> {
        #[derive(Serialize)]
        struct Payload<'a> {
            subscription: &'a Id,
            error: Option<&'a ErrorObject>,
        }
        let payload = Payload {
            subscription: &self.id,
            error,
        };
        shared
            .message_frame(None, &self.notification, &payload, &shared.config.extras)
            .ok()
    }

    /// Queues an item without waiting, as the policy says.
    pub(crate) fn try_push(&self, frame: Bytes, shared: &Shared) -> Result<(), Refused> {
        let mut state = self.lock();
        if state.finished || self.stopped.is_cancelled() {
            return Err(Refused::Stopped);
        }
        if state.items.len() >= self.capacity {
            match self.policy {
                WhenFull::Wait => return Err(Refused::Full),
                WhenFull::DropOldest => {
                    state.items.pop_front();
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                }
                WhenFull::Close => {
                    let error = ErrorObject::new(
                        crate::message::ErrorCode::SERVER_OVERLOADED,
                        format!(
                            "the subscription's buffer of {} items is full: the client reads too slowly",
                            self.capacity
                        ),
                    );
                    state.finished = true;
                    state.last = self.closing_frame(shared, Some(&error));
                    drop(state);
                    self.stopped.cancel();
                    self.ready.notify_one();
                    return Err(Refused::Stopped);
                }
            }
        }
        state.items.push_back(frame);
        drop(state);
        self.ready.notify_one();
        Ok(())
    }

    /// Queues an item, waiting for room under `Wait`.
    pub(crate) async fn push(&self, frame: Bytes, shared: &Shared) -> Result<(), Refused> {
        loop {
            let room = self.room.notified();
            match self.try_push(frame.clone(), shared) {
                Err(Refused::Full) => {}
                other => return other,
            }
            tokio::select! {
                _ = room => {}
                _ = self.stopped.cancelled() => return Err(Refused::Stopped),
            }
        }
    }

    /// The handler is done: what is queued goes out, then the closing
    /// notification (with `error`, if it failed).
    pub(crate) fn finish(&self, shared: &Shared, error: Option<&ErrorObject>) {
        let mut state = self.lock();
        if state.finished {
            return;
        }
        state.finished = true;
        state.last = self.closing_frame(shared, error);
        drop(state);
        self.ready.notify_one();
    }

    /// Stops the feed at once (unsubscribed, or the connection is gone):
    /// what is queued is dropped, no closing notification is sent.
    pub(crate) fn stop(&self) {
        {
            let mut state = self.lock();
            state.finished = true;
            state.items.clear();
            state.last = None;
        }
        self.halted.cancel();
        self.stopped.cancel();
        self.ready.notify_one();
        self.room.notify_waiters();
    }

    /// Waits until the subscription is over for the handler.
    pub(crate) async fn stopped(&self) {
        self.stopped.cancelled().await;
    }

    pub(crate) fn is_stopped(&self) -> bool {
        self.stopped.is_cancelled()
    }

    /// Items dropped by [`WhenFull::DropOldest`].
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The next frame to send: an item, or the closing notification (then
    /// `true`, the last), or nothing left.
    async fn next(&self) -> Option<(Bytes, bool)> {
        loop {
            let ready = self.ready.notified();
            {
                let mut state = self.lock();
                if let Some(frame) = state.items.pop_front() {
                    drop(state);
                    self.room.notify_one();
                    return Some((frame, false));
                }
                if state.finished {
                    return state.last.take().map(|frame| (frame, true));
                }
            }
            ready.await;
        }
    }

    /// Moves the feed's frames to the outbound queue as it has room, until
    /// the feed ends, is stopped, or the connection stops reading; then
    /// takes the subscription off the table.
    pub(crate) async fn pump(self: Arc<Self>, shared: Arc<Shared>) {
        let run = async {
            while let Some((frame, last)) = self.next().await {
                shared.room().await;
                if shared.send_now(frame).is_err() || last {
                    break;
                }
            }
        };
        tokio::select! {
            _ = run => {}
            _ = self.halted.cancelled() => {}
            _ = shared.read_done.cancelled() => {}
        }
        // The handler learns the subscription is over.
        self.stopped.cancel();
        self.room.notify_waiters();
        shared.served().remove(&self);
    }
}

impl Shared {
    /// The subscriptions this side serves.
    pub(crate) fn served(&self) -> std::sync::MutexGuard<'_, ServedTable> {
        self.served.lock().unwrap_or_else(|p| p.into_inner())
    }
}
