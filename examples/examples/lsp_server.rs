//! Run with: cargo run --example lsp_server
//!
//! A small but real language server on stdin/stdout, written on
//! `jsonrpc_lsp`: the `LanguageServer` trait, the client handle, the
//! document store. It shows:
//!
//! - `initialize` announcing hover and completion (the layer adds
//!   incremental text sync and the position encoding); `initialized`, during
//!   which the server asks the client `workspace/configuration` and reports
//!   the answer with `window/logMessage`.
//! - The documents kept by the layer from `didOpen` / `didChange` (edits in
//!   the negotiated encoding) / `didClose`; on each change the server pushes
//!   diagnostics: a warning on every `TODO`.
//! - `textDocument/hover`: the document's word count, e.g. `3 words`.
//! - `textDocument/completion`: the document's words that start with what
//!   is typed before the cursor.
//! - `example/slow {ms}`, a method of the server's own: cancellable with
//!   `$/cancelRequest` (answered -32800), reporting work-done progress on
//!   the request's `workDoneToken`, or on a token it creates with
//!   `window/workDoneProgress/create` when the client supports that.
//! - `shutdown`, then `exit`: the process exits 0 after `shutdown`, 1
//!   without it.
//!
//! Only JSON-RPC goes to stdout; logs go to stderr.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use jsonrpc_lsp::documents::Document;
use jsonrpc_lsp::types::*;
use jsonrpc_lsp::{
    Client, Context, ErrorObject, LanguageServer, LspServer, Result, Router, WorkDone,
};
use serde::{Deserialize, Serialize};
use serde_json::json;

#[path = "support/logging.rs"]
mod logging;

/// The longest `example/slow` accepted.
const MAX_SLOW_MS: u64 = 600_000;

/// How many slices `example/slow` is cut into; one progress report each.
const SLOW_STEPS: u32 = 10;

struct Server {
    client: Client,
}

