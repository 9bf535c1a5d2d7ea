//! The document store against a reference: random texts (with
//! astral-plane characters and all three line terminators) edited by
//! random incremental changes, in each position encoding, compared with
//! the same edits spliced into a string by the simplest code that can be
//! right.

use jsonrpc_lsp::documents::{Documents, PositionEncoding};
use jsonrpc_lsp::types::*;
use proptest::prelude::*;

/// Pieces the texts are made of: one to four UTF-8 bytes, one or two
/// UTF-16 units, and each line terminator.
const PIECES: &[&str] = &["a", "b", "é", "中", "😀", "𝄞", " ", "\n", "\r", "\r\n", "_"];

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..40).prop_map(|p| p.concat())
}

fn encoding() -> impl Strategy<Value = PositionEncoding> {
    prop::sample::select(vec![
        PositionEncoding::Utf8,
        PositionEncoding::Utf16,
        PositionEncoding::Utf32,
    ])
}

fn units(c: char, encoding: PositionEncoding) -> u32 {
    match encoding {
        PositionEncoding::Utf8 => c.len_utf8() as u32,
        PositionEncoding::Utf16 => c.len_utf16() as u32,
        PositionEncoding::Utf32 => 1,
    }
}

/// The position of the character boundary at byte `at`, by walking the
/// text from its start.
fn reference_position(text: &str, at: usize, encoding: PositionEncoding) -> Position {
    let (mut line, mut character) = (0, 0);
    let mut chars = text[..at].chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue; // the `\n` ends the line
        }
        if c == '\n' || c == '\r' {
            line += 1;
            character = 0;
        } else {
            character += units(c, encoding);
        }
    }
    Position { line, character }
}

/// A byte offset on a character boundary and not between `\r` and `\n`.
fn boundary(text: &str, pick: usize) -> usize {
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .filter(|&i| {
            !(i > 0 && text.as_bytes()[i - 1] == b'\r' && text.as_bytes().get(i) == Some(&b'\n'))
        })
        .collect();
    boundaries[pick % boundaries.len()]
}

fn open(docs: &Documents, text: &str) -> Uri {
    let uri = Uri::from("file:///t");
    docs.open(TextDocumentItem {
        uri: uri.clone(),
        language_id: LanguageKind::new("plaintext"),
        version: 0,
        text: text.to_owned(),
    });
    uri
}

fn change(uri: &Uri, version: i32, range: Range, text: String) -> DidChangeTextDocumentParams {
    DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier {
            version,
            text_document_identifier: TextDocumentIdentifier { uri: uri.clone() },
        },
        content_changes: vec![TextDocumentContentChangePartial {
            range,
            text,
            ..Default::default()
        }
        .into()],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn incremental_edits_match_the_reference(
        start in text(),
        edits in prop::collection::vec((any::<usize>(), any::<usize>(), text()), 1..12),
        encoding in encoding(),
    ) {
        let docs = Documents::new(encoding);
        let uri = open(&docs, &start);
        let mut reference = start;
        for (version, (a, b, new)) in (1..).zip(edits) {
            let (a, b) = (boundary(&reference, a), boundary(&reference, b));
            let (lo, hi) = (a.min(b), a.max(b));
            let range = Range {
                start: reference_position(&reference, lo, encoding),
                end: reference_position(&reference, hi, encoding),
            };
            reference.replace_range(lo..hi, &new);
            let doc = docs.change(&change(&uri, version, range, new)).unwrap();
            prop_assert_eq!(doc.text(), reference.as_str());
            prop_assert_eq!(doc.version(), version);
        }
        // Every boundary's position and offset agree with the reference.
        let doc = docs.get(&uri).unwrap();
        let lines = 1 + reference.replace("\r\n", "\n").matches(['\n', '\r']).count();
        prop_assert_eq!(doc.line_count(), lines);
        for (at, _) in reference.char_indices().chain([(reference.len(), ' ')]) {
            if at > 0 && reference.as_bytes()[at - 1] == b'\r' && reference.as_bytes().get(at) == Some(&b'\n') {
                continue;
            }
            let position = reference_position(&reference, at, encoding);
            prop_assert_eq!(doc.position_at(at), position);
            prop_assert_eq!(doc.offset_at(position), at);
        }
    }

    #[test]
    fn a_whole_text_change_replaces_everything(first in text(), second in text(), encoding in encoding()) {
        let docs = Documents::new(encoding);
        let uri = open(&docs, &first);
        let params = DidChangeTextDocumentParams {
            text_document: VersionedTextDocumentIdentifier {
                version: 7,
                text_document_identifier: TextDocumentIdentifier { uri: uri.clone() },
            },
            content_changes: vec![TextDocumentContentChangeWholeDocument { text: second.clone() }.into()],
        };
        let doc = docs.change(&params).unwrap();
        prop_assert_eq!(doc.text(), second.as_str());
    }
}

#[test]
fn a_snapshot_keeps_its_text_while_the_document_changes() {
    let docs = Documents::new(PositionEncoding::Utf16);
    let uri = open(&docs, "one");
    let snapshot = docs.get(&uri).unwrap();
    let zero = Position {
        line: 0,
        character: 0,
    };
    let range = Range {
        start: zero,
        end: zero,
    };
    docs.change(&change(&uri, 1, range, "just ".into()))
        .unwrap();
    assert_eq!(snapshot.text(), "one");
    assert_eq!(docs.get(&uri).unwrap().text(), "just one");
    assert!(!docs.is_current(&snapshot));
    let stale = docs.ensure_current(&snapshot).unwrap_err();
    assert_eq!(stale.code, jsonrpc_runtime::ErrorCode::CONTENT_MODIFIED);
}

#[test]
fn a_change_to_a_document_not_open_is_refused() {
    let docs = Documents::new(PositionEncoding::Utf8);
    let zero = Position {
        line: 0,
        character: 0,
    };
    let range = Range {
        start: zero,
        end: zero,
    };
    let refused = docs.change(&change(&Uri::from("file:///nope"), 1, range, "x".into()));
    assert!(refused.is_err());
    assert!(docs.is_empty());
}
