//! Properties of the framers and the classifier on random input: any split
//! of any sequence of frames decodes to the same messages, ids round-trip
//! exactly, and classification never panics and never answers one request
//! id more often than it was sent.

use bytes::{Bytes, BytesMut};
use jsonrpc_runtime::codec::{ContentLengthCodec, Frame, FramingError, LineCodec};
use jsonrpc_runtime::message::{
    Batches, Dialect, Message, Notification, NullId, NullParams, ParamsShape, ParseOptions, Parsed,
    Request, Response, Responses, DEFAULT_MAX_BATCH_LEN,
};
use jsonrpc_runtime::{ErrorObject, Id};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::codec::{Decoder, Encoder};

fn config() -> ProptestConfig {
    ProptestConfig {
        // A failure prints its minimal input; nothing is written to disk.
        failure_persistence: None,
        ..ProptestConfig::with_cases(256)
    }
}

// ---------------------------------------------------------------------------
// Strategies.

/// Any id: integers across the whole `i64` and `u64` range, strings of any
/// characters (quotes, backslashes, control characters, astral planes).
fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        any::<i64>().prop_map(Id::from),
        any::<u64>().prop_map(Id::from),
        Just(Id::from(i64::MIN)),
        Just(Id::from(u64::MAX)),
        any::<String>().prop_map(Id::from),
    ]
}

/// Any JSON value without floats (which serde_json reads back only
/// approximately unless told otherwise), nested a few levels.
fn exact_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Any JSON value, floats included.
fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => exact_value(),
        1 => any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
    ]
}

