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
//!
//! While the reader works through a burst of frames it *holds* the queue
//! ([`Outbox::hold`]): frames queued meanwhile do not wake an idle writer.
//! When the burst ends, the reader writes them itself if the writer is still
//! idle ([`Outbox::claim`], then `writer::flush_inline`), which saves the
//! writer task a wake-up per burst, or wakes the writer
//! ([`Outbox::release`]) before anything it does can wait. A call that is
//! the only one waiting is written the same way by its caller
//! (`Shared::send_inline`).

use std::collections::VecDeque;
use std::mem;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::task::Context;

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
    /// The reader is in a burst, or a caller is writing its call
    /// (`Shared::send_inline`): pushes leave an idle writer asleep. A flag,
    /// not a count: a hold ended by the other holder costs the writer a
    /// wake-up at worst, and an unmatched hold cannot outlive the next end.
    reader_holds: AtomicBool,
    queued: AtomicUsize,
    budget: usize,
    room: Notify,
}

#[derive(Debug, Default)]
struct State {
    frames: VecDeque<Outbound>,
    /// The writer is waiting for frames: the next push wakes it (unless
    /// the reader holds the queue).
    writer_waiting: bool,
    /// The reader started writing and left the rest to the writer (the
    /// frames it took, or a failure, wait in the writer's state).
    handed_off: bool,
    /// The writer is gone: pushes fail.
    closed: bool,
}

/// The bytes a frame counts for in the budget; an empty frame counts for
/// one, so that nothing queued ever looks like an empty queue.
pub(crate) fn counted(frame: &Bytes) -> usize {
    frame.len().max(1)
}

/// Moves `frames` to the end of `out`: a swap when `out` is empty, as it
/// nearly always is, so the two deques trade buffers instead of copying.
fn take_into(frames: &mut VecDeque<Outbound>, out: &mut VecDeque<Outbound>) {
    if out.is_empty() {
        mem::swap(frames, out);
    } else {
        out.append(frames);
    }
}

/// What [`Outbox::take_or_wait`] found.
#[derive(Debug)]
pub(crate) enum Take {
    /// Frames to write.
    Frames,
    /// Nothing yet: the writer is registered for the next push.
    Wait,
    /// The queue is closed: the writer stops.
    Closed,
}

/// The frame could not be queued: the writer is gone.
#[derive(Debug)]
pub(crate) struct WriterGone;

impl Outbox {
    pub(crate) fn new(budget: usize) -> Self {
        Outbox {
            state: Mutex::new(State::default()),
            writer: AtomicWaker::new(),
            reader_holds: AtomicBool::new(false),
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
            // A close always wakes the writer: it is not counted in
            // `queued`, so the reader's quick look at the end of a burst
            // would not see it.
            let close = matches!(item, Outbound::Close);
            state.frames.push_back(item);
            // Sequentially consistent with the reader's `unhold`: either it
            // sees this frame's bytes, or this sees the hold ended.
            let wake = state.writer_waiting && (close || !self.reader_holds.load(Ordering::SeqCst));
            if wake {
                state.writer_waiting = false;
            }
            wake
        };
        if wake {
            self.writer.wake();
        }
        Ok(())
    }

    /// Queues one frame, whatever the budget says.
    pub(crate) fn push(&self, frame: Bytes) -> Result<(), WriterGone> {
        let len = counted(&frame);
        self.queued.fetch_add(len, Ordering::SeqCst);
        self.enqueue(Outbound::Frame(frame)).inspect_err(|_| {
            self.queued.fetch_sub(len, Ordering::AcqRel);
        })
    }

    /// Asks the writer to close once the frames queued so far are written.
    pub(crate) fn close(&self) {
        let _ = self.enqueue(Outbound::Close);
    }

    /// Takes every queued frame into `out`, or registers the writer to be
    /// woken by the next push. Work the reader handed off counts as frames
    /// (they are in the writer's state already).
    pub(crate) fn take_or_wait(&self, cx: &mut Context<'_>, out: &mut VecDeque<Outbound>) -> Take {
        // Registered before the look, so a push after it wakes the writer.
        self.writer.register(cx.waker());
        let mut state = self.lock();
        if !state.frames.is_empty() || state.handed_off {
            take_into(&mut state.frames, out);
            state.writer_waiting = false;
            state.handed_off = false;
            return Take::Frames;
        }
        if state.closed {
            return Take::Closed;
        }
        state.writer_waiting = true;
        Take::Wait
    }

    /// The reader starts a burst (or a caller its own write): frames queued
    /// from now on leave an idle writer asleep, until the holder writes them
    /// ([`claim`](Self::claim)) or lets go ([`release`](Self::release)).
    pub(crate) fn hold(&self) {
        // A hold seen late only costs the writer a wake-up.
        self.reader_holds.store(true, Ordering::Relaxed);
    }

    /// Whether the queue is held (a reader in its burst, or a caller
    /// writing its call).
    pub(crate) fn held(&self) -> bool {
        self.reader_holds.load(Ordering::Relaxed)
    }

    /// Ends the reader's hold if nothing is queued or being written: true
    /// then, with no lock taken (a burst with nothing to answer, or one
    /// whose answers the reader has written).
    pub(crate) fn unhold(&self) -> bool {
        self.reader_holds.store(false, Ordering::SeqCst);
        self.queued.load(Ordering::SeqCst) == 0
    }

    /// Ends the reader's hold, waking the writer if frames wait for it.
    pub(crate) fn release(&self) {
        if self.unhold() {
            return;
        }
        let wake = {
            let mut state = self.lock();
            !state.frames.is_empty() && mem::take(&mut state.writer_waiting)
        };
        if wake {
            self.writer.wake();
        }
    }

    /// When the writer is idle with frames waiting, takes them into `out`
    /// for the reader to write, still holding the queue (true); the reader
    /// then writes them and calls [`unhold`](Self::unhold), or
    /// [`hand_off`](Self::hand_off) if it cannot finish. Otherwise ends the
    /// hold (false): the writer, awake, takes the frames itself.
    pub(crate) fn claim(&self, out: &mut VecDeque<Outbound>) -> bool {
        let mut state = self.lock();
        if state.frames.is_empty() || !state.writer_waiting {
            self.reader_holds.store(false, Ordering::SeqCst);
            return false;
        }
        take_into(&mut state.frames, out);
        true
    }

    /// The reader could not finish what it claimed (the transport is busy,
    /// a close is next, or the write failed): the writer takes over.
    pub(crate) fn hand_off(&self) {
        self.reader_holds.store(false, Ordering::SeqCst);
        {
            let mut state = self.lock();
            state.handed_off = true;
            state.writer_waiting = false;
        }
        self.writer.wake();
    }

    /// Whether the bytes queued are under the budget.
    pub(crate) fn has_room(&self) -> bool {
        self.queued.load(Ordering::Acquire) < self.budget
    }

    /// Adds every queued frame to `out`, without waiting.
    pub(crate) fn take_more(&self, out: &mut VecDeque<Outbound>) {
        take_into(&mut self.lock().frames, out);
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
