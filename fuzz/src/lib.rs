//! Helpers shared by the fuzz targets: splitting input into chunks, running
//! a decoder the way `FramedRead` does, choosing parse options from a byte,
//! and checking that an answer is a well-formed JSON-RPC response.

use bytes::BytesMut;
use jsonrpc_runtime::codec::{Frame, FramingError};
use jsonrpc_runtime::message::{
    Batches, Dialect, NullId, NullParams, ParamsShape, ParseOptions, Responses,
    DEFAULT_MAX_BATCH_LEN,
};
use jsonrpc_runtime::Id;
use serde_json::Value;
use tokio_util::codec::Decoder;

/// What a decoder made of a byte stream: its frames in order, and the error
/// that ended the stream, if one did (as its message: `FramingError` is not
/// `PartialEq`).
#[derive(Debug, PartialEq, Eq)]
pub struct Decoded {
    pub frames: Vec<Frame>,
    pub error: Option<String>,
}

/// Feeds `input` to `codec` in chunks whose lengths are drawn in turn from
/// `chunk_lens` (cycled; each at least one byte), decoding after each chunk
/// until the decoder wants more, then ends the stream. Stops at the first
/// error, as `FramedRead` does. An empty `chunk_lens` delivers the input
/// whole.
pub fn decode_in_chunks<D>(mut codec: D, input: &[u8], chunk_lens: &[usize]) -> Decoded
where
    D: Decoder<Item = Frame, Error = FramingError>,
{
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut rest = input;
    let mut lens = chunk_lens.iter().cycle();
    let fail = |frames, e: FramingError| Decoded {
        frames,
        error: Some(e.to_string()),
    };
    while !rest.is_empty() {
        let n = lens.next().map_or(rest.len(), |&n| n.clamp(1, rest.len()));
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(e) => return fail(frames, e),
            }
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => break,
            Err(e) => return fail(frames, e),
        }
    }
    Decoded {
        frames,
        error: None,
    }
}

/// Splits fuzz input into a frame cap, chunk lengths and the stream itself.
///
/// ```text
/// byte 0      the cap: an index into CAPS
/// byte 1      k: how many chunk lengths follow (0..=15)
/// k bytes     chunk lengths (each byte + 1)
/// the rest    the stream
/// ```
pub struct ChunkedInput<'a> {
    pub max_frame_len: usize,
    /// The raw byte 0, for targets with further switches.
    pub flags: u8,
    pub chunk_lens: Vec<usize>,
    pub stream: &'a [u8],
}

/// Frame caps small enough that refusals are common, plus the default.
const CAPS: [usize; 8] = [
    0,
    1,
    2,
    5,
    16,
    64,
    1024,
    jsonrpc_runtime::codec::DEFAULT_MAX_FRAME_LEN,
];

impl<'a> ChunkedInput<'a> {
    pub fn parse(data: &'a [u8]) -> Option<Self> {
        let (&flags, rest) = data.split_first()?;
        let (&k, rest) = rest.split_first()?;
        let k = usize::from(k % 16).min(rest.len());
        let (lens, stream) = rest.split_at(k);
        Some(ChunkedInput {
            max_frame_len: CAPS[usize::from(flags % 8)],
            flags,
            chunk_lens: lens.iter().map(|&b| usize::from(b) + 1).collect(),
            stream,
        })
    }
}

/// Parse options drawn from one byte: every switch the classifier has.
pub fn parse_options(byte: u8) -> ParseOptions {
    ParseOptions {
        dialect: if byte & 1 == 0 {
            Dialect::Strict
        } else {
            Dialect::Lenient
        },
        batches: if byte & 2 == 0 {
            Batches::Accept
        } else {
            Batches::Refuse
        },
        null_id: match (byte >> 2) % 3 {
            0 => NullId::Serve,
            1 => NullId::Refuse,
            _ => NullId::RefuseAll,
        },
        null_params: if byte & 16 == 0 {
            NullParams::Absent
        } else {
            NullParams::Refuse
        },
        params: if byte & 32 == 0 {
            ParamsShape::ObjectOrArray
        } else {
            ParamsShape::Object
        },
        responses: if byte & 64 == 0 {
            Responses::Checked
        } else {
            Responses::NeverAnswered
        },
        // A small cap now and then, so batches over it are classified too.
        max_batch_len: if byte & 128 == 0 {
            DEFAULT_MAX_BATCH_LEN
        } else {
            2
        },
    }
}

