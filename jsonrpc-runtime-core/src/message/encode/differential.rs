//! Differential test of the envelope encoder.
//!
//! Fast path: [`call_body`] and [`response`], which write each envelope by
//! hand into the per-thread buffer of [`encode_with`] and hand it out
//! through the per-thread chunks (or the buffer itself, past [`KEEP`]).
//! Plain path: the same envelope built with `serde_json::json!` and written
//! by `serde_json::to_vec`. For sequences of random requests,
//! notifications and answers (ids of every kind, methods, params, results
//! and error data with escapes and non-ASCII, extras, both dialects, params
//! that are not structured, values whose `Serialize` fails half-way or
//! encodes a message of its own), sized on both sides of each of the
//! encoder's thresholds and varying from message to message on one thread,
//! both give the same JSON and the same length; and every message of a
//! sequence is still intact once the whole sequence is written (chunks are
//! shared by many messages).

use std::cell::Cell;

use bytes::Bytes;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde::ser::{Error as _, SerializeMap as _};
use serde::{Serialize, Serializer};
use serde_json::{json, Value};

use super::super::KNOWN_KEYS;
use super::*;

// ---------------------------------------------------------------------------
// What is encoded.

/// A params or result value.
#[derive(Debug, Clone)]
enum Body {
    /// Any JSON value.
    Json(Value),
    /// A derived `Serialize` (struct, enum, option, sequence).
    Typed(Typed),
    /// A value whose `Serialize` writes `len` bytes of a map, then fails.
    Failing(usize),
    /// A value whose `Serialize` first encodes a request of its own
    /// (finding the per-thread buffer in use) and is that request's JSON.
    Nested(i64, Value),
}

#[derive(Debug, Clone, Serialize)]
struct Typed {
    name: String,
    count: Option<u64>,
    tags: Vec<String>,
    shape: Shape,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
enum Shape {
    Point,
    Circle(f64),
    Rect { w: i32, h: i32 },
}

/// What [`Body::Failing`]'s `Serialize` fails with.
const REFUSAL: &str = "this value refuses to be encoded";

impl Serialize for Body {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Body::Json(value) => value.serialize(serializer),
            Body::Typed(typed) => typed.serialize(serializer),
            Body::Failing(len) => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("written", &"y".repeat(*len))?;
                Err(S::Error::custom(REFUSAL))
            }
            Body::Nested(id, params) => {
                let inner = call_body(
                    Dialect::Strict,
                    Some(&Id::from(*id)),
                    "inner",
                    Some(params),
                    &Extras::new(),
                )
                .map_err(S::Error::custom)?;
                serde_json::from_slice::<Value>(&inner)
                    .map_err(S::Error::custom)?
                    .serialize(serializer)
            }
        }
    }
}

impl Body {
    /// The value as the plain path builds it, or its encoding error.
    fn plain(&self) -> Result<Value, serde_json::Error> {
        match self {
            Body::Json(value) => Ok(value.clone()),
            Body::Typed(typed) => serde_json::to_value(typed),
            Body::Failing(_) => Err(serde_json::to_vec(self).unwrap_err()),
            Body::Nested(id, params) => Ok(json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "inner",
                "params": params,
            })),
        }
    }

    /// The same value with a string of `len` bytes added to it (as the
    /// member `pad` of an object, wrapping anything else).
    fn padded(&self, len: usize) -> Body {
        let pad = Value::String("y".repeat(len));
        match self {
            Body::Json(Value::Object(map)) => {
                let mut map = map.clone();
                map.insert("pad".to_owned(), pad);
                Body::Json(Value::Object(map))
            }
            Body::Json(Value::Array(items)) => {
                let mut items = items.clone();
                items.push(pad);
                Body::Json(Value::Array(items))
            }
            Body::Typed(typed) => Body::Typed(Typed {
                note: Some("y".repeat(len)),
                ..typed.clone()
            }),
            Body::Failing(written) => Body::Failing(written + len),
            Body::Nested(id, Value::Object(map)) => {
                let mut map = map.clone();
                map.insert("pad".to_owned(), pad);
                Body::Nested(*id, Value::Object(map))
            }
            other => Body::Json(json!({ "pad": pad, "value": other.plain().ok() })),
        }
    }
}

