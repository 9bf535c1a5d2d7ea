//! What classification yields: one message, borrowing from its frame, as
//! the general path ([`classify`](super::classify)) and the scanner
//! ([`scan`](super::scan)) both produce it.

use std::borrow::Cow;

use serde_json::value::RawValue;

use super::raw::{DecodedParams, RawJson};
use super::{Extras, NullParams, ParseOptions, RefusedMessage};
use crate::id::Id;
use crate::message::ErrorObject;

/// One classified message, borrowing from its frame.
// Public only for `jsonrpc-runtime`'s HTTP transports and MCP server
// (hidden at its re-export): they read the classified messages, never
// their extras.
#[allow(missing_docs, private_interfaces)]
#[derive(Debug)]
pub enum Classified<'a> {
    Request {
        id: Id,
        method: Cow<'a, str>,
        params: Option<RawJson<'a>>,
        extras: RawExtras<'a>,
    },
    Notification {
        method: Cow<'a, str>,
        params: Option<RawJson<'a>>,
        extras: RawExtras<'a>,
    },
    Response {
        id: Id,
        outcome: Result<RawJson<'a>, ErrorObject>,
        extras: RawExtras<'a>,
    },
    /// A response to `id` that is malformed: the call waiting on `id` fails,
    /// and the sender is told with `error` (id null).
    BadResponse {
        id: Id,
        error: ErrorObject,
    },
    /// A malformed response that is never answered (see
    /// [`Responses::NeverAnswered`](crate::message::Responses::NeverAnswered)); a call waiting on `id` fails.
    Ignored {
        id: Option<Id>,
        error: ErrorObject,
    },
    Refused(RefusedMessage),
}

/// A classified frame: one message or a batch.
#[allow(missing_docs)]
#[derive(Debug)]
pub enum ClassifiedFrame<'a> {
    Single(Classified<'a>),
    Batch(Vec<Classified<'a>>),
}

/// Unknown top-level members, still raw. Empty unless the sender used any.
#[derive(Debug, Default)]
pub(crate) struct RawExtras<'a>(pub(super) Vec<(Cow<'a, str>, &'a RawValue)>);

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

/// Decodes a large frame's params during its classification, straight
/// into the type its method's route takes: one parse of the params instead
/// of a validation and then a decode (the router implements it).
pub(crate) trait DecodeParams {
    /// `method`'s params, decoded from the JSON value at the start of
    /// `text`, and the length of that value's text; `None` when no route
    /// decodes them this way or they do not decode.
    fn decode_params(&self, method: &str, text: &str) -> Option<(DecodedParams, usize)>;
}

/// Rule 8 when params must be objects: `{}` when absent, an array or
/// another value refused for a request and replaced by `{}` for a
/// notification.
pub(super) fn object_params<'a>(
    params: Option<RawJson<'a>>,
    id: Option<&Id>,
    options: &ParseOptions,
) -> Result<RawJson<'a>, Classified<'a>> {
    let empty = RawJson::validated("{}");
    match params {
        None => Ok(empty),
        Some(raw) if raw.get().starts_with('{') => Ok(raw),
        Some(raw) => match id {
            Some(id) if !(raw.get() == "null" && options.null_params == NullParams::Absent) => {
                Err(refuse(
                    id.clone(),
                    ErrorObject::invalid_params("`params` must be an object"),
                ))
            }
            _ => Ok(empty),
        },
    }
}

/// A message refused with `error`, answered to `id`.
pub(super) fn refuse<'a>(id: Id, error: ErrorObject) -> Classified<'a> {
    Classified::Refused(RefusedMessage { id, error })
}
