//! The LSP comparison's servers (`benches/lsp.rs`): the same language
//! server written on `jsonrpc-lsp`, on tower-lsp-server 0.23 and on
//! async-lsp 0.2, each served on stdio by `lsp-server ours|tower|async-lsp`.
//!
//! The same logic in each: the documents kept from `didOpen` and
//! incremental `didChange` (UTF-16 positions), `textDocument/hover`
//! answering the word under the cursor, `textDocument/completion` the
//! document's words that start with the word before the cursor. Ours keeps
//! the documents in the layer's store (what its users get without writing
//! any); the other two in a map of strings edited by [`apply`], as their
//! users write it.

use std::collections::{BTreeSet, HashMap};
use std::ops::ControlFlow;
use std::sync::Mutex;

/// The document every run opens: `LINES` lines of words, then a line `x`
/// (completion there lists the words that start with `x`).
pub fn document() -> String {
    const WORDS: [&str; 8] = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
    ];
    let mut text = String::new();
    for line in 0..LINES {
        for word in 0..8 {
            text.push_str(WORDS[(line + word) % WORDS.len()]);
            text.push(' ');
        }
        text.push('\n');
    }
    text.push('x');
    text
}

/// How many lines of words [`document`] has before its last line.
pub const LINES: usize = 100;

/// The byte offset of a UTF-16 position, found by walking the text.
pub fn offset(text: &str, line: u32, character: u32) -> usize {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(at) => start += at + 1,
            None => return text.len(),
        }
    }
    let end = text[start..].find('\n').map_or(text.len(), |at| start + at);
    let mut units = 0;
    for (i, c) in text[start..end].char_indices() {
        if units >= character as usize {
            return start + i;
        }
        units += c.len_utf16();
    }
    end
}

/// Replaces a UTF-16 range of `text` with `new`.
pub fn apply(text: &mut String, start: (u32, u32), end: (u32, u32), new: &str) {
    let a = offset(text, start.0, start.1);
    let b = offset(text, end.0, end.1);
    text.replace_range(a.min(b)..a.max(b), new);
}

