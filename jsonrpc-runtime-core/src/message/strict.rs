//! Decoding that fails if any step of it failed, even one the type
//! recovered from.
//!
//! A large frame's params are decoded by their route while the frame is
//! read, and the text serde_json went through is then taken as valid JSON
//! (`scan::Cursor::decode_params`). That holds only if serde_json read all
//! of it without an error. A type can swallow one: a field decoded with
//! `Vec::deserialize(d).unwrap_or_default()` stops serde_json in the middle
//! of the array and goes on, so a broken frame such as
//! `"params":{"a":[1,"x"},"id":7}` would decode, and end where it should
//! not. [`Strict`] watches every call the type makes into the deserializer
//! (and into the sequences, maps and enums it is handed) and fails the whole
//! decode if any of them returned an error; the frame then goes to the path
//! that validates it first.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use serde::Deserialize;

/// A `P` that decoded without an error anywhere along the way.
pub(super) struct Strict<P>(pub(super) P);

impl<'de, P: Deserialize<'de>> Deserialize<'de> for Strict<P> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let failed = Cell::new(false);
        let value = PhantomData::<P>.deserialize(Watch {
            inner: deserializer,
            failed: &failed,
        })?;
        if failed.get() {
            return Err(de::Error::custom(
                "the params' type recovered from an error",
            ));
        }
        Ok(Strict(value))
    }
}

/// A deserializer, visitor, seed or access whose errors are noted in
/// `failed` on their way out.
struct Watch<'w, T> {
    inner: T,
    failed: &'w Cell<bool>,
}

impl<'w, T> Watch<'w, T> {
    fn wrap<U>(&self, inner: U) -> Watch<'w, U> {
        Watch {
            inner,
            failed: self.failed,
        }
    }
}

/// Notes `result`'s error, if it is one.
fn note<T, E>(failed: &Cell<bool>, result: Result<T, E>) -> Result<T, E> {
    if result.is_err() {
        failed.set(true);
    }
    result
}

