//! The text documents the client has open, kept in step with its
//! `didOpen`, `didChange` and `didClose` notifications.

mod text;

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

pub use text::PositionEncoding;
use text::Text;

use crate::types::{
    DidChangeTextDocumentParams, LanguageKind, Position, Range, TextDocumentContentChangeEvent,
    TextDocumentItem, Uri,
};
use jsonrpc_runtime::{ErrorCode, ErrorObject};

/// The documents the client has open: their text, version and language,
/// as the client's `didOpen`, `didChange` (full or incremental, in the
/// negotiated [`PositionEncoding`]) and `didClose` left them.
///
/// [`LspServer`](crate::LspServer) keeps it (see
/// [`Client::documents`](crate::Client::documents)): it applies each
/// notification before the server's own method for it runs. Notifications
/// are handled one at a time in arrival order and a request starts after
/// the notifications before it, so **a request sees every change that
/// arrived before it** and none that arrived after. A [`Document`] is a
/// snapshot: a handler holding one keeps reading the text it got while
/// later changes make new versions; [`Documents::ensure_current`] tells a
/// long request that its snapshot is stale (answer -32801, ContentModified).
///
/// Cheap to clone: clones share the documents.
///
/// # Examples
///
/// ```
/// use jsonrpc_lsp::documents::{Documents, PositionEncoding};
/// use jsonrpc_lsp::types::*;
///
/// let docs = Documents::new(PositionEncoding::Utf16);
/// let uri = Uri::from("file:///notes.txt");
/// docs.open(TextDocumentItem {
///     uri: uri.clone(),
///     language_id: LanguageKind::new("plaintext"),
///     version: 1,
///     text: "hello 😀 world".into(),
/// });
/// // Replace "world" (UTF-16: the emoji counts two units).
/// let change = TextDocumentContentChangePartial {
///     range: Range {
///         start: Position { line: 0, character: 9 },
///         end: Position { line: 0, character: 14 },
///     },
///     text: "there".into(),
///     ..Default::default()
/// };
/// docs.change(&DidChangeTextDocumentParams {
///     text_document: VersionedTextDocumentIdentifier {
///         version: 2,
///         text_document_identifier: TextDocumentIdentifier { uri: uri.clone() },
///     },
///     content_changes: vec![change.into()],
/// })
/// .unwrap();
/// let doc = docs.get(&uri).unwrap();
/// assert_eq!((doc.text(), doc.version()), ("hello 😀 there", 2));
/// ```
#[derive(Debug, Clone, Default)]
pub struct Documents {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    docs: RwLock<HashMap<Uri, Arc<Document>>>,
    encoding: RwLock<PositionEncoding>,
}

/// One open document, as of one version: a snapshot that later changes do
/// not touch.
#[derive(Debug, Clone)]
pub struct Document {
    uri: Uri,
    language_id: LanguageKind,
    version: i32,
    text: Text,
    encoding: PositionEncoding,
}

/// Why a change could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DocumentError {
    /// The client changed a document it had not opened (or had closed).
    NotOpen(Uri),
}

impl std::fmt::Display for DocumentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DocumentError::NotOpen(uri) => write!(f, "the document {uri} is not open"),
        }
    }
}

impl std::error::Error for DocumentError {}

impl Documents {
    /// An empty store whose positions count in `encoding`.
    pub fn new(encoding: PositionEncoding) -> Self {
        let store = Documents::default();
        store.set_encoding(encoding);
        store
    }

