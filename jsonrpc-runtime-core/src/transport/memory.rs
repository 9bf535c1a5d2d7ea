//! The in-memory transport pair.
//!
//! Each direction is a tokio unbounded channel with a frame count beside it:
//! the sender waits while `capacity` frames are queued and the receiver
//! wakes it when it takes one from a full queue. A bounded tokio channel
//! would do the same with a semaphore, which takes a lock on every receive
//! to hand its permit back (~90 instructions a frame); the counter is one
//! atomic subtraction.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_sink::Sink;
use futures_util::task::AtomicWaker;
use tokio::sync::mpsc;

use super::TransportError;
use crate::codec::Frame;

/// What the two ends of one direction share besides the channel.
#[derive(Debug)]
struct Room {
    /// Frames sent and not yet received.
    queued: AtomicUsize,
    capacity: usize,
    /// The sender, waiting for room.
    sender: AtomicWaker,
    /// The receiver is gone: sending fails from now on.
    receiver_gone: AtomicBool,
}

impl Room {
    fn has_room(&self) -> bool {
        self.queued.load(Ordering::Acquire) < self.capacity
    }
}

/// The sending half of an in-memory transport (see
/// [`Transport::pair`](crate::Transport::pair)).
#[derive(Debug)]
pub(crate) struct MemorySender {
    /// `None` once closed.
    tx: Option<mpsc::UnboundedSender<Bytes>>,
    room: Arc<Room>,
}

/// The receiving half of an in-memory transport (see
/// [`Transport::pair`](crate::Transport::pair)).
#[derive(Debug)]
pub(crate) struct MemoryReceiver {
    rx: mpsc::UnboundedReceiver<Bytes>,
    room: Arc<Room>,
}

/// One direction holding at most `capacity` frames.
///
/// # Panics
///
/// Panics if `capacity` is zero.
pub(crate) fn channel(capacity: usize) -> (MemorySender, MemoryReceiver) {
    assert!(
        capacity > 0,
        "an in-memory transport needs room for a frame"
    );
    let (tx, rx) = mpsc::unbounded_channel();
    let room = Arc::new(Room {
        queued: AtomicUsize::new(0),
        capacity,
        sender: AtomicWaker::new(),
        receiver_gone: AtomicBool::new(false),
    });
    (
        MemorySender {
            tx: Some(tx),
            room: room.clone(),
        },
        MemoryReceiver { rx, room },
    )
}

impl Sink<Bytes> for MemorySender {
    type Error = TransportError;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        let room = &self.room;
        if self.tx.is_none() || room.receiver_gone.load(Ordering::Acquire) {
            return Poll::Ready(Err(TransportError::Closed));
        }
        if room.has_room() {
            return Poll::Ready(Ok(()));
        }
        room.sender.register(cx.waker());
        // The receiver may have taken a frame, or gone, before the waker
        // was in place.
        if room.receiver_gone.load(Ordering::Acquire) {
            Poll::Ready(Err(TransportError::Closed))
        } else if room.has_room() {
            Poll::Ready(Ok(()))
        } else {
            Poll::Pending
        }
    }

    fn start_send(self: Pin<&mut Self>, item: Bytes) -> Result<(), TransportError> {
        let tx = self.tx.as_ref().ok_or(TransportError::Closed)?;
        // A send `poll_ready` did not make room for is refused, as the
        // bounded channel this replaces refused it: the queue stays bounded.
        if !self.room.has_room() {
            return Err(TransportError::Closed);
        }
        self.room.queued.fetch_add(1, Ordering::AcqRel);
        tx.send(item).map_err(|_| TransportError::Closed)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        // The receiver reads what was queued, then the end.
        self.tx = None;
        Poll::Ready(Ok(()))
    }
}

impl Stream for MemoryReceiver {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        this.rx.poll_recv(cx).map(|item| {
            item.map(|bytes| {
                let room = &this.room;
                if room.queued.fetch_sub(1, Ordering::AcqRel) >= room.capacity {
                    room.sender.wake();
                }
                Ok(Frame::Message(bytes))
            })
        })
    }
}

