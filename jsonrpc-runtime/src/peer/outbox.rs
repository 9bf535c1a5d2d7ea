//! The queue of outbound frames, bounded in bytes.
//!
//! Every frame the peer writes (answers, calls, notifications, progress,
//! cancellations) goes through one queue to the writer task. The queue
//! counts the bytes it holds against the connection's outbound budget
//! ([`Config::outbound_budget`](crate::Config::outbound_budget)). Senders
//! that can wait do so while the budget is spent ([`Outbox::room`]): the
//! reader before it takes the next inbound frame, request tasks before they
//! queue their answer, `call` and `notify`. So when the other side stops
//! reading, this side stops reading too, and the other side's writes stall in
//! the transport instead of growing this side's memory.
//!
//! A few frames are queued without waiting: the refusals the reader writes
//! for the frame it holds, and cancellations sent from `Drop`. Each is small
//! and tied to one frame read or one call made, so they cannot grow without
//! bound either.
//!
//! The queue is a deque behind a mutex that the writer empties in one swap
//! per wake-up: one lock per frame queued and one per burst written, and a
//! wake-up only when the writer is idle (a channel costs several times that
//! per frame, which showed in the profiles).

use std::collections::VecDeque;
use std::mem;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::Poll;

use bytes::Bytes;
use futures_util::task::AtomicWaker;
use tokio::sync::Notify;

/// Messages to the writer task.
#[derive(Debug)]
pub(crate) enum Outbound {
    Frame(Bytes),
    /// Write what is queued before this, then close the sink.
    Close,
}

/// The writer's queue, with its byte count.
#[derive(Debug)]
pub(crate) struct Outbox {
    state: Mutex<State>,
    /// Wakes the writer when it waits for frames (one waiter, so a waker
    /// slot rather than a [`Notify`] and its list of waiters).
    writer: AtomicWaker,
    queued: AtomicUsize,
    budget: usize,
    room: Notify,
}

#[derive(Debug, Default)]
struct State {
    frames: VecDeque<Outbound>,
    /// The writer is waiting for frames: the next push wakes it.
    writer_waiting: bool,
    /// The writer is gone: pushes fail.
    closed: bool,
}

/// The frame could not be queued: the writer is gone.
#[derive(Debug)]
pub(crate) struct WriterGone;

impl Outbox {
    pub(crate) fn new(budget: usize) -> Self {
        Outbox {
            state: Mutex::new(State::default()),
            writer: AtomicWaker::new(),
            queued: AtomicUsize::new(0),
            budget,
            room: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Every operation under the lock is one push or one swap.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enqueue(&self, item: Outbound) -> Result<(), WriterGone> {
        let wake = {
            let mut state = self.lock();
            if state.closed {
                return Err(WriterGone);
            }
            state.frames.push_back(item);
            mem::take(&mut state.writer_waiting)
        };
        if wake {
            self.writer.wake();
        }
        Ok(())
    }

    /// Queues one frame, whatever the budget says.
    pub(crate) fn push(&self, frame: Bytes) -> Result<(), WriterGone> {
        let len = frame.len();
        self.queued.fetch_add(len, Ordering::AcqRel);
        self.enqueue(Outbound::Frame(frame)).inspect_err(|_| {
            self.queued.fetch_sub(len, Ordering::AcqRel);
        })
    }

    /// Asks the writer to close once the frames queued so far are written.
    pub(crate) fn close(&self) {
        let _ = self.enqueue(Outbound::Close);
    }

    /// Takes every queued frame into `out` (empty), waiting while there is
    /// none; false once the writer should stop (the queue was closed).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: frames are only taken when it returns.
    pub(crate) async fn take_all(&self, out: &mut VecDeque<Outbound>) -> bool {
        std::future::poll_fn(|cx| {
            // Registered before the look, so a push after it wakes this poll.
            self.writer.register(cx.waker());
            let mut state = self.lock();
            if !state.frames.is_empty() {
                mem::swap(&mut state.frames, out);
                state.writer_waiting = false;
                return Poll::Ready(true);
            }
            if state.closed {
                return Poll::Ready(false);
            }
            state.writer_waiting = true;
            Poll::Pending
        })
        .await
    }

    /// Whether the bytes queued are under the budget.
    pub(crate) fn has_room(&self) -> bool {
        self.queued.load(Ordering::Acquire) < self.budget
    }

    /// Adds every queued frame to `out`, without waiting.
    pub(crate) fn take_more(&self, out: &mut VecDeque<Outbound>) {
        out.append(&mut self.lock().frames);
    }

    fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Waits until the bytes queued are under the budget, or the writer is
    /// gone (a push then fails at once).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub(crate) async fn room(&self) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.has_room() || self.is_closed() {
                return;
            }
            notified.await;
        }
    }

    /// The writer took `len` bytes off the queue.
    pub(crate) fn written(&self, len: usize) {
        let before = self.queued.fetch_sub(len, Ordering::AcqRel);
        if before >= self.budget && before - len < self.budget {
            self.room.notify_waiters();
        }
    }

    /// The writer stopped: later pushes fail, and whoever waits for room
    /// stops waiting.
    pub(crate) fn writer_gone(&self) {
        let dropped = {
            let mut state = self.lock();
            state.closed = true;
            mem::take(&mut state.frames)
        };
        drop(dropped);
        self.room.notify_waiters();
    }
}
