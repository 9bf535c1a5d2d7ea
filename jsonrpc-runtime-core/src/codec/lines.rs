//! Newline-delimited framing: one message per line.

use std::cmp;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use memchr::memchr;
use tokio_util::codec::{Decoder, Encoder};

use super::{Frame, FrameRefusal, FramingError, DEFAULT_MAX_FRAME_LEN};
use crate::message::head::HEAD_LEN;

/// A framer for newline-delimited messages: one message per line.
///
/// This is the framing of MCP's stdio transport and of most JSON-RPC tools
/// that talk over pipes and sockets. Each message is one line of JSON text
/// ended by `\n`; a `\r` right before the `\n` is stripped, so peers that
/// write `\r\n` are understood too. The message itself must not contain a
/// newline, which compact JSON never does.
///
/// ```text
/// {"jsonrpc":"2.0","id":1,"method":"ping"}\n
/// {"jsonrpc":"2.0","method":"log","params":["hi"]}\r\n
/// \n                                   <- an empty line: an empty frame
/// ```
///
/// # Decoding
///
/// Each line comes out as [`Frame::Message`], split out of the read buffer
/// without copying, the terminator removed. An empty line is an empty frame
/// (not skipped): it is not valid JSON, and the peer answers it with a parse
/// error like any other garbage.
///
/// A line longer than the cap ([`max_frame_len`](Self::max_frame_len) bytes,
/// not counting the `\n` or the `\r\n` that ends it) is yielded once as
/// [`Frame::Refused`] with [`FrameRefusal::TooLong`], as soon as the cap is
/// passed, without waiting for the end of the line. Its remaining bytes are
/// then dropped as they arrive, up to and including the next `\n`, so the
/// read buffer never holds much more than the cap, and the line after it is
/// served normally. A refusal is an item, not an error, because `FramedRead`
/// ends its stream after a decoder error: the peer answers the refusal and
/// keeps reading.
///
/// At the end of the stream, bytes left without a final `\n` form one last
/// frame.
///
/// # Encoding
///
/// [`Encoder<Bytes>`] writes the message followed by `\n`. The cap is an
/// inbound limit only: a long outbound message is written as it is.
///
/// # Errors
///
/// Decoding never fails: every problem concerns a single line and is
/// reported as a [`Frame::Refused`] item. Encoding never fails either: a
/// message that contains `\n` bytes (pretty-printed JSON, say) is written
/// with each of them turned into a space. In JSON text a raw newline can
/// only be whitespace between tokens (inside a string it must be escaped),
/// so the message means the same and stays on one line.
///
/// # Examples
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use jsonrpc_runtime::codec::{Frame, LineCodec};
/// use tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = LineCodec::new();
///
/// let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\r\n{\"jso"[..]);
/// let frame = codec.decode(&mut buf)?;
/// assert_eq!(
///     frame,
///     Some(Frame::Message(Bytes::from_static(br#"{"jsonrpc":"2.0","method":"ping"}"#)))
/// );
/// // The second line is not complete yet.
/// assert_eq!(codec.decode(&mut buf)?, None);
///
/// let mut out = BytesMut::new();
/// codec.encode(Bytes::from_static(b"{}"), &mut out)?;
/// assert_eq!(&out[..], b"{}\n");
/// # Ok::<(), jsonrpc_runtime::codec::FramingError>(())
/// ```
#[derive(Debug, Clone)]
pub struct LineCodec {
    /// The longest message accepted, in bytes, terminator excluded.
    max_frame_len: usize,
    /// How far into the buffer a newline has already been searched for,
    /// so that a buffer growing byte by byte is not scanned again and again.
    next_index: usize,
    /// Whether the rest of a refused line is being dropped.
    discarding: bool,
    /// Whether lines holding only whitespace are skipped instead of framed.
    skip_blank: bool,
    /// The buffers of large lines.
    pub(super) large: super::LargeFrames,
}

impl LineCodec {
    /// Creates a line framer with the default cap, [`DEFAULT_MAX_FRAME_LEN`]
    /// (8 MiB).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::{LineCodec, DEFAULT_MAX_FRAME_LEN};
    ///
    /// assert_eq!(LineCodec::new().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    /// ```
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// Creates a line framer that refuses lines longer than `max_frame_len`
    /// bytes, not counting the `\n` or `\r\n` that ends them.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use jsonrpc_runtime::codec::{Frame, FrameRefusal, LineCodec};
    /// use tokio_util::codec::Decoder;
    ///
    /// let mut codec = LineCodec::with_max_frame_len(4);
    /// let mut buf = BytesMut::from(&b"[1,2,3]\n[]\n"[..]);
    /// // Refused, with its first bytes (as many as the cap allows, plus one).
    /// assert_eq!(
    ///     codec.decode(&mut buf)?,
    ///     Some(Frame::Refused(FrameRefusal::TooLong { limit: 4, head: "[1,2,".into() }))
    /// );
    /// assert_eq!(codec.decode(&mut buf)?, Some(Frame::Message("[]".into())));
    /// # Ok::<(), jsonrpc_runtime::codec::FramingError>(())
    /// ```
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        Self {
            max_frame_len,
            next_index: 0,
            discarding: false,
            skip_blank: false,
            large: super::LargeFrames::default(),
        }
    }

    /// Skips lines that hold nothing but whitespace instead of framing them
    /// (by default an empty line is a frame, which the peer answers with a
    /// parse error, as JSON-RPC over lines usually expects). Some clients
    /// send blank keep-alive lines; this lets them through silently.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use jsonrpc_runtime::codec::{Frame, LineCodec};
    /// use tokio_util::codec::Decoder;
    ///
    /// let mut codec = LineCodec::new().skip_blank_lines(true);
    /// let mut input = BytesMut::from(&b"\n  \r\n{}\n"[..]);
    /// assert_eq!(codec.decode(&mut input).unwrap(), Some(Frame::Message("{}".into())));
    /// ```
    pub fn skip_blank_lines(mut self, skip: bool) -> Self {
        self.skip_blank = skip;
        self
    }

    /// Returns the longest message this framer accepts, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::LineCodec;
    ///
    /// assert_eq!(LineCodec::with_max_frame_len(1024).max_frame_len(), 1024);
    /// ```
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Whether `src`, which holds no `\n`, is already too long to be a line
    /// within the cap. One byte past the cap is still fine when it is a `\r`:
    /// the `\n` of a `\r\n` may be next.
    fn exceeds_cap(&self, src: &[u8]) -> bool {
        match src.len().checked_sub(self.max_frame_len) {
            None | Some(0) => false,
            Some(1) => src.last() != Some(&b'\r'),
            Some(_) => true,
        }
    }

    /// The refusal of the over-long line at the start of `src`, which holds
    /// more than `max_frame_len` of its bytes: its head is the same however
    /// the line arrived.
    fn refusal(&self, src: &[u8]) -> Frame {
        let head = cmp::min(HEAD_LEN, self.max_frame_len + 1);
        Frame::Refused(FrameRefusal::TooLong {
            limit: self.max_frame_len,
            head: Bytes::copy_from_slice(&src[..head]),
        })
    }
}

