//! Server-sent events (`text/event-stream`), as MCP's Streamable HTTP
//! transport carries JSON-RPC messages: the encoder the server writes with
//! and the decoder the client reads with.
//!
//! ```text
//! : keep-alive                         a comment: ignored
//!
//! id: 3-17                             the event's id (for Last-Event-ID)
//! data: {"jsonrpc":"2.0","id":1,...}   the message; one `data:` line per line
//!                                      a blank line ends the event
//! ```
//!
//! Lines end with `\n`, `\r\n` or `\r`. Fields other than `id`, `data`,
//! `event` and `retry` are ignored, as the SSE standard says.

use bytes::{Buf as _, Bytes, BytesMut};

/// A comment line the server sends on an idle stream, so proxies and
/// clients do not time it out.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))] // the server's
pub(crate) const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// One event carrying `data`, with the id `id`.
///
/// A message that spans lines (a handler's pre-formatted JSON) becomes one
/// `data:` line per line; the reader joins them with `\n`, which JSON reads
/// as whitespace (a raw line break can only sit between JSON tokens).
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))] // the server's
pub(crate) fn encode_event(id: Option<&str>, data: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(data.len() + 32);
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.extend_from_slice(b"\n");
    }
    for line in lines(data) {
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n");
    }
    out.extend_from_slice(b"\n");
    out.freeze()
}

