//! The wire model: classifying one inbound frame, and writing outbound
//! envelopes.
//!
//! Parsing is done once, borrowing from the frame: `params` and `result`
//! stay raw JSON text until a route or a caller decodes them straight into
//! its own type. The common shape (`jsonrpc`, `id`, `method`, `params` or
//! `result`, in any order, plain strings) is read by a hand-written scanner
//! that validates the whole frame in one pass; anything else (escapes in
//! names, extra members, batches, malformed frames) goes through serde_json,
//! and both classify every frame alike (tests compare them on generated
//! frames). The classifier follows the nine rules of the project's design, in
//! order:
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
//! [`ParseOptions`] adjust three rules for protocols that need it (the MCP
//! preset sets all three): [`NullId::RefuseAll`] refuses a null id at rule 4,
//! [`ParamsShape::Object`] takes object params only at rule 8 (`{}` when
//! absent), and [`Responses::NeverAnswered`] never answers a malformed
//! response at rule 6.
//!
//! Unknown top-level members are kept as the envelope's extras.

use serde_json::value::RawValue;

use crate::id::Id;

mod classified;
mod classify;
pub(crate) mod encode;
mod error;
pub(crate) mod head;
mod raw;
pub(crate) mod scan;
mod strict;

pub(crate) use self::classify::{
    classify_frame_decoding, decode_prefix, DecodeParams, RawExtras, KNOWN_KEYS,
};
// Hidden: `jsonrpc-runtime`'s HTTP transports classify and answer frames
// themselves.
#[doc(hidden)]
pub use self::classified::{Classified, ClassifiedFrame};
#[doc(hidden)]
pub use self::classify::classify_frame;
pub use self::error::{ErrorCode, ErrorObject, ErrorStage, RpcError};
pub(crate) use self::raw::DecodedParams;
#[doc(hidden)]
pub use self::raw::RawJson;

pub(crate) use self::encode::BatchAnswers;
#[doc(hidden)]
pub use self::encode::{call_body, error_response, response};
use self::encode::{write_call, write_error, write_result};

/// Top-level members that are not part of the JSON-RPC envelope, such as a
/// session id or a trace token.
///
/// Both dialects treat extras alike: on read, unknown members are kept (a
/// handler sees them in [`Context::extras`](crate::Context::extras)) and
/// never make a message invalid; on write, they follow the envelope's own
/// members. A name the envelope owns (`jsonrpc`, `id`, `method`, `params`,
/// `result`, `error`) can never be an extra: sending one is an error
/// ([`SendError::InvalidParams`](crate::peer::SendError::InvalidParams), or a
/// panic in [`Config::extras`](crate::Config::extras)), not a silent drop.
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
    /// Refuse every message whose id is `null`, responses included, with
    /// -32600 before any other rule looks at it: the MCP server's rule 4.
    /// (Not for a client: a server's error answer to an unreadable message
    /// rightly carries a null id.)
    RefuseAll,
}

/// Which params a message may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ParamsShape {
    /// An object or an array (JSON-RPC 2.0). The default.
    #[default]
    ObjectOrArray,
    /// An object only, and `{}` when absent (MCP): an array is -32602 for a
    /// request, and a notification runs with `{}`.
    Object,
}

/// How a message that looks like a response (no `method`, but `result` or
/// `error`) is treated when it is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Responses {
    /// A malformed response (no id, both members, an error that is not an
    /// error object) is answered -32600. The default.
    #[default]
    Checked,
    /// It is a response all the same and is never answered (an MCP server:
    /// what a client sends without `method` is its response); a call waiting
    /// for its id still fails.
    NeverAnswered,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Strict or lenient envelopes.
    pub dialect: Dialect,
    /// Serve or refuse batches.
    pub batches: Batches,
    /// Serve or refuse `"id": null`.
    pub null_id: NullId,
    /// Read `"params": null` on a request as absent, or refuse it.
    pub null_params: NullParams,
    /// Objects and arrays as params, or objects only.
    pub params: ParamsShape,
    /// Whether malformed responses are answered.
    pub responses: Responses,
    /// The most elements a batch may hold; a larger batch is refused whole
    /// with one -32600 answer (default [`DEFAULT_MAX_BATCH_LEN`]).
    pub max_batch_len: usize,
}

