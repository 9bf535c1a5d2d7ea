//! The writer task: the only owner of the sink.

use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use futures_sink::Sink;
use futures_util::SinkExt as _;
use tokio::sync::mpsc;

use super::outbox::Outbound;
use super::{CloseReason, Shared};
use crate::transport::TransportError;

type BoxSink = Pin<Box<dyn Sink<Bytes, Error = TransportError> + Send>>;

/// Writes queued frames in order, flushing whenever the queue runs dry, until
/// told to close. A write failure ends the connection.
pub(crate) async fn run(
    mut sink: BoxSink,
    mut rx: mpsc::UnboundedReceiver<Outbound>,
    shared: Arc<Shared>,
) {
    let result = write_all(&mut sink, &mut rx, &shared).await;
    // Later sends fail fast instead of queueing into the void, and whoever
    // waits for room in the queue stops waiting.
    rx.close();
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

async fn write_all(
    sink: &mut BoxSink,
    rx: &mut mpsc::UnboundedReceiver<Outbound>,
    shared: &Shared,
) -> Result<(), TransportError> {
    while let Some(first) = rx.recv().await {
        let Outbound::Frame(frame) = first else {
            return sink.flush().await;
        };
        feed(sink, frame, shared).await?;
        // Everything already queued goes out with the same flush.
        loop {
            match rx.try_recv() {
                Ok(Outbound::Frame(frame)) => feed(sink, frame, shared).await?,
                Ok(Outbound::Close) => return sink.flush().await,
                Err(_) => break,
            }
        }
        sink.flush().await?;
    }
    sink.flush().await
}

/// Hands one frame to the sink and takes its bytes off the queue's count.
async fn feed(sink: &mut BoxSink, frame: Bytes, shared: &Shared) -> Result<(), TransportError> {
    let len = frame.len();
    let result = sink.feed(frame).await;
    shared.outbox.written(len);
    result
}
