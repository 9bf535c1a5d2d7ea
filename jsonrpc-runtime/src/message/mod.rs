//! The wire model: classifying one inbound frame, and writing outbound
//! envelopes.
//!
//! Parsing is done once, borrowing from the frame: `params`, `result` and
//! `data` stay [`RawValue`]s until a route or a caller decodes them straight
//! into its own type. The classifier follows the nine rules of the project's
//! design, in order:
//!
//! 1. Not valid JSON (an empty frame included): parse error -32700, id null.
//! 2. An array is a batch: refused with -32600 when batches are off,
//!    otherwise each element is classified alone; `[]` is -32600.
//! 3. Not an object: -32600, id null.
//! 4. `id`, when present, must be an integer, a string or `null`; anything
//!    else is -32600, id null. (Whether a *request* may have a null id is
//!    [`ParseOptions::null_id`]'s call, made at rule 9: responses to
//!    unreadable requests must carry one.)
//! 5. `jsonrpc` must be exactly `"2.0"` (the lenient dialect also accepts it
//!    missing), else -32600 with the id.
//! 6. No `method` but `result` or `error`: a response. Both members, no id,
//!    or an error member that is not an error object: refused.
//! 7. `method` must be a string, else -32600 with the id.
//! 8. `params` must be an object or an array. Otherwise a request is refused
//!    with -32602 and a notification runs without params. `params: null` on
//!    a request is read as absent unless [`ParseOptions::null_params`] says
//!    to refuse it.
//! 9. With an id: a request; without: a notification.
//!
//! Unknown top-level members are kept as the envelope's extras.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::id::Id;

mod encode;

pub(crate) use self::encode::{call_body, error_response, response, BatchAnswers};
use self::encode::{write_call, write_error, write_result};

/// Top-level members that are not part of the JSON-RPC envelope, such as a
/// session id or a trace token.
pub type Extras = serde_json::Map<String, serde_json::Value>;

/// How envelopes are written and how strictly they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Dialect {
    /// JSON-RPC 2.0 as written: `"jsonrpc": "2.0"` is required on read and
    /// written on every message.
    #[default]
    Strict,
    /// For peers that omit the version: `"jsonrpc"` may be missing on read
    /// (a wrong value is still refused) and is not written.
    Lenient,
}

/// What to do with a request whose id is `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NullId {
    /// Serve it; the answer carries `"id": null` (JSON-RPC 2.0 allows it but
    /// discourages it).
    #[default]
    Serve,
    /// Refuse it with -32600 (MCP forbids null ids).
    Refuse,
}

/// What to do with `"params": null` on a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NullParams {
    /// Read it as absent (editors send it for methods without arguments).
    #[default]
    Absent,
    /// Refuse the request with -32602.
    Refuse,
}

/// Whether a frame holding a JSON array (a batch) is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Batches {
    /// Serve each element; answer with one array.
    #[default]
    Accept,
    /// Refuse the whole frame with -32600 (MCP has no batches).
    Refuse,
}

/// The rules the classifier applies; a [`Config`](crate::Config) carries one.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::message::{Batches, Message, ParseOptions, Parsed};
///
/// let options = ParseOptions { batches: Batches::Refuse, ..ParseOptions::default() };
/// match Message::parse("[]", &options) {
///     Parsed::Single(Message::Refused(r)) => assert_eq!(r.error.code.0, -32600),
///     other => panic!("unexpected {other:?}"),
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ParseOptions {
    /// Strict or lenient envelopes.
    pub dialect: Dialect,
    /// Serve or refuse batches.
    pub batches: Batches,
    /// Serve or refuse `"id": null`.
    pub null_id: NullId,
    /// Read `"params": null` on a request as absent, or refuse it.
    pub null_params: NullParams,
}

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

// ---------------------------------------------------------------------------
// Borrowed classification (the hot path).

