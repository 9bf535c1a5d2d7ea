//! `Content-Length` framing: a header block before each message, as in LSP.

use std::{cmp, io};

use bytes::{Buf, Bytes, BytesMut};
use memchr::memchr;
use tokio_util::codec::{Decoder, Encoder};

use super::{Frame, FrameRefusal, FramingError, DEFAULT_MAX_FRAME_LEN};
use crate::message::head::HEAD_LEN;

/// The largest header block accepted, in bytes, up to and including the
/// empty line that ends it. Real header blocks are well under 100 bytes; a
/// peer that sends more without an empty line is not speaking this framing.
pub(crate) const MAX_HEADER_LEN: usize = 8 * 1024;

/// The most decimal digits a `usize` can have (`u64::MAX` has 20).
const MAX_DIGITS: usize = 20;

/// A framer for messages preceded by a `Content-Length` header block.
///
/// This is the base protocol of LSP, and of DAP and BSP. Each message is a
/// block of `Name: value` header lines, an empty line, then exactly
/// `Content-Length` bytes of JSON text:
///
/// ```text
/// Content-Length: 52\r\n
/// Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
/// \r\n
/// {"jsonrpc":"2.0","id":1,"method":"initialize", ...}
/// ```
///
/// # Decoding
///
/// Reading is lenient. Header names are case-insensitive and the whitespace
/// around values is ignored; a header line may end with `\r\n` or a bare
/// `\n`, so `\n\n` ends a block as well as `\r\n\r\n`. Whitespace between
/// messages (such as a stray blank line after a body) is skipped. Headers
/// other than `Content-Length` and `Content-Type` are ignored.
///
/// Each body comes out as [`Frame::Message`], split out of the read buffer
/// without copying. Two problems come out as [`Frame::Refused`] items, so
/// the peer answers them (items are used rather than errors because
/// `FramedRead` ends its stream after a decoder error):
///
/// * a `Content-Type` whose `charset` is not UTF-8
///   ([`FrameRefusal::UnsupportedCharset`]): the body's bytes are dropped as
///   they arrive and the `Content-Length` tells where the next message
///   starts, so the stream stays aligned;
/// * a declared length above the cap ([`FrameRefusal::TooLong`]): refused
///   as soon as the header is read, before any of the body arrives and with
///   no memory reserved for it; the body's bytes are then dropped as they
///   arrive, never buffered, and the next message is served. (An editor
///   that sends one document over the cap keeps its language server.)
///
/// # Encoding
///
/// Writing is strict: exactly `Content-Length: N\r\n\r\n` and the message,
/// with no other header. The cap is an inbound limit only: a long outbound
/// message is written as it is.
///
/// # Errors
///
/// Decoding fails with [`FramingError::InvalidHeader`] when the start of the
/// next message cannot be known, which ends the connection: a
/// `Content-Length` that is not a decimal number, a header block without
/// `Content-Length` or with two different ones, a header line without `:`,
/// or a header block longer than 8 KiB. At the end of the stream, a message
/// cut short is a [`FramingError::Io`] error of kind
/// [`UnexpectedEof`](std::io::ErrorKind::UnexpectedEof). Encoding never
/// fails.
///
/// # Examples
///
/// ```
/// use bytes::{Bytes, BytesMut};
/// use jsonrpc_runtime::codec::{ContentLengthCodec, Frame};
/// use tokio_util::codec::{Decoder, Encoder};
///
/// let mut codec = ContentLengthCodec::new();
///
/// let mut buf = BytesMut::from(&b"content-length: 2\n\n{}Content-Length: 7\r\n"[..]);
/// assert_eq!(codec.decode(&mut buf)?, Some(Frame::Message(Bytes::from_static(b"{}"))));
/// // The second header block is not complete yet.
/// assert_eq!(codec.decode(&mut buf)?, None);
///
/// let mut out = BytesMut::new();
/// codec.encode(Bytes::from_static(b"[]"), &mut out)?;
/// assert_eq!(&out[..], b"Content-Length: 2\r\n\r\n[]");
/// # Ok::<(), jsonrpc_runtime::codec::FramingError>(())
/// ```
#[derive(Debug, Clone)]
pub struct ContentLengthCodec {
    /// The longest message body accepted, in bytes.
    max_frame_len: usize,
    state: State,
    /// The buffers of large bodies.
    large: super::LargeFrames,
}

/// Where the decoder stands in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a header block; the first `scanned` bytes of the buffer are
    /// complete header lines already searched for the empty line.
    Head { scanned: usize },
    /// Waiting for a body of `len` bytes (within the cap).
    Body { len: usize },
    /// A body over the cap, refused once its first bytes (its head) are in;
    /// `len` is its declared length.
    Refuse { len: usize },
    /// Dropping `remaining` more bytes of a refused body (over the cap, or
    /// in another charset), as they arrive.
    Discard { remaining: usize },
}

