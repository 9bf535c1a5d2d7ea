//! The in-memory transport pair.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_sink::Sink;
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;

use super::TransportError;
use crate::codec::Frame;

/// The sending half of an in-memory transport (see
/// [`Transport::pair`](crate::Transport::pair)).
#[derive(Debug)]
pub(crate) struct MemorySender {
    inner: PollSender<Bytes>,
}

/// The receiving half of an in-memory transport (see
/// [`Transport::pair`](crate::Transport::pair)).
#[derive(Debug)]
pub(crate) struct MemoryReceiver {
    inner: mpsc::Receiver<Bytes>,
}

pub(crate) fn channel(capacity: usize) -> (MemorySender, MemoryReceiver) {
    let (tx, rx) = mpsc::channel(capacity);
    (
        MemorySender {
            inner: PollSender::new(tx),
        },
        MemoryReceiver { inner: rx },
    )
}

impl Sink<Bytes> for MemorySender {
    type Error = TransportError;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.inner
            .poll_reserve(cx)
            .map_err(|_| TransportError::Closed)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Bytes) -> Result<(), TransportError> {
        self.inner
            .send_item(item)
            .map_err(|_| TransportError::Closed)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.inner.close();
        Poll::Ready(Ok(()))
    }
}

impl Stream for MemoryReceiver {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner
            .poll_recv(cx)
            .map(|item| item.map(|bytes| Ok(Frame::Message(bytes))))
    }
}
