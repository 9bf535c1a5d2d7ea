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
#[derive(Clone, Copy)]
pub(crate) enum RawJson<'a> {
    /// Read by the classifier's scanner.
    Scanned(&'a str),
    /// Read by serde_json (the general path, or a caller's `RawValue`).
    Serde(&'a RawValue),
}

impl<'a> RawJson<'a> {
    /// Text the classifier validated as exactly one JSON value.
    pub(super) fn validated(text: &'a str) -> Self {
        RawJson::Scanned(text)
    }

    pub(crate) fn get(self) -> &'a str {
        match self {
            RawJson::Scanned(text) => text,
            RawJson::Serde(raw) => raw.get(),
        }
    }

    /// An owned [`RawValue`] of the same text. Scanned text is read once
    /// more by serde_json, which has no constructor for text validated
    /// elsewhere (scanned frames are small); an error would mean the scanner
    /// took what serde_json refuses.
    pub(crate) fn to_raw_value(self) -> serde_json::Result<Box<RawValue>> {
        match self {
            RawJson::Scanned(text) => RawValue::from_string(text.to_owned()),
            RawJson::Serde(raw) => Ok(raw.to_owned()),
        }
    }
}

impl<'a> From<&'a RawValue> for RawJson<'a> {
    fn from(raw: &'a RawValue) -> Self {
        RawJson::Serde(raw)
    }
}

/// The text alone, whichever path read it (so the two paths compare equal).
impl fmt::Debug for RawJson<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RawJson").field(&self.get()).finish()
    }
}