/// What a header block says about the message after it.
struct Head {
    len: usize,
    unsupported_charset: Option<String>,
}

impl ContentLengthCodec {
    /// Creates a `Content-Length` framer with the default cap,
    /// [`DEFAULT_MAX_FRAME_LEN`] (8 MiB).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::{ContentLengthCodec, DEFAULT_MAX_FRAME_LEN};
    ///
    /// assert_eq!(ContentLengthCodec::new().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    /// ```
    pub fn new() -> Self {
        Self::with_max_frame_len(DEFAULT_MAX_FRAME_LEN)
    }

    /// Creates a `Content-Length` framer that refuses messages whose declared
    /// length is above `max_frame_len` bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use bytes::BytesMut;
    /// use jsonrpc_runtime::codec::{ContentLengthCodec, Frame, FrameRefusal};
    /// use tokio_util::codec::Decoder;
    ///
    /// let mut codec = ContentLengthCodec::with_max_frame_len(4);
    /// let mut buf = BytesMut::from(&b"Content-Length: 2\r\n\r\n[]Content-Length: 7\r\n\r\n[1,2,3]"[..]);
    /// assert_eq!(codec.decode(&mut buf)?, Some(Frame::Message("[]".into())));
    /// // Over the cap: refused with its first bytes (up to 256; here all
    /// // seven), so the peer answers it with its id, and its body skipped.
    /// assert_eq!(
    ///     codec.decode(&mut buf)?,
    ///     Some(Frame::Refused(FrameRefusal::TooLong { limit: 4, head: "[1,2,3]".into() }))
    /// );
    /// buf.extend_from_slice(b"Content-Length: 2\r\n\r\n{}");
    /// assert_eq!(codec.decode(&mut buf)?, Some(Frame::Message("{}".into())));
    /// # Ok::<(), jsonrpc_runtime::codec::FramingError>(())
    /// ```
    pub fn with_max_frame_len(max_frame_len: usize) -> Self {
        Self {
            max_frame_len,
            state: State::Head { scanned: 0 },
            large: super::LargeFrames::default(),
        }
    }

    /// Returns the longest message body this framer accepts, in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::ContentLengthCodec;
    ///
    /// assert_eq!(ContentLengthCodec::with_max_frame_len(1024).max_frame_len(), 1024);
    /// ```
    pub fn max_frame_len(&self) -> usize {
        self.max_frame_len
    }

    /// Reads a complete header block off `src`, if there is one.
    fn decode_head(
        &mut self,
        src: &mut BytesMut,
        scanned: usize,
    ) -> Result<Option<Head>, FramingError> {
        if scanned == 0 {
            // Blank lines and other whitespace left between messages.
            let skip = src
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(src.len());
            src.advance(skip);
        }

        let limit = cmp::min(src.len(), MAX_HEADER_LEN);
        let mut line_start = cmp::min(scanned, limit);
        let end = loop {
            match memchr(b'\n', &src[line_start..limit]) {
                Some(offset) => {
                    let newline = line_start + offset;
                    if trim_cr(&src[line_start..newline]).is_empty() {
                        break newline + 1;
                    }
                    line_start = newline + 1;
                }
                None if src.len() >= MAX_HEADER_LEN => {
                    self.state = State::Head { scanned: 0 };
                    return Err(FramingError::InvalidHeader(format!(
                        "no empty line ends the header block within {MAX_HEADER_LEN} bytes; \
                         the peer is not sending `Content-Length` framing"
                    )));
                }
                None => {
                    self.state = State::Head {
                        scanned: line_start,
                    };
                    return Ok(None);
                }
            }
        };

        let head = parse_head(&src[..end]);
        src.advance(end);
        self.state = State::Head { scanned: 0 };
        head.map(Some)
    }
}

impl Default for ContentLengthCodec {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder for ContentLengthCodec {
    type Item = Frame;
    type Error = FramingError;

    /// Splits the next complete message off `src`, or refuses one.
    fn decode(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        self.large.arrived(src);
        let frame = self.next_frame(src);
        if let Ok(None) = frame {
            self.large.wait(src);
        }
        frame
    }