/// Params: an object or an array, or none.
fn params() -> impl Strategy<Value = Option<Box<RawValue>>> {
    let structured = prop_oneof![
        prop::collection::vec(any_value(), 0..4).prop_map(Value::Array),
        prop::collection::btree_map(any::<String>(), any_value(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ];
    proptest::option::of(structured.prop_map(|v| serde_json::value::to_raw_value(&v).unwrap()))
}

/// Extras: members the envelope does not own.
fn extras() -> impl Strategy<Value = Map<String, Value>> {
    const OWN: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];
    prop::collection::btree_map(
        any::<String>().prop_filter("not an envelope member", |k| !OWN.contains(&k.as_str())),
        exact_value(),
        0..3,
    )
    .prop_map(|m| m.into_iter().collect())
}

/// Any message a peer may send: a request, a notification, a result or an
/// error response.
fn message() -> impl Strategy<Value = Message> {
    prop_oneof![
        (id(), any::<String>(), params(), extras()).prop_map(|(id, method, params, extras)| {
            Message::Request(Request {
                id,
                method,
                params,
                extras,
            })
        }),
        (any::<String>(), params(), extras()).prop_map(|(method, params, extras)| {
            Message::Notification(Notification {
                method,
                params,
                extras,
            })
        }),
        (id(), any_value(), extras()).prop_map(|(id, result, extras)| {
            let mut response = Response::result(id, &result).unwrap();
            response.extras = extras;
            Message::Response(response)
        }),
        // `"data": null` reads back as no data, so no null data here.
        (
            id(),
            any::<i64>(),
            any::<String>(),
            proptest::option::of(any_value().prop_filter("not null", |v| !v.is_null()))
        )
            .prop_map(|(id, code, text, data)| {
                let mut error = ErrorObject::new(code, text);
                if let Some(data) = data {
                    error = error.with_data(&data).unwrap();
                }
                Message::Response(Response::error(id, error))
            }),
    ]
}

/// Parse options drawn from one byte: every switch the classifier has.
fn options(byte: u8) -> ParseOptions {
    ParseOptions {
        dialect: [Dialect::Strict, Dialect::Lenient][usize::from(byte & 1)],
        batches: [Batches::Accept, Batches::Refuse][usize::from(byte >> 1 & 1)],
        null_id: [NullId::Serve, NullId::Refuse, NullId::RefuseAll][usize::from(byte >> 2) % 3],
        null_params: [NullParams::Absent, NullParams::Refuse][usize::from(byte >> 4 & 1)],
        params: [ParamsShape::ObjectOrArray, ParamsShape::Object][usize::from(byte >> 5 & 1)],
        responses: [Responses::Checked, Responses::NeverAnswered][usize::from(byte >> 6 & 1)],
        // A small cap now and then, so batches over it are classified too.
        max_batch_len: [DEFAULT_MAX_BATCH_LEN, 2][usize::from(byte >> 7)],
    }
}

/// What a generated batch element is meant to be.
#[derive(Debug, Clone)]
enum Element {
    /// A well-formed request with this id.
    Request(Id),
    /// A well-formed notification.
    Notification,
    /// Anything at all: an object with random members, or any value.
    Other,
}

/// One batch element: well-formed messages, envelopes with random members
/// (each member left out, right, or replaced by any value), and values that
/// are not objects at all.
fn element() -> impl Strategy<Value = (Value, Element)> {
    let member = |right: Value| {
        prop_oneof![
            2 => Just(Some(right)),
            1 => Just(None),
            1 => any_value().prop_map(Some),
        ]
    };
    let envelope = (
        member(Value::from("2.0")),
        prop_oneof![
            id().prop_map(|id| serde_json::to_value(id).unwrap()),
            any_value()
        ]
        .prop_flat_map(member),
        member(Value::from("m")),
        proptest::option::of(any_value()),
        proptest::option::of(any_value()),
        proptest::option::of(any_value()),
    )
        .prop_map(|(jsonrpc, id, method, params, result, error)| {
            let mut object = Map::new();
            let members = [
                ("jsonrpc", jsonrpc),
                ("id", id),
                ("method", method),
                ("params", params),
                ("result", result),
                ("error", error),
            ];
            for (name, value) in members {
                if let Some(value) = value {
                    object.insert(name.to_owned(), value);
                }
            }
            (Value::Object(object), Element::Other)
        });
    prop_oneof![
        3 => (id(), any::<String>(), params()).prop_map(|(id, method, params)| {
            let request = Message::Request(Request {
                id: id.clone(),
                method,
                params,
                extras: Map::new(),
            });
            (to_value(&request), Element::Request(id))
        }),
        1 => (any::<String>(), params()).prop_map(|(method, params)| {
            let notification = Message::Notification(Notification {
                method,
                params,
                extras: Map::new(),
            });
            (to_value(&notification), Element::Notification)
        }),
        3 => envelope,
        1 => any_value().prop_map(|v| (v, Element::Other)),
    ]
}

fn to_value(message: &Message) -> Value {
    serde_json::from_slice(&message.to_json(Dialect::Strict)).unwrap()
}

// ---------------------------------------------------------------------------
// Helpers.

/// Feeds `input` to `codec` cut at `cuts` (indexes into the input),
/// decoding after each chunk until it wants more, then ends the stream.
fn decode_split<D>(mut codec: D, input: &[u8], cuts: &[Index]) -> Result<Vec<Frame>, FramingError>
where
    D: Decoder<Item = Frame, Error = FramingError>,
{
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(input.len() + 1)).collect();
    points.push(input.len());
    points.sort_unstable();
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut from = 0;
    for to in points {
        buf.extend_from_slice(&input[from..to]);
        from = to;
        while let Some(frame) = codec.decode(&mut buf)? {
            frames.push(frame);
        }
    }
    while let Some(frame) = codec.decode_eof(&mut buf)? {
        frames.push(frame);
    }
    Ok(frames)
}

/// Encodes each message with `codec` and checks that the stream, cut
/// anywhere, decodes to the same messages.
fn assert_split_round_trip<C>(codec: C, messages: &[Message], cuts: &[Index])
where
    C: Decoder<Item = Frame, Error = FramingError> + Encoder<Bytes, Error = FramingError> + Clone,
{
    let bodies: Vec<Bytes> = messages
        .iter()
        .map(|m| Bytes::from(m.to_json(Dialect::Strict)))
        .collect();
    let mut stream = BytesMut::new();
    for body in &bodies {
        codec.clone().encode(body.clone(), &mut stream).unwrap();
    }
    let frames = decode_split(codec, &stream, cuts).expect("a well-formed stream decodes");
    let expected: Vec<Frame> = bodies.into_iter().map(Frame::Message).collect();
    assert_eq!(frames, expected);
    for (frame, message) in frames.iter().zip(messages) {
        let Frame::Message(body) = frame else {
            unreachable!("compared above")
        };
        let Parsed::Single(again) = Message::parse_bytes(body, &ParseOptions::default()) else {
            panic!("one message framed, a batch read");
        };
        assert_same_message(message, &again);
    }
}

