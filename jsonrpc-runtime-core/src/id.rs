//! Request ids.

use std::fmt;
use std::sync::Arc;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// A JSON-RPC request id: an integer, a string, or (discouraged) `null`.
///
/// `1` and `"1"` are different ids. Integers are kept exactly across the
/// whole `i64` and `u64` range: an id past 2^53 is never rounded through a
/// float. A fractional number is not an id; the classifier refuses it.
///
/// Cloning is cheap: a string id is shared, not copied.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::Id;
///
/// let a = Id::from(1);
/// let b = Id::from("1");
/// assert_ne!(a, b);
/// assert_eq!(a.to_string(), "1");
/// assert_eq!(b.to_string(), "\"1\"");
/// assert_eq!(Id::from(u64::MAX).as_u64(), Some(u64::MAX));
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Id(Repr);

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Repr {
    Null,
    Int(i64),
    /// Only for values above `i64::MAX`, so every integer has one form.
    Big(u64),
    Str(Arc<str>),
}

impl Id {
    /// The `null` id. A request may carry it (JSON-RPC 2.0 discourages it);
    /// a response carries it when the request's id could not be read.
    pub const NULL: Id = Id(Repr::Null);

    /// Returns true for the `null` id.
    pub fn is_null(&self) -> bool {
        matches!(self.0, Repr::Null)
    }

    /// The id as an `i64`, when it is an integer in that range.
    pub fn as_i64(&self) -> Option<i64> {
        match self.0 {
            Repr::Int(n) => Some(n),
            _ => None,
        }
    }

    /// The id as a `u64`, when it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self.0 {
            Repr::Int(n) => u64::try_from(n).ok(),
            Repr::Big(n) => Some(n),
            _ => None,
        }
    }

    /// The id as a string slice, when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.0 {
            Repr::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Writes the id as JSON into `out`.
    pub(crate) fn write_json(&self, out: &mut Vec<u8>) {
        // itoa: several times faster than `fmt`, and no serializer around it.
        match &self.0 {
            Repr::Null => out.extend_from_slice(b"null"),
            Repr::Int(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Repr::Big(n) => out.extend_from_slice(itoa::Buffer::new().format(*n).as_bytes()),
            Repr::Str(s) => write_json_str(out, s),
        }
    }
}

impl Default for Id {
    /// The `null` id.
    fn default() -> Self {
        Id::NULL
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Id(Repr::Int(n))
    }
}

impl From<i32> for Id {
    fn from(n: i32) -> Self {
        Id(Repr::Int(n.into()))
    }
}

impl From<u32> for Id {
    fn from(n: u32) -> Self {
        Id(Repr::Int(n.into()))
    }
}

impl From<u64> for Id {
    fn from(n: u64) -> Self {
        match i64::try_from(n) {
            Ok(n) => Id(Repr::Int(n)),
            Err(_) => Id(Repr::Big(n)),
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Id(Repr::Str(s.into()))
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id(Repr::Str(s.into()))
    }
}

impl From<Arc<str>> for Id {
    fn from(s: Arc<str>) -> Self {
        Id(Repr::Str(s))
    }
}

impl fmt::Display for Id {
    /// Formats the id as it appears on the wire: `7`, `"abc"`, `null`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Null => f.write_str("null"),
            Repr::Int(n) => write!(f, "{n}"),
            Repr::Big(n) => write!(f, "{n}"),
            // JSON's escaping, not Rust's `{:?}`: they differ on control and
            // non-printable characters.
            Repr::Str(s) => f.write_str(&serde_json::to_string(&**s).map_err(|_| fmt::Error)?),
        }
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({self})")
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Repr::Null => serializer.serialize_unit(),
            Repr::Int(n) => serializer.serialize_i64(*n),
            Repr::Big(n) => serializer.serialize_u64(*n),
            Repr::Str(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;

        impl Visitor<'_> for IdVisitor {
            type Value = Id;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer, a string or null")
            }

            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Id, E> {
                Ok(Id::from(n))
            }

            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Id, E> {
                Ok(Id::from(n))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Id, E> {
                Ok(Id::from(s))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Id, E> {
                Ok(Id::NULL)
            }

            fn visit_none<E: de::Error>(self) -> Result<Id, E> {
                Ok(Id::NULL)
            }
        }

        deserializer.deserialize_any(IdVisitor)
    }
}

/// Writes `s` as a JSON string. Method names, ids and member names rarely
/// need an escape: those are copied between quotes, without serde_json's
/// serializer and its byte-by-byte writes.
pub(crate) fn write_json_str(out: &mut Vec<u8>, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing a string into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_have_one_form() {
        assert_eq!(Id::from(5u64), Id::from(5i64));
        assert_ne!(Id::from(5i64), Id::from("5"));
        let big = Id::from(u64::MAX);
        assert_eq!(big.as_i64(), None);
        assert_eq!(serde_json::to_string(&big).unwrap(), u64::MAX.to_string());
    }

    #[test]
    fn fractions_are_not_ids() {
        assert!(serde_json::from_str::<Id>("1.5").is_err());
        assert!(serde_json::from_str::<Id>("true").is_err());
        assert_eq!(serde_json::from_str::<Id>("null").unwrap(), Id::NULL);
    }

    #[test]
    fn json_writer_matches_serde() {
        for id in [Id::NULL, Id::from(-3), Id::from(u64::MAX), Id::from("a\"b")] {
            let mut out = Vec::new();
            id.write_json(&mut out);
            assert_eq!(out, serde_json::to_vec(&id).unwrap());
        }
    }
}