    /// The encoding positions count in.
    pub fn encoding(&self) -> PositionEncoding {
        *self
            .inner
            .encoding
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets the encoding (the handshake's choice) for documents opened from
    /// now on.
    pub(crate) fn set_encoding(&self, encoding: PositionEncoding) {
        *self
            .inner
            .encoding
            .write()
            .unwrap_or_else(PoisonError::into_inner) = encoding;
    }

    /// The document at `uri`, if it is open.
    pub fn get(&self, uri: &Uri) -> Option<Arc<Document>> {
        self.read().get(uri).cloned()
    }

    /// The open documents' URIs.
    pub fn uris(&self) -> Vec<Uri> {
        self.read().keys().cloned().collect()
    }

    /// How many documents are open.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether no document is open.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// Opens a document (`textDocument/didOpen`); one already open at that
    /// URI is replaced.
    pub fn open(&self, item: TextDocumentItem) -> Arc<Document> {
        let doc = Arc::new(Document {
            uri: item.uri.clone(),
            language_id: item.language_id,
            version: item.version,
            text: Text::new(item.text),
            encoding: self.encoding(),
        });
        self.write().insert(item.uri, doc.clone());
        doc
    }

    /// Applies `textDocument/didChange`: each change in order (a range
    /// replaced, or the whole text), then the new version.
    ///
    /// # Errors
    ///
    /// [`DocumentError::NotOpen`] when the document is not open; nothing
    /// changes then.
    pub fn change(
        &self,
        params: &DidChangeTextDocumentParams,
    ) -> Result<Arc<Document>, DocumentError> {
        let id = &params.text_document;
        let uri = &id.text_document_identifier.uri;
        let mut docs = self.write();
        let Some(slot) = docs.get_mut(uri) else {
            return Err(DocumentError::NotOpen(uri.clone()));
        };
        // A snapshot a handler still holds is copied; otherwise the text is
        // edited where it is.
        let doc = Arc::make_mut(slot);
        for change in &params.content_changes {
            match change {
                TextDocumentContentChangeEvent::TextDocumentContentChangePartial(edit) => {
                    doc.text.replace(edit.range, &edit.text, doc.encoding);
                }
                TextDocumentContentChangeEvent::TextDocumentContentChangeWholeDocument(whole) => {
                    doc.text.set(whole.text.clone());
                }
            }
        }
        doc.version = id.version;
        Ok(slot.clone())
    }

    /// Closes a document (`textDocument/didClose`), returning its last
    /// version.
    pub fn close(&self, uri: &Uri) -> Option<Arc<Document>> {
        self.write().remove(uri)
    }

    /// Whether `doc` is still the document's current version.
    pub fn is_current(&self, doc: &Document) -> bool {
        self.get(&doc.uri)
            .is_some_and(|now| now.version == doc.version)
    }

    /// `Ok` while `doc` is the document's current version, else
    /// -32801 (ContentModified), the answer LSP wants for a result
    /// computed on text that has since changed.
    ///
    /// # Errors
    ///
    /// The ContentModified error, to return from the handler as it is.
    pub fn ensure_current(&self, doc: &Document) -> Result<(), ErrorObject> {
        if self.is_current(doc) {
            Ok(())
        } else {
            Err(content_modified())
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Uri, Arc<Document>>> {
        self.inner
            .docs
            .read()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<Uri, Arc<Document>>> {
        self.inner
            .docs
            .write()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// -32801, ContentModified: the result was computed on text that has since
/// changed.
pub fn content_modified() -> ErrorObject {
    ErrorObject::new(ErrorCode::CONTENT_MODIFIED, "Content modified")
}

impl Document {
    /// The document's URI.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// Its language, as the client named it in `didOpen`.
    pub fn language_id(&self) -> &LanguageKind {
        &self.language_id
    }

    /// The version the client gave this text.
    pub fn version(&self) -> i32 {
        self.version
    }

    /// The whole text.
    pub fn text(&self) -> &str {
        self.text.as_str()
    }

    /// How many lines the text has (one more than its line terminators:
    /// `\n`, `\r\n` or `\r`).
    pub fn line_count(&self) -> usize {
        self.text.line_count()
    }

    /// Line `line` (from 0) without its terminator.
    pub fn line(&self, line: usize) -> Option<&str> {
        self.text.line(line)
    }

    /// The encoding this document's positions count in.
    pub fn encoding(&self) -> PositionEncoding {
        self.encoding
    }

    /// The byte offset in [`text`](Document::text) of `position`: a
    /// `character` past its line's end is the line's end, a line past the
    /// last is the text's end, and a position inside a character (half a
    /// UTF-16 surrogate pair) is that character's start.
    pub fn offset_at(&self, position: Position) -> usize {
        self.text.offset(position, self.encoding)
    }

    /// The position of byte `offset` (rounded down to a character).
    pub fn position_at(&self, offset: usize) -> Position {
        self.text.position(offset, self.encoding)
    }

    /// The text `range` covers.
    pub fn slice(&self, range: Range) -> &str {
        let a = self.offset_at(range.start);
        let b = self.offset_at(range.end);
        &self.text()[a.min(b)..a.max(b)]
    }

    /// The word (letters, digits, `_`) at `position`, if there is one.
    pub fn word_at(&self, position: Position) -> Option<&str> {
        let text = self.text();
        let at = self.offset_at(position);
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        let start = text[..at]
            .char_indices()
            .rev()
            .take_while(|&(_, c)| is_word(c))
            .last()
            .map_or(at, |(i, _)| i);
        let end = text[at..]
            .char_indices()
            .find(|&(_, c)| !is_word(c))
            .map_or(text.len(), |(i, _)| at + i);
        (start < end).then(|| &text[start..end])
    }
}