fn assert_same_message(sent: &Message, read: &Message) {
    let raw = |p: &Option<Box<RawValue>>| p.as_ref().map(|p| p.get().to_owned());
    match (sent, read) {
        (Message::Request(a), Message::Request(b)) => {
            assert_eq!(a.id, b.id);
            assert_eq!(a.method, b.method);
            assert_eq!(raw(&a.params), raw(&b.params));
            assert_eq!(a.extras, b.extras);
        }
        (Message::Notification(a), Message::Notification(b)) => {
            assert_eq!(a.method, b.method);
            assert_eq!(raw(&a.params), raw(&b.params));
            assert_eq!(a.extras, b.extras);
        }
        (Message::Response(a), Message::Response(b)) => {
            assert_eq!(a.id, b.id);
            match (&a.outcome, &b.outcome) {
                (Ok(x), Ok(y)) => assert_eq!(x.get(), y.get()),
                (Err(x), Err(y)) => assert_eq!(x, y),
                _ => panic!("outcome changed: {a:?} read as {b:?}"),
            }
            assert_eq!(a.extras, b.extras);
        }
        _ => panic!("{sent:?} read as {read:?}"),
    }
}

/// The id a JSON value names, when it can be one.
fn id_of(value: &Value) -> Option<Id> {
    serde_json::from_value(value.clone()).ok()
}

/// The messages of a parsed frame, and the ids their answers carry.
fn answers(parsed: &Parsed) -> (&[Message], Vec<Id>) {
    let messages = match parsed {
        Parsed::Single(m) => std::slice::from_ref(m),
        Parsed::Batch(ms) => &ms[..],
        _ => unreachable!("a new kind of frame"),
    };
    let ids = messages
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) => Some(r.id.clone()),
            Message::Refused(r) => Some(r.id.clone()),
            _ => None,
        })
        .collect();
    (messages, ids)
}

/// Checks that every answer's id is `null` or one of `asked`, and that no
/// id is answered more often than it was asked.
fn assert_answered_at_most_once(asked: &[Id], answered: &[Id]) {
    let mut owed = asked.to_vec();
    for id in answered.iter().filter(|id| !id.is_null()) {
        let Some(i) = owed.iter().position(|owed| owed == id) else {
            panic!("{id} answered more often than asked (asked: {asked:?})");
        };
        owed.swap_remove(i);
    }
}