/// The id a JSON value names, when it is one an id may be: an integer in
/// the `i64` or `u64` range, a string, or `null`.
pub fn id_of(value: &Value) -> Option<Id> {
    match value {
        Value::Null => Some(Id::NULL),
        Value::String(s) => Some(Id::from(s.as_str())),
        Value::Number(n) => n
            .as_i64()
            .map(Id::from)
            .or_else(|| n.as_u64().map(Id::from)),
        _ => None,
    }
}

/// The ids of the requests in a frame that parses as JSON: the `id` of each
/// element (of the object itself, for a single message) that has one.
/// Whatever the classifier makes of a message, an answer can only name one
/// of these ids, or `null`.
pub fn ids_in_frame(frame: &Value) -> Vec<Id> {
    let elements: &[Value] = match frame {
        Value::Array(elements) => elements,
        single => std::slice::from_ref(single),
    };
    elements
        .iter()
        .filter_map(|e| e.get("id"))
        .filter_map(id_of)
        .collect()
}

/// Checks that `value` is one JSON-RPC response as `dialect` writes it:
/// `jsonrpc` (strict only), an id, and exactly one of `result` and an error
/// object with an integer code and a string message. Returns its id.
pub fn check_response(value: &Value, dialect: Dialect) -> Id {
    let Value::Object(members) = value else {
        panic!("a response must be an object: {value}");
    };
    match dialect {
        Dialect::Strict => assert_eq!(members.get("jsonrpc"), Some(&Value::from("2.0")), "{value}"),
        _ => assert!(!members.contains_key("jsonrpc"), "{value}"),
    }
    let id = members
        .get("id")
        .and_then(id_of)
        .unwrap_or_else(|| panic!("a response needs a valid id: {value}"));
    match (members.get("result"), members.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            let code = error.get("code").and_then(Value::as_i64);
            let message = error.get("message").and_then(Value::as_str);
            assert!(
                code.is_some() && message.is_some(),
                "an error needs an integer code and a string message: {value}"
            );
            let allowed = ["code", "message", "data"];
            let error = error.as_object().expect("checked above");
            assert!(
                error.keys().all(|k| allowed.contains(&k.as_str())),
                "{value}"
            );
        }
        _ => panic!("a response has exactly one of `result` and `error`: {value}"),
    }
    id
}

/// Removes one occurrence of `id` from `owed`; panics when the frame held
/// no request with that id left to answer (a second answer for one id, or
/// an answer naming an id that was never sent). A `null` id is always
/// allowed: it answers what could not be read.
pub fn take_answered(owed: &mut Vec<Id>, id: &Id) {
    if id.is_null() {
        return;
    }
    match owed.iter().position(|owed| owed == id) {
        Some(i) => {
            owed.swap_remove(i);
        }
        None => {
            panic!("answer for {id}, which the frame did not ask for (or asked for fewer times)")
        }
    }
}

/// Whether two JSON values are the same, floats within a few units in the
/// last place: serde_json (without its `float_roundtrip` feature) reads
/// some decimal texts, its own output included, one unit off (subnormal
/// ones too, where a unit is far below `f64::EPSILON` times the value).
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => x == y || ulps_apart(x, y) <= 4,
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// How many representable doubles lie between `x` and `y` (finite ones):
/// their bit patterns, mapped so that the order of the integers is the
/// order of the floats, subtracted.
fn ulps_apart(x: f64, y: f64) -> u64 {
    let ordered = |v: f64| {
        let bits = v.to_bits() as i64;
        if bits < 0 {
            i64::MIN - bits
        } else {
            bits
        }
    };
    ordered(x).abs_diff(ordered(y))
}

/// [`same_json`] for two sets of extras.
pub fn same_extras(
    a: &jsonrpc_runtime::message::Extras,
    b: &jsonrpc_runtime::message::Extras,
) -> bool {
    same_json(&Value::Object(a.clone()), &Value::Object(b.clone()))
}