    /// Like [`decode`](Self::decode), then checks that the stream did not end
    /// in the middle of a message.
    fn decode_eof(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        if let Some(frame) = self.decode(src)? {
            return Ok(Some(frame));
        }
        if let State::Refuse { len } = self.state {
            // A body over the cap cut short before its head was in: it is
            // refused all the same, with what came of it.
            let came = src.len();
            return Ok(Some(self.refuse(src, len, came)));
        }
        let state = self.state;
        self.state = State::Head { scanned: 0 };
        let received = src.len();
        src.clear();
        match state {
            // `decode` skipped any whitespace left between messages.
            State::Head { .. } if received == 0 => Ok(None),
            State::Head { .. } => Err(unexpected_eof(format!(
                "the stream ended inside a message header, after {received} bytes \
                 and before the empty line that ends it"
            ))),
            State::Body { len } => Err(unexpected_eof(format!(
                "the stream ended {} bytes short of a {len}-byte message body",
                len.saturating_sub(received)
            ))),
            State::Refuse { .. } => unreachable!("refused above"),
            // A refused message cut short: nothing more to report.
            State::Discard { .. } => Ok(None),
        }
    }
}

impl ContentLengthCodec {
    /// The next complete message split off `src`, a refusal, or `None` when
    /// more bytes are needed.
    fn next_frame(&mut self, src: &mut BytesMut) -> Result<Option<Frame>, FramingError> {
        loop {
            match self.state {
                State::Head { scanned } => {
                    let Some(head) = self.decode_head(src, scanned)? else {
                        return Ok(None);
                    };
                    // Checked before anything is reserved for the body: it is
                    // refused (answered) once its head is in, and its bytes
                    // are dropped as they arrive, so the stream stays aligned
                    // on the next message and holds no more than one read of
                    // it at a time.
                    if head.len > self.max_frame_len {
                        self.state = State::Refuse { len: head.len };
                        continue;
                    }
                    // Dropped the same way, and the stream stays aligned.
                    if let Some(charset) = head.unsupported_charset {
                        self.state = State::Discard {
                            remaining: head.len,
                        };
                        return Ok(Some(Frame::Refused(FrameRefusal::UnsupportedCharset(
                            charset,
                        ))));
                    }
                    self.state = State::Body { len: head.len };
                }
                State::Body { len } => {
                    if src.len() < len {
                        // Within the cap: safe to make room for the rest.
                        self.large.reserve(src, len);
                        return Ok(None);
                    }
                    self.state = State::Head { scanned: 0 };
                    let frame = self.large.split(src, len, len);
                    return Ok(Some(Frame::Message(frame)));
                }
                State::Refuse { len } => {
                    let head = cmp::min(HEAD_LEN, len);
                    if src.len() < head {
                        return Ok(None);
                    }
                    return Ok(Some(self.refuse(src, len, head)));
                }
                State::Discard { remaining } => {
                    let n = cmp::min(remaining, src.len());
                    src.advance(n);
                    let remaining = remaining - n;
                    if remaining > 0 {
                        self.state = State::Discard { remaining };
                        return Ok(None);
                    }
                    self.state = State::Head { scanned: 0 };
                }
            }
        }
    }
}

impl ContentLengthCodec {
    /// Refuses the body of `len` bytes whose first `head` bytes are in
    /// `src`, and goes on to drop the rest of it.
    fn refuse(&mut self, src: &mut BytesMut, len: usize, head: usize) -> Frame {
        let head = src.split_to(head).freeze();
        self.state = State::Discard {
            remaining: len - head.len(),
        };
        Frame::Refused(FrameRefusal::TooLong {
            limit: self.max_frame_len,
            head,
        })
    }
}

impl Encoder<Bytes> for ContentLengthCodec {
    type Error = FramingError;

