//! Transports: a stream of inbound frames and a sink of outbound messages.
//!
//! A peer needs two things from a connection: a [`Stream`] of inbound
//! [`Frame`]s and a [`Sink`] that takes one serialized message (a complete
//! JSON envelope, without framing) at a time. [`Transport`] holds the two.
//! Build one from any `AsyncRead` + `AsyncWrite` pair and a framer
//! ([`Transport::from_io`]), from stdio ([`Transport::stdio`]), as a
//! connected in-memory pair for tests ([`Transport::pair`]), or from your own
//! stream and sink ([`Transport::new`]).
//!
//! A transport is itself a `Stream` and a `Sink`, so it can be used without
//! a peer when the caller wants to control the wire order message by message.
//!
//! `jsonrpc-runtime` adds the transports over sockets and processes (TCP,
//! Unix, WebSocket, HTTP, MCP Streamable HTTP, TLS, child processes) and
//! the acceptors its servers take.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_sink::Sink;
use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::codec::{Decoder, Encoder, FramedRead};

use self::write::FrameWriter;

use crate::codec::{Frame, FramingError};
use crate::connection::ConnectionInfo;

mod error;
mod memory;
mod record;
#[doc(hidden)]
pub mod write;

cfg_feature! { "stdio",
    mod stdio;
}
cfg_feature! { "tcp",
    mod tcp;
    #[doc(hidden)]
    pub use self::tcp::set_nodelay;
}
cfg_unix! {
    mod unix;
}
cfg_feature! { "tls",
    pub use self::error::TlsError;
}

pub use self::error::{ProcessExit, TransportError, WebSocketError};

#[doc(hidden)]
pub type BoxStream = Pin<Box<dyn Stream<Item = Result<Frame, TransportError>> + Send>>;
#[doc(hidden)]
pub type BoxSink = Pin<Box<dyn Sink<Bytes, Error = TransportError> + Send>>;

/// One connection's two halves: inbound frames and outbound messages.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::codec::LineCodec;
/// use jsonrpc_runtime::Transport;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // Any AsyncRead + AsyncWrite works; here, an in-process pipe.
/// let (client_io, _server_io) = tokio::io::duplex(64 * 1024);
/// let (read, write) = tokio::io::split(client_io);
/// let transport = Transport::from_io(read, write, LineCodec::new());
/// # let _ = transport;
/// # });
/// ```
pub struct Transport {
    pub(crate) inbound: BoxStream,
    pub(crate) outbound: BoxSink,
    #[doc(hidden)]
    pub connection: ConnectionInfo,
    /// The listener's `on_connect` hook has already run (during a WebSocket
    /// handshake): the listener does not run it again.
    #[doc(hidden)]
    pub vetted: bool,
    /// Set by a transport whose frames come from several callers: the
    /// caller of each frame, as it is yielded.
    #[doc(hidden)]
    pub callers: Option<crate::connection::CallerSlot>,
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Transport")
            .field("connection", &self.connection)
            .finish_non_exhaustive()
    }
}

impl Transport {
    /// A transport from a stream of inbound frames and a sink of outbound
    /// messages.
    ///
    /// The stream ends when the other side is gone; an `Err` item ends the
    /// connection with that error (a transport that knows why the other side
    /// left, such as a child process with its exit status, reports it so).
    /// Each item sent into the sink is one complete JSON message.
    pub fn new<S, K>(inbound: S, outbound: K) -> Self
    where
        S: Stream<Item = Result<Frame, TransportError>> + Send + 'static,
        K: Sink<Bytes, Error = TransportError> + Send + 'static,
    {
        Transport {
            inbound: Box::pin(inbound),
            outbound: Box::pin(outbound),
            connection: ConnectionInfo::new(),
            vetted: false,
            callers: None,
        }
    }

    /// What is known about the other side (see [`ConnectionInfo`]): the
    /// peer spawned on this transport reports it through
    /// [`Peer::connection`](crate::Peer::connection) and its handlers'
    /// [`Context::connection`](crate::Context::connection).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::Transport;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, _b) = Transport::pair(8);
    /// assert!(a.connection().addr().is_none());
    /// # });
    /// ```
    pub fn connection(&self) -> &ConnectionInfo {
        &self.connection
    }

    /// The same, to change: attach state before the peer is spawned.
    pub fn connection_mut(&mut self) -> &mut ConnectionInfo {
        &mut self.connection
    }

