//! Classifying one inbound frame: the nine rules, borrowing from the frame.

use std::borrow::Cow;
use std::cell::Cell;

use serde::de::DeserializeOwned;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use std::fmt;

use super::classified::{object_params, refuse};
pub(crate) use super::classified::{Classified, ClassifiedFrame, DecodeParams, RawExtras};
use super::raw::{DecodedParams, DecodedSlot, RawJson};
use super::scan::{scan, scan_large, SCAN_MAX};
use super::strict::Strict;
use super::{Batches, Dialect, NullId, NullParams, ParamsShape, ParseOptions, Responses};
use crate::id::Id;
use crate::message::ErrorObject;

/// Visitor methods that map every scalar to one "not an object" value.
macro_rules! serde_other_scalars {
    ($other:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

// Borrowed classification (the hot path).

/// Classifies one frame's text: the common shape by the scanner, the rest
/// by the general path.
pub fn classify_frame<'a>(text: &'a str, options: &ParseOptions) -> ClassifiedFrame<'a> {
    if text.len() <= SCAN_MAX {
        if let Some(classified) = scan(text, options) {
            return ClassifiedFrame::Single(classified);
        }
    }
    classify_general(text, options)
}

/// The `P` at the start of `text`, and the length of its text: what a
/// route's [`DecodeParams`] does. `None` if it does not decode, or if any
/// step of the decode failed, even one `P` recovered from (see
/// [`Strict`]): the caller then validates and decodes the usual way, which
/// tells a syntax error from a wrong type.
pub(crate) fn decode_prefix<P: DeserializeOwned + Send + 'static>(
    text: &str,
) -> Option<(DecodedParams, usize)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Strict<P>>();
    let Strict(params) = values.next()?.ok()?;
    Some((Box::new(params), values.byte_offset()))
}

/// [`classify_frame`], with a frame over the scanner's limit (16 KiB)
/// scanned too: a single request's or notification's params are then
/// decoded by `decoder` as they are read, and wait in a slot made in
/// `slot` for their route ([`RawJson::Decoded`]). Small frames leave
/// `slot` empty.
#[inline]
pub(crate) fn classify_frame_decoding<'a>(
    text: &'a str,
    options: &ParseOptions,
    decoder: &dyn DecodeParams,
    slot: &'a mut Option<DecodedSlot>,
) -> ClassifiedFrame<'a> {
    if text.len() <= SCAN_MAX {
        classify_frame(text, options)
    } else {
        classify_large(text, options, decoder, slot.insert(DecodedSlot::default()))
    }
}

#[inline(never)]
fn classify_large<'a>(
    text: &'a str,
    options: &ParseOptions,
    decoder: &dyn DecodeParams,
    slot: &'a DecodedSlot,
) -> ClassifiedFrame<'a> {
    match scan_large(text, options, decoder, slot) {
        Some(classified) => ClassifiedFrame::Single(classified),
        // Params decoded before the scan gave up stay in the slot, unused.
        None => classify_general(text, options),
    }
}