/// One change of `didChange`: a UTF-16 range replaced, or (no range) the
/// whole text.
pub fn edit(text: &mut String, range: Option<((u32, u32), (u32, u32))>, new: String) {
    match range {
        Some((start, end)) => apply(text, start, end, &new),
        None => *text = new,
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The word around byte `at`.
pub fn word_at(text: &str, at: usize) -> Option<&str> {
    let start = text[..at].rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
    let end = text[at..]
        .find(|c: char| !is_word(c))
        .map_or(text.len(), |i| at + i);
    (start < end).then(|| &text[start..end])
}

/// The words of `text` that start with the word characters before byte
/// `at` and are longer, sorted.
pub fn completion(text: &str, at: usize) -> Vec<String> {
    let start = text[..at].rfind(|c: char| !is_word(c)).map_or(0, |i| i + 1);
    let prefix = &text[start..at];
    let words: BTreeSet<&str> = text
        .split(|c: char| !is_word(c))
        .filter(|w| w.len() > prefix.len() && w.starts_with(prefix))
        .collect();
    words.into_iter().map(str::to_owned).collect()
}

// ---------------------------------------------------------------------------
// jsonrpc-lsp

mod ours {
    use jsonrpc_lsp::types::*;
    use jsonrpc_lsp::{Client, Context, LanguageServer, Result};

    pub(super) struct Server {
        pub(super) client: Client,
    }

    impl LanguageServer for Server {
        async fn initialize(&self, _: Context, _: InitializeParams) -> Result<InitializeResult> {
            Ok(InitializeResult {
                capabilities: ServerCapabilities {
                    hover_provider: Some(true.into()),
                    completion_provider: Some(CompletionOptions::default()),
                    ..ServerCapabilities::default()
                },
                server_info: None,
            })
        }

        async fn hover(&self, _: Context, params: HoverParams) -> Result<Option<Hover>> {
            let at = params.text_document_position_params;
            let Some(doc) = self.client.documents().get(&at.text_document.uri) else {
                return Ok(None);
            };
            let word = super::word_at(doc.text(), doc.offset_at(at.position));
            Ok(word.map(|word| Hover {
                contents: Contents::MarkupContent(MarkupContent {
                    kind: MarkupKind::PlainText,
                    value: word.to_owned(),
                }),
                range: None,
            }))
        }

        async fn completion(
            &self,
            _: Context,
            params: CompletionParams,
        ) -> Result<Option<CompletionResponse>> {
            let at = params.text_document_position_params;
            let Some(doc) = self.client.documents().get(&at.text_document.uri) else {
                return Ok(None);
            };
            let items: Vec<CompletionItem> =
                super::completion(doc.text(), doc.offset_at(at.position))
                    .into_iter()
                    .map(|label| CompletionItem {
                        label,
                        ..CompletionItem::default()
                    })
                    .collect();
            Ok(Some(items.into()))
        }
    }
}

/// Serves the `jsonrpc-lsp` side on stdio.
pub async fn serve_ours() {
    let server = jsonrpc_lsp::LspServer::new(|client| ours::Server { client }).watch_parent(false);
    server.serve_stdio().await.expect("stdio");
}

// ---------------------------------------------------------------------------
// tower-lsp-server

mod tower_side {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use tower_lsp_server::jsonrpc::Result;
    use tower_lsp_server::ls_types::*;
    use tower_lsp_server::LanguageServer;

    pub(super) struct Server {
        pub(super) docs: Mutex<HashMap<String, String>>,
    }

    impl LanguageServer for Server {
        async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
            Ok(InitializeResult {
                capabilities: ServerCapabilities {
                    text_document_sync: Some(TextDocumentSyncCapability::Kind(
                        TextDocumentSyncKind::INCREMENTAL,
                    )),
                    hover_provider: Some(HoverProviderCapability::Simple(true)),
                    completion_provider: Some(CompletionOptions::default()),
                    ..ServerCapabilities::default()
                },
                server_info: None,
                offset_encoding: None,
            })
        }

        async fn shutdown(&self) -> Result<()> {
            Ok(())
        }

        async fn did_open(&self, params: DidOpenTextDocumentParams) {
            let doc = params.text_document;
            self.docs
                .lock()
                .unwrap()
                .insert(doc.uri.as_str().to_owned(), doc.text);
        }

        async fn did_change(&self, params: DidChangeTextDocumentParams) {
            let mut docs = self.docs.lock().unwrap();
            let Some(text) = docs.get_mut(params.text_document.uri.as_str()) else {
                return;
            };
            for change in params.content_changes {
                let range = change.range.map(|r| {
                    (
                        (r.start.line, r.start.character),
                        (r.end.line, r.end.character),
                    )
                });
                super::edit(text, range, change.text);
            }
        }

        async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
            let at = params.text_document_position_params;
            let docs = self.docs.lock().unwrap();
            let Some(text) = docs.get(at.text_document.uri.as_str()) else {
                return Ok(None);
            };
            let offset = super::offset(text, at.position.line, at.position.character);
            Ok(super::word_at(text, offset).map(|word| Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::PlainText,
                    value: word.to_owned(),
                }),
                range: None,
            }))
        }

        async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
            let at = params.text_document_position;
            let docs = self.docs.lock().unwrap();
            let Some(text) = docs.get(at.text_document.uri.as_str()) else {
                return Ok(None);
            };
            let offset = super::offset(text, at.position.line, at.position.character);
            let items = super::completion(text, offset)
                .into_iter()
                .map(|label| CompletionItem {
                    label,
                    ..CompletionItem::default()
                })
                .collect();
            Ok(Some(CompletionResponse::Array(items)))
        }
    }
}

