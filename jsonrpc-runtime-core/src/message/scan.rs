//! The fast path of classification: a hand-written scanner for the shape
//! nearly every message has.
//!
//! `{"jsonrpc":"2.0","id":7,"method":"add","params":{…}}` and
//! `{"jsonrpc":"2.0","id":7,"result":…}`, members in any order, with or
//! without whitespace. The whole frame is read and validated in one pass:
//! `params` and `result` are checked to be JSON and kept as text
//! ([`RawJson`]), with no second walk by serde_json to make a `RawValue`.
//!
//! The scanner accepts a strict subset of what the general path accepts and
//! gives up (returns `None`) at the first thing it does not know: an escape
//! in a member name, the method or a string id, an extra member, a repeated
//! one, a negative or fractional or very long id, a null id, `error`, scalar
//! or null params, values nested deeper than 64, a batch, anything
//! malformed. The general path then reads the frame from the start, so a
//! frame classifies the same either way (tests compare the two on fixed,
//! mutated and generated frames).
//!
//! Frames over [`SCAN_MAX`] are scanned only when a [`DecodeParams`] is at
//! hand (the peer's router): their `params` are not validated here but
//! decoded straight into the route's own type, by serde_json, in the same
//! pass. Validating an 8 MiB text and then decoding it cost two parses
//! where that is one. Such a frame goes to the general path when its method
//! does not come before its params, when the route does not decode them
//! (a wrong type, a syntax error: the general path then says which) or
//! when it is a response.

use std::borrow::Cow;

use super::classified::{object_params, Classified, DecodeParams, RawExtras};
use super::raw::{DecodedSlot, RawJson};
use super::{ParamsShape, ParseOptions};
use crate::id::Id;

/// Frames longer than this (in bytes) go to the general path: on long
/// texts full of escapes (a source file in an LSP `didOpen`) serde_json's
/// string scan is the faster, and the envelope is a small part of the
/// frame's cost anyway.
pub(crate) const SCAN_MAX: usize = 16 * 1024;

/// Classifies `text` (at most [`SCAN_MAX`] bytes) if it has the common
/// shape; `None` sends it to the general path.
pub(super) fn scan<'a>(text: &'a str, options: &ParseOptions) -> Option<Classified<'a>> {
    scan_with(text, options, None)
}

/// [`scan`] for a frame over [`SCAN_MAX`]: its params are decoded by
/// `decoder` into `slot`, not validated.
pub(super) fn scan_large<'a>(
    text: &'a str,
    options: &ParseOptions,
    decoder: &dyn DecodeParams,
    slot: &'a DecodedSlot,
) -> Option<Classified<'a>> {
    scan_with(text, options, Some((decoder, slot)))
}

/// The params in the shape the options want; `None` when the general path
/// must decide (params that are not an object where one is wanted).
#[inline(always)]
fn shaped<'a>(
    params: Option<RawJson<'a>>,
    id: Option<&Id>,
    options: &ParseOptions,
) -> Option<Option<RawJson<'a>>> {
    match options.params {
        ParamsShape::Object => match params {
            Some(raw) if !raw.get().starts_with('{') => None,
            _ => Some(Some(object_params(params, id, options).ok()?)),
        },
        ParamsShape::ObjectOrArray => Some(params),
    }
}