/// One classified message, borrowing from its frame.
#[derive(Debug)]
pub(crate) enum Classified<'a> {
    Request {
        id: Id,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
        extras: RawExtras<'a>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
        extras: RawExtras<'a>,
    },
    Response {
        id: Id,
        outcome: Result<&'a RawValue, ErrorObject>,
        extras: RawExtras<'a>,
    },
    /// A response to `id` that is malformed: the call waiting on `id` fails,
    /// and the sender is told with `error` (id null).
    BadResponse {
        id: Id,
        error: ErrorObject,
    },
    Refused(Refusal),
}

/// A classified frame: one message or a batch.
#[derive(Debug)]
pub(crate) enum ClassifiedFrame<'a> {
    Single(Classified<'a>),
    Batch(Vec<Classified<'a>>),
}

/// Unknown top-level members, still raw. Empty unless the sender used any.
#[derive(Debug, Default)]
pub(crate) struct RawExtras<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl RawExtras<'_> {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn to_owned_extras(&self) -> Extras {
        let mut map = Extras::new();
        for (key, value) in &self.0 {
            if let Ok(v) = serde_json::from_str(value.get()) {
                map.insert(key.to_string(), v);
            }
        }
        map
    }
}

/// Classifies one frame's text.
pub(crate) fn classify_frame<'a>(text: &'a str, options: &ParseOptions) -> ClassifiedFrame<'a> {
    let top: Top<'a> = match serde_json::from_str(text) {
        Ok(top) => top,
        Err(e) => return ClassifiedFrame::Single(refuse(Id::NULL, ErrorObject::parse_error(e))),
    };
    match top {
        Top::Object(env) => ClassifiedFrame::Single(classify(env, options)),
        Top::Other => ClassifiedFrame::Single(refuse(
            Id::NULL,
            ErrorObject::invalid_request("a message must be a JSON object"),
        )),
        Top::Batch(_) if options.batches == Batches::Refuse => ClassifiedFrame::Single(refuse(
            Id::NULL,
            ErrorObject::invalid_request("batches are not accepted"),
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

fn refuse<'a>(id: Id, error: ErrorObject) -> Classified<'a> {
    Classified::Refused(Refusal { id, error })
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
        return match (env.result, env.error, id) {
            (Some(_), Some(_), id) => {
                let error =
                    ErrorObject::invalid_request("a response has both `result` and `error`");
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
                outcome: Ok(result),
                extras: env.extras,
            },
            (None, Some(error), Some(id)) => match serde_json::from_str::<ErrorObject>(error.get())
            {
                Ok(error) => Classified::Response {
                    id,
                    outcome: Err(error),
                    extras: env.extras,
                },
                Err(e) => Classified::BadResponse {
                    id,
                    error: ErrorObject::invalid_request(format!(
                        "a response's `error` is not an error object: {e}"
                    )),
                },
            },
        };
    };
    // Rule 7: the method.
    let Some(method) = read_str(method) else {
        return refuse(
            answer_id(),
            ErrorObject::invalid_request("`method` must be a string"),
        );
    };
    // Rule 8: the params.
    let params = match env.params {
        None => None,
        Some(raw) => match raw.get().as_bytes().first() {
            Some(b'{' | b'[') => Some(raw),
            Some(b'n') if id.is_some() && options.null_params == NullParams::Refuse => {
                return refuse(
                    answer_id(),
                    ErrorObject::invalid_params("`params` must be an object or an array, not null"),
                );
            }
            Some(b'n') => None,
            _ if id.is_some() => {
                return refuse(
                    answer_id(),
                    ErrorObject::invalid_params("`params` must be an object or an array"),
                );
            }
            _ => None,
        },
    };
    // Rule 9. A null id is refused here, on requests only: an error
    // response must carry a null id when the request's could not be read.
    if id.as_ref().is_some_and(Id::is_null) && options.null_id == NullId::Refuse {
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
    Other,
}

enum Element<'a> {
    Object(Envelope<'a>),
    Other,
}

enum Key<'a> {
    Known(&'static str),
    Other(Cow<'a, str>),
}

pub(crate) const KNOWN_KEYS: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(match KNOWN_KEYS.iter().find(|k| **k == s) {
                    Some(k) => Key::Known(k),
                    None => Key::Other(Cow::Borrowed(s)),
                })
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(match KNOWN_KEYS.iter().find(|k| **k == s) {
                    Some(k) => Key::Known(k),
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
        let slot = match key {
            Key::Known("jsonrpc") => &mut env.jsonrpc,
            Key::Known("id") => &mut env.id,
            Key::Known("method") => &mut env.method,
            Key::Known("params") => &mut env.params,
            Key::Known("result") => &mut env.result,
            Key::Known(_) => &mut env.error,
            Key::Other(name) => {
                env.extras.0.push((name, value));
                continue;
            }
        };
        if slot.replace(value).is_some() {
            if let Key::Known(k) = key {
                env.duplicate.get_or_insert(k);
            }
        }
    }
    Ok(env)
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TopVisitor;
        impl<'de> Visitor<'de> for TopVisitor {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message or batch")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Top<'de>, A::Error> {
                visit_envelope(map).map(Top::Object)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Top<'de>, A::Error> {
                let mut elements = Vec::with_capacity(seq.size_hint().unwrap_or(4).min(64));
                while let Some(element) = seq.next_element::<Element<'de>>()? {
                    elements.push(element);
                }
                Ok(Top::Batch(elements))
            }
            serde_other_scalars!(Top::Other);
        }
        deserializer.deserialize_any(TopVisitor)
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

// ---------------------------------------------------------------------------
// Owned messages (the low-level API).

/// A refused frame or element: what the classifier could not accept, with the
/// error to answer it with.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The id to answer with: the message's own id when it could be read,
    /// else `null`.
    pub id: Id,
    /// The error to answer with.
    pub error: ErrorObject,
}

/// An inbound request, owned.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id (possibly `null`).
    pub id: Id,
    /// The method name.
    pub method: String,
    /// The params: an object or an array, or absent.
    pub params: Option<Box<RawValue>>,
    /// Unknown top-level members.
    pub extras: Extras,
}

/// An inbound notification, owned.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params: an object or an array, or absent.
    pub params: Option<Box<RawValue>>,
    /// Unknown top-level members.
    pub extras: Extras,
}