/// The default cap on elements per batch: far above what clients send
/// (LSP and MCP send none), far below what amplifies one frame into a
/// flood of work and answers.
pub const DEFAULT_MAX_BATCH_LEN: usize = 1000;

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            dialect: Dialect::default(),
            batches: Batches::default(),
            null_id: NullId::default(),
            null_params: NullParams::default(),
            params: ParamsShape::default(),
            responses: Responses::default(),
            max_batch_len: DEFAULT_MAX_BATCH_LEN,
        }
    }
}

// ---------------------------------------------------------------------------
// Owned messages (the low-level API).

/// A refused frame or element: what the classifier could not accept, with the
/// error to answer it with.
#[derive(Debug, Clone, PartialEq)]
pub struct RefusedMessage {
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
    Refused(RefusedMessage),
    /// A malformed response that is not answered
    /// ([`Responses::NeverAnswered`]): why it is malformed, and the id it
    /// named, if any.
    Ignored(RefusedMessage),
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

impl Parsed {
    /// The one message, or the batch's elements.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::message::{Message, ParseOptions};
    ///
    /// let one = Message::parse(r#"{"jsonrpc":"2.0","method":"ping"}"#, &ParseOptions::default());
    /// assert!(matches!(one.into_single(), Ok(Message::Notification(_))));
    /// let two = Message::parse(r#"[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]"#, &ParseOptions::default());
    /// assert_eq!(two.into_single().unwrap_err().len(), 2);
    /// ```
    ///
    /// # Errors
    ///
    /// The elements, when the frame was a batch.
    pub fn into_single(self) -> Result<Message, Vec<Message>> {
        match self {
            Parsed::Single(message) => Ok(message),
            Parsed::Batch(messages) => Err(messages),
        }
    }
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
            Err(e) => Parsed::Single(Message::Refused(RefusedMessage {
                id: Id::NULL,
                error: ErrorObject::parse_error(format!("invalid UTF-8: {e}")),
            })),
        }
    }

    fn from_classified(m: Classified<'_>) -> Message {
        // The scanner validated the members; serde_json reads them once more
        // to own them, and were it to disagree, its word is final.
        Message::owned(m).unwrap_or_else(|e| {
            Message::Refused(RefusedMessage {
                id: Id::NULL,
                error: ErrorObject::parse_error(e),
            })
        })
    }

    fn owned(m: Classified<'_>) -> serde_json::Result<Message> {
        let own = |raw: Option<RawJson<'_>>| raw.map(RawJson::to_raw_value).transpose();
        Ok(match m {
            Classified::Request {
                id,
                method,
                params,
                extras,
            } => Message::Request(Request {
                id,
                method: method.into_owned(),
                params: own(params)?,
                extras: extras.to_owned_extras(),
            }),
            Classified::Notification {
                method,
                params,
                extras,
            } => Message::Notification(Notification {
                method: method.into_owned(),
                params: own(params)?,
                extras: extras.to_owned_extras(),
            }),
            Classified::Response {
                id,
                outcome,
                extras,
            } => Message::Response(Response {
                id,
                outcome: match outcome {
                    Ok(result) => Ok(result.to_raw_value()?),
                    Err(error) => Err(error),
                },
                extras: extras.to_owned_extras(),
            }),
            Classified::BadResponse { error, .. } => Message::Refused(RefusedMessage {
                id: Id::NULL,
                error,
            }),
            Classified::Ignored { id, error } => Message::Ignored(RefusedMessage {
                id: id.unwrap_or(Id::NULL),
                error,
            }),
            Classified::Refused(r) => Message::Refused(r),
        })
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
        let own = own_extras;
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
            Message::Refused(r) | Message::Ignored(r) => {
                write_error(&mut out, dialect, &r.id, &r.error, &Extras::new())
            }
        }
        // Writing raw values, ids and strings into a Vec cannot fail.
        .unwrap_or_default();
        out
    }
}

/// `extras` without the members the envelope owns (copied only when it has
/// some).
fn own_extras(extras: &Extras) -> std::borrow::Cow<'_, Extras> {
    if !extras.keys().any(|k| is_reserved_member(k)) {
        return std::borrow::Cow::Borrowed(extras);
    }
    let own = extras
        .iter()
        .filter(|(k, _)| !is_reserved_member(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    std::borrow::Cow::Owned(own)
}

/// Whether `name` is a member the envelope itself owns (and so cannot be an
/// extra).
pub(crate) fn is_reserved_member(name: &str) -> bool {
    KNOWN_KEYS.contains(&name)
}