/// Classifies any frame, through serde_json.
pub(super) fn classify_general<'a>(text: &'a str, options: &ParseOptions) -> ClassifiedFrame<'a> {
    // A refused batch's elements are only skipped, never read.
    let cap = match options.batches {
        Batches::Accept => options.max_batch_len,
        Batches::Refuse => 0,
    };
    let top = match read_top(text, cap) {
        Ok(top) => top,
        Err(e) => return ClassifiedFrame::Single(refuse(Id::NULL, ErrorObject::parse_error(e))),
    };
    match top {
        Top::Object(env) => ClassifiedFrame::Single(classify(env, options)),
        Top::Other => ClassifiedFrame::Single(refuse(
            Id::NULL,
            ErrorObject::invalid_request("a message must be a JSON object"),
        )),
        Top::Batch(_) | Top::OverCap if options.batches == Batches::Refuse => {
            ClassifiedFrame::Single(refuse(
                Id::NULL,
                ErrorObject::invalid_request("batches are not accepted"),
            ))
        }
        Top::OverCap => ClassifiedFrame::Single(refuse(
            Id::NULL,
            ErrorObject::invalid_request(format!(
                "a batch of more than {} elements is over the limit; send it in smaller batches",
                options.max_batch_len
            )),
        )),
        Top::Batch(elements) if elements.is_empty() => ClassifiedFrame::Single(refuse(
            Id::NULL,
            ErrorObject::invalid_request("an empty batch"),
        )),
        Top::Batch(elements) => ClassifiedFrame::Batch(
            elements
                .into_iter()
                .map(|element| match element {
                    Element::Object(env) => classify(env, options),
                    Element::Other => refuse(
                        Id::NULL,
                        ErrorObject::invalid_request("a batch element must be a JSON object"),
                    ),
                })
                .collect(),
        ),
    }
}

fn classify<'a>(env: Envelope<'a>, options: &ParseOptions) -> Classified<'a> {
    if let Some(key) = env.duplicate {
        return refuse(
            Id::NULL,
            ErrorObject::invalid_request(format!("member `{key}` appears twice")),
        );
    }
    // Rule 4: the id.
    let id = match env.id {
        None => None,
        Some(raw) => match read_id(raw) {
            Ok(id) => Some(id),
            Err(e) => return refuse(Id::NULL, e),
        },
    };
    if id.as_ref().is_some_and(Id::is_null) && options.null_id == NullId::RefuseAll {
        return refuse(
            Id::NULL,
            ErrorObject::invalid_request("the id must not be null"),
        );
    }
    let answer_id = || id.clone().unwrap_or(Id::NULL);
    // Rule 5: the version.
    match env.jsonrpc {
        Some(raw) if raw.get() == r#""2.0""# || read_str(raw).as_deref() == Some("2.0") => {}
        None if options.dialect == Dialect::Lenient => {}
        Some(_) => {
            return refuse(
                answer_id(),
                ErrorObject::invalid_request(r#""jsonrpc" must be "2.0""#),
            )
        }
        None => {
            return refuse(
                answer_id(),
                ErrorObject::invalid_request(r#"missing "jsonrpc": "2.0""#),
            )
        }
    }
    // Rule 6: responses.
    let Some(method) = env.method else {
        return classify_response(env.result, env.error, id, env.extras, options);
    };
    // Rule 7: the method.
    let Some(method) = read_str(method) else {
        return refuse(
            answer_id(),
            ErrorObject::invalid_request("`method` must be a string"),
        );
    };
    // Rule 8: the params.
    let params = match read_params(env.params, id.as_ref(), options) {
        Ok(params) => params,
        Err(refusal) => return refusal,
    };
    // Rule 9. A null id is refused here, on requests only: an error
    // response must carry a null id when the request's could not be read.
    // (`NullId::RefuseAll` refused it at rule 4 already.)
    if id.as_ref().is_some_and(Id::is_null) && options.null_id != NullId::Serve {
        return refuse(
            Id::NULL,
            ErrorObject::invalid_request("the id must not be null"),
        );
    }
    match id {
        Some(id) => Classified::Request {
            id,
            method,
            params,
            extras: env.extras,
        },
        None => Classified::Notification {
            method,
            params,
            extras: env.extras,
        },
    }
}

/// Rule 6: a message without a `method`, read as a response.
fn classify_response<'a>(
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    id: Option<Id>,
    extras: RawExtras<'a>,
    options: &ParseOptions,
) -> Classified<'a> {
    let checked = match (result, error, id) {
        (Some(_), Some(_), id) => {
            let error = ErrorObject::invalid_request("a response has both `result` and `error`");
            match id {
                Some(id) => Classified::BadResponse { id, error },
                None => refuse(Id::NULL, error),
            }
        }
        (None, None, id) => refuse(
            id.unwrap_or(Id::NULL),
            ErrorObject::invalid_request("missing `method`"),
        ),
        (_, _, None) => refuse(
            Id::NULL,
            ErrorObject::invalid_request("a response has no `id`"),
        ),
        (Some(result), None, Some(id)) => Classified::Response {
            id,
            outcome: Ok(result.into()),
            extras,
        },
        (None, Some(error), Some(id)) => match serde_json::from_str::<ErrorObject>(error.get()) {
            Ok(error) => Classified::Response {
                id,
                outcome: Err(error),
                extras,
            },
            Err(e) => Classified::BadResponse {
                id,
                error: ErrorObject::invalid_request(format!(
                    "a response's `error` is not an error object: {e}"
                )),
            },
        },
    };
    if options.responses == Responses::Checked || (result.is_none() && error.is_none()) {
        return checked;
    }
    match checked {
        Classified::BadResponse { id, error } => Classified::Ignored {
            id: Some(id),
            error,
        },
        Classified::Refused(refusal) => Classified::Ignored {
            id: None,
            error: refusal.error,
        },
        other => other,
    }
}