/// One outbound message.
#[derive(Debug, Clone)]
enum Message {
    /// A request (`id` given) or a notification.
    Call {
        dialect: Dialect,
        id: Option<Id>,
        method: String,
        params: Option<Body>,
        extras: Extras,
    },
    /// An answer: a result, or an error.
    Answer {
        dialect: Dialect,
        id: Id,
        outcome: Result<Body, ErrorObject>,
    },
}

impl Message {
    /// The message with `len` bytes more, in its params, result or error
    /// data (in its method when it has no params).
    fn padded(&self, len: usize) -> Message {
        let mut message = self.clone();
        match &mut message {
            Message::Call {
                params: Some(params),
                ..
            } => *params = params.padded(len),
            Message::Call { method, .. } => method.push_str(&"y".repeat(len)),
            Message::Answer {
                outcome: Ok(result),
                ..
            } => *result = result.padded(len),
            Message::Answer {
                outcome: Err(error),
                ..
            } => error.message.to_mut().push_str(&"y".repeat(len)),
        }
        message
    }

    /// Encoded by the fast path: `Ok` a message, `Err` none (for a call
    /// that cannot be encoded); an answer's bytes tell success from error.
    fn fast(&self) -> Result<(Bytes, bool), ()> {
        match self {
            Message::Call {
                dialect,
                id,
                method,
                params,
                extras,
            } => call_body(*dialect, id.as_ref(), method, params.as_ref(), extras)
                .map(|body| (body, true))
                .map_err(drop),
            Message::Answer {
                dialect,
                id,
                outcome,
            } => Ok(match response(*dialect, id, outcome.as_ref()) {
                Ok(body) => (body, true),
                Err(body) => (body, false),
            }),
        }
    }

    /// Encoded by the plain path, with the same meaning as [`fast`](Self::fast).
    fn plain(&self) -> Result<(Vec<u8>, bool), ()> {
        let head = |dialect: Dialect, id: Option<&Id>| {
            let mut envelope = match dialect {
                Dialect::Strict => json!({ "jsonrpc": "2.0" }),
                _ => json!({}),
            };
            if let Some(id) = id {
                envelope["id"] = json!(id);
            }
            envelope
        };
        let (envelope, success) = match self {
            Message::Call {
                dialect,
                id,
                method,
                params,
                extras,
            } => {
                let mut envelope = head(*dialect, id.as_ref());
                envelope["method"] = json!(method);
                if let Some(params) = params {
                    match params.plain().map_err(drop)? {
                        Value::Null => {}
                        structured @ (Value::Object(_) | Value::Array(_)) => {
                            envelope["params"] = structured;
                        }
                        _ => return Err(()),
                    }
                }
                for (key, value) in extras {
                    if KNOWN_KEYS.contains(&key.as_str()) {
                        return Err(());
                    }
                    envelope[key] = value.clone();
                }
                (envelope, true)
            }
            Message::Answer {
                dialect,
                id,
                outcome,
            } => {
                let mut envelope = head(*dialect, Some(id));
                let error = match outcome.as_ref().map(Body::plain) {
                    Ok(Ok(result)) => {
                        envelope["result"] = result;
                        None
                    }
                    Ok(Err(e)) => Some(ErrorObject::internal_error(format!(
                        "the result could not be encoded: {e}"
                    ))),
                    Err(error) => Some(error.clone()),
                };
                match error {
                    None => (envelope, true),
                    Some(error) => {
                        envelope["error"] = json!(error);
                        (envelope, false)
                    }
                }
            }
        };
        Ok((serde_json::to_vec(&envelope).map_err(drop)?, success))
    }
}

// ---------------------------------------------------------------------------
// Strategies.