    /// Appends `Content-Length: N\r\n\r\n` and `item` to `dst`.
    fn encode(&mut self, item: Bytes, dst: &mut BytesMut) -> Result<(), FramingError> {
        dst.reserve(HEADER_MAX + item.len());
        write_header(item.len(), dst);
        dst.extend_from_slice(&item);
        Ok(())
    }
}

/// The longest header [`write_header`] writes.
const HEADER_MAX: usize = b"Content-Length: ".len() + MAX_DIGITS + b"\r\n\r\n".len();

/// Appends `Content-Length: len\r\n\r\n` to `dst`.
pub(crate) fn write_header(len: usize, dst: &mut BytesMut) {
    let mut digits = [0u8; MAX_DIGITS];
    let len = format_decimal(len, &mut digits);
    dst.reserve(HEADER_MAX);
    dst.extend_from_slice(b"Content-Length: ");
    dst.extend_from_slice(len);
    dst.extend_from_slice(b"\r\n\r\n");
}

fn unexpected_eof(message: String) -> FramingError {
    FramingError::Io(io::Error::new(io::ErrorKind::UnexpectedEof, message))
}

/// Writes `n` in decimal at the end of `buf` and returns the digits.
fn format_decimal(mut n: usize, buf: &mut [u8; MAX_DIGITS]) -> &[u8] {
    let mut start = buf.len();
    for slot in buf.iter_mut().rev() {
        // `n % 10` is a single digit.
        *slot = b'0' + (n % 10) as u8;
        start -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[start..]
}

/// Returns `line` without one trailing `\r`.
fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Parses a complete header block, the empty line that ends it included.
fn parse_head(block: &[u8]) -> Result<Head, FramingError> {
    let mut len = None;
    let mut unsupported_charset = None;

    for line in block.split(|&b| b == b'\n').map(trim_cr) {
        if line.is_empty() {
            // The empty line that ends the block.
            continue;
        }
        let Some(colon) = memchr(b':', line) else {
            return Err(FramingError::InvalidHeader(format!(
                "header line `{}` has no `:`, expected `Name: value`",
                show(line)
            )));
        };
        let name = line[..colon].trim_ascii();
        let value = line[colon + 1..].trim_ascii();

        if name.eq_ignore_ascii_case(b"content-length") {
            let n = parse_length(value)?;
            match len {
                Some(previous) if previous != n => {
                    return Err(FramingError::InvalidHeader(format!(
                        "two `Content-Length` headers disagree: {previous} and {n}"
                    )));
                }
                _ => len = Some(n),
            }
        } else if name.eq_ignore_ascii_case(b"content-type") {
            unsupported_charset = unsupported_charset.or_else(|| charset_refusal(value));
        }
    }

    match len {
        Some(len) => Ok(Head {
            len,
            unsupported_charset,
        }),
        None => Err(FramingError::InvalidHeader(
            "the header block has no `Content-Length` header".to_owned(),
        )),
    }
}

/// Parses a `Content-Length` value: decimal digits only (no sign, no space).
fn parse_length(value: &[u8]) -> Result<usize, FramingError> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return Err(FramingError::InvalidHeader(format!(
            "`Content-Length: {}` is not a decimal byte count",
            show(value)
        )));
    }
    value
        .iter()
        .try_fold(0usize, |n, &digit| {
            n.checked_mul(10)?.checked_add(usize::from(digit - b'0'))
        })
        .ok_or_else(|| {
            FramingError::InvalidHeader(format!("`Content-Length: {}` is too large", show(value)))
        })
}

/// Returns the charset named by a `Content-Type` value if it is not UTF-8.
/// A missing charset means UTF-8.
fn charset_refusal(content_type: &[u8]) -> Option<String> {
    let charset = content_type
        .split(|&b| b == b';')
        .skip(1)
        .filter_map(|param| {
            let eq = memchr(b'=', param)?;
            let (name, value) = (&param[..eq], &param[eq + 1..]);
            name.trim_ascii()
                .eq_ignore_ascii_case(b"charset")
                .then(|| trim_quotes(value.trim_ascii()))
        })
        .next()?;
    if charset.eq_ignore_ascii_case(b"utf-8") || charset.eq_ignore_ascii_case(b"utf8") {
        None
    } else {
        Some(String::from_utf8_lossy(charset).into_owned())
    }
}

/// Returns `value` without the quotes around it, if any.
fn trim_quotes(value: &[u8]) -> &[u8] {
    let value = value
        .strip_prefix(b"\"")
        .or_else(|| value.strip_prefix(b"'"))
        .unwrap_or(value);
    value
        .strip_suffix(b"\"")
        .or_else(|| value.strip_suffix(b"'"))
        .unwrap_or(value)
}

/// Shows peer bytes in an error message: escaped, and cut after 64 bytes.
fn show(bytes: &[u8]) -> String {
    const SHOWN: usize = 64;
    let mut shown = bytes[..cmp::min(bytes.len(), SHOWN)]
        .escape_ascii()
        .to_string();
    if bytes.len() > SHOWN {
        shown.push_str("...");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_decimal_writes_every_magnitude() {
        let mut buf = [0u8; MAX_DIGITS];
        for n in [0, 7, 10, 52, 999, 1000, 8 * 1024 * 1024, usize::MAX] {
            assert_eq!(format_decimal(n, &mut buf), n.to_string().as_bytes());
        }
    }

    #[test]
    fn charset_parameter_is_found_among_others() {
        assert_eq!(charset_refusal(b"application/json"), None);
        assert_eq!(charset_refusal(b"application/json; charset=UTF-8"), None);
        assert_eq!(charset_refusal(b"text/plain;x=1; Charset = \"utf8\""), None);
        assert_eq!(
            charset_refusal(b"text/plain; q=1;charset='latin1'"),
            Some("latin1".to_owned())
        );
        assert_eq!(
            charset_refusal(b"text/plain; charset="),
            Some(String::new())
        );
    }

    #[test]
    fn length_accepts_only_plain_digits() {
        assert_eq!(parse_length(b"0").ok(), Some(0));
        assert_eq!(parse_length(b"0052").ok(), Some(52));
        for bad in [
            &b""[..],
            b"+5",
            b"-1",
            b"1 2",
            b"0x10",
            b"5.0",
            b"99999999999999999999999",
        ] {
            assert!(
                parse_length(bad).is_err(),
                "{:?}",
                bad.escape_ascii().to_string()
            );
        }
    }
}
