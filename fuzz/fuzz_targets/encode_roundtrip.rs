//! The encode side: JSON values built from the input (strings with escapes,
//! non-ASCII and control characters, nested arrays and objects, numbers,
//! from a few bytes to a few hundred KiB, the size chosen by a repeat count)
//! are written as results, raw results, error data, raw error data and
//! batch answers by `Router::respond`, as notifications and requests by a
//! long-lived `Peer` over `Transport::pair` (the request answered with the
//! router's answer), and as owned messages by `Message::to_json`. Several
//! messages of different sizes go out one after another on one thread, so
//! the per-thread encode buffer carries its state from message to message
//! (it once sent every 32-64 KiB message as an empty line after a larger
//! one). How large the values may grow is the input's tier (see
//! [`SMALL`]): most inputs stay under a few KiB, one in 64 reaches past
//! 64 KiB, one in 1024 a few hundred KiB. Every message must read back as the value it carried, byte for
//! byte where raw JSON passed through; then all of them are framed with
//! `LineCodec` and `ContentLengthCodec` and must decode back, in chunks
//! the input chooses, as the same bodies.
//!
//! ```text
//! byte 0      the chunk size the framed streams are decoded in (0: whole)
//! then, up to MAX_MESSAGES times:
//!   1 byte    the kind of message (KINDS)
//!   1 byte    the id: integer or string, and the method's suffix
//!   a value   (see Reader::value)
//! ```

#![no_main]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use bytes::{Bytes, BytesMut};
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::{ContentLengthCodec, Frame, LineCodec};
use jsonrpc_runtime::config::DEFAULT_OUTBOUND_BUDGET;
use jsonrpc_runtime::message::{
    Dialect, Extras, Message, Notification, ParseOptions, Parsed, Request,
};
use jsonrpc_runtime::{Context, ErrorObject, Id, Peer, Reply, Router, Transport};
use jsonrpc_runtime_fuzz::{decode_in_chunks, same_json};
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::codec::Encoder;

/// At most this many messages per input.
const MAX_MESSAGES: usize = 8;

/// How large the values of one input may grow, by tier: the encoded size
/// of one value and of all of them, about. A byte costs tens of
/// nanoseconds on its way through every check under coverage
/// instrumentation, so most inputs stay small and a hash of the input
/// picks the few that may grow: one in [`MEDIUM_ONE_IN`] past `KEEP`
/// (64 KiB, so 16 KiB, 32-64 KiB and over-64-KiB messages occur), one in
/// [`LARGE_ONE_IN`] to a few hundred KiB. A mutation of a large input is
/// mostly small again, so the large ones do not take over the run.
const SMALL: (usize, usize) = (2 * 1024, 2 * 1024);
const MEDIUM: (usize, usize) = (80 * 1024, 96 * 1024);
const LARGE: (usize, usize) = (320 * 1024, 512 * 1024);
const MEDIUM_ONE_IN: u32 = 64;
const LARGE_ONE_IN: u32 = 1024;

/// The tier of `data` (see [`SMALL`]): FNV-1a of the input.
fn tier(data: &[u8]) -> (usize, usize) {
    let hash = data.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    if hash % LARGE_ONE_IN == 0 {
        LARGE
    } else if hash % MEDIUM_ONE_IN == 1 {
        MEDIUM
    } else {
        SMALL
    }
}

/// How deep arrays and objects nest.
const MAX_DEPTH: usize = 6;

/// The code of the error answers that carry a value as their data.
const FAIL: i64 = -32001;

fn router() -> Router {
    Router::new()
        .request("echo", |(v,): (Value,), _: Context| async move {
            Ok::<_, ErrorObject>(v)
        })
        .request("raw", |v: Box<RawValue>, _: Context| async move {
            Reply::<(), ErrorObject>::Raw(Ok(v))
        })
        .request("fail", |(v,): (Value,), _: Context| async move {
            let error = ErrorObject::new(FAIL, "failed");
            Err::<(), _>(error.with_data(&v).expect("a Value always encodes"))
        })
        .request("fail_raw", |v: Box<RawValue>, _: Context| async move {
            let mut error = ErrorObject::new(FAIL, "failed");
            error.data = Some(v);
            Reply::<(), ErrorObject>::Raw(Err(error))
        })
}

