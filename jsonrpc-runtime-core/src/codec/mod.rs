//! Framers: split a byte stream into message frames and back.
//!
//! Two framers ship, both as tokio-util [`Decoder`](tokio_util::codec::Decoder)
//! / [`Encoder`](tokio_util::codec::Encoder) pairs so they plug into any
//! `AsyncRead`/`AsyncWrite` through `FramedRead`/`FramedWrite`:
//!
//! * [`LineCodec`]: one message per line (`\n`, an optional `\r` before it is
//!   stripped). The framing of MCP's stdio transport and most JSON-RPC tools.
//! * [`ContentLengthCodec`]: `Content-Length: N\r\n\r\n` headers before each
//!   message. The framing of LSP, DAP and BSP.
//!
//! # Per-message problems are items, not errors
//!
//! `FramedRead` ends its stream after the decoder returns an error. A problem
//! that concerns one message only (it is longer than the cap, it declares a
//! charset other than UTF-8) is therefore yielded as [`Frame::Refused`]: the
//! peer answers it with an error response and keeps reading, and the next
//! frame starts at the right byte. Only I/O failures and framing that cannot
//! be recovered (a `Content-Length` that is not a number, a header block with
//! no `Content-Length`) are a [`FramingError`] and end the connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bytes::{Bytes, BytesMut};

pub(crate) mod content_length;
mod lines;

pub(crate) use self::content_length::write_header as write_content_length_header;

/// Frames this long or longer take the buffer they were read into.
pub(crate) const LARGE: usize = 64 * 1024;

/// The room of the small buffer a framer goes on with once a large frame
/// took the one it was read into.
pub(crate) const SMALL_AFTER_LARGE: usize = 1024;

/// What a framer does with the buffers of large frames.
///
/// A large frame takes the whole buffer it was read into (no copy), and the
/// framer goes on with a small one, so a connection does not keep the memory
/// of a large message after it is handled.
///
/// A partial frame past 64 KiB grows in few, large steps (room for 16 times
/// what has come, within the cap) rather than by doubling from 1 KiB: fewer
/// copies, and room not yet written costs address space, not memory.
///
/// A large frame dropped while the next large frame is being read gives its
/// buffer back as the *spare*, and the rest of that frame (or the next one)
/// is read into it: a stream of large messages (an editor sending a whole
/// document on each change) reuses buffers whose pages are already in
/// memory. A frame dropped at any other time frees its buffer, and the first
/// small frame lets a spare go. So a connection holds at most one spare, and
/// only while large frames are coming in.
///
/// It also sizes the room each read gets ([`ReadRoom`]).
#[derive(Debug, Default)]
pub(crate) struct LargeFrames {
    spare: Arc<Spare>,
    /// The read buffer is a spare (large) one.
    in_spare: bool,
    read: ReadRoom,
}

/// The least and the most room a read is given, in bytes.
pub(crate) const READ_ROOM: (usize, usize) = (1024, 32 * 1024);

/// How much room the next read gets, adapted to what reads bring.
///
/// A read that fills all the room it was given says more was waiting: the
/// next one gets twice as much, up to 32 KiB, so a burst of pipelined
/// messages is read in one system call rather than a kilobyte at a time.
/// Two reads in a row that fill at most half their room halve it again,
/// down to 1 KiB; once the buffer is empty, a buffer four times larger than
/// that is let go, so a connection that saw a burst and went quiet returns
/// to a small buffer on its next reads.
#[derive(Debug)]
struct ReadRoom {
    /// The room to give the next read.
    next: usize,
    /// The buffer's length and room when the framer last asked for more:
    /// what the read brought is the length past it.
    asked: Option<(usize, usize)>,
    /// Reads in a row that brought at most half their room.
    short: u8,
}

impl Default for ReadRoom {
    fn default() -> Self {
        ReadRoom {
            next: READ_ROOM.0,
            asked: None,
            short: 0,
        }
    }
}

