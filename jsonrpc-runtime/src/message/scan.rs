//! The fast path of classification: a hand-written scanner for the shape
//! nearly every message has.
//!
//! `{"jsonrpc":"2.0","id":7,"method":"add","params":{…}}` and
//! `{"jsonrpc":"2.0","id":7,"result":…}`, members in any order, with or
//! without whitespace. Member names and the scalar members are read byte by
//! byte here; `params` and `result` are still read by serde_json (so they
//! are validated, depth limit included, exactly as on the general path).
//!
//! The scanner accepts a strict subset of what the general path accepts and
//! gives up (returns `None`) at the first thing it does not know: an escape
//! or a control character in a string, an extra member, a repeated one, a
//! negative or fractional or very long id, a null id, `error`, scalar or
//! null params, a batch, anything malformed. The general path then reads
//! the frame from the start, so a frame classifies the same either way
//! (tests compare the two on every input they have).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::classify::{object_params, Classified, RawExtras};
use super::{ParamsShape, ParseOptions};
use crate::id::Id;

/// Classifies `text` if it has the common shape; `None` sends it to the
/// general path.
pub(super) fn scan<'a>(text: &'a str, options: &ParseOptions) -> Option<Classified<'a>> {
    let mut cursor = Cursor {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let mut seen = 0u8;
    let mut id = None;
    let mut method = None;
    let mut params = None;
    let mut result = None;
    cursor.expect(b'{')?;
    loop {
        cursor.expect(b'"')?;
        // The member's name and its colon, then its value.
        let bit = match cursor.peek()? {
            b'j' => {
                cursor.literal(br#"jsonrpc""#)?;
                cursor.expect(b':')?;
                cursor.skip_whitespace();
                cursor.literal(br#""2.0""#)?;
                1
            }
            b'i' => {
                cursor.literal(br#"id""#)?;
                cursor.expect(b':')?;
                cursor.skip_whitespace();
                id = Some(cursor.id()?);
                2
            }
            b'm' => {
                cursor.literal(br#"method""#)?;
                cursor.expect(b':')?;
                cursor.expect(b'"')?;
                method = Some(cursor.plain_str()?);
                4
            }
            b'p' => {
                cursor.literal(br#"params""#)?;
                cursor.expect(b':')?;
                cursor.skip_whitespace();
                params = Some(cursor.raw_compound()?);
                8
            }
            b'r' => {
                cursor.literal(br#"result""#)?;
                cursor.expect(b':')?;
                cursor.skip_whitespace();
                result = Some(cursor.raw()?);
                16
            }
            _ => return None,
        };
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        cursor.skip_whitespace();
        match cursor.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    cursor.skip_whitespace();
    if cursor.pos != text.len() || seen & 1 == 0 {
        return None;
    }
    let extras = RawExtras::default();
    match (method, result) {
        (Some(method), None) => {
            let params = match options.params {
                ParamsShape::Object => match params {
                    Some(raw) if !raw.get().starts_with('{') => return None,
                    _ => Some(object_params(params, id.as_ref(), options).ok()?),
                },
                ParamsShape::ObjectOrArray => params,
            };
            let method = Cow::Borrowed(method);
            Some(match id {
                Some(id) => Classified::Request {
                    id,
                    method,
                    params,
                    extras,
                },
                None => Classified::Notification {
                    method,
                    params,
                    extras,
                },
            })
        }
        (None, Some(result)) if params.is_none() => Some(Classified::Response {
            id: id?,
            outcome: Ok(result),
            extras,
        }),
        _ => None,
    }
}

struct Cursor<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        Some(byte)
    }

    /// Whitespace, then `byte`.
    fn expect(&mut self, byte: u8) -> Option<()> {
        if self.peek()? != byte {
            self.skip_whitespace();
        }
        (self.next()? == byte).then_some(())
    }

    fn literal(&mut self, literal: &[u8]) -> Option<()> {
        let end = self.pos + literal.len();
        (self.bytes.get(self.pos..end)? == literal).then(|| self.pos = end)
    }

    /// The rest of a string whose opening quote was read, if it has no
    /// escape and no control character.
    fn plain_str(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let len = self.bytes[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
        if self.bytes[start + len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        // Both ends sit next to an ASCII quote, so on character boundaries.
        self.text.get(start..start + len)
    }

    /// A string id without escapes, or a positive integer of at most 18
    /// digits (so it fits an `i64`) without fraction or exponent.
    fn id(&mut self) -> Option<Id> {
        match *self.bytes.get(self.pos)? {
            b'"' => {
                self.pos += 1;
                Some(Id::from(self.plain_str()?))
            }
            b'0' => {
                self.pos += 1;
                self.integer_end().then(|| Id::from(0i64))
            }
            b'1'..=b'9' => {
                let mut n = 0i64;
                let start = self.pos;
                while let Some(&digit @ b'0'..=b'9') = self.bytes.get(self.pos) {
                    if self.pos - start == 18 {
                        return None;
                    }
                    n = n * 10 + i64::from(digit - b'0');
                    self.pos += 1;
                }
                self.integer_end().then(|| Id::from(n))
            }
            _ => None,
        }
    }

    /// Whether the integer just read ends here (no fraction, exponent or
    /// further digit follows).
    fn integer_end(&self) -> bool {
        !matches!(
            self.bytes.get(self.pos),
            Some(b'.' | b'e' | b'E' | b'0'..=b'9')
        )
    }

    /// An object or an array, read and validated by serde_json.
    fn raw_compound(&mut self) -> Option<&'a RawValue> {
        match self.bytes.get(self.pos)? {
            b'{' | b'[' => self.raw(),
            _ => None,
        }
    }

    /// Any value, read and validated by serde_json.
    fn raw(&mut self) -> Option<&'a RawValue> {
        let rest = &self.text[self.pos..];
        let mut deserializer = serde_json::Deserializer::from_str(rest);
        let raw = <&'a RawValue>::deserialize(&mut deserializer).ok()?;
        // Where the value ends, as an offset into `rest`.
        let end = raw.get().as_ptr() as usize - rest.as_ptr() as usize + raw.get().len();
        self.pos += end;
        Some(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::super::classify::classify_general;
    use super::super::{Batches, Dialect, NullId, NullParams, Responses};
    use super::*;

    fn all_options() -> Vec<ParseOptions> {
        let mut all = Vec::new();
        for params in [ParamsShape::ObjectOrArray, ParamsShape::Object] {
            for null_id in [NullId::Serve, NullId::Refuse, NullId::RefuseAll] {
                for dialect in [Dialect::Strict, Dialect::Lenient] {
                    all.push(ParseOptions {
                        params,
                        null_id,
                        dialect,
                        responses: Responses::NeverAnswered,
                        null_params: NullParams::Refuse,
                        batches: Batches::Accept,
                        ..ParseOptions::default()
                    });
                    all.push(ParseOptions {
                        params,
                        null_id,
                        dialect,
                        ..ParseOptions::default()
                    });
                }
            }
        }
        all
    }

    /// Frames the scanner takes.
    const TAKEN: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":2,"b":3}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}"#,
        r#" { "method" : "add" , "params" : [ 2 , 3 ] , "id" : "x-1" , "jsonrpc" : "2.0" } "#,
        r#"{"jsonrpc":"2.0","method":"note","params":{"a":2}}"#,
        r#"{"jsonrpc":"2.0","method":"initialized"}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","id":123456789012345678,"method":"m","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":"é","method":"dé","params":{"ü":"ñ"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}],"c":"\n"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":5}"#,
        r#"{"jsonrpc":"2.0","id":"r","result":{"x":[1,2,3]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
    ];

    /// Frames the scanner leaves to the general path.
    const DECLINED: &[&str] = &[
        r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"m","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":99999999999999999999999,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":-5,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":"a\"b","method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"a\u0062"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
        r#"{"jsonrpc":"2.0","method":"m","params":"s"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","id":2}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":{"k":1}}"#,
        r#"{"jsonrpc":"2.1","id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0 ","id":1,"method":"m"}"#,
        r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
        r#"{"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","result":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"params":[1],"result":1}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
        r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
        r#"{}"#,
        r#"{"#,
        "",
        "\u{0}",
        r#"{"jsonrpc":"2.0","id":1,"method":"m	"}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\u{1}\"}",
    ];

    /// Every frame above, every prefix of each, and each with every byte
    /// replaced in turn by characters that matter to JSON.
    fn corpus() -> Vec<String> {
        let mut corpus = Vec::new();
        // Nesting around serde_json's depth limit.
        for depth in [126, 127, 128, 129, 300] {
            corpus.push(format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            ));
            corpus.push(format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            ));
        }
        for frame in TAKEN.iter().chain(DECLINED) {
            corpus.push(frame.to_string());
            for (i, _) in frame.char_indices() {
                corpus.push(frame[..i].to_string());
                for c in [
                    '"', '\\', ',', ':', '}', ']', '{', '[', ' ', '1', '-', 'x', '\u{1}',
                ] {
                    let mut mutated = frame.to_string();
                    let width = frame[i..].chars().next().map_or(1, char::len_utf8);
                    mutated.replace_range(i..i + width, c.encode_utf8(&mut [0; 4]));
                    corpus.push(mutated);
                }
            }
        }
        corpus
    }

    #[test]
    fn the_scanner_classifies_as_the_general_path_does() {
        let corpus = corpus();
        let mut taken = 0;
        for options in all_options() {
            for frame in &corpus {
                if let Some(fast) = scan(frame, &options) {
                    taken += 1;
                    let general = format!("{:?}", classify_general(frame, &options));
                    assert_eq!(
                        format!("Single({fast:?})"),
                        general,
                        "{frame} under {options:?}"
                    );
                }
            }
        }
        // The fast path is taken, not only declined.
        assert!(taken > 1_000, "the scanner took {taken} frames");
    }

    #[test]
    fn the_common_shapes_take_the_fast_path() {
        let options = ParseOptions::default();
        for frame in TAKEN {
            assert!(scan(frame, &options).is_some(), "{frame}");
        }
    }

    #[test]
    fn the_scanner_declines_what_it_does_not_know() {
        let options = ParseOptions::default();
        for frame in DECLINED {
            assert!(scan(frame, &options).is_none(), "{frame}");
        }
    }
}