/// `deserialize_*` methods that hand a watched visitor to the inner
/// deserializer.
macro_rules! forward_deserialize {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            let visitor = self.wrap(visitor);
            note(self.failed, self.inner.$method($($arg,)* visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Watch<'_, D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any();
        deserialize_bool();
        deserialize_i8();
        deserialize_i16();
        deserialize_i32();
        deserialize_i64();
        deserialize_i128();
        deserialize_u8();
        deserialize_u16();
        deserialize_u32();
        deserialize_u64();
        deserialize_u128();
        deserialize_f32();
        deserialize_f64();
        deserialize_char();
        deserialize_str();
        deserialize_string();
        deserialize_bytes();
        deserialize_byte_buf();
        deserialize_option();
        deserialize_unit();
        deserialize_unit_struct(name: &'static str);
        deserialize_newtype_struct(name: &'static str);
        deserialize_seq();
        deserialize_tuple(len: usize);
        deserialize_tuple_struct(name: &'static str, len: usize);
        deserialize_map();
        deserialize_struct(name: &'static str, fields: &'static [&'static str]);
        deserialize_enum(name: &'static str, variants: &'static [&'static str]);
        deserialize_identifier();
        deserialize_ignored_any();
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// `visit_*` methods for values that hand nothing further down.
macro_rules! forward_visit {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<E: de::Error>(self, $($arg: $ty),*) -> Result<Self::Value, E> {
            self.inner.$method($($arg),*)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Watch<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    forward_visit! {
        visit_bool(v: bool);
        visit_i8(v: i8);
        visit_i16(v: i16);
        visit_i32(v: i32);
        visit_i64(v: i64);
        visit_i128(v: i128);
        visit_u8(v: u8);
        visit_u16(v: u16);
        visit_u32(v: u32);
        visit_u64(v: u64);
        visit_u128(v: u128);
        visit_f32(v: f32);
        visit_f64(v: f64);
        visit_char(v: char);
        visit_str(v: &str);
        visit_borrowed_str(v: &'de str);
        visit_string(v: String);
        visit_bytes(v: &[u8]);
        visit_borrowed_bytes(v: &'de [u8]);
        visit_byte_buf(v: Vec<u8>);
        visit_none();
        visit_unit();
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        let deserializer = self.wrap(deserializer);
        self.inner.visit_some(deserializer)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<V::Value, D::Error> {
        let deserializer = self.wrap(deserializer);
        self.inner.visit_newtype_struct(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        let seq = self.wrap(seq);
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        let map = self.wrap(map);
        self.inner.visit_map(map)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        let data = self.wrap(data);
        self.inner.visit_enum(data)
    }
}

impl<'de, T: DeserializeSeed<'de>> DeserializeSeed<'de> for Watch<'_, T> {
    type Value = T::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T::Value, D::Error> {
        let deserializer = self.wrap(deserializer);
        self.inner.deserialize(deserializer)
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Watch<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        let seed = self.wrap(seed);
        note(self.failed, self.inner.next_element_seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Watch<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let seed = self.wrap(seed);
        note(self.failed, self.inner.next_key_seed(seed))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        let seed = self.wrap(seed);
        note(self.failed, self.inner.next_value_seed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'w, 'de, A: EnumAccess<'de>> EnumAccess<'de> for Watch<'w, A> {
    type Error = A::Error;
    type Variant = Watch<'w, A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Self::Variant), A::Error> {
        let failed = self.failed;
        let seed = self.wrap(seed);
        let result = self.inner.variant_seed(seed);
        note(failed, result).map(|(value, inner)| (value, Watch { inner, failed }))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Watch<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        note(self.failed, self.inner.unit_variant())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        let seed = self.wrap(seed);
        note(self.failed, self.inner.newtype_variant_seed(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        let visitor = self.wrap(visitor);
        note(self.failed, self.inner.tuple_variant(len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        let visitor = self.wrap(visitor);
        note(self.failed, self.inner.struct_variant(fields, visitor))
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Deserializer};

    use super::Strict;

    /// A list that is empty when it does not decode: it swallows the error.
    fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
        Ok(Vec::<u32>::deserialize(d).unwrap_or_default())
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Doc {
        #[serde(default, deserialize_with = "lenient")]
        a: Vec<u32>,
        b: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(untagged)]
    enum Either {
        Numbers(Vec<u32>),
        Text { text: String },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Shape {
        Point,
        Circle(f64),
        Rect { w: u32, h: u32 },
    }

    /// The `T` at the start of `text` and where serde_json stopped.
    fn prefix<T: for<'de> Deserialize<'de>>(text: &str) -> Option<(T, usize)> {
        let mut values = serde_json::Deserializer::from_str(text).into_iter::<T>();
        let value = values.next()?.ok()?;
        Some((value, values.byte_offset()))
    }

    #[test]
    fn a_swallowed_error_fails_the_strict_decode() {
        // serde_json alone decodes it and stops inside the params.
        let text = r#"{"b":"s","a":[1,"x"},"id":7}"#;
        let (doc, end) = prefix::<Doc>(text).unwrap();
        assert_eq!((doc.a.len(), &text[end..]), (0, r#","id":7}"#));
        assert!(prefix::<Strict<Doc>>(text).is_none());
        // So does a valid value whose type swallows an error.
        assert!(prefix::<Strict<Doc>>(r#"{"b":"s","a":["x"]}"#).is_none());
    }

    #[test]
    fn well_behaved_types_decode_strictly_as_they_do_plainly() {
        let cases = [
            r#"{"b":"s","a":[1,2]}"#,
            r#"{"b":"s"}"#,
            r#"{"b":"s","a":[],"extra":{"x":[null,true,1.5,"\u00e9"]}}"#,
        ];
        for text in cases {
            let (plain, end) = prefix::<Doc>(text).unwrap();
            let (Strict(strict), strict_end) = prefix::<Strict<Doc>>(text).unwrap();
            assert_eq!((plain, end), (strict, strict_end), "{text}");
        }
        for text in [r#"[1,2,3]"#, r#"{"text":"t"}"#] {
            let plain = prefix::<Either>(text).unwrap();
            let Some((Strict(strict), end)) = prefix::<Strict<Either>>(text) else {
                panic!("{text}");
            };
            assert_eq!(plain, (strict, end), "{text}");
        }
        for text in [
            r#"["Point",{"Circle":1.5},{"Rect":{"w":1,"h":2}}]"#,
            r#"[{"Rect":{"w":1,"h":2}},"Point"]"#,
        ] {
            let plain = prefix::<Vec<Shape>>(text).unwrap();
            let Some((Strict(strict), end)) = prefix::<Strict<Vec<Shape>>>(text) else {
                panic!("{text}");
            };
            assert_eq!(plain, (strict, end), "{text}");
        }
        let value = r#"{"k":[1,{"m":null}],"s":"x\"y"}"#;
        let Some((Strict(v), _)) = prefix::<Strict<serde_json::Value>>(value) else {
            panic!()
        };
        assert_eq!(v, serde_json::from_str::<serde_json::Value>(value).unwrap());
    }

    #[test]
    fn errors_that_reach_the_top_still_fail() {
        assert!(prefix::<Strict<Doc>>(r#"{"b":5}"#).is_none());
        assert!(prefix::<Strict<Vec<Shape>>>(r#"["Square"]"#).is_none());
        assert!(prefix::<Strict<Doc>>(r#"{"b":"s""#).is_none());
    }
}
