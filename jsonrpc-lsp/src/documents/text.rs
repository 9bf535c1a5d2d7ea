//! A document's text with its line index: positions in any of the three
//! encodings to byte offsets and back, and edits applied in place.

use crate::types::{Position, PositionEncodingKind, Range};

/// How a [`Position`]'s `character` counts: the encoding the server and the
/// client agreed on in `initialize` (`positionEncoding`; UTF-16 when they
/// said nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PositionEncoding {
    /// Bytes of UTF-8.
    Utf8,
    /// UTF-16 code units (a character outside the Basic Multilingual Plane,
    /// such as most emoji, counts two): LSP's default.
    #[default]
    Utf16,
    /// Unicode scalar values (Rust's `char`s).
    Utf32,
}

impl PositionEncoding {
    /// The encoding a `positionEncoding` names; `None` for one this store
    /// does not know.
    pub fn from_kind(kind: &PositionEncodingKind) -> Option<Self> {
        match kind {
            PositionEncodingKind::UTF8 => Some(PositionEncoding::Utf8),
            PositionEncodingKind::UTF16 => Some(PositionEncoding::Utf16),
            PositionEncodingKind::UTF32 => Some(PositionEncoding::Utf32),
            PositionEncodingKind::Custom(_) => None,
        }
    }

