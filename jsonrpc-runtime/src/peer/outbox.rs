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

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::{mpsc, Notify};

/// Messages to the writer task.
#[derive(Debug)]
pub(crate) enum Outbound {
    Frame(Bytes),
    /// Write what is queued before this, then close the sink.
    Close,
}

/// The sending side of the writer's queue, with its byte count.
#[derive(Debug)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<Outbound>,
    queued: AtomicUsize,
    budget: usize,
    room: Notify,
}

/// The frame could not be queued: the writer is gone.
#[derive(Debug)]
pub(crate) struct WriterGone;

impl Outbox {
    pub(crate) fn new(budget: usize) -> (Self, mpsc::UnboundedReceiver<Outbound>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let outbox = Outbox {
            tx,
            queued: AtomicUsize::new(0),
            budget,
            room: Notify::new(),
        };
        (outbox, rx)
    }

    /// Queues one frame, whatever the budget says.
    pub(crate) fn push(&self, frame: Bytes) -> Result<(), WriterGone> {
        let len = frame.len();
        self.queued.fetch_add(len, Ordering::AcqRel);
        self.tx.send(Outbound::Frame(frame)).map_err(|_| {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            WriterGone
        })
    }

    /// Asks the writer to close once the frames queued so far are written.
    pub(crate) fn close(&self) {
        let _ = self.tx.send(Outbound::Close);
    }

    /// Whether the bytes queued are under the budget.
    pub(crate) fn has_room(&self) -> bool {
        self.queued.load(Ordering::Acquire) < self.budget
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
            if self.has_room() || self.tx.is_closed() {
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

    /// The writer stopped: wake everyone waiting for room.
    pub(crate) fn writer_gone(&self) {
        self.room.notify_waiters();
    }
}