/// Rule 8: the params, as the options want them.
fn read_params<'a>(
    params: Option<&'a RawValue>,
    id: Option<&Id>,
    options: &ParseOptions,
) -> Result<Option<RawJson<'a>>, Classified<'a>> {
    let answer_id = || id.cloned().unwrap_or(Id::NULL);
    match params {
        _ if options.params == ParamsShape::Object => {
            match object_params(params.map(RawJson::from), id, options) {
                Ok(params) => Ok(Some(params)),
                Err(refusal) => Err(refusal),
            }
        }
        None => Ok(None),
        Some(raw) => match raw.get().as_bytes().first() {
            Some(b'{' | b'[') => Ok(Some(raw.into())),
            Some(b'n') if id.is_some() && options.null_params == NullParams::Refuse => Err(refuse(
                answer_id(),
                ErrorObject::invalid_params("`params` must be an object or an array, not null"),
            )),
            Some(b'n') => Ok(None),
            _ if id.is_some() => Err(refuse(
                answer_id(),
                ErrorObject::invalid_params("`params` must be an object or an array"),
            )),
            _ => Ok(None),
        },
    }
}

fn read_id(raw: &RawValue) -> Result<Id, ErrorObject> {
    match raw.get().as_bytes().first() {
        Some(b'-' | b'0'..=b'9' | b'"' | b'n') => {
            serde_json::from_str::<Id>(raw.get()).map_err(|_| {
                ErrorObject::invalid_request("the id must be an integer, a string or null")
            })
        }
        _ => Err(ErrorObject::invalid_request(
            "the id must be an integer, a string or null",
        )),
    }
}

/// Reads a JSON string, borrowing when it has no escapes.
fn read_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    let text = raw.get();
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(text).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

// The envelope as read by serde: every member raw, nothing decoded yet.
#[derive(Default)]
struct Envelope<'a> {
    jsonrpc: Option<&'a RawValue>,
    id: Option<&'a RawValue>,
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
    extras: RawExtras<'a>,
    duplicate: Option<&'static str>,
}

enum Top<'a> {
    Object(Envelope<'a>),
    Batch(Vec<Element<'a>>),
    /// A batch longer than the cap; nothing after the element past the cap
    /// is read.
    OverCap,
    Other,
}

/// Reads a frame's top level, keeping at most `cap` batch elements.
///
/// Reading stops at the first element past the cap, so a frame of millions
/// of tiny elements costs no more than one of `cap + 1`.
fn read_top(text: &str, cap: usize) -> serde_json::Result<Top<'_>> {
    let over_cap = Cell::new(false);
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let seed = TopSeed {
        cap,
        over_cap: &over_cap,
    };
    match seed.deserialize(&mut deserializer) {
        Ok(top) => {
            deserializer.end()?;
            Ok(top)
        }
        Err(_) if over_cap.get() => Ok(Top::OverCap),
        Err(e) => Err(e),
    }
}