/// A response, owned.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request it answers (`null` when that request could not
    /// be read).
    pub id: Id,
    /// The result, or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
    /// Unknown top-level members.
    pub extras: Extras,
}

impl Response {
    /// A success response carrying `result`.
    ///
    /// # Errors
    ///
    /// Fails when `result` cannot be serialized.
    pub fn result<T: serde::Serialize + ?Sized>(
        id: Id,
        result: &T,
    ) -> Result<Self, serde_json::Error> {
        Ok(Response {
            id,
            outcome: Ok(serde_json::value::to_raw_value(result)?),
            extras: Extras::new(),
        })
    }

    /// An error response carrying `error`.
    pub fn error(id: Id, error: ErrorObject) -> Self {
        Response {
            id,
            outcome: Err(error),
            extras: Extras::new(),
        }
    }
}

/// One JSON-RPC message, owned.
///
/// The peer parses frames without copying (see the module docs); this owned
/// form is for code that works with single messages, such as a transport used
/// without a peer.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::message::{Message, ParseOptions, Parsed};
///
/// let parsed = Message::parse(r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#,
///     &ParseOptions::default());
/// let Parsed::Single(Message::Request(req)) = parsed else { panic!() };
/// assert_eq!(req.method, "add");
/// assert_eq!(req.params.unwrap().get(), "[1,2]");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Message {
    /// A request: answer it.
    Request(Request),
    /// A notification: never answered.
    Notification(Notification),
    /// A response to one of our requests.
    Response(Response),
    /// A frame or element the classifier refused; answer with its error.
    Refused(Refusal),
}