/// [`scan`], or [`scan_large`] with a decoder.
#[inline(always)]
fn scan_with<'a>(
    text: &'a str,
    options: &ParseOptions,
    decoder: Option<(&dyn DecodeParams, &'a DecodedSlot)>,
) -> Option<Classified<'a>> {
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
                cursor.name(br#"jsonrpc""#)?;
                cursor.literal(br#""2.0""#)?;
                1
            }
            b'i' => {
                cursor.name(br#"id""#)?;
                id = Some(cursor.id()?);
                2
            }
            b'm' => {
                cursor.name(br#"method""#)?;
                cursor.expect(b'"')?;
                method = Some(cursor.plain_str()?);
                4
            }
            b'p' => {
                cursor.name(br#"params""#)?;
                params = Some(match decoder {
                    Some((decoder, slot)) => {
                        cursor.decode_params(method?, options, decoder, slot)?
                    }
                    None => cursor.raw_compound()?,
                });
                8
            }
            b'r' if decoder.is_none() => {
                cursor.name(br#"result""#)?;
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
            let params = shaped(params, id.as_ref(), options)?;
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

    /// A member's name (after its opening quote, closing quote included),
    /// its colon, and the whitespace before its value.
    fn name<const N: usize>(&mut self, name: &[u8; N]) -> Option<()> {
        self.literal(name)?;
        self.expect(b':')?;
        self.skip_whitespace();
        Some(())
    }

    fn literal<const N: usize>(&mut self, literal: &[u8; N]) -> Option<()> {
        let end = self.pos + N;
        (self.bytes.get(self.pos..end)? == literal).then(|| self.pos = end)
    }

    /// The rest of a string whose opening quote was read, if it has no
    /// escape and no control character.
    fn plain_str(&mut self) -> Option<&'a str> {
        let start = self.pos;
        self.skip_plain();
        if self.next()? != b'"' {
            return None;
        }
        // Both ends sit next to an ASCII quote, so on character boundaries.
        self.text.get(start..self.pos - 1)
    }

    /// Skips the bytes of a string that need no look: up to a quote, a
    /// backslash, a control character or the end.
    fn skip_plain(&mut self) {
        let bytes = self.bytes;
        let mut pos = self.pos;
        // Short strings (names, methods) byte by byte.
        let short = bytes.len().min(pos + 16);
        while pos < short && !STOPS[usize::from(bytes[pos])] {
            pos += 1;
        }
        if pos == short {
            // Long ones eight bytes at a time, then to the stop.
            while let Some(word) = bytes.get(pos..pos + 8) {
                let Ok(word) = <[u8; 8]>::try_from(word) else {
                    break;
                };
                if needs_look(u64::from_le_bytes(word)) {
                    break;
                }
                pos += 8;
            }
            while pos < bytes.len() && !STOPS[usize::from(bytes[pos])] {
                pos += 1;
            }
        }
        self.pos = pos;
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

    /// An object or an array.
    fn raw_compound(&mut self) -> Option<RawJson<'a>> {
        match self.peek()? {
            b'{' | b'[' => self.raw(),
            _ => None,
        }
    }

    /// Params decoded by `decoder` into `method`'s own type and put in
    /// `slot`; their text is valid (serde_json read all of it to decode
    /// them).
    fn decode_params(
        &mut self,
        method: &str,
        options: &ParseOptions,
        decoder: &dyn DecodeParams,
        slot: &'a DecodedSlot,
    ) -> Option<RawJson<'a>> {
        match (self.peek()?, options.params) {
            (b'{', _) | (b'[', ParamsShape::ObjectOrArray) => {}
            _ => return None,
        }
        let start = self.pos;
        let rest = self.text.get(start..)?;
        let (params, len) = decoder.decode_params(method, rest)?;
        let text = rest.get(..len)?;
        self.pos = start + len;
        slot.put(params);
        Some(RawJson::Decoded(text, slot))
    }

    /// One value, validated here: its text.
    fn raw(&mut self) -> Option<RawJson<'a>> {
        let start = self.pos;
        self.value(0)?;
        Some(RawJson::validated(self.text.get(start..self.pos)?))
    }

    /// Skips one value, checking it is JSON; `None` at anything malformed
    /// or deeper than [`MAX_DEPTH`].
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.next()? {
            b'{' => self.container(depth, b'}', |cursor| {
                cursor.expect(b'"')?;
                cursor.string()?;
                cursor.expect(b':')?;
                cursor.skip_whitespace();
                cursor.member_value(depth + 1)
            }),
            b'[' => self.container(depth, b']', |cursor| cursor.member_value(depth + 1)),
            b'"' => self.string(),
            b'-' => self.number(),
            b'0'..=b'9' => {
                self.pos -= 1;
                self.number()
            }
            b't' => self.literal(b"rue"),
            b'f' => self.literal(b"alse"),
            b'n' => self.literal(b"ull"),
            _ => None,
        }
    }

    /// The rest of an object or an array whose opening bracket was read:
    /// `item` (a member, an element) repeated between commas, up to `close`.
    fn container(
        &mut self,
        depth: usize,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        if depth == MAX_DEPTH {
            return None;
        }
        self.skip_whitespace();
        if self.peek()? == close {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.skip_whitespace();
            item(self)?;
            self.skip_whitespace();
            match self.next()? {
                b',' => continue,
                byte if byte == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// A value inside an object or an array: numbers and strings read here,
    /// without a call of their own; the rest through [`value`](Self::value).
    fn member_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'0'..=b'9' => self.number(),
            b'"' => {
                self.pos += 1;
                self.string()
            }
            _ => self.value(depth),
        }
    }

    /// The rest of a string whose opening quote was read: any text without
    /// control characters, with the two-character escapes.
    fn string(&mut self) -> Option<()> {
        loop {
            self.skip_plain();
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    // Four hex digits, whatever code point they name (a
                    // lone surrogate too): what serde_json accepts in a
                    // value it keeps raw.
                    b'u' => {
                        for _ in 0..4 {
                            if !self.next()?.is_ascii_hexdigit() {
                                return None;
                            }
                        }
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, after the sign.
    fn number(&mut self) -> Option<()> {
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.first_digit()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            self.first_digit()?;
        }
        Some(())
    }

    fn first_digit(&mut self) -> Option<()> {
        self.next()?.is_ascii_digit().then(|| self.digits())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

/// The bytes a string's scan stops at: the quote, the backslash and the
/// control characters.
static STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut byte = 0;
    while byte < 0x20 {
        stops[byte] = true;
        byte += 1;
    }
    stops[b'"' as usize] = true;
    stops[b'\\' as usize] = true;
    stops
};

/// Nesting the scanner reads; deeper values go to the general path.
const MAX_DEPTH: usize = 64;

/// Whether any of the eight bytes is a quote, a backslash or a control
/// character (the bit tricks of "determine if a word has a byte less than
/// n").
fn needs_look(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let below = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w & HIGH;
    (below(quote, 1) | below(backslash, 1) | below(word, 0x20)) != 0
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
