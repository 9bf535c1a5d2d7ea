//! Writing outbound envelopes.

use std::cell::RefCell;

use bytes::{Bytes, BytesMut};

use crate::id::{write_json_str, Id};
use crate::message::{ErrorCode, ErrorObject};

use super::{is_reserved_member, Dialect, Extras};

fn write_head(out: &mut Vec<u8>, dialect: Dialect) {
    match dialect {
        Dialect::Strict => out.extend_from_slice(br#"{"jsonrpc":"2.0""#),
        Dialect::Lenient => out.push(b'{'),
    }
}

fn write_sep(out: &mut Vec<u8>, dialect: Dialect) {
    if dialect == Dialect::Strict || out.len() > 1 {
        out.push(b',');
    }
}

fn write_extras(out: &mut Vec<u8>, extras: &Extras) -> Result<(), serde_json::Error> {
    for (key, value) in extras {
        if is_reserved_member(key) {
            return Err(serde::ser::Error::custom(format!(
                "the extra member `{key}` is part of the JSON-RPC envelope; choose another name"
            )));
        }
        out.push(b',');
        write_json_str(out, key);
        out.push(b':');
        serde_json::to_writer(&mut *out, value)?;
    }
    Ok(())
}

/// Writes a request (`id` given) or a notification into `out`.
///
/// `params` that serialize to `null` are left out; anything that is not an
/// object or an array is an error, as JSON-RPC requires structured params.
pub(super) fn write_call<P: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    dialect: Dialect,
    id: Option<&Id>,
    method: &str,
    params: Option<&P>,
    extras: &Extras,
) -> Result<(), serde_json::Error> {
    write_head(out, dialect);
    if let Some(id) = id {
        write_sep(out, dialect);
        out.extend_from_slice(br#""id":"#);
        id.write_json(out);
    }
    write_sep(out, dialect);
    out.extend_from_slice(br#""method":"#);
    write_json_str(out, method);
    if let Some(params) = params {
        let mark = out.len();
        out.extend_from_slice(br#","params":"#);
        let start = out.len();
        serde_json::to_writer(&mut *out, params)?;
        match out.get(start) {
            Some(b'{' | b'[') => {}
            Some(b'n') => out.truncate(mark),
            _ => {
                return Err(serde::ser::Error::custom(
                    "params must serialize to an object, an array or null (for none)",
                ))
            }
        }
    }
    write_extras(out, extras)?;
    out.push(b'}');
    Ok(())
}

/// Writes a success response into `out`.
pub(super) fn write_result<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    dialect: Dialect,
    id: &Id,
    result: &T,
    extras: &Extras,
) -> Result<(), serde_json::Error> {
    write_response(out, dialect, id, br#","result":"#, result, extras)
}

/// Writes an error response into `out`.
pub(super) fn write_error(
    out: &mut Vec<u8>,
    dialect: Dialect,
    id: &Id,
    error: &ErrorObject,
    extras: &Extras,
) -> Result<(), serde_json::Error> {
    write_response(out, dialect, id, br#","error":"#, error, extras)
}

/// A response envelope: the id, then `member` (`"result"` or `"error"`)
/// holding `value`.
fn write_response<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    dialect: Dialect,
    id: &Id,
    member: &[u8],
    value: &T,
    extras: &Extras,
) -> Result<(), serde_json::Error> {
    write_head(out, dialect);
    write_sep(out, dialect);
    out.extend_from_slice(br#""id":"#);
    id.write_json(out);
    out.extend_from_slice(member);
    serde_json::to_writer(&mut *out, value)?;
    write_extras(out, extras)?;
    out.push(b'}');
    Ok(())
}

/// A message longer than this (in bytes) keeps the encode buffer it was
/// written into instead of being copied out of it; a buffer whose room grew
/// past it is replaced once its message is copied out.
pub(crate) const KEEP: usize = 64 * 1024;

/// The size of the chunks that messages of at most [`KEEP`] bytes share.
pub(crate) const CHUNK: usize = 16 * 1024;

/// The room a fresh encode buffer starts with.
pub(crate) const FRESH: usize = 1024;

/// Runs `write` on a per-thread buffer that is reused from one message to
/// the next, and returns what it wrote.
///
/// A small message is copied into a per-thread chunk of a few KiB that many
/// messages share, so it costs no allocation of its own (a new chunk is
/// allocated when one is full, and freed when its last message is written);
/// a large one takes the buffer itself rather than being copied. Either way
/// the buffer's growth is paid once per thread, not once per message.
pub(crate) fn encode_with(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), serde_json::Error>,
) -> Result<Bytes, serde_json::Error> {
    thread_local! {
        static BUFFER: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(FRESH));
        static CHUNKS: RefCell<BytesMut> = RefCell::new(BytesMut::new());
    }
    BUFFER.with(|cell| {
        // A `Serialize` impl that itself sends a message finds the buffer in
        // use; it gets a fresh one.
        let Ok(mut buffer) = cell.try_borrow_mut() else {
            let mut out = Vec::with_capacity(128);
            write(&mut out)?;
            return Ok(Bytes::from(out));
        };
        buffer.clear();
        write(&mut buffer)?;
        if buffer.len() > KEEP {
            let mut out = std::mem::replace(&mut *buffer, Vec::with_capacity(FRESH));
            // The buffer grew by doubling: up to twice the message. Given
            // back at that size, glibc raises its mmap threshold to it, and
            // the next large buffers (the answer read, its decoded text) come
            // from the heap, where what they free stays resident (an 8 MiB
            // round trip peaked at 2.1-3.0× the payload instead of 2.0×).
            // Shrinking an mmapped block is a remap, not a copy.
            out.shrink_to_fit();
            return Ok(Bytes::from(out));
        }
        let bytes = CHUNKS.with(|chunks| {
            let mut chunk = chunks.borrow_mut();
            if chunk.capacity() - chunk.len() < buffer.len() {
                *chunk = BytesMut::with_capacity(CHUNK);
            }
            chunk.extend_from_slice(&buffer);
            chunk.split().freeze()
        });
        // Only once the message is copied out: a buffer that grew past
        // `KEEP` for this message is let go, so a thread does not keep the
        // memory of its largest small message. (Letting it go before the
        // copy sent every message of 32-64 KiB as an empty frame.)
        if buffer.capacity() > KEEP {
            *buffer = Vec::with_capacity(FRESH);
        }
        Ok(bytes)
    })
}

/// A request (`id` given) or a notification, as bytes.
pub fn call_body<P: serde::Serialize + ?Sized>(
    dialect: Dialect,
    id: Option<&Id>,
    method: &str,
    params: Option<&P>,
    extras: &Extras,
) -> Result<Bytes, serde_json::Error> {
    encode_with(|out| write_call(out, dialect, id, method, params, extras))
}

/// A response, as bytes: the one place every answer is built.
///
/// `Ok` holds a success response, `Err` an error response. Never fails to
/// produce an answer: a result that cannot be encoded becomes a -32603
/// answer saying why, and an error whose data cannot be encoded goes out
/// bare.
pub fn response<T: serde::Serialize + ?Sized>(
    dialect: Dialect,
    id: &Id,
    outcome: Result<&T, &ErrorObject>,
) -> Result<Bytes, Bytes> {
    // No answer carries extras; one empty map for all of them (making and
    // dropping one per answer showed in the profiles).
    static NO_EXTRAS: std::sync::LazyLock<Extras> = std::sync::LazyLock::new(Extras::new);
    let no_extras = &*NO_EXTRAS;
    let unencodable;
    let error = match outcome {
        Ok(result) => match encode_with(|out| write_result(out, dialect, id, result, no_extras)) {
            Ok(body) => return Ok(body),
            Err(e) => {
                unencodable =
                    ErrorObject::internal_error(format!("the result could not be encoded: {e}"));
                &unencodable
            }
        },
        Err(error) => error,
    };
    Err(
        encode_with(|out| write_error(out, dialect, id, error, no_extras)).unwrap_or_else(|_| {
            let bare = ErrorObject::standard(error.code);
            let mut out = Vec::with_capacity(96);
            let _ = write_error(&mut out, dialect, id, &bare, no_extras);
            Bytes::from(out)
        }),
    )
}

/// An error response, as bytes (see [`response`]).
pub fn error_response(dialect: Dialect, id: &Id, error: &ErrorObject) -> Bytes {
    response::<()>(dialect, id, Err(error)).unwrap_or_else(|body| body)
}

/// The answers of one batch, gathered into one array.
///
/// Every answer owed is counted with [`hold`](Self::hold) before it is
/// given; the array is complete when the last one is in and the reader has
/// walked the whole batch. What the array holds is bounded by `budget`
/// bytes: an answer that would go over it is replaced by a -32000 error
/// for its id, so a batch of large results cannot hold unbounded memory.
#[derive(Debug)]
pub(crate) struct BatchAnswers {
    state: std::sync::Mutex<BatchState>,
    budget: usize,
    dialect: Dialect,
}

#[derive(Debug)]
struct BatchState {
    answers: Vec<Bytes>,
    /// Bytes held in `answers`.
    bytes: usize,
    /// Answers still to come, plus one for the reader until it has walked
    /// the whole batch.
    holds: usize,
}

impl BatchAnswers {
    /// Answers of at most `budget` bytes in all (error answers aside).
    pub(crate) fn new(budget: usize, dialect: Dialect) -> Self {
        BatchAnswers {
            state: std::sync::Mutex::new(BatchState {
                answers: Vec::new(),
                bytes: 0,
                holds: 1,
            }),
            budget,
            dialect,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BatchState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One more answer will come later.
    pub(crate) fn hold(&self) {
        self.lock().holds += 1;
    }

    /// Adds an answer that needs no hold (the reader's own).
    pub(crate) fn add(&self, id: &Id, body: Bytes) {
        let mut state = self.lock();
        self.push(&mut state, id, body);
    }

    fn push(&self, state: &mut BatchState, id: &Id, body: Bytes) {
        let body = if state.bytes.saturating_add(body.len()) > self.budget {
            let error = ErrorObject::new(
                ErrorCode::SERVER_OVERLOADED,
                format!(
                    "the batch's answers are over the output budget of {} bytes; \
                     send this request on its own",
                    self.budget
                ),
            );
            error_response(self.dialect, id, &error)
        } else {
            state.bytes += body.len();
            body
        };
        state.answers.push(body);
    }

    /// Releases one hold, with its answer if it has one (`None`: no answer,
    /// as for a cancelled MCP request, or the reader's own hold). Returns the
    /// array once the last hold is released and at least one answer is in.
    pub(crate) fn release(&self, answer: Option<(&Id, Bytes)>) -> Option<Bytes> {
        let answers = {
            let mut state = self.lock();
            if let Some((id, body)) = answer {
                self.push(&mut state, id, body);
            }
            state.holds -= 1;
            if state.holds > 0 {
                return None;
            }
            std::mem::take(&mut state.answers)
        };
        if answers.is_empty() {
            return None;
        }
        let len = answers.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
        let mut array = Vec::with_capacity(len);
        array.push(b'[');
        for (i, answer) in answers.iter().enumerate() {
            if i > 0 {
                array.push(b',');
            }
            array.extend_from_slice(answer);
        }
        array.push(b']');
        Some(Bytes::from(array))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_message_keeps_no_room_beyond_itself() {
        let text = "x".repeat(300 * 1024);
        let bytes = encode_with(|out| serde_json::to_writer(out, &text)).unwrap();
        assert_eq!(bytes.len(), text.len() + 2);
        let buffer = bytes.try_into_mut().expect("the only handle");
        assert_eq!(buffer.capacity(), buffer.len());
        // A small one after it still shares a chunk.
        let small = encode_with(|out| serde_json::to_writer(out, "hi")).unwrap();
        assert_eq!(&small[..], b"\"hi\"");
    }
}

#[cfg(test)]
mod differential;

#[cfg(test)]
mod sweep {
    //! The shared encode buffer and chunks against a plain
    //! `serde_json::to_vec`, across each of their thresholds, on a fresh
    //! thread per size and on one thread carrying its buffers from message
    //! to message in changing orders.

    use super::*;

    /// Every size within a few bytes of each threshold, and every power of
    /// two up to 1 MiB.
    fn sizes() -> Vec<usize> {
        let mut sizes: Vec<usize> = (0..=20).map(|p| 1 << p).collect();
        for threshold in [FRESH, CHUNK, 2 * CHUNK, KEEP, 2 * KEEP] {
            sizes.extend(threshold - 3..=threshold + 3);
        }
        sizes.sort_unstable();
        sizes.dedup();
        sizes
    }

    /// A JSON string whose encoding is `len` bytes (at least 2).
    fn text(len: usize) -> String {
        "y".repeat(len.max(2) - 2)
    }

    fn check(len: usize) {
        let value = text(len);
        let plain = serde_json::to_vec(&value).unwrap();
        let ours = encode_with(|out| serde_json::to_writer(out, &value)).unwrap();
        assert_eq!(ours.len(), plain.len(), "a message of {len} bytes");
        assert!(ours[..] == plain[..], "a message of {len} bytes");
    }

    #[test]
    fn each_size_encodes_whole_on_a_fresh_thread() {
        for len in sizes() {
            std::thread::spawn(move || check(len)).join().unwrap();
        }
    }

    #[test]
    fn each_size_encodes_whole_after_any_other() {
        let sizes = sizes();
        let mut descending = sizes.clone();
        descending.reverse();
        // A fixed shuffle: each size after a larger and before a smaller
        // one, and the other way round.
        let mut shuffled = sizes.clone();
        let n = shuffled.len();
        for i in 0..n {
            shuffled.swap(i, (i * 7919 + 13) % n);
        }
        for order in [sizes, descending, shuffled] {
            std::thread::spawn(move || {
                for len in order {
                    check(len);
                }
            })
            .join()
            .unwrap();
        }
    }

    #[test]
    fn a_message_under_keep_after_one_over_it_is_whole() {
        // The lost-frame case: the buffer grew past `KEEP` for a message of
        // 32-64 KiB, and was replaced before that message was copied out.
        std::thread::spawn(|| check(33_000)).join().unwrap();
    }
}