/// Reads the input from the front; past its end every read is zero.
struct Reader<'a> {
    data: &'a [u8],
    /// Encoded bytes the values of this input may still take, about.
    budget: usize,
    /// Encoded bytes one value may take, about.
    value_max: usize,
}

/// Characters beyond ASCII: two, three and four UTF-8 bytes, the line and
/// paragraph separators JavaScript treats as newlines, a BOM, the
/// replacement character, the ends of each range.
const WIDE: [char; 16] = [
    'é',
    'ß',
    '€',
    '中',
    '😀',
    '\u{2028}',
    '\u{2029}',
    '\u{feff}',
    '\u{fffd}',
    '\u{7ff}',
    '\u{800}',
    '\u{ffff}',
    '\u{10000}',
    '\u{10ffff}',
    '\u{80}',
    '\u{9f}',
];

impl Reader<'_> {
    fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0; N];
        for b in &mut out {
            *b = self.byte();
        }
        out
    }

    /// A character: ASCII as it is (control characters, quotes and
    /// backslashes included), the rest from `WIDE` or spread over the
    /// planes (a surrogate's place becomes `?`).
    fn char(&mut self) -> char {
        match self.byte() {
            b @ 0..=0x7f => char::from(b),
            b @ 0x80..=0xbf => WIDE[usize::from(b % 16)],
            b => char::from_u32(0xa0 + u32::from(b - 0xc0) * 17_477).unwrap_or('?'),
        }
    }

    /// A string of up to 31 characters.
    fn short_string(&mut self) -> String {
        let len = self.byte() % 32;
        (0..len).map(|_| self.char()).collect()
    }

    /// How many times to repeat something of `unit` encoded bytes: up to
    /// 2^18 times, within what the budget has left.
    fn repeat(&mut self, unit: usize) -> usize {
        let [lo, hi, shift] = self.bytes::<3>();
        let wanted = usize::from(u16::from_le_bytes([lo, hi])) << (shift % 3);
        let room = self.budget.min(self.value_max) / unit.max(1);
        let count = wanted.min(room);
        self.budget -= count * unit;
        count
    }

    fn take(&mut self, n: usize) {
        self.budget = self.budget.saturating_sub(n);
    }

    /// A JSON value:
    ///
    /// ```text
    /// tag % 12   0 null, 1 bool, 2 i64, 3 u64, 4 f64 (non-finite: null),
    ///            5 a short string, 6 an array of up to 7 values,
    ///            7 an object of up to 7 members, 8 a short string repeated,
    ///            9 a value repeated in an array, 10 a small integer,
    ///            11 a string of one character repeated
    /// ```
    fn value(&mut self, depth: usize) -> Value {
        let tag = self.byte();
        let nested = depth < MAX_DEPTH;
        let value = match tag % 12 {
            0 => Value::Null,
            1 => Value::Bool(tag & 0x80 != 0),
            2 => Value::from(i64::from_le_bytes(self.bytes())),
            3 => Value::from(u64::from_le_bytes(self.bytes())),
            4 => Value::from(f64::from_le_bytes(self.bytes())),
            5 => Value::String(self.short_string()),
            6 if nested => {
                let n = self.byte() % 8;
                Value::Array((0..n).map(|_| self.value(depth + 1)).collect())
            }
            7 if nested => {
                let n = self.byte() % 8;
                let mut members = Map::new();
                for _ in 0..n {
                    let key = self.short_string();
                    members.insert(key, self.value(depth + 1));
                }
                Value::Object(members)
            }
            8 => {
                let unit = self.short_string();
                let encoded = serde_json::to_string(&unit)
                    .expect("a string encodes")
                    .len()
                    - 2;
                let count = self.repeat(encoded);
                Value::String(unit.repeat(count))
            }
            9 if nested => {
                let element = self.value(depth + 1);
                let encoded = serde_json::to_vec(&element).expect("a Value encodes").len() + 1;
                let count = self.repeat(encoded);
                Value::Array(vec![element; count])
            }
            11 => {
                let c = self.char();
                let encoded = serde_json::to_string(&c).expect("a char encodes").len() - 2;
                let count = self.repeat(encoded);
                Value::String(std::iter::repeat_n(c, count).collect())
            }
            _ => Value::from(tag),
        };
        self.take(8);
        value
    }
}

