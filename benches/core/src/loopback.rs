//! An in-process transport with as little in it as possible: two unbounded
//! tokio channels of `Bytes`, wrapped as the `Stream` and `Sink` a
//! [`Transport`] is made of. The benchmark holds the other end and plays the
//! client with raw frames, so what is measured is the peer's own work plus
//! two channel hops and the task switches they cause.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_util::{Sink, Stream};
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::transport::TransportError;
use jsonrpc_runtime::Transport;
use tokio::sync::mpsc;

/// The inbound half: frames the benchmark sends to the peer.
#[derive(Debug)]
pub struct Inbound(mpsc::UnboundedReceiver<Bytes>);

impl Stream for Inbound {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0
            .poll_recv(cx)
            .map(|item| item.map(|bytes| Ok(Frame::Message(bytes))))
    }
}

/// The outbound half: what the peer writes, handed to the benchmark.
#[derive(Debug)]
pub struct Outbound(mpsc::UnboundedSender<Bytes>);

impl Sink<Bytes> for Outbound {
    type Error = TransportError;

    fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, item: Bytes) -> Result<(), Self::Error> {
        self.0.send(item).map_err(|_| TransportError::Closed)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

/// The benchmark's end: send frames in, receive what the peer wrote.
#[derive(Debug)]
pub struct Client {
    pub tx: mpsc::UnboundedSender<Bytes>,
    pub rx: mpsc::UnboundedReceiver<Bytes>,
}

impl Client {
    /// Sends one frame and waits for the peer's next outbound frame.
    pub async fn request(&mut self, frame: Bytes) -> Bytes {
        self.tx.send(frame).expect("the peer is running");
        self.rx.recv().await.expect("the peer answers")
    }
}

/// A transport for a peer, and the benchmark's end of it.
pub fn pair() -> (Transport, Client) {
    let (in_tx, in_rx) = mpsc::unbounded_channel();
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    (
        Transport::new(Inbound(in_rx), Outbound(out_tx)),
        Client {
            tx: in_tx,
            rx: out_rx,
        },
    )
}

/// The channel halves alone, for a transport whose inbound side is
/// something else (a framer over a reader).
pub fn outbound() -> (Outbound, mpsc::UnboundedReceiver<Bytes>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Outbound(tx), rx)
}