impl Default for LineCodec {
    fn default() -> Self {
        Self::new()
    }
}

/// Returns the length of `line` without one trailing `\r`.
fn len_without_cr(line: &[u8]) -> usize {
    match line.last() {
        Some(b'\r') => line.len() - 1,
        _ => line.len(),
    }
}

impl Decoder for LineCodec {
    type Item = Frame;
    type Error = FramingError;

    /// Splits the next complete line off `src`, or refuses an over-long one.
    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        self.large.arrived(src);
        let frame = self.next_frame(src);
        if frame.is_none() {
            self.large.wait(src);
        }
        Ok(frame)
    }

    /// Like [`decode`](Self::decode), then turns bytes left without a final
    /// `\n` into one last frame.
    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        if let Some(frame) = self.decode(src)? {
            return Ok(Some(frame));
        }
        self.next_index = 0;
        if self.discarding {
            // The refused line ended with the stream.
            self.discarding = false;
            src.clear();
            return Ok(None);
        }
        // `decode` refuses anything longer, so what is left is within the cap.
        let len = len_without_cr(src);
        if len == 0 || (self.skip_blank && src[..len].iter().all(u8::is_ascii_whitespace)) {
            // Nothing, or a lone `\r`: the torn end of a `\r\n`, not a line.
            src.clear();
            return Ok(None);
        }
        let mut line = src.split().freeze();
        line.truncate(len);
        Ok(Some(Frame::Message(line)))
    }
}

impl Encoder<Bytes> for LineCodec {
    type Error = FramingError;

    /// Appends `item` and a `\n` to `dst`; newlines inside `item` are
    /// written as spaces.
    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), FramingError> {
        if memchr(b'\n', &item).is_some() {
            dst.reserve(item.len() + 1);
            dst.extend(item.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
            dst.put_u8(b'\n');
            return Ok(());
        }
        dst.reserve(item.len() + 1);
        dst.extend_from_slice(&item);
        dst.put_u8(b'\n');
        Ok(())
    }
}

impl LineCodec {
    /// The next complete line split off `src`, a refusal of an over-long
    /// one, or `None` when more bytes are needed.
    fn next_frame(&mut self, src: &mut BytesMut) -> Option<Frame> {
        loop {
            if self.discarding {
                // Drop the rest of a refused line as it arrives.
                match memchr(b'\n', src) {
                    Some(newline) => {
                        src.advance(newline + 1);
                        self.discarding = false;
                        self.next_index = 0;
                        continue;
                    }
                    None => {
                        src.clear();
                        return None;
                    }
                }
            }

            // A line within the cap fits in `max + 2` bytes: the message,
            // a `\r`, the `\n`. No need to look further for its end.
            let read_to = cmp::min(src.len(), self.max_frame_len.saturating_add(2));
            // Resume the search where the previous call stopped. (The guard
            // only matters if the caller swapped buffers between calls.)
            let start = if self.next_index <= read_to {
                self.next_index
            } else {
                0
            };

            match memchr(b'\n', &src[start..read_to]) {
                Some(offset) => {
                    let newline = start + offset;
                    self.next_index = 0;
                    let len = len_without_cr(&src[..newline]);
                    if len > self.max_frame_len {
                        let refusal = self.refusal(src);
                        src.advance(newline + 1);
                        return Some(refusal);
                    }
                    if self.skip_blank && src[..len].iter().all(u8::is_ascii_whitespace) {
                        src.advance(newline + 1);
                        continue;
                    }
                    let line = self.large.split(src, newline + 1, len);
                    return Some(Frame::Message(line));
                }
                None if self.exceeds_cap(&src[..read_to]) => {
                    // Report at once, then drop what was scanned and the rest
                    // of the line on the next calls.
                    let refusal = self.refusal(src);
                    src.advance(read_to);
                    self.next_index = 0;
                    self.discarding = true;
                    return Some(refusal);
                }
                None => {
                    self.next_index = read_to;
                    self.large
                        .partial(src, self.max_frame_len.saturating_add(2));
                    return None;
                }
            }
        }
    }
}