/// A parsed frame: one message, or a batch.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Parsed {
    /// A single message.
    Single(Message),
    /// A batch: its elements in order.
    Batch(Vec<Message>),
}

impl Message {
    /// Classifies one frame's text by the rules in the module docs.
    pub fn parse(text: &str, options: &ParseOptions) -> Parsed {
        match classify_frame(text, options) {
            ClassifiedFrame::Single(m) => Parsed::Single(Message::from_classified(m)),
            ClassifiedFrame::Batch(ms) => {
                Parsed::Batch(ms.into_iter().map(Message::from_classified).collect())
            }
        }
    }

    /// Classifies one frame's bytes; invalid UTF-8 is a parse error.
    pub fn parse_bytes(bytes: &[u8], options: &ParseOptions) -> Parsed {
        match std::str::from_utf8(bytes) {
            Ok(text) => Message::parse(text, options),
            Err(e) => Parsed::Single(Message::Refused(Refusal {
                id: Id::NULL,
                error: ErrorObject::parse_error(format!("invalid UTF-8: {e}")),
            })),
        }
    }

    fn from_classified(m: Classified<'_>) -> Message {
        let own = |raw: Option<&RawValue>| raw.map(RawValue::to_owned);
        match m {
            Classified::Request {
                id,
                method,
                params,
                extras,
            } => Message::Request(Request {
                id,
                method: method.into_owned(),
                params: own(params),
                extras: extras.to_owned_extras(),
            }),
            Classified::Notification {
                method,
                params,
                extras,
            } => Message::Notification(Notification {
                method: method.into_owned(),
                params: own(params),
                extras: extras.to_owned_extras(),
            }),
            Classified::Response {
                id,
                outcome,
                extras,
            } => Message::Response(Response {
                id,
                outcome: outcome.map(RawValue::to_owned),
                extras: extras.to_owned_extras(),
            }),
            Classified::BadResponse { error, .. } => Message::Refused(Refusal {
                id: Id::NULL,
                error,
            }),
            Classified::Refused(r) => Message::Refused(r),
        }
    }

    /// Writes the message as one JSON envelope (no framing).
    ///
    /// A [`Message::Refused`] is written as the error response that answers
    /// it.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::message::{Dialect, Message, Notification};
    /// use jsonrpc_runtime::Id;
    ///
    /// let note = Message::Notification(Notification {
    ///     method: "log".into(),
    ///     params: None,
    ///     extras: Default::default(),
    /// });
    /// assert_eq!(note.to_json(Dialect::Strict), br#"{"jsonrpc":"2.0","method":"log"}"#);
    /// ```
    pub fn to_json(&self, dialect: Dialect) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        // Extras that name an envelope member are left out.
        let own = |extras: &Extras| -> Extras {
            extras
                .iter()
                .filter(|(k, _)| !is_reserved_member(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        };
        match self {
            Message::Request(r) => write_call(
                &mut out,
                dialect,
                Some(&r.id),
                &r.method,
                r.params.as_deref(),
                &own(&r.extras),
            ),
            Message::Notification(n) => write_call(
                &mut out,
                dialect,
                None,
                &n.method,
                n.params.as_deref(),
                &own(&n.extras),
            ),
            Message::Response(r) => match &r.outcome {
                Ok(result) => {
                    write_result(&mut out, dialect, &r.id, result.as_ref(), &own(&r.extras))
                }
                Err(error) => write_error(&mut out, dialect, &r.id, error, &own(&r.extras)),
            },
            Message::Refused(r) => write_error(&mut out, dialect, &r.id, &r.error, &Extras::new()),
        }
        // Writing raw values, ids and strings into a Vec cannot fail.
        .unwrap_or_default();
        out
    }
}

/// Whether `name` is a member the envelope itself owns (and so cannot be an
/// extra).
pub(crate) fn is_reserved_member(name: &str) -> bool {
    KNOWN_KEYS.contains(&name)
}