/// A value as params: itself when it is an array or an object, else in an
/// array of one. `pretty` writes it with newlines and indents, which a raw
/// value passes through as they are.
fn params_text(value: &Value, pretty: bool) -> String {
    let params = match value {
        Value::Array(_) | Value::Object(_) => value.clone(),
        _ => Value::Array(vec![value.clone()]),
    };
    if pretty {
        serde_json::to_string_pretty(&params).expect("a Value encodes")
    } else {
        serde_json::to_string(&params).expect("a Value encodes")
    }
}

fn id_text(id: &Id) -> String {
    serde_json::to_string(id).expect("an id encodes")
}

/// A frame of `method` with `params` (raw JSON text) under `id`, written
/// by hand: the plain path the encoded answers are checked against.
fn request_text(id: &Id, method: &str, params: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{params}}}"#,
        id_text(id)
    )
}

/// A response's members, kept raw.
type Members<'a> = BTreeMap<&'a str, &'a RawValue>;

/// Reads `bytes` as one response to `id`; panics unless it is one.
fn read_response<'a>(bytes: &'a [u8], id: &Id) -> Members<'a> {
    let members: Members<'a> = serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!(
            "an answer of {} bytes is not a response ({e}): {:.200}",
            bytes.len(),
            String::from_utf8_lossy(bytes)
        )
    });
    assert_eq!(members.get("jsonrpc").map(|v| v.get()), Some(r#""2.0""#));
    let answered: Id =
        serde_json::from_str(members.get("id").expect("an id").get()).expect("a valid id");
    assert_eq!(&answered, id);
    members
}

fn result_of<'a>(bytes: &'a [u8], id: &Id) -> &'a RawValue {
    let members = read_response(bytes, id);
    assert!(
        !members.contains_key("error"),
        "an error answer: {:.300}",
        String::from_utf8_lossy(bytes)
    );
    members.get("result").expect("a result")
}

fn data_of<'a>(bytes: &'a [u8], id: &Id) -> &'a RawValue {
    let members = read_response(bytes, id);
    assert!(
        !members.contains_key("result"),
        "a result answer: {:.300}",
        String::from_utf8_lossy(bytes)
    );
    let error: Members<'a> =
        serde_json::from_str(members.get("error").expect("an error").get()).expect("an object");
    assert_eq!(
        error.get("code").map(|v| v.get()),
        Some(FAIL.to_string().as_str())
    );
    error.get("data").expect("the error's data")
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:.200}"))
}

fn assert_same(got: &Value, want: &Value, what: &str) {
    assert!(
        same_json(got, want),
        "{what} changed: got {:.300}, want {:.300}",
        got.to_string(),
        want.to_string()
    );
}

/// The first element of the params `params_text` wrote, or the params.
fn unwrap_params(params: Value, value: &Value) -> Value {
    match (params, value) {
        (params, Value::Array(_) | Value::Object(_)) => params,
        (Value::Array(mut elements), _) if elements.len() == 1 => elements.remove(0),
        (other, _) => panic!("params are not the value in an array: {other:.200}"),
    }
}

/// The kinds of message a value is sent as.
const KINDS: u8 = 9;

/// The thread's peer, and the far end of its transport, which this target
/// reads and answers by hand.
struct Wire {
    peer: Peer,
    far: Transport,
}

async fn next_frame(far: &mut Transport) -> Bytes {
    match far.next().await {
        Some(Ok(Frame::Message(bytes))) => bytes,
        other => panic!("the peer sent no message: {other:?}"),
    }
}

/// The router's answer to a request frame, read with the default options.
async fn answer(router: &Router, frame: &str) -> Bytes {
    router
        .respond_with(frame.as_bytes(), &ParseOptions::default())
        .await
        .expect("an answer")
}