/// `data` split at `\r\n`, `\n` and `\r`; an empty `data` is one empty line.
#[cfg_attr(not(feature = "mcp-http"), allow(dead_code))] // the server's
fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.iter().position(|&b| b == b'\n' || b == b'\r') {
            Some(at) => {
                let skip = if text[at] == b'\r' && text.get(at + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                rest = Some(&text[at + skip..]);
                Some(&text[..at])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// One event read from a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event:` type; `None` for the default (`message`).
    pub(crate) kind: Option<String>,
    /// Its `data:` lines, joined with `\n`.
    pub(crate) data: Bytes,
}

impl SseEvent {
    /// Whether it carries a message: the default type (or `message`) and
    /// some data.
    pub(crate) fn is_message(&self) -> bool {
        !self.data.is_empty() && self.kind.as_deref().is_none_or(|k| k == "message")
    }
}

/// The room a line gets past the cap on an event's data, for its field's
/// name and separator (`data: `, `event: `, `id: `).
const FIELD_NAME_ROOM: usize = 16;

/// An event (or a line) longer than the decoder's cap.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a server-sent event is over the {limit}-byte limit")]
pub(crate) struct EventTooLong {
    pub(crate) limit: usize,
}

/// Splits a `text/event-stream` body into events, as its chunks arrive.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    buffer: BytesMut,
    limit: usize,
    data: BytesMut,
    has_data: bool,
    kind: Option<String>,
    /// The last event id the stream set (kept across events, as the
    /// standard's "last event ID buffer").
    last_id: Option<String>,
    /// The reconnection delay the server asked for, in milliseconds.
    retry: Option<u64>,
    started: bool,
}

impl SseDecoder {
    /// A decoder taking events of at most `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        SseDecoder {
            buffer: BytesMut::new(),
            limit,
            data: BytesMut::new(),
            has_data: false,
            kind: None,
            last_id: None,
            retry: None,
            started: false,
        }
    }

    /// The id of the last event with one (what `Last-Event-ID` resumes
    /// from).
    pub(crate) fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The reconnection delay the server asked for with `retry:`.
    pub(crate) fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// Adds a chunk of the body.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next complete event, if the chunks so far hold one.
    ///
    /// # Errors
    ///
    /// [`EventTooLong`] when a line or an event grows over the cap; the
    /// stream cannot be read further.
    pub(crate) fn next_event(&mut self) -> Result<Option<SseEvent>, EventTooLong> {
        loop {
            if !self.started {
                // A byte-order mark may open the stream.
                if self.buffer.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buffer) {
                    return Ok(None);
                }
                if self.buffer.starts_with(b"\xEF\xBB\xBF") {
                    self.buffer.advance(3);
                }
                self.started = true;
            }
            let Some(end) = self.buffer.iter().position(|&b| b == b'\n' || b == b'\r') else {
                // A line is its field's name and value: `data: ` and up to
                // `limit` bytes of data.
                if self.buffer.len() > self.limit + FIELD_NAME_ROOM {
                    return Err(EventTooLong { limit: self.limit });
                }
                return Ok(None);
            };
            let skip = if self.buffer[end] == b'\r' {
                match self.buffer.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    // A `\r` at the end: a `\n` may follow in the next chunk.
                    None => return Ok(None),
                }
            } else {
                1
            };
            let line = self.buffer.split_to(end);
            self.buffer.advance(skip);
            if line.is_empty() {
                if let Some(event) = self.dispatch() {
                    return Ok(Some(event));
                }
                continue;
            }
            self.field(&line)?;
        }
    }

    /// Reads one non-empty line.
    fn field(&mut self, line: &[u8]) -> Result<(), EventTooLong> {
        if line[0] == b':' {
            return Ok(());
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"data" => {
                // Lines after the first are joined with a newline.
                if self.data.len() + usize::from(self.has_data) + value.len() > self.limit {
                    return Err(EventTooLong { limit: self.limit });
                }
                if self.has_data {
                    self.data.extend_from_slice(b"\n");
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"event" => self.kind = Some(String::from_utf8_lossy(value).into_owned()),
            b"retry" => {
                if let Some(ms) = std::str::from_utf8(value)
                    .ok()
                    .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|v| v.parse().ok())
                {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Ends the event being read at a blank line; `None` when it had no
    /// data (an id or a type alone dispatches nothing).
    fn dispatch(&mut self) -> Option<SseEvent> {
        let kind = self.kind.take();
        if !std::mem::take(&mut self.has_data) {
            self.data.clear();
            return None;
        }
        Some(SseEvent {
            kind,
            data: self.data.split().freeze(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(decoder: &mut SseDecoder) -> Vec<SseEvent> {
        let mut events = Vec::new();
        while let Some(event) = decoder.next_event().unwrap() {
            events.push(event);
        }
        events
    }

    #[test]
    fn encoded_events_decode_at_any_split() {
        let mut wire = Vec::new();
        wire.extend_from_slice(KEEP_ALIVE);
        wire.extend_from_slice(&encode_event(Some("1-1"), b"{\"a\":\n1}"));
        wire.extend_from_slice(&encode_event(None, b"x\r\ny\rz"));
        wire.extend_from_slice(b"id: 1-9\n\nevent: other\ndata:q\n\n");
        for split in 0..wire.len() {
            let mut decoder = SseDecoder::new(1024);
            decoder.push(&wire[..split]);
            let mut events = all(&mut decoder);
            decoder.push(&wire[split..]);
            events.extend(all(&mut decoder));
            let data: Vec<&[u8]> = events.iter().map(|e| &e.data[..]).collect();
            assert_eq!(
                data,
                [&b"{\"a\":\n1}"[..], b"x\ny\nz", b"q"],
                "split {split}"
            );
            assert!(events[0].is_message() && !events[2].is_message());
            assert_eq!(decoder.last_id(), Some("1-9"));
        }
    }

    #[test]
    fn an_event_over_the_cap_is_an_error() {
        let mut decoder = SseDecoder::new(8);
        decoder.push(b"data: 0123456789\n\n");
        assert_eq!(decoder.next_event(), Err(EventTooLong { limit: 8 }));
        let mut decoder = SseDecoder::new(8);
        decoder.push(b"data: 0123456789012345678901234567890");
        assert_eq!(decoder.next_event(), Err(EventTooLong { limit: 8 }));
    }

    #[test]
    fn an_event_of_exactly_the_cap_is_taken_whole_and_one_more_byte_is_not() {
        for limit in [1, 2, 8, 100, 1024] {
            let exact = vec![b'x'; limit];
            // In one line, and in lines joined by newlines.
            let mut lines = Vec::new();
            for chunk in exact.chunks(3) {
                lines.extend_from_slice(b"data: ");
                lines.extend_from_slice(chunk);
                lines.push(b'\n');
            }
            lines.push(b'\n');
            let joined_len = limit + exact.chunks(3).count() - 1;
            for (wire, len) in [
                (encode_event(Some("7-1"), &exact), limit),
                (Bytes::from(lines), joined_len),
            ] {
                for split in 0..wire.len() {
                    // A cap of exactly the data's length.
                    let mut decoder = SseDecoder::new(len);
                    decoder.push(&wire[..split]);
                    let mut events = all(&mut decoder);
                    decoder.push(&wire[split..]);
                    events.extend(all(&mut decoder));
                    assert_eq!(events.len(), 1, "limit {limit}, split {split}");
                    assert_eq!(events[0].data.len(), len, "limit {limit}, split {split}");
                }
            }
            let mut decoder = SseDecoder::new(limit);
            let over = vec![b'x'; limit + 1];
            decoder.push(&encode_event(None, &over));
            assert_eq!(decoder.next_event(), Err(EventTooLong { limit }));
        }
    }
}
