//! The lingering close of an HTTP/1 connection whose last request body was
//! left unread: after the answer, the write side is shut (the client reads
//! the answer and then the end of the stream), and what the client still
//! sends is read and dropped, within [`LINGER_MAX_BYTES`] and
//! [`LINGER_MAX_TIME`] (stated in [`HttpListener`](super::HttpListener)'s
//! docs: keep them in step), before the socket is closed. Closing a socket with
//! unread bytes in it makes the kernel reset the connection, and a reset
//! can destroy the answer before the client reads it: a proxy in front
//! then reports `502` and counts the instance as failed.

use std::future::Future as _;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use crate::rt::Sleep;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// At most this many bytes of a body left unread are read and dropped
/// before the connection is closed: 64 MiB.
pub(crate) const LINGER_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// At most this long is spent reading them: five seconds.
pub(crate) const LINGER_MAX_TIME: Duration = Duration::from_secs(5);

/// A connection's byte stream, whose shutdown lingers when
/// [`armed`](Self::arm) (see the module docs).
pub(crate) struct Linger<I> {
    io: I,
    armed: Arc<AtomicBool>,
    state: State,
}

enum State {
    Open,
    /// The write side is shut: reading and dropping until the client ends
    /// its side, the bytes are spent or the time is up.
    Draining {
        left: u64,
        until: Pin<Box<Sleep>>,
    },
    Closed,
}

impl<I> Linger<I> {
    /// Wraps `io`; its shutdown lingers if `armed` is set by then.
    pub(crate) fn new(io: I, armed: Arc<AtomicBool>) -> Self {
        Linger {
            io,
            armed,
            state: State::Open,
        }
    }
}

impl<I: AsyncRead + AsyncWrite + Unpin> AsyncRead for Linger<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Linger<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        loop {
            match &mut this.state {
                State::Open => {
                    ready!(Pin::new(&mut this.io).poll_shutdown(cx))?;
                    this.state = if this.armed.load(Ordering::Acquire) {
                        State::Draining {
                            left: LINGER_MAX_BYTES,
                            until: Box::pin(crate::rt::sleep(LINGER_MAX_TIME)),
                        }
                    } else {
                        State::Closed
                    };
                }
                State::Draining { left, until } => {
                    if until.as_mut().poll(cx).is_ready() {
                        tracing::debug!(
                            "closing an HTTP connection whose client sent on past the linger time"
                        );
                        this.state = State::Closed;
                        continue;
                    }
                    let mut scratch = [0u8; 8192];
                    let mut buf = ReadBuf::new(&mut scratch);
                    match Pin::new(&mut this.io).poll_read(cx, &mut buf) {
                        Poll::Pending => return Poll::Pending,
                        Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                            *left = left.saturating_sub(buf.filled().len() as u64);
                            if *left == 0 {
                                tracing::debug!("closing an HTTP connection whose client sent on past the linger bytes");
                                this.state = State::Closed;
                            }
                        }
                        // The client's end, or a failure: nothing more to
                        // wait for.
                        Poll::Ready(_) => this.state = State::Closed,
                    }
                }
                State::Closed => return Poll::Ready(Ok(())),
            }
        }
    }
}