impl ReadRoom {
    /// Notes what the read since [`wait`](Self::wait) brought into `src`.
    #[inline]
    fn arrived(&mut self, src: &BytesMut) {
        let Some((len, room)) = self.asked.take() else {
            return;
        };
        let brought = src.len().saturating_sub(len);
        if brought >= room {
            self.next = (self.next * 2).min(READ_ROOM.1);
            self.short = 0;
        } else if brought <= room / 2 {
            self.short += 1;
            if self.short >= 2 {
                self.next = (self.next / 2).max(READ_ROOM.0);
                self.short = 0;
            }
        } else {
            self.short = 0;
        }
    }

    /// The framer needs more bytes: makes `src`'s room at least
    /// [`next`](Self::next). An empty buffer four times larger than that is
    /// let go instead, when `own` (the buffer is not a large frame's spare).
    #[inline]
    fn wait(&mut self, src: &mut BytesMut, own: bool) {
        if own && src.is_empty() && src.capacity() >= 4 * self.next {
            *src = BytesMut::with_capacity(self.next);
        } else if src.capacity() - src.len() < self.next {
            src.reserve(self.next);
        }
        self.asked = Some((src.len(), src.capacity() - src.len()));
    }
}

#[derive(Debug, Default)]
struct Spare {
    buf: Mutex<Option<BytesMut>>,
    /// Whether `buf` holds one: a load, not a lock, for every small frame.
    present: AtomicBool,
    /// A large frame is being read: a buffer given back now is kept.
    wanted: AtomicBool,
}

impl Spare {
    fn take(&self) -> Option<BytesMut> {
        if !self.present.load(Ordering::Acquire) {
            return None;
        }
        let buf = self.buf.lock().unwrap_or_else(|p| p.into_inner()).take();
        self.present.store(false, Ordering::Release);
        buf
    }
}

impl Clone for LargeFrames {
    /// A framer's copy starts without a spare: buffers are not shared.
    fn clone(&self) -> Self {
        LargeFrames::default()
    }
}

/// A large frame's buffer, which goes back to its framer's spare slot when
/// the frame is dropped (if the framer is still there and has none).
struct Lent {
    buf: BytesMut,
    home: Weak<Spare>,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        let Some(home) = self.home.upgrade() else {
            return;
        };
        if !home.wanted.load(Ordering::Acquire) {
            return;
        }
        let mut slot = home.buf.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            *slot = Some(buf);
            home.present.store(true, Ordering::Release);
        }
    }
}

impl LargeFrames {
    /// Called as a framer's decoding starts: notes what the read since the
    /// framer last asked for more brought.
    #[inline]
    fn arrived(&mut self, src: &BytesMut) {
        self.read.arrived(src);
    }

    /// Called when a framer's decoding needs more bytes: sizes the room of
    /// the next read. A large frame's buffer grows by its own rule
    /// (`partial`, `reserve`), and the read after it is not measured.
    #[inline]
    fn wait(&mut self, src: &mut BytesMut) {
        if src.len() < LARGE {
            self.read.wait(src, !self.in_spare);
        }
    }

    /// Splits off the frame `src[..len]`, consuming `end` bytes (the frame
    /// and its terminator).
    fn split(&mut self, src: &mut BytesMut, end: usize, len: usize) -> Bytes {
        if end < LARGE {
            if self.spare.present.load(Ordering::Relaxed) {
                // The large messages are over.
                drop(self.spare.take());
            }
            let mut frame = src.split_to(end).freeze();
            frame.truncate(len);
            if self.in_spare && src.len() < LARGE {
                // A spare is the read buffer and small frames follow: the
                // rest moves to a small buffer, and the large one goes with
                // the last frame read from it.
                self.in_spare = false;
                let mut small = BytesMut::with_capacity(SMALL_AFTER_LARGE.max(src.len()));
                small.extend_from_slice(src);
                *src = small;
            }
            return frame;
        }
        self.spare.wanted.store(false, Ordering::Release);
        let spare = self.spare.take();
        self.in_spare = spare.is_some();
        let mut next = spare
            .unwrap_or_else(|| BytesMut::with_capacity(SMALL_AFTER_LARGE.max(src.len() - end)));
        next.extend_from_slice(&src[end..]);
        let mut buf = std::mem::replace(src, next);
        buf.truncate(len);
        Bytes::from_owner(Lent {
            buf,
            home: Arc::downgrade(&self.spare),
        })
    }