/// Serves the tower-lsp-server side on stdio.
pub async fn serve_tower() {
    let (service, socket) = tower_lsp_server::LspService::new(|_| tower_side::Server {
        docs: Mutex::new(HashMap::new()),
    });
    tower_lsp_server::Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
        .serve(service)
        .await;
}

// ---------------------------------------------------------------------------
// async-lsp

/// Serves the async-lsp side on stdio, with the layers its examples use.
pub async fn serve_async_lsp() {
    use async_lsp::lsp_types::{notification, request, *};
    use async_lsp::router::Router;

    struct State {
        docs: HashMap<String, String>,
    }

    // The main loop's channel lives while a client socket does: kept to the
    // end (async-lsp panics when the last one is gone).
    let (server, _client) = async_lsp::MainLoop::new_server(|_client| {
        let mut router = Router::new(State {
            docs: HashMap::new(),
        });
        router
            .request::<request::Initialize, _>(|_, _| async move {
                Ok(InitializeResult {
                    capabilities: ServerCapabilities {
                        text_document_sync: Some(TextDocumentSyncCapability::Kind(
                            TextDocumentSyncKind::INCREMENTAL,
                        )),
                        hover_provider: Some(HoverProviderCapability::Simple(true)),
                        completion_provider: Some(CompletionOptions::default()),
                        ..ServerCapabilities::default()
                    },
                    server_info: None,
                })
            })
            .request::<request::Shutdown, _>(|_, _| async move { Ok(()) })
            .request::<request::HoverRequest, _>(|st, params| {
                let at = params.text_document_position_params;
                let hover = st.docs.get(at.text_document.uri.as_str()).and_then(|text| {
                    let offset = offset(text, at.position.line, at.position.character);
                    word_at(text, offset).map(|word| Hover {
                        contents: HoverContents::Markup(MarkupContent {
                            kind: MarkupKind::PlainText,
                            value: word.to_owned(),
                        }),
                        range: None,
                    })
                });
                async move { Ok(hover) }
            })
            .request::<request::Completion, _>(|st, params| {
                let at = params.text_document_position;
                let items = st.docs.get(at.text_document.uri.as_str()).map(|text| {
                    let offset = offset(text, at.position.line, at.position.character);
                    let items = completion(text, offset)
                        .into_iter()
                        .map(|label| CompletionItem {
                            label,
                            ..CompletionItem::default()
                        })
                        .collect();
                    CompletionResponse::Array(items)
                });
                async move { Ok(items) }
            })
            .notification::<notification::Initialized>(|_, _| ControlFlow::Continue(()))
            .notification::<notification::DidOpenTextDocument>(|st, params| {
                let doc = params.text_document;
                st.docs.insert(doc.uri.as_str().to_owned(), doc.text);
                ControlFlow::Continue(())
            })
            .notification::<notification::DidChangeTextDocument>(|st, params| {
                if let Some(text) = st.docs.get_mut(params.text_document.uri.as_str()) {
                    for change in params.content_changes {
                        let range = change.range.map(|r| {
                            (
                                (r.start.line, r.start.character),
                                (r.end.line, r.end.character),
                            )
                        });
                        edit(text, range, change.text);
                    }
                }
                ControlFlow::Continue(())
            })
            .notification::<notification::Exit>(|_, _| ControlFlow::Break(Ok(())));
        tower::ServiceBuilder::new()
            .layer(async_lsp::server::LifecycleLayer::default())
            .layer(async_lsp::panic::CatchUnwindLayer::default())
            .layer(async_lsp::concurrency::ConcurrencyLayer::default())
            .service(router)
    });
    let stdin = async_lsp::stdio::PipeStdin::lock_tokio().expect("stdin");
    let stdout = async_lsp::stdio::PipeStdout::lock_tokio().expect("stdout");
    server
        .run_buffered(stdin, stdout)
        .await
        .expect("async-lsp main loop");
}