/// Sends `value` as message `kind`; returns what went on the wire.
async fn send(
    router: &Router,
    wire: &mut Wire,
    kind: u8,
    id: Id,
    suffix: &str,
    value: &Value,
) -> Vec<Bytes> {
    let options = ParseOptions::default();
    let pretty = kind & 0x80 != 0;
    match kind % KINDS {
        // A result encoded from a Value.
        0 => {
            let params = params_text(&Value::Array(vec![value.clone()]), pretty);
            let answer = answer(router, &request_text(&id, "echo", &params)).await;
            assert_same(&parse(result_of(&answer, &id).get()), value, "a result");
            vec![answer]
        }
        // A raw result: passed through byte for byte.
        1 => {
            let params = params_text(value, pretty);
            let answer = answer(router, &request_text(&id, "raw", &params)).await;
            let result = result_of(&answer, &id);
            assert_eq!(result.get(), params, "a raw result changed");
            vec![answer]
        }
        // Error data encoded from a Value.
        2 => {
            let params = params_text(&Value::Array(vec![value.clone()]), pretty);
            let answer = answer(router, &request_text(&id, "fail", &params)).await;
            assert_same(&parse(data_of(&answer, &id).get()), value, "error data");
            vec![answer]
        }
        // Raw error data: passed through byte for byte.
        3 => {
            let params = params_text(value, pretty);
            let answer = answer(router, &request_text(&id, "fail_raw", &params)).await;
            let data = data_of(&answer, &id);
            assert_eq!(data.get(), params, "raw error data changed");
            vec![answer]
        }
        // A batch: the value's answer between two small ones.
        4 => {
            let small = Id::from(u64::MAX);
            let echo = |id: &Id, v: &Value| {
                request_text(
                    id,
                    "echo",
                    &params_text(&Value::Array(vec![v.clone()]), false),
                )
            };
            let frame = format!(
                "[{},{},{}]",
                echo(&small, &Value::Null),
                echo(&id, value),
                echo(&small, &Value::Null)
            );
            let answer = answer(router, &frame).await;
            let answers: Vec<&RawValue> =
                serde_json::from_slice(&answer).expect("an array of answers");
            assert_eq!(answers.len(), 3);
            let mut ours = 0;
            for answer in answers {
                let bytes = answer.get().as_bytes();
                let members: Members<'_> = serde_json::from_slice(bytes).expect("an object");
                if members.get("id").map(|v| v.get()) == Some(id_text(&small).as_str()) {
                    assert_eq!(result_of(bytes, &small).get(), "null");
                    continue;
                }
                ours += 1;
                // A batch's answers are bounded: one that would take them
                // past the budget is a -32000 error instead.
                let len = serde_json::to_vec(value).expect("a Value encodes").len();
                if len > DEFAULT_OUTBOUND_BUDGET
                    || (len + 1024 > DEFAULT_OUTBOUND_BUDGET && members.contains_key("error"))
                {
                    let error: Members<'_> =
                        serde_json::from_str(members.get("error").expect("over budget").get())
                            .expect("an error object");
                    assert_eq!(error.get("code").map(|v| v.get()), Some("-32000"));
                    continue;
                }
                assert_same(
                    &parse(result_of(bytes, &id).get()),
                    value,
                    "a batch's result",
                );
            }
            assert_eq!(ours, 1, "one answer for the value");
            vec![answer]
        }
        // A notification from the peer.
        5 => {
            let method = format!("note{suffix}");
            wire.peer
                .notify(&method, [value])
                .await
                .expect("the notification is sent");
            let frame = next_frame(&mut wire.far).await;
            let Parsed::Single(Message::Notification(note)) =
                Message::parse_bytes(&frame, &options)
            else {
                panic!(
                    "not a notification: {:.200}",
                    String::from_utf8_lossy(&frame)
                );
            };
            assert_eq!(note.method, method);
            let params = parse(note.params.as_deref().expect("params").get());
            assert_same(
                &unwrap_params(params, &Value::Null),
                value,
                "a notification's params",
            );
            vec![frame]
        }
        // A request from the peer, answered with the router's answer: the
        // value goes out as params and comes back as the call's result.
        6 => {
            let call = wire.peer.call::<Value>("echo", [value]).start();
            let frame = next_frame(&mut wire.far).await;
            let answer = router
                .respond_with(&frame, &options)
                .await
                .expect("an answer");
            wire.far
                .send(answer.clone())
                .await
                .expect("the answer is delivered");
            let result = call.await.expect("the call's result");
            assert_same(&result, value, "a call's result");
            vec![frame, answer]
        }
        // Owned messages, written by `Message::to_json`.
        _ => {
            let params = params_text(value, pretty);
            let raw = RawValue::from_string(params.clone()).expect("params are JSON");
            let mut extras = Extras::new();
            if kind & 0x40 != 0 {
                extras.insert(format!("x{suffix}"), value.clone());
            }
            let method = format!("m{suffix}");
            let message = if kind % KINDS == 7 {
                Message::Request(Request {
                    id: id.clone(),
                    method: method.clone(),
                    params: Some(raw),
                    extras: extras.clone(),
                })
            } else {
                Message::Notification(Notification {
                    method: method.clone(),
                    params: Some(raw),
                    extras: extras.clone(),
                })
            };
            let bytes = Bytes::from(message.to_json(Dialect::Strict));
            let back = match Message::parse_bytes(&bytes, &options) {
                Parsed::Single(Message::Request(r)) if kind % KINDS == 7 => {
                    assert_eq!(r.id, id);
                    (r.method, r.params, r.extras)
                }
                Parsed::Single(Message::Notification(n)) if kind % KINDS != 7 => {
                    (n.method, n.params, n.extras)
                }
                _ => panic!(
                    "not what was written: {:.200}",
                    String::from_utf8_lossy(&bytes)
                ),
            };
            assert_eq!(back.0, method);
            assert_eq!(
                back.1.as_deref().expect("params").get(),
                params,
                "raw params changed"
            );
            assert_same(&Value::Object(back.2), &Value::Object(extras), "extras");
            vec![bytes]
        }
    }
}