/// A string as JSON text, each character written either as itself or as a
/// `\u` escape (a surrogate pair above the basic plane), as `escape` says.
fn json_string_escaped(s: &str, escape: &[bool]) -> String {
    let mut out = String::from('"');
    for (i, c) in s.chars().enumerate() {
        let must = matches!(c, '"' | '\\') || c < ' ';
        if must
            || escape
                .get(i % escape.len().max(1))
                .copied()
                .unwrap_or(false)
        {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_split_of_lines_decodes_to_the_same_messages(
        messages in prop::collection::vec(message(), 1..6),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        assert_split_round_trip(LineCodec::new(), &messages, &cuts);
    }

    #[test]
    fn any_split_of_content_length_frames_decodes_to_the_same_messages(
        messages in prop::collection::vec(message(), 1..6),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        assert_split_round_trip(ContentLengthCodec::new(), &messages, &cuts);
    }

    #[test]
    fn any_split_of_any_bytes_decodes_as_the_whole_does(
        stream in prop::collection::vec(
            prop_oneof![
                4 => any::<u8>(),
                1 => Just(b'\n'),
                1 => Just(b'\r'),
            ],
            0..256,
        ),
        cuts in prop::collection::vec(any::<Index>(), 1..12),
        cap in 0usize..40,
    ) {
        let lines = |s: &[u8], c: &[Index]| {
            decode_split(LineCodec::with_max_frame_len(cap), s, c).expect("lines never fail")
        };
        prop_assert_eq!(lines(&stream, &[]), lines(&stream, &cuts));

        // The same bytes after a header block, and a stream of small frames.
        let mut framed = format!("Content-Length: {}\r\n\r\n", stream.len()).into_bytes();
        framed.extend_from_slice(&stream);
        let frames = |s: &[u8], c: &[Index]| {
            decode_split(ContentLengthCodec::with_max_frame_len(cap), s, c)
                .map_err(|e| e.to_string())
        };
        prop_assert_eq!(frames(&framed, &[]), frames(&framed, &cuts));
        prop_assert_eq!(frames(&stream, &[]), frames(&stream, &cuts));
    }

    #[test]
    fn ids_round_trip_exactly(id in id(), method in any::<String>()) {
        // Through serde.
        let json = serde_json::to_string(&id).unwrap();
        prop_assert_eq!(&serde_json::from_str::<Id>(&json).unwrap(), &id);
        prop_assert_eq!(&id.to_string(), &json);

        // Through a request and its answer, as the peer writes them.
        let request = Message::Request(Request {
            id: id.clone(),
            method,
            params: None,
            extras: Map::new(),
        });
        let Parsed::Single(Message::Request(read)) =
            Message::parse_bytes(&request.to_json(Dialect::Strict), &ParseOptions::default())
        else {
            panic!("a request reads as a request");
        };
        prop_assert_eq!(&read.id, &id);
        let answer = Message::Response(Response::result(read.id, &true).unwrap());
        let Parsed::Single(Message::Response(response)) =
            Message::parse_bytes(&answer.to_json(Dialect::Lenient), &options(1))
        else {
            panic!("a response reads as a response");
        };
        prop_assert_eq!(response.id, id);
    }

    #[test]
    fn escaped_string_ids_read_as_their_characters(
        s in any::<String>(),
        escape in prop::collection::vec(any::<bool>(), 0..8),
    ) {
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"m"}}"#,
            json_string_escaped(&s, &escape)
        );
        let Parsed::Single(Message::Request(read)) =
            Message::parse(&text, &ParseOptions::default())
        else {
            panic!("{text} reads as a request");
        };
        prop_assert_eq!(read.id, Id::from(s));
    }

    #[test]
    fn integer_ids_read_exactly_however_large(n in any::<i128>()) {
        let text = format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"m"}}"#);
        let read = Message::parse(&text, &ParseOptions::default());
        let expected = i64::try_from(n)
            .map(Id::from)
            .ok()
            .or_else(|| u64::try_from(n).ok().map(Id::from));
        match (read, expected) {
            (Parsed::Single(Message::Request(r)), Some(id)) => prop_assert_eq!(r.id, id),
            (Parsed::Single(Message::Refused(r)), None) => {
                prop_assert_eq!(r.id, Id::NULL);
                prop_assert_eq!(r.error.code.0, -32600);
            }
            (other, expected) => panic!("{text}: {other:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn classification_never_panics_on_any_bytes(
        bytes in prop::collection::vec(any::<u8>(), 0..128),
        options_byte in any::<u8>(),
    ) {
        let options = options(options_byte);
        let parsed = Message::parse_bytes(&bytes, &options);
        let (messages, answered) = answers(&parsed);
        prop_assert!(!messages.is_empty());
        if let Parsed::Single(_) = parsed {
            prop_assert!(answered.len() <= 1);
        }
    }

    #[test]
    fn classification_answers_each_request_id_at_most_once(
        elements in prop::collection::vec(element(), 0..8),
        single in any::<bool>(),
        options_byte in any::<u8>(),
    ) {
        let frame = match (&elements[..], single) {
            // An array sent alone would be a batch of its own elements.
            ([(one, _)], true) if !one.is_array() => one.clone(),
            _ => Value::Array(elements.iter().map(|(v, _)| v.clone()).collect()),
        };
        let text = frame.to_string();
        let asked: Vec<Id> = match &frame {
            Value::Array(elements) => elements.iter().collect::<Vec<_>>(),
            one => vec![one],
        }
        .into_iter()
        .filter_map(|e| e.get("id"))
        .filter_map(id_of)
        .collect();

        let options = options(options_byte);
        let parsed = Message::parse(&text, &options);
        let (messages, answered) = answers(&parsed);
        assert_answered_at_most_once(&asked, &answered);

        // With the default rules, well-formed elements are what they are.
        if options != ParseOptions::default() {
            return Ok(());
        }
        let batch = matches!(&frame, Value::Array(a) if !a.is_empty());
        prop_assert_eq!(matches!(parsed, Parsed::Batch(_)), batch);
        if !batch && !matches!(frame, Value::Object(_)) {
            return Ok(());
        }
        prop_assert_eq!(messages.len(), elements.len());
        for ((_, meant), read) in elements.iter().zip(messages) {
            match (meant, read) {
                (Element::Request(id), Message::Request(r)) => prop_assert_eq!(&r.id, id),
                (Element::Notification, Message::Notification(_)) | (Element::Other, _) => {}
                (meant, read) => panic!("{meant:?} read as {read:?} in {text}"),
            }
        }
    }
}
