//! Large messages: an LSP-style `didOpen` whose text is a big source file,
//! and a structured list of records.

use serde::{Deserialize, Serialize};

/// `{"textDocument": {...}}`, as LSP's `textDocument/didOpen` sends it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidOpenParams {
    pub text_document: TextDocumentItem,
}

/// A document and its whole text.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDocumentItem {
    pub uri: String,
    pub language_id: String,
    pub version: i64,
    pub text: String,
}

/// A list of records.
#[derive(Debug, Serialize, Deserialize)]
pub struct ItemsParams {
    pub items: Vec<Item>,
}

/// One record: numbers, strings, a list, a flag.
#[derive(Debug, Serialize, Deserialize)]
pub struct Item {
    pub id: u64,
    pub name: String,
    pub tags: Vec<String>,
    pub score: f64,
    pub active: bool,
}

/// About `len` bytes of Rust-like source (newlines, tabs and quotes
/// included, so the JSON string has escapes to undo).
pub fn source_text(len: usize) -> String {
    const LINES: [&str; 6] = [
        "fn handle(request: &Request) -> Result<Response, Error> {\n",
        "\tlet name = request.params.get(\"name\").unwrap_or(\"world\");\n",
        "\tprintln!(\"Hello, {name}! {} items\", request.items.len());\n",
        "\t// A comment with some unicode: caf\u{e9}, na\u{ef}ve, \u{3bb}.\n",
        "\tOk(Response::new(request.id.clone(), json!({\"ok\": true})))\n",
        "}\n\n",
    ];
    let mut text = String::with_capacity(len + 128);
    let mut i = 0;
    while text.len() < len {
        text.push_str(LINES[i % LINES.len()]);
        i += 1;
    }
    text.truncate(text.floor_char_boundary_compat(len));
    text
}

trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, index: usize) -> usize;
}

impl FloorCharBoundary for String {
    fn floor_char_boundary_compat(&self, mut index: usize) -> usize {
        index = index.min(self.len());
        while !self.is_char_boundary(index) {
            index -= 1;
        }
        index
    }
}

/// `didOpen` params whose text is about `len` bytes.
pub fn did_open(len: usize) -> DidOpenParams {
    DidOpenParams {
        text_document: TextDocumentItem {
            uri: "file:///home/user/project/src/main.rs".into(),
            language_id: "rust".into(),
            version: 1,
            text: source_text(len),
        },
    }
}

/// `didOpen` params whose text is `len` bytes of base64-like characters:
/// nothing to escape, so serde_json decodes it without a scratch copy.
pub fn did_open_plain(len: usize) -> DidOpenParams {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let text: String = (0..len)
        .map(|i| ALPHABET[(i * 7 + i / 64) % ALPHABET.len()] as char)
        .collect();
    let mut params = did_open(0);
    params.text_document.text = text;
    params
}

/// Records whose JSON is about `len` bytes.
pub fn items(len: usize) -> ItemsParams {
    let mut items = Vec::new();
    let mut size = 0;
    let mut id = 0u64;
    while size < len {
        let item = Item {
            id,
            name: format!("item number {id}"),
            tags: vec!["alpha".into(), format!("group-{}", id % 17), "z".into()],
            score: id as f64 * 0.37 + 0.5,
            active: id.is_multiple_of(3),
        };
        size += serde_json::to_vec(&item).map(|v| v.len() + 1).unwrap_or(64);
        items.push(item);
        id += 1;
    }
    ItemsParams { items }
}

/// One request line (no newline) calling `method` with `params`, id 1.
pub fn request_line<P: Serialize>(method: &str, params: &P) -> Vec<u8> {
    let mut out = Vec::new();
    crate::floor::write_call(&mut out, Some(1), method, params);
    out.pop();
    out
}

/// The whole request, typed: what serde_json decodes in the floor.
#[derive(Debug, Deserialize)]
pub struct TypedRequest<'a, P> {
    #[serde(borrow)]
    pub jsonrpc: &'a str,
    pub id: u64,
    #[serde(borrow)]
    pub method: &'a str,
    pub params: P,
}
