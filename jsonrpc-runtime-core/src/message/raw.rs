//! A member's JSON text inside an inbound frame, validated once.

use std::any::Any;
use std::fmt;
use std::sync::Mutex;

use serde_json::value::RawValue;

/// The text of one JSON value (`params`, `result`) inside an inbound frame,
/// validated when the frame was classified.
///
/// It stays text: a route decodes it straight into its own type, and a
/// [`RawValue`] is made only where an API hands one out (the owned
/// [`Message`](super::Message), a tower layer's request). So the hot path
/// validates the value once, by the classifier's scanner, instead of once
/// more to make a `RawValue`.
#[allow(private_interfaces)]
#[derive(Clone, Copy)]
pub enum RawJson<'a> {
    /// Read by the classifier's scanner.
    Scanned(&'a str),
    /// Read by serde_json (the general path, or a caller's `RawValue`).
    Serde(&'a RawValue),
    /// A large frame's params, read by serde_json as their route decoded
    /// them into its own type while the frame was classified: the text, and
    /// the value waiting for the route.
    Decoded(&'a str, &'a DecodedSlot),
}

/// Params a route decoded, in its own type, while their frame was
/// classified (see `DecodeParams`).
pub(crate) type DecodedParams = Box<dyn Any + Send>;

/// Where decoded params wait for their route (which takes them once).
/// It lives beside the frame, for as long as the classification's borrows.
#[derive(Default)]
pub(crate) struct DecodedSlot(Mutex<Option<DecodedParams>>);

impl DecodedSlot {
    pub(super) fn put(&self, params: DecodedParams) {
        *self.lock() = Some(params);
    }

    /// The params, if they are a `P` and still here.
    pub(crate) fn take<P: 'static>(&self) -> Option<P> {
        let mut slot = self.lock();
        if !slot.as_ref().is_some_and(|params| params.is::<P>()) {
            return None;
        }
        slot.take()?.downcast().ok().map(|params| *params)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<DecodedParams>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for DecodedSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DecodedSlot")
    }
}

impl<'a> RawJson<'a> {
    /// Text the classifier validated as exactly one JSON value.
    pub(super) fn validated(text: &'a str) -> Self {
        RawJson::Scanned(text)
    }

    /// The value's JSON text, as it came.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime_core::message::RawJson;
    /// use serde_json::value::RawValue;
    ///
    /// let raw = RawValue::from_string(r#"{"a":1}"#.to_owned()).unwrap();
    /// assert_eq!(RawJson::from(&*raw).get(), r#"{"a":1}"#);
    /// ```
    pub fn get(self) -> &'a str {
        match self {
            RawJson::Scanned(text) | RawJson::Decoded(text, _) => text,
            RawJson::Serde(raw) => raw.get(),
        }
    }

    /// An owned [`RawValue`] of the same text. Scanned text is read once
    /// more by serde_json, which has no constructor for text validated
    /// elsewhere (scanned frames are small); an error would mean the scanner
    /// took what serde_json refuses.
    pub(crate) fn to_raw_value(self) -> serde_json::Result<Box<RawValue>> {
        match self {
            RawJson::Scanned(text) | RawJson::Decoded(text, _) => {
                RawValue::from_string(text.to_owned())
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoded_params_are_taken_once_and_only_as_their_own_type() {
        let slot = DecodedSlot::default();
        assert_eq!(slot.take::<String>(), None);
        slot.put(Box::new(String::from("text")));
        // Another route's type leaves them for the right one.
        assert_eq!(slot.take::<Vec<i64>>(), None);
        assert_eq!(slot.take::<String>().as_deref(), Some("text"));
        assert_eq!(slot.take::<String>(), None);
    }
}
