//! Whose a refused message was: its id and kind, read off its first bytes.
//!
//! A frame over the cap is never read whole, but its first bytes are: a
//! request there names its id (every encoder this crate knows of writes
//! `id` and `method` or `result` before the params or the result), so the
//! refusal can be answered with that id and the caller learns of it at
//! once, rather than at its timeout; an answer to one of this side's calls
//! fails that call.

use crate::id::Id;

/// How many first bytes of a refused frame are kept to read its head.
pub(crate) const HEAD_LEN: usize = 256;

/// What the first bytes of a message say it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Head {
    /// A request with this id (`method` and `id` seen).
    Request(Id),
    /// An answer with this id (`result` or `error`, and `id`, seen).
    Answer(Id),
}

/// Reads the id and kind of the message that starts with `head`, if its
/// first members say them. `None` when they do not (the id or the kind
/// comes after the head's end, the head is not a JSON object's start, the
/// id is `null` or not an id, a member name has escapes).
pub(crate) fn peek(head: &[u8]) -> Option<Head> {
    let mut cursor = Cursor { bytes: head, at: 0 };
    cursor.ws();
    cursor.eat(b'{')?;
    let (mut id, mut request, mut answer) = (None, false, false);
    loop {
        cursor.ws();
        let key = cursor.key()?;
        cursor.ws();
        cursor.eat(b':')?;
        cursor.ws();
        let start = cursor.at;
        let complete = cursor.skip_value();
        match key {
            b"id" if complete => {
                id = Some(serde_json::from_slice::<Id>(&head[start..cursor.at]).ok()?);
            }
            b"method" => request = true,
            b"result" | b"error" => answer = true,
            _ => {}
        }
        if let Some(id) = id.as_ref().filter(|id| !id.is_null()) {
            if request != answer {
                return Some(if request {
                    Head::Request(id.clone())
                } else {
                    Head::Answer(id.clone())
                });
            }
        }
        if !complete {
            return None;
        }
        cursor.ws();
        match cursor.next()? {
            b',' => {}
            _ => return None,
        }
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn next(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    fn ws(&mut self) {
        while self
            .bytes
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    /// A member name without escapes.
    fn key(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.at;
        loop {
            match self.next()? {
                b'"' => return Some(&self.bytes[start..self.at - 1]),
                b'\\' => return None,
                _ => {}
            }
        }
    }

    /// Skips one value; `false` when the head ends inside it.
    fn skip_value(&mut self) -> bool {
        match self.bytes.get(self.at) {
            None => false,
            Some(b'"') => {
                self.at += 1;
                self.skip_string()
            }
            Some(b'{' | b'[') => {
                let mut depth = 0usize;
                loop {
                    match self.next() {
                        None => return false,
                        Some(b'"') => {
                            if !self.skip_string() {
                                return false;
                            }
                        }
                        Some(b'{' | b'[') => depth += 1,
                        Some(b'}' | b']') => {
                            depth -= 1;
                            if depth == 0 {
                                return true;
                            }
                        }
                        Some(_) => {}
                    }
                }
            }
            Some(_) => {
                // A number or a literal: it ends where the member does. Cut
                // by the head's end, it may be a longer one.
                while let Some(b) = self.bytes.get(self.at) {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        return true;
                    }
                    self.at += 1;
                }
                false
            }
        }
    }

    /// Skips to the end of a string whose opening quote was read.
    fn skip_string(&mut self) -> bool {
        loop {
            match self.next() {
                None => return false,
                Some(b'"') => return true,
                Some(b'\\') => {
                    if self.next().is_none() {
                        return false;
                    }
                }
                Some(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_and_an_answer_are_told_by_their_first_members() {
        let cases: [(&[u8], Option<Head>); 14] = [
            (
                br#"{"jsonrpc":"2.0","id":7,"method":"echo","params":["xxxx"#,
                Some(Head::Request(Id::from(7))),
            ),
            (
                br#"{"jsonrpc":"2.0","method":"echo","id":"a\"b","params":"#,
                Some(Head::Request(Id::from("a\"b"))),
            ),
            (
                br#" { "id" : -3 , "result" : {"big":"#,
                Some(Head::Answer(Id::from(-3))),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"s1","error":{"code":1,"data":"#,
                Some(Head::Answer(Id::from("s1"))),
            ),
            (
                br#"{"params":{"a":[1,{"b":"}"}]},"id":4,"method":"m"}"#,
                Some(Head::Request(Id::from(4))),
            ),
            // The id comes after the head's end, or is cut by it.
            (br#"{"jsonrpc":"2.0","method":"m","params":["xxxx"#, None),
            (br#"{"jsonrpc":"2.0","method":"m","id":12"#, None),
            (br#"{"jsonrpc":"2.0","id":"abc"#, None),
            // A notification, a null id, not an object, an escaped name.
            (br#"{"jsonrpc":"2.0","method":"m","params":{}}"#, None),
            (br#"{"id":null,"method":"m","params":["#, None),
            (br#"[{"id":1,"method":"m"}"#, None),
            (br#"{"i\u0064":1,"method":"m","params":"#, None),
            // The first kind seen decides.
            (
                br#"{"id":1,"method":"m","result":0}"#,
                Some(Head::Request(Id::from(1))),
            ),
            (b"", None),
        ];
        for (head, expected) in cases {
            assert_eq!(peek(head), expected, "{}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn any_prefix_of_a_message_is_read_as_the_message_or_not_at_all() {
        let whole =
            br#"{"jsonrpc":"2.0","id":"x\\y","method":"a/b","params":{"s":"q\"}","n":[1,2]}}"#;
        for end in 0..=whole.len() {
            match peek(&whole[..end]) {
                None => {}
                Some(head) => assert_eq!(head, Head::Request(Id::from("x\\y")), "prefix {end}"),
            }
        }
        assert_eq!(peek(whole), Some(Head::Request(Id::from("x\\y"))));
    }
}