/// The top level, with the batch cap: past it, reading stops with an error
/// and `over_cap` set.
struct TopSeed<'c> {
    cap: usize,
    over_cap: &'c Cell<bool>,
}

enum Element<'a> {
    Object(Envelope<'a>),
    Other,
}

/// A member name: one of the envelope's own, or an extra.
enum Key<'a> {
    Known(Member),
    Other(Cow<'a, str>),
}

/// The envelope's own members, in the order of [`KNOWN_KEYS`].
#[derive(Clone, Copy)]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
}

pub(crate) const KNOWN_KEYS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

impl Member {
    /// One `match` on the name: a length switch and at most one comparison.
    fn of(name: &str) -> Option<Member> {
        Some(match name {
            "jsonrpc" => Member::Jsonrpc,
            "id" => Member::Id,
            "method" => Member::Method,
            "params" => Member::Params,
            "result" => Member::Result,
            "error" => Member::Error,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        KNOWN_KEYS[self as usize]
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(match Member::of(s) {
                    Some(member) => Key::Known(member),
                    None => Key::Other(Cow::Borrowed(s)),
                })
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(match Member::of(s) {
                    Some(member) => Key::Known(member),
                    None => Key::Other(Cow::Owned(s.to_owned())),
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

fn visit_envelope<'de, A: MapAccess<'de>>(mut map: A) -> Result<Envelope<'de>, A::Error> {
    let mut env = Envelope::default();
    while let Some(key) = map.next_key::<Key<'de>>()? {
        let value: &'de RawValue = map.next_value()?;
        let member = match key {
            Key::Known(member) => member,
            Key::Other(name) => {
                env.extras.0.push((name, value));
                continue;
            }
        };
        let slot = match member {
            Member::Jsonrpc => &mut env.jsonrpc,
            Member::Id => &mut env.id,
            Member::Method => &mut env.method,
            Member::Params => &mut env.params,
            Member::Result => &mut env.result,
            Member::Error => &mut env.error,
        };
        if slot.replace(value).is_some() {
            env.duplicate.get_or_insert(member.name());
        }
    }
    Ok(env)
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Top<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Top<'de>, D::Error> {
        struct TopVisitor<'c> {
            cap: usize,
            over_cap: &'c Cell<bool>,
        }
        impl<'de> Visitor<'de> for TopVisitor<'_> {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message or batch")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Top<'de>, A::Error> {
                visit_envelope(map).map(Top::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top<'de>, A::Error> {
                let hint = seq.size_hint().unwrap_or(4).min(64).min(self.cap);
                let mut elements = Vec::with_capacity(hint);
                loop {
                    if elements.len() == self.cap {
                        return match seq.next_element::<IgnoredAny>()? {
                            None => Ok(Top::Batch(elements)),
                            Some(_) => {
                                self.over_cap.set(true);
                                Err(de::Error::custom("the batch is over the cap"))
                            }
                        };
                    }
                    match seq.next_element::<Element<'de>>()? {
                        Some(element) => elements.push(element),
                        None => return Ok(Top::Batch(elements)),
                    }
                }
            }
            serde_other_scalars!(Top::Other);
        }
        deserializer.deserialize_any(TopVisitor {
            cap: self.cap,
            over_cap: self.over_cap,
        })
    }
}

impl<'de> Deserialize<'de> for Element<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ElementVisitor;
        impl<'de> Visitor<'de> for ElementVisitor {
            type Value = Element<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Element<'de>, A::Error> {
                visit_envelope(map).map(Element::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Element<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Element::Other)
            }
            serde_other_scalars!(Element::Other);
        }
        deserializer.deserialize_any(ElementVisitor)
    }
}
