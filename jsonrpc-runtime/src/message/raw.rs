//! A member's JSON text inside an inbound frame, validated once.

use std::fmt;

use serde_json::value::RawValue;

/// The text of one JSON value (`params`, `result`) inside an inbound frame,
/// validated when the frame was classified.
///
/// It stays text: a route decodes it straight into its own type, and a
/// [`RawValue`] is made only where an API hands one out (the owned
/// [`Message`](super::Message), a tower layer's request). So the hot path
/// validates the value once, by the classifier's scanner, instead of once
/// more to make a `RawValue`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct RawJson<'a>(&'a str);

impl<'a> RawJson<'a> {
    /// Text the classifier validated as exactly one JSON value.
    pub(super) fn validated(text: &'a str) -> Self {
        RawJson(text)
    }

    pub(crate) fn get(self) -> &'a str {
        self.0
    }

    /// An owned [`RawValue`] of the same text. (serde_json reads it once
    /// more, since it has no constructor for text read elsewhere; an error
    /// would mean the scanner took what serde_json refuses.)
    pub(crate) fn to_raw_value(self) -> serde_json::Result<Box<RawValue>> {
        RawValue::from_string(self.0.to_owned())
    }
}

impl<'a> From<&'a RawValue> for RawJson<'a> {
    fn from(raw: &'a RawValue) -> Self {
        RawJson(raw.get())
    }
}

impl fmt::Debug for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.0).finish()
    }
}