impl LanguageServer for Server {
    async fn initialize(&self, _: Context, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                hover_provider: Some(true.into()),
                completion_provider: Some(CompletionOptions::default()),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "lsp_server example".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        })
    }

    async fn initialized(&self, _: Context, _: InitializedParams) {
        let asks = self
            .client
            .capabilities()
            .and_then(|c| c.workspace.as_ref())
            .and_then(|w| w.configuration)
            .unwrap_or(false);
        if !asks {
            self.log(
                MessageType::Info,
                "the client does not offer workspace/configuration".into(),
            )
            .await;
            return;
        }
        let item = ConfigurationItem {
            scope_uri: None,
            section: Some("example".into()),
        };
        match self.client.configuration(vec![item]).await {
            Ok(answer) => {
                self.log(
                    MessageType::Info,
                    format!("configuration: {}", json!(answer)),
                )
                .await;
            }
            Err(e) => {
                self.log(
                    MessageType::Error,
                    format!("workspace/configuration failed: {e}"),
                )
                .await;
            }
        }
    }

    async fn did_open(&self, _: Context, params: DidOpenTextDocumentParams) {
        if let Some(doc) = self.client.documents().get(&params.text_document.uri) {
            self.diagnose(&doc).await;
        }
    }

    async fn did_change(&self, _: Context, params: DidChangeTextDocumentParams) {
        let uri = &params.text_document.text_document_identifier.uri;
        match self.client.documents().get(uri) {
            Some(doc) => self.diagnose(&doc).await,
            None => {
                let message = format!("{uri}: changed before it was opened");
                self.log(MessageType::Warning, message).await;
            }
        }
    }

    async fn hover(&self, _: Context, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let Some(doc) = self.client.documents().get(&at.text_document.uri) else {
            return Ok(None);
        };
        let value = match doc.text().split_whitespace().count() {
            1 => "1 word".to_owned(),
            n => format!("{n} words"),
        };
        Ok(Some(Hover {
            contents: Contents::MarkupContent(MarkupContent {
                kind: MarkupKind::PlainText,
                value,
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
        let typed = prefix_before(&doc, at.position);
        let words: BTreeSet<&str> = doc
            .text()
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| w.len() > typed.len() && w.starts_with(typed))
            .collect();
        let items = words
            .into_iter()
            .map(|word| CompletionItem {
                label: word.to_owned(),
                kind: Some(CompletionItemKind::Text),
                ..CompletionItem::default()
            })
            .collect::<Vec<_>>();
        Ok(Some(items.into()))
    }

    async fn shutdown(&self, _: Context) -> Result<()> {
        eprintln!("lsp_server: shutdown");
        Ok(())
    }
}

impl Server {
    /// Sends `window/logMessage` (and copies it to stderr).
    async fn log(&self, typ: MessageType, message: String) {
        eprintln!("lsp_server: {message}");
        if let Err(e) = self.client.log_message(typ, message).await {
            eprintln!("lsp_server: could not send window/logMessage: {e}");
        }
    }

    /// Publishes a warning on every `TODO` of the document.
    async fn diagnose(&self, doc: &Document) {
        let diagnostics = doc
            .text()
            .match_indices("TODO")
            .map(|(at, todo)| Diagnostic {
                range: Range {
                    start: doc.position_at(at),
                    end: doc.position_at(at + todo.len()),
                },
                severity: Some(DiagnosticSeverity::Warning),
                source: Some("lsp_server".into()),
                message: "a TODO is left".into(),
                ..Diagnostic::default()
            })
            .collect();
        let sent = self
            .client
            .publish_diagnostics(doc.uri().clone(), diagnostics, Some(doc.version()))
            .await;
        if let Err(e) = sent {
            eprintln!("lsp_server: could not publish diagnostics: {e}");
        }
    }
}

/// The word characters right before `position` on its line.
fn prefix_before(doc: &Document, position: Position) -> &str {
    let end = doc.offset_at(position);
    let line_start = doc.offset_at(Position {
        line: position.line,
        character: 0,
    });
    let line = &doc.text()[line_start..end];
    let start = line
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |i| {
            i + line[i..].chars().next().map_or(1, char::len_utf8)
        });
    &line[start..]
}

#[derive(Deserialize)]
struct SlowParams {
    ms: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SlowResult {
    slept_ms: u64,
}

/// `example/slow`: sleeps `ms` in ten slices, reporting progress after each.
async fn slow(client: Client, ctx: Context, params: SlowParams) -> Result<SlowResult> {
    if params.ms > MAX_SLOW_MS {
        return Err(ErrorObject::invalid_params(format!(
            "`ms` must be at most {MAX_SLOW_MS}, got {}",
            params.ms
        )));
    }
    let progress = WorkDone::begin(&ctx, &client, "Sleeping").await;
    let started = Instant::now();
    let total = Duration::from_millis(params.ms);
    for step in 0..SLOW_STEPS {
        if step > 0 {
            progress.report(None, Some(step * 100 / SLOW_STEPS)).await;
        }
        // An elapsed deadline is skipped: tokio rounds it up to the next
        // millisecond tick.
        let deadline = started + total.mul_f64(f64::from(step + 1) / f64::from(SLOW_STEPS));
        if deadline > Instant::now() {
            tokio::time::sleep_until(deadline.into()).await;
        }
    }
    // Dropped before here (cancelled), `progress` sends its `end` itself.
    progress.end(Some("done".into())).await;
    Ok(SlowResult {
        slept_ms: params.ms,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let server = LspServer::new(|client| Server { client });
    let client = server.client().clone();
    let own = Router::new().request("example/slow", move |params: SlowParams, ctx: Context| {
        slow(client.clone(), ctx, params)
    });
    let reason = match server.merge(own).serve_stdio().await {
        Ok(reason) => reason,
        Err(e) => {
            eprintln!("lsp_server: cannot use stdin/stdout: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!("lsp_server: {reason}");
    // Every answer owed has been written. Exit here rather than return:
    // when stdin is a terminal, tokio reads it on a blocking thread that
    // would keep the runtime (and the process) alive until the next line.
    std::process::exit(reason.exit_code())
}