/// Text with what JSON escapes (quotes, backslashes, control characters)
/// and non-ASCII, or any text at all.
fn text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => "[a-z/]{0,12}",
        3 => "[a-z\"\\\\\n\t\u{1}\u{7f}é😀\u{2028} ]{0,16}",
        1 => any::<String>(),
    ]
    .boxed()
}

fn id() -> BoxedStrategy<Id> {
    prop_oneof![
        3 => any::<i64>().prop_map(Id::from),
        1 => any::<u64>().prop_map(Id::from),
        3 => text().prop_map(Id::from),
        1 => Just(Id::NULL),
    ]
    .boxed()
}

/// Any JSON value; `floats` too unless the value is to be read back
/// exactly (serde_json reads some floats back one unit in the last place
/// off).
fn any_value(floats: bool) -> BoxedStrategy<Value> {
    let float = any::<f64>()
        .prop_filter("finite", |f| f.is_finite())
        .prop_map(Value::from);
    let leaf = prop_oneof![
        2 => Just(Value::Null),
        2 => any::<bool>().prop_map(Value::from),
        2 => any::<i64>().prop_map(Value::from),
        2 => any::<u64>().prop_map(Value::from),
        u32::from(floats) => float,
        4 => text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(text(), inner, 0..5)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
    .boxed()
}

fn value() -> BoxedStrategy<Value> {
    any_value(true)
}

fn typed() -> BoxedStrategy<Typed> {
    let shape = prop_oneof![
        Just(Shape::Point),
        (-1e6f64..1e6).prop_map(Shape::Circle),
        (any::<i32>(), any::<i32>()).prop_map(|(w, h)| Shape::Rect { w, h }),
    ];
    (
        text(),
        prop::option::of(any::<u64>()),
        prop::collection::vec(text(), 0..4),
        shape,
        prop::option::of(text()),
    )
        .prop_map(|(name, count, tags, shape, note)| Typed {
            name,
            count,
            tags,
            shape,
            note,
        })
        .boxed()
}

fn body() -> BoxedStrategy<Body> {
    let object = |floats| {
        prop::collection::btree_map(text(), any_value(floats), 0..4)
            .prop_map(|map| Value::Object(map.into_iter().collect()))
    };
    prop_oneof![
        6 => value().prop_map(Body::Json),
        4 => object(true).prop_map(Body::Json),
        2 => typed().prop_map(Body::Typed),
        1 => (0usize..64).prop_map(Body::Failing),
        // Read back from the inner message's bytes: no floats.
        1 => (any::<i64>(), object(false)).prop_map(|(id, params)| Body::Nested(id, params)),
    ]
    .boxed()
}

fn dialect() -> BoxedStrategy<Dialect> {
    prop_oneof![3 => Just(Dialect::Strict), 1 => Just(Dialect::Lenient)].boxed()
}

fn extras() -> BoxedStrategy<Extras> {
    let key = prop_oneof![
        8 => text(),
        1 => prop::sample::select(KNOWN_KEYS.to_vec()).prop_map(str::to_owned),
    ];
    prop_oneof![
        3 => Just(Extras::new()),
        1 => prop::collection::btree_map(key, value(), 1..3)
            .prop_map(|map| map.into_iter().collect()),
    ]
    .boxed()
}

/// An error object; its data (raw JSON) goes through a `Value` on the
/// plain path, so no floats.
fn error() -> BoxedStrategy<ErrorObject> {
    (any::<i64>(), text(), prop::option::of(any_value(false)))
        .prop_map(|(code, message, data)| {
            let error = ErrorObject::new(code, message);
            match data {
                Some(data) => error.with_data(&data).unwrap(),
                None => error,
            }
        })
        .boxed()
}

fn message() -> BoxedStrategy<Message> {
    let call = (
        dialect(),
        prop::option::of(id()),
        text(),
        prop::option::of(body()),
        extras(),
    )
        .prop_map(|(dialect, id, method, params, extras)| Message::Call {
            dialect,
            id,
            method,
            params,
            extras,
        });
    let answer = (
        dialect(),
        id(),
        prop_oneof![3 => body().prop_map(Ok), 1 => error().prop_map(Err)],
    )
        .prop_map(|(dialect, id, outcome)| Message::Answer {
            dialect,
            id,
            outcome,
        });
    prop_oneof![call, answer].boxed()
}

/// How long a message is.
#[derive(Debug, Clone, Copy)]
enum Size {
    /// As generated.
    Natural,
    /// This many bytes, when it is not longer already.
    Exactly(usize),
}

/// Sizes one byte either side of each of the encoder's thresholds (and on
/// them), and anywhere up to ~200 KiB.
fn size() -> BoxedStrategy<Size> {
    let mut near = Vec::new();
    for threshold in [FRESH, CHUNK, 2 * CHUNK, KEEP, 2 * KEEP] {
        near.extend([threshold - 1, threshold, threshold + 1]);
    }
    prop_oneof![
        3 => Just(Size::Natural),
        3 => prop::sample::select(near).prop_map(Size::Exactly),
        1 => (0usize..200_000).prop_map(Size::Exactly),
    ]
    .boxed()
}

/// A message at its size.
fn sized(message: &Message, size: Size) -> Message {
    let Size::Exactly(len) = size else {
        return message.clone();
    };
    // The padding adds its own length plus a fixed overhead: the length
    // with an empty one.
    match message.padded(0).plain() {
        Ok((base, _)) if base.len() <= len => message.padded(len - base.len()),
        _ => message.clone(),
    }
}

// ---------------------------------------------------------------------------
// The comparison.

/// The fast path's bytes against the plain path's: the same JSON, the same
/// length, the same kind of answer.
fn same(fast: &[u8], plain: &[u8]) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        fast.len(),
        plain.len(),
        "{:.200}",
        String::from_utf8_lossy(fast)
    );
    let fast: Value = serde_json::from_slice(fast)
        .map_err(|e| TestCaseError::fail(format!("the fast path wrote no JSON: {e}")))?;
    let plain: Value = serde_json::from_slice(plain).unwrap();
    prop_assert_eq!(fast, plain);
    Ok(())
}