    /// Makes room for `total` bytes in `src` (a body of known length): in
    /// the spare, when it is large enough.
    fn reserve(&mut self, src: &mut BytesMut, total: usize) {
        if total >= LARGE {
            self.spare.wanted.store(true, Ordering::Release);
            self.use_spare(src, total);
        }
        src.reserve(total.saturating_sub(src.len()));
    }

    /// `src` holds the start of a frame whose end has not come, and the
    /// frame cannot be longer than `cap` bytes: past 64 KiB, room for the
    /// rest is made in few steps, in the spare if there is one.
    fn partial(&mut self, src: &mut BytesMut, cap: usize) {
        if src.len() < LARGE {
            return;
        }
        self.spare.wanted.store(true, Ordering::Release);
        let want = src.len().saturating_mul(16).min(cap);
        self.use_spare(src, want);
        if src.capacity() - src.len() < src.len() {
            src.reserve(want.saturating_sub(src.len()));
        }
    }

    /// Moves what `src` holds into the spare when `src` has no room for
    /// `want` bytes and the spare is the larger (a smaller spare is let go).
    fn use_spare(&mut self, src: &mut BytesMut, want: usize) {
        if src.capacity() >= want {
            return;
        }
        if let Some(mut spare) = self.spare.take() {
            if spare.capacity() > src.capacity() {
                spare.extend_from_slice(src);
                *src = spare;
                self.in_spare = true;
            }
        }
    }
}

pub use self::content_length::ContentLengthCodec;
pub use self::lines::LineCodec;

/// The largest frame accepted by default: 8 MiB.
pub const DEFAULT_MAX_FRAME_LEN: usize = 8 * 1024 * 1024;

/// One item decoded from a byte stream.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Frame {
    /// One complete message body: JSON text, not yet validated as UTF-8.
    Message(Bytes),
    /// A message the framer refused without reading it whole. The peer
    /// answers it with an error; the stream stays aligned on the next frame.
    Refused(FrameRefusal),
}

impl Frame {
    /// The message's bytes, or why the framer refused it.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::{Frame, FrameRefusal};
    ///
    /// let frame = Frame::Message(bytes::Bytes::from_static(b"{}"));
    /// assert_eq!(frame.into_message().unwrap(), &b"{}"[..]);
    /// assert_eq!(Frame::Refused(FrameRefusal::Binary).into_message(), Err(FrameRefusal::Binary));
    /// ```
    ///
    /// # Errors
    ///
    /// The refusal, for a message the framer did not deliver.
    pub fn into_message(self) -> Result<Bytes, FrameRefusal> {
        match self {
            Frame::Message(bytes) => Ok(bytes),
            Frame::Refused(why) => Err(why),
        }
    }
}

/// Why a framer refused one message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameRefusal {
    /// The message is longer than the framer's cap; its bytes were skipped.
    #[error("message exceeds the {limit}-byte frame limit")]
    TooLong {
        /// The cap in force, in bytes.
        limit: usize,
        /// The message's first bytes (up to 256, and never more than the
        /// cap allows): the peer reads the id there, to answer a request
        /// with its own id and to fail this side's call that an answer was
        /// for, instead of leaving the caller waiting. Empty where the
        /// transport gives none (WebSocket).
        head: Bytes,
    },
    /// The message declared a charset other than UTF-8; its bytes were skipped.
    #[error("unsupported charset `{0}`, only utf-8 is accepted")]
    UnsupportedCharset(String),
    /// The transport delivered a binary message where JSON text is required.
    #[error("binary messages are not accepted, send JSON text")]
    Binary,
}