    /// The transport with `connection` as what is known about the other
    /// side, for transports built by hand (a test that plays a client with
    /// headers, a socket type of your own).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport, connection::ConnectionInfo};
    ///
    /// #[derive(Clone)]
    /// struct Tenant(&'static str);
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (client, server) = Transport::pair(8);
    /// let mut info = ConnectionInfo::new();
    /// info.insert(Tenant("blue"));
    /// let router = Router::new().request("tenant", |(): (), cx: Context| async move {
    ///     Ok::<_, ErrorObject>(cx.connection().get::<Tenant>().map(|t| t.0))
    /// });
    /// let _server = Peer::builder().router(router).spawn(server.with_connection(info));
    /// let tenant: String = Peer::spawn(client).call("tenant", ()).await?;
    /// assert_eq!(tenant, "blue");
    /// # Ok::<(), jsonrpc_runtime::CallError>(())
    /// # }).unwrap();
    /// ```
    #[must_use]
    pub fn with_connection(mut self, connection: ConnectionInfo) -> Self {
        self.connection = connection;
        self
    }

    /// The two halves, for a transport that closes its sink before it
    /// has read all of its stream (a child process's shutdown).
    #[doc(hidden)]
    pub fn into_halves(self) -> (BoxStream, BoxSink) {
        (self.inbound, self.outbound)
    }

    /// A transport over a reader and a writer, framed by `codec`.
    ///
    /// `codec` is any framer: [`LineCodec`](crate::codec::LineCodec),
    /// [`ContentLengthCodec`](crate::codec::ContentLengthCodec), a
    /// [`FramingCodec`](crate::codec::FramingCodec) chosen at run time, or your own.
    pub fn from_io<R, W, C>(read: R, write: W, codec: C) -> Self
    where
        R: AsyncRead + Send + 'static,
        W: AsyncWrite + Send + 'static,
        C: Decoder<Item = Frame, Error = FramingError>
            + Encoder<Bytes, Error = FramingError>
            + Clone
            + Send
            + 'static,
    {
        let inbound =
            framed_read(read, codec.clone()).map(|item| item.map_err(TransportError::from));
        let outbound = framed_write(write, codec).sink_map_err(TransportError::from);
        Transport::new(inbound, outbound)
    }

    /// Two transports wired to each other in memory: what one sends, the
    /// other receives. For tests and for peers in one process.
    ///
    /// Each direction buffers up to `capacity` messages before the sender
    /// waits.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, b) = Transport::pair(64);
    /// let router = Router::new().request("add", |(x, y): (i64, i64), _| async move {
    ///     Ok::<_, ErrorObject>(x + y)
    /// });
    /// let _server = Peer::builder().router(router).spawn(b);
    /// let client = Peer::spawn(a);
    /// let sum: i64 = client.call("add", (2, 3)).await.unwrap();
    /// assert_eq!(sum, 5);
    /// # });
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `capacity` is zero.
    pub fn pair(capacity: usize) -> (Transport, Transport) {
        let (a_tx, b_rx) = memory::channel(capacity);
        let (b_tx, a_rx) = memory::channel(capacity);
        (Transport::new(a_rx, a_tx), Transport::new(b_rx, b_tx))
    }
}

impl Stream for Transport {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inbound.as_mut().poll_next(cx)
    }
}

impl Sink<Bytes> for Transport {
    type Error = TransportError;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.outbound.as_mut().poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, item: Bytes) -> Result<(), TransportError> {
        self.outbound.as_mut().start_send(item)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.outbound.as_mut().poll_flush(cx)
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.outbound.as_mut().poll_close(cx)
    }
}

/// What the read and write buffers of a byte-stream transport start with:
/// enough for the small messages most traffic is, so an idle connection
/// stays small. The read buffer's room then follows what reads bring (the
/// framers' read policy, up to 32 KiB); the write buffer grows with the
/// traffic and keeps what it grew to.
pub(crate) const INITIAL_BUFFER: usize = 1024;

/// How much the write buffer gathers before it is written out, once it has
/// grown: bursts of small frames go out in few writes.
pub(crate) const WRITE_GATHER: usize = 8 * 1024;

/// A framed reader with a small initial buffer (see [`INITIAL_BUFFER`]).
#[doc(hidden)]
pub fn framed_read<R: AsyncRead, C: Decoder>(read: R, codec: C) -> FramedRead<R, C> {
    FramedRead::with_capacity(read, codec, INITIAL_BUFFER)
}

/// A framed writer with a small initial buffer that still gathers bursts
/// (see [`WRITE_GATHER`]), and writes large frames without copying them.
#[doc(hidden)]
pub fn framed_write<W: AsyncWrite, C: 'static>(write: W, codec: C) -> FrameWriter<W, C> {
    FrameWriter::new(write, codec)
}