/// Frames `bodies` with `codec`, decodes the stream in chunks of
/// `chunk` bytes (0: whole), and returns the bodies that came out.
fn reframe<C>(codec: C, bodies: &[Bytes], chunk: usize) -> Vec<Frame>
where
    C: Encoder<Bytes, Error = jsonrpc_runtime::codec::FramingError>
        + tokio_util::codec::Decoder<Item = Frame, Error = jsonrpc_runtime::codec::FramingError>
        + Clone,
{
    let mut stream = BytesMut::new();
    let mut encoder = codec.clone();
    for body in bodies {
        encoder
            .encode(body.clone(), &mut stream)
            .expect("a body is framed");
    }
    let chunks: &[usize] = if chunk == 0 { &[] } else { &[chunk] };
    let decoded = decode_in_chunks(codec, &stream, chunks);
    assert_eq!(decoded.error, None, "the stream ended in an error");
    decoded.frames
}

fuzz_target!(|data: &[u8]| {
    static ROUTER: OnceLock<Router> = OnceLock::new();
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        static WIRE: RefCell<Option<Wire>> = const { RefCell::new(None) };
    }
    let router = ROUTER.get_or_init(router);
    let (value_max, budget) = tier(data);
    let mut input = Reader {
        data,
        budget,
        value_max,
    };
    let chunk = usize::from(input.byte()) * 64;
    let mut bodies = Vec::new();
    RUNTIME.with(|rt| {
        WIRE.with(|cell| {
            let mut wire = cell.borrow_mut();
            let wire = wire.get_or_insert_with(|| {
                let _entered = rt.enter();
                let (near, far) = Transport::pair(64);
                Wire {
                    peer: Peer::spawn(near),
                    far,
                }
            });
            rt.block_on(async {
                for _ in 0..MAX_MESSAGES {
                    if input.is_empty() {
                        break;
                    }
                    let kind = input.byte();
                    let id_byte = input.byte();
                    let suffix = if id_byte & 1 == 0 {
                        String::new()
                    } else {
                        input.short_string()
                    };
                    let id = if id_byte & 2 == 0 {
                        Id::from(u64::from(id_byte >> 2))
                    } else {
                        Id::from(format!("s{suffix}"))
                    };
                    let value = input.value(0);
                    bodies.extend(send(router, wire, kind, id, &suffix, &value).await);
                }
            });
        });
    });

    // Every body framed and read back, in order, whole.
    let lines = reframe(LineCodec::new(), &bodies, chunk);
    let expected: Vec<Frame> = bodies
        .iter()
        .map(|b| {
            Frame::Message(
                b.iter()
                    .map(|&c| if c == b'\n' { b' ' } else { c })
                    .collect(),
            )
        })
        .collect();
    assert!(lines == expected, "LineCodec changed a body");
    let content_length = reframe(ContentLengthCodec::new(), &bodies, chunk);
    let expected: Vec<Frame> = bodies.iter().cloned().map(Frame::Message).collect();
    assert!(
        content_length == expected,
        "ContentLengthCodec changed a body"
    );
});