/// A failure that ends the connection: I/O, or framing that cannot be
/// recovered because the start of the next message is unknown.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    /// Reading or writing the underlying stream failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A header block could not be parsed; the stream cannot be resynchronised.
    #[error("invalid message header: {0}")]
    InvalidHeader(String),
}

/// Which framer a transport uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Framing {
    /// One message per line: [`LineCodec`].
    #[default]
    NewlineDelimited,
    /// `Content-Length` headers: [`ContentLengthCodec`].
    ContentLength,
}

impl Framing {
    /// Builds the codec for this framing with the given frame cap in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::{Framing, FramingCodec, DEFAULT_MAX_FRAME_LEN};
    ///
    /// let codec: FramingCodec = Framing::ContentLength.codec(DEFAULT_MAX_FRAME_LEN);
    /// # let _ = codec;
    /// ```
    pub fn codec(self, max_frame_len: usize) -> FramingCodec {
        match self {
            Framing::NewlineDelimited => {
                FramingCodec::Lines(LineCodec::with_max_frame_len(max_frame_len))
            }
            Framing::ContentLength => {
                FramingCodec::ContentLength(ContentLengthCodec::with_max_frame_len(max_frame_len))
            }
        }
    }
}

/// Either framer, chosen at run time (see [`Framing::codec`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum FramingCodec {
    /// Newline-delimited framing.
    Lines(LineCodec),
    /// `Content-Length` framing.
    ContentLength(ContentLengthCodec),
}

impl FramingCodec {
    /// The largest frame this framer accepts, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::{FramingCodec, LineCodec};
    ///
    /// let codec = FramingCodec::from(LineCodec::with_max_frame_len(1 << 20));
    /// assert_eq!(codec.max_frame_len(), 1 << 20);
    /// ```
    pub fn max_frame_len(&self) -> usize {
        match self {
            FramingCodec::Lines(c) => c.max_frame_len(),
            FramingCodec::ContentLength(c) => c.max_frame_len(),
        }
    }
}

/// Newline-delimited framing with the default cap
/// ([`DEFAULT_MAX_FRAME_LEN`]).
impl Default for FramingCodec {
    fn default() -> Self {
        FramingCodec::Lines(LineCodec::new())
    }
}

impl From<LineCodec> for FramingCodec {
    fn from(codec: LineCodec) -> Self {
        FramingCodec::Lines(codec)
    }
}

impl From<ContentLengthCodec> for FramingCodec {
    fn from(codec: ContentLengthCodec) -> Self {
        FramingCodec::ContentLength(codec)
    }
}

/// The framing with the default cap ([`DEFAULT_MAX_FRAME_LEN`]).
impl From<Framing> for FramingCodec {
    fn from(framing: Framing) -> Self {
        framing.codec(DEFAULT_MAX_FRAME_LEN)
    }
}

impl tokio_util::codec::Decoder for FramingCodec {
    type Item = Frame;
    type Error = FramingError;

    fn decode(&mut self, src: &mut bytes::BytesMut) -> Result<Option<Frame>, FramingError> {
        match self {
            FramingCodec::Lines(c) => c.decode(src),
            FramingCodec::ContentLength(c) => c.decode(src),
        }
    }

    fn decode_eof(&mut self, src: &mut bytes::BytesMut) -> Result<Option<Frame>, FramingError> {
        match self {
            FramingCodec::Lines(c) => c.decode_eof(src),
            FramingCodec::ContentLength(c) => c.decode_eof(src),
        }
    }
}

impl tokio_util::codec::Encoder<Bytes> for FramingCodec {
    type Error = FramingError;

    fn encode(&mut self, item: Bytes, dst: &mut bytes::BytesMut) -> Result<(), FramingError> {
        match self {
            FramingCodec::Lines(c) => c.encode(item, dst),
            FramingCodec::ContentLength(c) => c.encode(item, dst),
        }
    }
}

#[cfg(test)]
mod tests;
