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

use bytes::Bytes;

mod content_length;
mod lines;

pub(crate) use self::content_length::write_header as write_content_length_header;

/// After a large frame has been split off the read buffer, the buffer still
/// holds its allocation: a connection would keep the memory of its largest
/// message for as long as it lives. Move what is left into a small buffer
/// of its own, so the allocation goes with the frame.
fn release_large(frame: &[u8], src: &mut bytes::BytesMut) {
    const LARGE: usize = 64 * 1024;
    const FRESH: usize = 1024;
    if frame.len() >= LARGE && src.len() < LARGE {
        let mut fresh = bytes::BytesMut::with_capacity(FRESH.max(src.len()));
        fresh.extend_from_slice(src);
        *src = fresh;
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

/// Why a framer refused one message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameRefusal {
    /// The message is longer than the framer's cap; its bytes were skipped.
    #[error("message exceeds the {limit}-byte frame limit")]
    TooLong {
        /// The cap in force, in bytes.
        limit: usize,
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
    /// A header declared a body over the cap. The message was refused (the
    /// other side got an answer); its body is not read, so the stream ends.
    #[error(
        "a message of {declared} bytes was declared, over the limit of {limit}; \
         the connection is closed rather than reading the body"
    )]
    TooLong {
        /// The declared `Content-Length`.
        declared: usize,
        /// The cap in force.
        limit: usize,
    },
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