#[test]
fn envelopes_encode_as_serde_json_writes_them() {
    let mut runner = TestRunner::new_with_rng(
        Config {
            // A failure prints its minimal input; nothing is written to disk.
            failure_persistence: None,
            ..Config::with_cases(256)
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let sequence = prop::collection::vec((message(), size()), 1..8);
    let encoded = [Cell::new(0), Cell::new(0), Cell::new(0)];
    let count = |i: usize, yes: bool| encoded[i].set(encoded[i].get() + usize::from(yes));
    // Every case on this one thread: its buffer and chunks carry over from
    // message to message, and from one case to the next.
    runner
        .run(&sequence, |sequence| {
            let mut written = Vec::new();
            for (message, size) in &sequence {
                let message = sized(message, *size);
                let fast = message.fast();
                let plain = message.plain();
                prop_assert_eq!(fast.is_ok(), plain.is_ok(), "{:?}", message);
                let (Ok((fast, fast_success)), Ok((plain, plain_success))) = (fast, plain) else {
                    continue;
                };
                prop_assert_eq!(fast_success, plain_success);
                same(&fast, &plain)?;
                count(0, true);
                count(1, fast.len() > CHUNK && fast.len() <= KEEP);
                count(2, fast.len() > KEEP);
                let copy = fast.to_vec();
                written.push((fast, copy));
            }
            // Each message is still whole after the others were written
            // (they share chunks).
            for (fast, copy) in &written {
                prop_assert!(
                    fast[..] == copy[..],
                    "a message changed after it was written"
                );
            }
            Ok(())
        })
        .unwrap();
    // Messages were written small (in a chunk), between a chunk and KEEP
    // (grown chunks), and past KEEP (the buffer itself).
    let [all, between, large] = encoded.map(Cell::into_inner);
    assert!(all > 500, "{all} messages encoded");
    assert!(between > 50, "{between} messages of CHUNK to KEEP bytes");
    assert!(large > 50, "{large} messages over KEEP bytes");
}
