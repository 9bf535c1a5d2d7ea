//! The outbound half of a byte-stream transport: frames gathered into one
//! small buffer and written in few writes, except large ones, which are
//! written from their own allocation instead of being copied.

use std::any::Any;
use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Buf as _, Bytes, BytesMut};
use futures_sink::Sink;
use memchr::memchr;
use tokio::io::AsyncWrite;
use tokio_util::codec::Encoder;

use super::{INITIAL_BUFFER, WRITE_GATHER};
use crate::codec::{ContentLengthCodec, FramingCodec, FramingError, LineCodec};

/// Frames this long or longer are written from their own allocation (when
/// the framer allows it) rather than copied into the buffer.
pub(crate) const LARGE_FRAME: usize = 64 * 1024;

/// A buffer that grew past this is let go once it has been written out, so
/// a connection does not keep the memory of its largest burst.
pub(crate) const RETAINED_BUFFER: usize = 64 * 1024;

/// Writes the framing around a message that goes out as it is: the head
/// into the buffer, and returns the tail; `None` when the framer has to
/// change the message (a newline inside a newline-delimited frame).
type Direct = fn(&[u8], &mut BytesMut) -> Option<&'static [u8]>;

/// A sink of outbound messages over `W`, framed by `C`. Public (hidden)
/// for `jsonrpc-runtime`'s child-process transport.
#[allow(missing_debug_implementations)]
pub struct FrameWriter<W, C> {
    io: Pin<Box<W>>,
    /// Boxed, so the writer is `Unpin` whatever the framer.
    codec: Box<C>,
    buf: BytesMut,
    /// A large frame being written from its own allocation, after what the
    /// buffer holds (its head) and before `tail`.
    large: Option<Bytes>,
    tail: &'static [u8],
    direct: Option<Direct>,
}

impl<W, C: 'static> FrameWriter<W, C> {
    pub fn new(io: W, codec: C) -> Self {
        FrameWriter {
            io: Box::pin(io),
            direct: direct_for(&codec),
            codec: Box::new(codec),
            buf: BytesMut::with_capacity(INITIAL_BUFFER),
            large: None,
            tail: b"",
        }
    }
}

/// The framers of this crate know how to frame a message without copying
/// it; another framer always encodes into the buffer.
fn direct_for<C: 'static>(codec: &C) -> Option<Direct> {
    let codec: &dyn Any = codec;
    if let Some(framing) = codec.downcast_ref::<FramingCodec>() {
        return Some(match framing {
            FramingCodec::Lines(_) => line_direct,
            FramingCodec::ContentLength(_) => content_length_direct,
        });
    }
    if codec.is::<LineCodec>() {
        return Some(line_direct);
    }
    codec
        .is::<ContentLengthCodec>()
        .then_some(content_length_direct as Direct)
}

fn line_direct(message: &[u8], _head: &mut BytesMut) -> Option<&'static [u8]> {
    // A raw newline must become a space: that frame is copied.
    memchr(b'\n', message).is_none().then_some(b"\n")
}

fn content_length_direct(message: &[u8], head: &mut BytesMut) -> Option<&'static [u8]> {
    crate::codec::write_content_length_header(message.len(), head);
    Some(b"")
}

impl<W, C> FrameWriter<W, C>
where
    W: AsyncWrite,
{
    /// Writes out the buffer, then the large frame and its tail, if any.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), FramingError>> {
        loop {
            if !self.buf.is_empty() {
                let n = ready!(self.io.as_mut().poll_write(cx, &self.buf))?;
                if n == 0 {
                    return Poll::Ready(Err(write_zero()));
                }
                self.buf.advance(n);
                continue;
            }
            let Some(large) = &mut self.large else {
                break;
            };
            if large.is_empty() {
                self.large = None;
                self.buf.extend_from_slice(std::mem::take(&mut self.tail));
                continue;
            }
            let n = ready!(self.io.as_mut().poll_write(cx, large))?;
            if n == 0 {
                return Poll::Ready(Err(write_zero()));
            }
            large.advance(n);
        }
        if self.buf.capacity() > RETAINED_BUFFER {
            self.buf = BytesMut::with_capacity(INITIAL_BUFFER);
        }
        Poll::Ready(Ok(()))
    }
}

fn write_zero() -> FramingError {
    FramingError::Io(io::Error::new(
        io::ErrorKind::WriteZero,
        "the connection took no more bytes",
    ))
}

impl<W, C> Sink<Bytes> for FrameWriter<W, C>
where
    W: AsyncWrite,
    C: Encoder<Bytes, Error = FramingError>,
{
    type Error = FramingError;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), FramingError>> {
        let this = self.get_mut();
        if this.large.is_some() || this.buf.len() >= WRITE_GATHER {
            ready!(this.poll_drain(cx))?;
        }
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, message: Bytes) -> Result<(), FramingError> {
        let this = self.get_mut();
        if message.len() >= LARGE_FRAME {
            if let Some(direct) = this.direct {
                if let Some(tail) = direct(&message, &mut this.buf) {
                    this.large = Some(message);
                    this.tail = tail;
                    return Ok(());
                }
            }
        }
        this.codec.encode(message, &mut this.buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), FramingError>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx))?;
        this.io.as_mut().poll_flush(cx).map_err(FramingError::Io)
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), FramingError>> {
        ready!(self.as_mut().poll_flush(cx))?;
        self.get_mut()
            .io
            .as_mut()
            .poll_shutdown(cx)
            .map_err(FramingError::Io)
    }
}
