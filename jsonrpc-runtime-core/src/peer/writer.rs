//! The writer: the transport's sink, written by the writer task, or by the
//! reader's task at the end of a burst while the writer is idle.
//!
//! The sink lives in a [`SinkSlot`] behind a mutex that is only ever held
//! within one poll. The writer task waits for frames, takes them off the
//! queue and writes them. The reader, when a burst of frames it read has
//! been answered and the writer is asleep, writes the answers itself
//! ([`flush_inline`]): for a request answered at once, that is one task
//! wake-up less per request. Whatever it cannot finish without waiting (the
//! transport is busy, a close is next, the write failed) it hands to the
//! writer task, which writes in queue order from where it stopped.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use futures_sink::Sink;

use super::outbox::{Outbound, Take};
use super::{CloseReason, Shared};
use crate::transport::TransportError;

pub(crate) type BoxSink = Pin<Box<dyn Sink<Bytes, Error = TransportError> + Send>>;

/// The sink and the frames taken off the queue and not yet fed to it.
#[derive(Default)]
pub(crate) struct SinkSlot(Mutex<SinkState>);

#[derive(Default)]
struct SinkState {
    /// `None` before the writer starts and after it ends.
    sink: Option<BoxSink>,
    burst: VecDeque<Outbound>,
    /// Frames were fed since the last flush.
    unflushed: bool,
    /// A write on the reader's task failed; the writer task reports it.
    failed: Option<TransportError>,
}

impl std::fmt::Debug for SinkSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SinkSlot").finish_non_exhaustive()
    }
}

/// How far a write of the burst got.
enum Wrote {
    /// Every frame of the burst is written and flushed.
    Burst,
    /// A close is next; the reader leaves it to the writer task.
    CloseNext,
    /// The close was reached: everything before it is flushed.
    Closed,
}

impl SinkSlot {
    pub(crate) fn new(sink: BoxSink) -> Self {
        SinkSlot(Mutex::new(SinkState {
            sink: Some(sink),
            ..SinkState::default()
        }))
    }

    fn lock(&self) -> MutexGuard<'_, SinkState> {
        // Held within one poll; nothing under it can panic half-way.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn try_lock(&self) -> Option<MutexGuard<'_, SinkState>> {
        match self.0.try_lock() {
            Ok(state) => Some(state),
            Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

impl SinkState {
    /// Feeds the burst to the sink in order, then flushes.
    fn poll_burst(
        &mut self,
        cx: &mut Context<'_>,
        shared: &Shared,
        may_close: bool,
    ) -> Poll<Result<Wrote, TransportError>> {
        if let Some(e) = self.failed.take() {
            return Poll::Ready(Err(e));
        }
        let Some(sink) = self.sink.as_mut() else {
            // The writer is gone; so is what it would have written.
            self.burst.clear();
            return Poll::Ready(Ok(Wrote::Closed));
        };
        while let Some(item) = self.burst.front() {
            match item {
                Outbound::Frame(_) => {
                    ready!(sink.as_mut().poll_ready(cx))?;
                    let Some(Outbound::Frame(frame)) = self.burst.pop_front() else {
                        unreachable!("the front was a frame");
                    };
                    let len = super::outbox::counted(&frame);
                    crate::trace::frame_out(shared.connection, &frame);
                    let fed = sink.as_mut().start_send(frame);
                    shared.outbox.written(len);
                    fed?;
                    self.unflushed = true;
                }
                Outbound::Close if !may_close => return Poll::Ready(Ok(Wrote::CloseNext)),
                Outbound::Close => {
                    ready!(sink.as_mut().poll_flush(cx))?;
                    self.unflushed = false;
                    self.burst.clear();
                    return Poll::Ready(Ok(Wrote::Closed));
                }
            }
        }
        if self.unflushed {
            ready!(sink.as_mut().poll_flush(cx))?;
            self.unflushed = false;
        }
        Poll::Ready(Ok(Wrote::Burst))
    }
}

/// The end of the reader's burst: writes what it queued on the reader's own
/// task when the writer is idle, or else makes sure the writer is awake.
pub(crate) fn flush_inline(shared: &Shared, cx: &mut Context<'_>) {
    let outbox = &shared.outbox;
    if outbox.unhold() {
        // Nothing to write (a notification, say).
        return;
    }
    let Some(mut state) = shared.sink.try_lock() else {
        // The writer is writing: it takes the rest when it is done.
        return outbox.release();
    };
    let state = &mut *state;
    outbox.hold();
    while outbox.claim(&mut state.burst) {
        match state.poll_burst(cx, shared, false) {
            Poll::Ready(Ok(Wrote::Burst)) => {
                if outbox.unhold() {
                    return;
                }
                // More came meanwhile (from another thread): claim again.
                outbox.hold();
            }
            Poll::Ready(Ok(Wrote::Closed)) => return outbox.release(),
            Poll::Ready(Ok(Wrote::CloseNext)) | Poll::Pending => return outbox.hand_off(),
            Poll::Ready(Err(e)) => {
                state.failed = Some(e);
                return outbox.hand_off();
            }
        }
    }
}

/// Writes queued frames in order, flushing whenever the queue runs dry, until
/// told to close. A write failure ends the connection.
pub(crate) async fn run(shared: Arc<Shared>) {
    // The sink goes when the writer does, aborted or not: that is when the
    // other side sees the end of the stream.
    struct DropSink<'a>(&'a SinkSlot);
    impl Drop for DropSink<'_> {
        fn drop(&mut self) {
            let sink = self.0.lock().sink.take();
            drop(sink);
        }
    }
    let _drop_sink = DropSink(&shared.sink);

    let result = write_all(&shared).await;
    // Later sends fail fast instead of queueing into the void, and whoever
    // waits for room in the queue stops waiting.
    shared.outbox.writer_gone();
    match result {
        Ok(()) => {
            let _ = std::future::poll_fn(|cx| match shared.sink.lock().sink.as_mut() {
                Some(sink) => sink.as_mut().poll_close(cx),
                None => Poll::Ready(Ok(())),
            })
            .await;
        }
        Err(e) => {
            tracing::debug!(error = %e, "writing to the transport failed; closing the connection");
            shared.set_reason(CloseReason::Transport(Arc::new(e)));
            shared.request_close(std::time::Duration::ZERO);
        }
    }
}

async fn write_all(shared: &Shared) -> Result<(), TransportError> {
    // On a multi-thread runtime the writer wakes on another worker as soon
    // as the first frame is queued, and would write (one system call) per
    // frame; letting the other tasks run once first gathers a burst.
    let gather = crate::rt::runs_on_many_threads();
    let mut gathering = false;
    // Everything queued by the time the writer wakes goes out with one flush.
    std::future::poll_fn(|cx| {
        let mut state = shared.sink.lock();
        loop {
            if gathering {
                gathering = false;
                shared.outbox.take_more(&mut state.burst);
            } else if state.burst.is_empty() && !state.unflushed && state.failed.is_none() {
                match shared.outbox.take_or_wait(cx, &mut state.burst) {
                    Take::Wait => return Poll::Pending,
                    Take::Closed => return Poll::Ready(Ok(())),
                    Take::Frames if gather => {
                        // A yield: back in the run queue, behind the others.
                        gathering = true;
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                    Take::Frames => {}
                }
            }
            if let Wrote::Closed = ready!(state.poll_burst(cx, shared, true))? {
                return Poll::Ready(Ok(()));
            }
        }
    })
    .await
}
