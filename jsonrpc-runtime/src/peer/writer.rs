//! The writer task: the only owner of the sink.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_sink::Sink;
use futures_util::SinkExt as _;

use super::outbox::Outbound;
use super::{CloseReason, Shared};
use crate::transport::TransportError;

type BoxSink = Pin<Box<dyn Sink<Bytes, Error = TransportError> + Send>>;

/// Writes queued frames in order, flushing whenever the queue runs dry, until
/// told to close. A write failure ends the connection.
pub(crate) async fn run(mut sink: BoxSink, shared: Arc<Shared>) {
    let result = write_all(&mut sink, &shared).await;
    // Later sends fail fast instead of queueing into the void, and whoever
    // waits for room in the queue stops waiting.
    shared.outbox.writer_gone();
    match result {
        Ok(()) => {
            let _ = sink.close().await;
        }
        Err(e) => {
            tracing::debug!(error = %e, "writing to the transport failed; closing the connection");
            shared.set_reason(CloseReason::Transport(Arc::new(e)));
            shared.request_close(std::time::Duration::ZERO);
        }
    }
}

async fn write_all(sink: &mut BoxSink, shared: &Shared) -> Result<(), TransportError> {
    // On a multi-thread runtime the writer wakes on another worker as soon
    // as the first frame is queued, and would write (one system call) per
    // frame; letting the other tasks run once first gathers a burst.
    let gather = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread);
    let mut burst = VecDeque::new();
    // Everything queued by the time the writer wakes goes out with one flush.
    while shared.outbox.take_all(&mut burst).await {
        if gather {
            tokio::task::yield_now().await;
            shared.outbox.take_more(&mut burst);
        }
        while let Some(item) = burst.pop_front() {
            let Outbound::Frame(frame) = item else {
                return sink.flush().await;
            };
            let len = frame.len();
            crate::trace::frame_out(shared.connection, &frame);
            let fed = sink.feed(frame).await;
            shared.outbox.written(len);
            fed?;
        }
        sink.flush().await?;
    }
    sink.flush().await
}
