//! Classification of one frame under every combination of parse options:
//! never panics, a batch keeps its length (one over the cap is refused
//! whole), an answer never names an id the
//! frame did not ask for (nor one id more often than it was asked), and
//! every message written back with `to_json` classifies as what it was.

#![no_main]

use jsonrpc_runtime::message::{Batches, Message, NullId, ParseOptions, Parsed, Responses};
use jsonrpc_runtime::Id;
use jsonrpc_runtime_fuzz::{
    check_response, ids_in_frame, parse_options, same_extras, take_answered,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&options, frame)) = data.split_first() else {
        return;
    };
    let options = parse_options(options);
    let parsed = Message::parse_bytes(frame, &options);
    let messages = match &parsed {
        Parsed::Single(m) => std::slice::from_ref(m),
        Parsed::Batch(ms) => {
            assert!(!ms.is_empty(), "an empty batch is refused whole");
            assert_eq!(options.batches, Batches::Accept);
            &ms[..]
        }
        _ => unreachable!("a new kind of frame"),
    };

    // What serde_json makes of the frame (it refuses some numbers the
    // classifier passes through, so only when it reads it).
    if let Ok(value) = serde_json::from_slice::<Value>(frame) {
        // An array over the cap is refused whole, as one message.
        let batch = matches!(&value, Value::Array(a) if !a.is_empty() && a.len() <= options.max_batch_len)
            && options.batches == Batches::Accept;
        match (&value, &parsed) {
            (Value::Array(a), Parsed::Batch(ms)) if batch => assert_eq!(a.len(), ms.len()),
            (_, Parsed::Single(_)) if !batch => {}
            _ => panic!("batch or single decided wrongly: {value}"),
        }
        let mut owed = ids_in_frame(&value);
        for message in messages {
            if let Some(id) = answered_id(message) {
                take_answered(&mut owed, id);
            }
        }
    }

    for message in messages {
        round_trip(message, &options);
    }
});

/// The id the peer answers `message` with, if it answers it.
fn answered_id(message: &Message) -> Option<&Id> {
    match message {
        Message::Request(r) => Some(&r.id),
        Message::Refused(r) => Some(&r.id),
        _ => None,
    }
}

/// Writes `message` and classifies the bytes again (null ids served, so
/// that an error answer with a null id reads as the response it is).
fn round_trip(message: &Message, options: &ParseOptions) {
    let dialect = options.dialect;
    let json = message.to_json(dialect);
    let options = ParseOptions {
        null_id: NullId::Serve,
        responses: Responses::Checked,
        ..*options
    };
    let again = match Message::parse_bytes(&json, &options) {
        Parsed::Single(m) => m,
        other => panic!("one message written, {other:?} read"),
    };
    let text = String::from_utf8_lossy(&json);
    match (message, &again) {
        (Message::Request(a), Message::Request(b)) => {
            assert_eq!(a.id, b.id, "{text}");
            assert_eq!(a.method, b.method, "{text}");
            assert_eq!(raw(&a.params), raw(&b.params), "{text}");
            assert!(same_extras(&a.extras, &b.extras), "{text}");
        }
        (Message::Notification(a), Message::Notification(b)) => {
            assert_eq!(a.method, b.method, "{text}");
            assert_eq!(raw(&a.params), raw(&b.params), "{text}");
            assert!(same_extras(&a.extras, &b.extras), "{text}");
        }
        (Message::Response(a), Message::Response(b)) => {
            assert_eq!(a.id, b.id, "{text}");
            match (&a.outcome, &b.outcome) {
                (Ok(x), Ok(y)) => assert_eq!(x.get(), y.get(), "{text}"),
                (Err(x), Err(y)) => assert_eq!(x, y, "{text}"),
                _ => panic!("the outcome changed: {text}"),
            }
            assert!(same_extras(&a.extras, &b.extras), "{text}");
        }
        (Message::Refused(a) | Message::Ignored(a), Message::Response(b)) => {
            let value: Value = serde_json::from_slice(&json).expect("an answer is JSON");
            assert_eq!(check_response(&value, dialect), a.id, "{text}");
            assert_eq!(b.id, a.id, "{text}");
            assert_eq!(b.outcome.as_ref().err(), Some(&a.error), "{text}");
        }
        _ => panic!("{message:?} was written as {text}, read as {again:?}"),
    }
}

fn raw(params: &Option<Box<serde_json::value::RawValue>>) -> Option<&str> {
    params.as_deref().map(|p| p.get())
}