    /// The `positionEncoding` value that names this encoding.
    pub fn kind(self) -> PositionEncodingKind {
        match self {
            PositionEncoding::Utf8 => PositionEncodingKind::UTF8,
            PositionEncoding::Utf16 => PositionEncodingKind::UTF16,
            PositionEncoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// How many units of this encoding `c` takes.
    fn width(self, c: char) -> usize {
        match self {
            PositionEncoding::Utf8 => c.len_utf8(),
            PositionEncoding::Utf16 => c.len_utf16(),
            PositionEncoding::Utf32 => 1,
        }
    }
}

/// Text and the byte offset where each of its lines starts. A line ends at
/// `\n`, `\r\n` or `\r`, as LSP counts lines.
#[derive(Debug, Clone, Default)]
pub(crate) struct Text {
    text: String,
    /// `line_starts[n]` is the byte offset of line `n`; never empty.
    line_starts: Vec<usize>,
}

impl Text {
    pub(crate) fn new(text: String) -> Self {
        let mut line_starts = vec![0];
        scan_line_starts(text.as_bytes(), 0, text.len(), &mut line_starts);
        line_starts.shrink_to_fit();
        Text { text, line_starts }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Line `line` without its terminator.
    pub(crate) fn line(&self, line: usize) -> Option<&str> {
        let start = *self.line_starts.get(line)?;
        let end = self.content_end(line);
        Some(&self.text[start..end])
    }

    /// The byte offset of `position`. A `character` past the end of its line
    /// is the line's end (as LSP says), a line past the last is the end of
    /// the text, and a `character` inside a character (half of a UTF-16
    /// surrogate pair, a byte inside a UTF-8 sequence) is that character's
    /// start.
    pub(crate) fn offset(&self, position: Position, encoding: PositionEncoding) -> usize {
        let line = position.line as usize;
        let Some(&start) = self.line_starts.get(line) else {
            return self.text.len();
        };
        let end = self.content_end(line);
        let wanted = position.character as usize;
        if encoding == PositionEncoding::Utf8 {
            let mut offset = (start + wanted).min(end);
            while !self.text.is_char_boundary(offset) {
                offset -= 1;
            }
            return offset;
        }
        let mut units = 0;
        for (i, c) in self.text[start..end].char_indices() {
            units += encoding.width(c);
            if units > wanted {
                return start + i;
            }
        }
        end
    }

    /// The position of byte `offset` (rounded down to a character boundary;
    /// at most the text's length).
    pub(crate) fn position(&self, offset: usize, encoding: PositionEncoding) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column = &self.text[start..offset.min(self.content_end(line)).max(start)];
        let character = match encoding {
            PositionEncoding::Utf8 => column.len(),
            PositionEncoding::Utf16 => column.encode_utf16().count(),
            PositionEncoding::Utf32 => column.chars().count(),
        };
        Position {
            line: saturate(line),
            character: saturate(character),
        }
    }

    /// Replaces `range` with `new`. A range whose end is before its start is
    /// taken the other way round.
    pub(crate) fn replace(&mut self, range: Range, new: &str, encoding: PositionEncoding) {
        let a = self.offset(range.start, encoding);
        let b = self.offset(range.end, encoding);
        let (start, end) = if a <= b { (a, b) } else { (b, a) };
        self.text.replace_range(start..end, new);
        self.reindex(start, end, new.len());
    }

    /// Updates the line index after bytes `start..end` became `inserted`
    /// bytes: the lines before the edit stay, the edited span is scanned,
    /// and the lines after it move by the change in length (a line start
    /// after `end` depends only on bytes at or after `end`, which the edit
    /// did not touch). The scan starts a line early: a `\r` just before
    /// `start` may now pair with a `\n` that the new text begins with.
    fn reindex(&mut self, start: usize, end: usize, inserted: usize) {
        let line = self.line_starts.partition_point(|&s| s <= start) - 1;
        let from = self.line_starts[line.saturating_sub(1)];
        let keep = self.line_starts.partition_point(|&s| s <= from).max(1);
        let after = self.line_starts.partition_point(|&s| s <= end);
        for s in &mut self.line_starts[after..] {
            *s = *s - end + start + inserted;
        }
        // The line starts in the edited span; none (no allocation) for
        // most edits, which add or remove no line.
        let mut found_starts = Vec::new();
        scan_line_starts(
            self.text.as_bytes(),
            from,
            start + inserted,
            &mut found_starts,
        );
        // A `\r\n` across the end of the span was found from both sides.
        let last = found_starts.last().copied().unwrap_or(from);
        let skip = self.line_starts[after..].partition_point(|&s| s <= last);
        self.line_starts.splice(keep..after + skip, found_starts);
    }

    /// Replaces the whole text.
    pub(crate) fn set(&mut self, text: String) {
        self.text = text;
        self.line_starts.truncate(1);
        scan_line_starts(
            self.text.as_bytes(),
            0,
            self.text.len(),
            &mut self.line_starts,
        );
    }

    /// The byte offset where line `line`'s content ends (before its
    /// terminator).
    fn content_end(&self, line: usize) -> usize {
        let Some(&next) = self.line_starts.get(line + 1) else {
            return self.text.len();
        };
        let bytes = self.text.as_bytes();
        let mut end = next;
        if end > 0 && bytes[end - 1] == b'\n' {
            end -= 1;
        }
        if end > 0 && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        end
    }
}

/// Pushes the start of each line that a terminator in `bytes[from..stop]`
/// ends (`\r\n` is one terminator, even when its `\n` is at `stop`).
fn scan_line_starts(bytes: &[u8], from: usize, stop: usize, out: &mut Vec<usize>) {
    let mut i = from;
    while i < stop {
        let Some(found) = memchr::memchr2(b'\n', b'\r', &bytes[i..stop]) else {
            break;
        };
        let at = i + found;
        let next = if bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n') {
            at + 2
        } else {
            at + 1
        };
        out.push(next);
        i = next;
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    fn range(a: (u32, u32), b: (u32, u32)) -> Range {
        Range {
            start: pos(a.0, a.1),
            end: pos(b.0, b.1),
        }
    }

    #[test]
    fn lines_end_at_each_terminator() {
        let text = Text::new("a\nb\r\nc\rd".into());
        assert_eq!(text.line_count(), 4);
        let lines: Vec<_> = (0..4).map(|n| text.line(n).unwrap()).collect();
        assert_eq!(lines, ["a", "b", "c", "d"]);
        assert_eq!(text.line(4), None);
    }

    #[test]
    fn an_astral_character_counts_by_the_encoding() {
        // "a😀b": the emoji is 4 bytes, 2 UTF-16 units, 1 char.
        let text = Text::new("a😀b".into());
        assert_eq!(text.offset(pos(0, 5), PositionEncoding::Utf8), 5);
        assert_eq!(text.offset(pos(0, 3), PositionEncoding::Utf16), 5);
        assert_eq!(text.offset(pos(0, 2), PositionEncoding::Utf32), 5);
        // Inside the surrogate pair, inside the UTF-8 sequence: its start.
        assert_eq!(text.offset(pos(0, 2), PositionEncoding::Utf16), 1);
        assert_eq!(text.offset(pos(0, 3), PositionEncoding::Utf8), 1);
        assert_eq!(text.position(5, PositionEncoding::Utf16), pos(0, 3));
        assert_eq!(text.position(5, PositionEncoding::Utf32), pos(0, 2));
    }

    #[test]
    fn positions_past_the_end_are_clamped() {
        let text = Text::new("ab\r\ncd".into());
        assert_eq!(text.offset(pos(0, 99), PositionEncoding::Utf16), 2);
        assert_eq!(text.offset(pos(9, 0), PositionEncoding::Utf16), 6);
        assert_eq!(text.position(3, PositionEncoding::Utf16), pos(0, 2));
    }

    #[test]
    fn an_edit_that_joins_cr_and_lf_makes_one_terminator() {
        let mut text = Text::new("a\rXb".into());
        text.replace(range((1, 0), (1, 1)), "\n", PositionEncoding::Utf16);
        assert_eq!(text.as_str(), "a\r\nb");
        assert_eq!(text.line_count(), 2);
        assert_eq!(text.line(1), Some("b"));
    }

    proptest::proptest! {
        /// The index kept up by each edit is the one built from scratch.
        #[test]
        fn the_line_index_kept_by_edits_is_the_one_rebuilt(
            start in "[a\r\n]{0,12}",
            edits in proptest::collection::vec((0u32..4, 0u32..6, 0u32..4, 0u32..6, "[ab\r\n]{0,4}"), 1..8),
        ) {
            let mut text = Text::new(start);
            for (l1, c1, l2, c2, new) in edits {
                text.replace(range((l1, c1), (l2, c2)), &new, PositionEncoding::Utf8);
                let rebuilt = Text::new(text.as_str().to_owned());
                proptest::prop_assert_eq!(&text.line_starts, &rebuilt.line_starts, "{:?}", text.as_str());
            }
        }
    }

    #[test]
    fn a_reversed_range_is_taken_the_other_way_round() {
        let mut text = Text::new("hello".into());
        text.replace(range((0, 4), (0, 1)), "", PositionEncoding::Utf8);
        assert_eq!(text.as_str(), "ho");
    }
}
