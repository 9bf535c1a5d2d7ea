//! The Language Server Protocol on [`jsonrpc-runtime`](jsonrpc_runtime): a
//! [`LanguageServer`] trait with a method for every request and
//! notification a client sends (LSP 3.18), a [`Client`] handle for
//! everything a server sends, work-done progress ([`WorkDone`]), and the
//! [documents](documents::Documents) the client has open, kept in the
//! negotiated position encoding.
//!
//! The LSP types are [`types`], a re-export of
//! [`gen-lsp-types`](https://docs.rs/gen-lsp-types) (generated from the
//! official 3.18 meta-model), so a server needs this one dependency.
//!
//! | the runtime's LSP rules ([`Config::lsp`](jsonrpc_runtime::Config::lsp)) | |
//! |---|---|
//! | ordering | notifications run one at a time in arrival order; a request starts after the notifications before it; requests run concurrently, and a handler's calls back to the client never deadlock, whatever the cap on requests in flight |
//! | cancellation | `$/cancelRequest` drops the request's handler wherever it waits and answers -32800; [`documents::content_modified`] is -32801 for a result computed on stale text |
//! | progress | a request's `workDoneToken` and `partialResultToken` through its [`Context`] (`ctx.progress(..)`, `ctx.partial_result(..)`), or [`WorkDone`] on a token the server creates; once a request has sent partial results, what its handler still returns goes out as one more and the answer is empty, as LSP wants |
//! | lifecycle | requests before `initialize` -32002, `initialize` once, requests after `shutdown` -32600, `exit` closes with code 0 after `shutdown` and 1 otherwise; the client's `processId` watched |
//!
//! # Examples
//!
//! A server that keeps the documents and answers hover with the word under
//! the cursor:
//!
//! ```no_run
//! use jsonrpc_lsp::types::*;
//! use jsonrpc_lsp::{Client, Context, LanguageServer, LspServer, Result};
//!
//! struct Backend {
//!     client: Client,
//! }
//!
//! impl LanguageServer for Backend {
//!     async fn initialize(&self, _ctx: Context, _params: InitializeParams) -> Result<InitializeResult> {
//!         Ok(InitializeResult {
//!             capabilities: ServerCapabilities {
//!                 hover_provider: Some(true.into()),
//!                 ..ServerCapabilities::default()
//!             },
//!             server_info: None,
//!         })
//!     }
//!
//!     async fn hover(&self, _ctx: Context, params: HoverParams) -> Result<Option<Hover>> {
//!         let at = params.text_document_position_params;
//!         let Some(doc) = self.client.documents().get(&at.text_document.uri) else {
//!             return Ok(None);
//!         };
//!         Ok(doc.word_at(at.position).map(|word| Hover {
//!             contents: Contents::MarkupContent(MarkupContent {
//!                 kind: MarkupKind::PlainText,
//!                 value: format!("{word}: {} bytes", word.len()),
//!             }),
//!             range: None,
//!         }))
//!     }
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> std::io::Result<()> {
//!     let reason = LspServer::new(|client| Backend { client }).serve_stdio().await?;
//!     std::process::exit(reason.exit_code())
//! }
//! ```

#[macro_use]
mod methods;
mod client;
pub mod documents;
mod partial;
mod progress;
mod server;

pub use client::{Client, ClientError, ClientResult};
pub use jsonrpc_runtime::{rpc, CloseReason, Config, Context, ErrorObject, Router, Transport};

/// The runtime under the layer (transports, the peer, policies), so a
/// server needs no second dependency for them.
pub use jsonrpc_runtime as runtime;
pub use methods::{LanguageServer, LanguageServerClient};
pub use progress::WorkDone;
pub use server::LspServer;

/// The LSP types: [`gen-lsp-types`](https://docs.rs/gen-lsp-types), LSP 3.18
/// generated from the official meta-model.
pub use gen_lsp_types as types;

/// What a [`LanguageServer`] method returns: its result, or the error
/// object that goes on the wire.
pub type Result<T, E = ErrorObject> = std::result::Result<T, E>;

/// The answer to a request the server does not implement: -32601.
pub(crate) fn not_implemented(method: &str) -> ErrorObject {
    ErrorObject::method_not_found(method)
}