impl Drop for MemoryReceiver {
    fn drop(&mut self) {
        self.room.receiver_gone.store(true, Ordering::Release);
        self.room.sender.wake();
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;

    use super::*;

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll_ready(tx: &mut MemorySender, waker: &Arc<Count>) -> Poll<Result<(), TransportError>> {
        let waker = waker.clone().into();
        Pin::new(tx).poll_ready(&mut Context::from_waker(&waker))
    }

    fn send(tx: &mut MemorySender, n: u8) {
        let count = Arc::new(Count::default());
        assert!(matches!(poll_ready(tx, &count), Poll::Ready(Ok(()))));
        Pin::new(tx).start_send(Bytes::from(vec![n])).unwrap();
    }

    async fn recv(rx: &mut MemoryReceiver) -> Option<Bytes> {
        match poll_fn(|cx| Pin::new(&mut *rx).poll_next(cx)).await? {
            Ok(Frame::Message(bytes)) => Some(bytes),
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn the_sender_waits_while_the_queue_is_full_and_is_woken_by_a_receive() {
        let (mut tx, mut rx) = channel(2);
        send(&mut tx, 1);
        send(&mut tx, 2);
        let count = Arc::new(Count::default());
        assert!(poll_ready(&mut tx, &count).is_pending());
        assert_eq!(recv(&mut rx).await.unwrap()[..], [1]);
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "one receive from a full queue wakes"
        );
        send(&mut tx, 3);
        assert!(poll_ready(&mut tx, &count).is_pending());
        assert_eq!(recv(&mut rx).await.unwrap()[..], [2]);
        assert_eq!(recv(&mut rx).await.unwrap()[..], [3]);
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        // Receiving from a queue with room wakes nobody.
        send(&mut tx, 4);
        assert_eq!(recv(&mut rx).await.unwrap()[..], [4]);
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_send_without_room_is_refused() {
        let (mut tx, _rx) = channel(1);
        send(&mut tx, 1);
        assert!(Pin::new(&mut tx).start_send(Bytes::new()).is_err());
    }

    /// Two tasks on two workers, a queue of one: every frame arrives, in
    /// order, and the queue never holds more than one.
    #[test]
    fn frames_cross_threads_in_order_through_a_queue_of_one() {
        use futures_util::{SinkExt as _, StreamExt as _};
        const FRAMES: u32 = 20_000;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (mut tx, mut rx) = channel(1);
        let room = tx.room.clone();
        runtime.block_on(async move {
            let sender = crate::rt::spawn(async move {
                for n in 0..FRAMES {
                    tx.send(Bytes::copy_from_slice(&n.to_le_bytes()))
                        .await
                        .unwrap();
                }
            });
            let receiver = crate::rt::spawn(async move {
                for n in 0..FRAMES {
                    assert!(room.queued.load(Ordering::SeqCst) <= 1);
                    let Some(Ok(Frame::Message(bytes))) = rx.next().await else {
                        panic!("frame {n} did not arrive");
                    };
                    assert_eq!(bytes[..], n.to_le_bytes());
                }
                assert!(rx.next().await.is_none(), "the sender dropped: the end");
            });
            let deadline = std::time::Duration::from_secs(60);
            crate::rt::timeout(deadline, sender).await.unwrap().unwrap();
            crate::rt::timeout(deadline, receiver)
                .await
                .unwrap()
                .unwrap();
        });
    }

    #[tokio::test]
    async fn a_closed_sender_lets_the_receiver_read_what_was_queued_then_the_end() {
        let (mut tx, mut rx) = channel(4);
        send(&mut tx, 1);
        send(&mut tx, 2);
        poll_fn(|cx| Pin::new(&mut tx).poll_close(cx))
            .await
            .unwrap();
        assert_eq!(recv(&mut rx).await.unwrap()[..], [1]);
        assert_eq!(recv(&mut rx).await.unwrap()[..], [2]);
        assert!(recv(&mut rx).await.is_none());
        let count = Arc::new(Count::default());
        assert!(matches!(
            poll_ready(&mut tx, &count),
            Poll::Ready(Err(TransportError::Closed))
        ));
    }

    #[test]
    fn a_dropped_receiver_fails_the_next_send_even_with_room() {
        let (mut tx, rx) = channel(4);
        send(&mut tx, 1);
        drop(rx);
        let count = Arc::new(Count::default());
        assert!(matches!(
            poll_ready(&mut tx, &count),
            Poll::Ready(Err(TransportError::Closed))
        ));
    }

    #[tokio::test]
    async fn a_dropped_receiver_wakes_a_waiting_sender_with_an_error() {
        let (mut tx, rx) = channel(1);
        send(&mut tx, 1);
        let count = Arc::new(Count::default());
        assert!(poll_ready(&mut tx, &count).is_pending());
        drop(rx);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert!(matches!(
            poll_ready(&mut tx, &count),
            Poll::Ready(Err(TransportError::Closed))
        ));
        assert!(Pin::new(&mut tx).start_send(Bytes::new()).is_err());
    }
}
