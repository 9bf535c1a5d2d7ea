//! Run with: cargo run --example lsp_server
//!
//! A small but real Language Server Protocol server on stdin/stdout, on the
//! [`Config::lsp`] preset (`Content-Length` framing, `$/cancelRequest`,
//! `$/progress`, the `initialize` … `shutdown`/`exit` lifecycle). The
//! protocol methods are one `#[rpc]` trait with small serde structs for the
//! LSP types it needs (no LSP crate). It shows:
//!
//! - `initialize` announcing `hoverProvider` and full text sync;
//!   `initialized`, during which the server calls back into the client
//!   (`workspace/configuration`) and reports the answer with
//!   `window/logMessage`.
//! - `textDocument/didOpen`, `didChange` (full sync) and `didClose`: the text
//!   is stored per URI, applied strictly in order (notifications run one at
//!   a time in arrival order; a version that goes backwards is reported).
//! - `textDocument/hover`: the document's word count, e.g. `3 words`.
//! - `example/slow {ms}`: cancellable with `$/cancelRequest` (answered
//!   -32800), reporting work-done progress (`begin`, `report`s, `end`) on the
//!   request's `workDoneToken`, or, when there is none and the client
//!   advertised `window.workDoneProgress`, on a token it first creates with
//!   `window/workDoneProgress/create`.
//! - `shutdown`, then `exit`: the process exits 0 after `shutdown`, 1
//!   without it (the preset's rule).
//!
//! Only JSON-RPC goes to stdout; logs go to stderr.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use jsonrpc_runtime::{rpc, Config, Context, ErrorObject, Peer, Transport};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[path = "support/logging.rs"]
mod logging;

/// The longest `example/slow` accepted.
const MAX_SLOW_MS: u64 = 600_000;

/// How many slices `example/slow` is cut into; one progress report each.
const SLOW_STEPS: u64 = 10;

/// `TextDocumentSyncKind.Full`.
const SYNC_FULL: u8 = 1;

/// `MessageType` of `window/logMessage`.
const LOG_ERROR: u8 = 1;
const LOG_WARNING: u8 = 2;
const LOG_INFO: u8 = 3;

// ---------------------------------------------------------------------------
// The LSP types this server needs. Unknown fields are ignored everywhere.

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    #[serde(default)]
    capabilities: ClientCapabilities,
    #[serde(default)]
    client_info: Option<ClientInfo>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ClientInfo {
    name: String,
    #[serde(default)]
    version: Option<String>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClientCapabilities {
    #[serde(default)]
    workspace: Option<WorkspaceClientCapabilities>,
    #[serde(default)]
    window: Option<WindowClientCapabilities>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WorkspaceClientCapabilities {
    #[serde(default)]
    configuration: Option<bool>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WindowClientCapabilities {
    #[serde(default)]
    work_done_progress: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeResult {
    capabilities: ServerCapabilities,
    server_info: ServerInfo,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ServerCapabilities {
    hover_provider: bool,
    text_document_sync: TextDocumentSyncOptions,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextDocumentSyncOptions {
    open_close: bool,
    change: u8,
}

#[derive(Debug, Serialize, Deserialize)]
struct ServerInfo {
    name: String,
    version: String,
}

/// Params with nothing this server reads (`initialized`'s `{}`).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Ignored {}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DidOpenParams {
    text_document: TextDocumentItem,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextDocumentItem {
    uri: String,
    version: i32,
    text: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DidChangeParams {
    text_document: VersionedTextDocumentIdentifier,
    content_changes: Vec<ContentChange>,
}

#[derive(Debug, Serialize, Deserialize)]
struct VersionedTextDocumentIdentifier {
    uri: String,
    version: i32,
}

/// One change; with full sync, the whole new text.
#[derive(Debug, Serialize, Deserialize)]
struct ContentChange {
    text: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextDocumentParams {
    text_document: TextDocumentIdentifier,
}

#[derive(Debug, Serialize, Deserialize)]
struct TextDocumentIdentifier {
    uri: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Hover {
    contents: MarkupContent,
}

#[derive(Debug, Serialize, Deserialize)]
struct MarkupContent {
    kind: String,
    value: String,
}

/// `example/slow` params (the `workDoneToken` is read by the runtime).
#[derive(Debug, Serialize, Deserialize)]
struct SlowParams {
    ms: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SlowResult {
    slept_ms: u64,
}

// ---------------------------------------------------------------------------
// The protocol methods.

/// The LSP methods this server serves; `$/cancelRequest`, `$/progress` and
/// the lifecycle rules come from the preset.
#[rpc]
trait LanguageServer {
    /// The handshake.
    #[rpc(request = "initialize")]
    async fn initialize(&self, #[rpc(params)] params: InitializeParams) -> InitializeResult;

    /// The client is ready: the server may call it now.
    #[rpc(notification = "initialized")]
    async fn initialized(&self, ctx: Context, #[rpc(params)] params: Option<Ignored>);

    /// A document was opened.
    #[rpc(notification = "textDocument/didOpen")]
    async fn did_open(&self, #[rpc(params)] params: DidOpenParams);

    /// A document changed (full sync: each change is the whole text).
    #[rpc(notification = "textDocument/didChange")]
    async fn did_change(&self, ctx: Context, #[rpc(params)] params: DidChangeParams);

    /// A document was closed.
    #[rpc(notification = "textDocument/didClose")]
    async fn did_close(&self, #[rpc(params)] params: TextDocumentParams);

    /// The document's word count, or `null` for a document not open.
    #[rpc(request = "textDocument/hover")]
    async fn hover(&self, #[rpc(params)] params: TextDocumentParams) -> Option<Hover>;

    /// Sleeps `ms`, reporting work-done progress; cancellable.
    #[rpc(request = "example/slow")]
    async fn slow(
        &self,
        ctx: Context,
        #[rpc(params)] params: SlowParams,
    ) -> Result<SlowResult, ErrorObject>;

    /// Prepares to exit; later requests are refused by the preset.
    #[rpc(request = "shutdown")]
    async fn shutdown(&self);

    /// Ends the connection (the preset sets the exit code).
    #[rpc(notification = "exit")]
    async fn exit(&self);
}

#[derive(Debug)]
struct Document {
    version: i32,
    text: String,
}

#[derive(Default)]
struct Server {
    client: OnceLock<ClientCapabilities>,
    documents: Mutex<HashMap<String, Document>>,
    next_token: AtomicU64,
}

impl Server {
    fn documents(&self) -> std::sync::MutexGuard<'_, HashMap<String, Document>> {
        // A panicking handler cannot leave a half-written map: every update
        // is a single insert or remove.
        self.documents.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn client(&self) -> ClientCapabilities {
        self.client.get().cloned().unwrap_or_default()
    }
}

impl LanguageServer for Server {
    async fn initialize(&self, params: InitializeParams) -> InitializeResult {
        let client = params
            .client_info
            .map(|c| format!("{} {}", c.name, c.version.unwrap_or_default()))
            .unwrap_or_else(|| "an unnamed client".to_owned());
        eprintln!(
            "lsp_server: initialize from {client}: {:?}",
            params.capabilities
        );
        // The preset refuses a second `initialize`, so this is set once.
        let _ = self.client.set(params.capabilities);
        InitializeResult {
            capabilities: ServerCapabilities {
                hover_provider: true,
                text_document_sync: TextDocumentSyncOptions {
                    open_close: true,
                    change: SYNC_FULL,
                },
            },
            server_info: ServerInfo {
                name: "jsonrpc-runtime-lsp-example".to_owned(),
                version: env!("CARGO_PKG_VERSION").to_owned(),
            },
        }
    }

    async fn initialized(&self, ctx: Context, _params: Option<Ignored>) {
        let asks = self
            .client()
            .workspace
            .and_then(|w| w.configuration)
            .unwrap_or(false);
        if !asks {
            log(
                &ctx,
                LOG_INFO,
                "the client does not offer workspace/configuration".into(),
            )
            .await;
            return;
        }
        let items = json!({"items": [{"section": "example"}]});
        match ctx
            .peer()
            .call::<Value>("workspace/configuration", items)
            .await
        {
            Ok(answer) => log(&ctx, LOG_INFO, format!("configuration: {answer}")).await,
            Err(e) => {
                log(
                    &ctx,
                    LOG_ERROR,
                    format!("workspace/configuration failed: {e}"),
                )
                .await
            }
        }
    }

    async fn did_open(&self, params: DidOpenParams) {
        let doc = params.text_document;
        self.documents().insert(
            doc.uri,
            Document {
                version: doc.version,
                text: doc.text,
            },
        );
    }

    async fn did_change(&self, ctx: Context, params: DidChangeParams) {
        let id = params.text_document;
        // Full sync: the last change holds the whole new text.
        let Some(change) = params.content_changes.into_iter().next_back() else {
            return;
        };
        let previous = self.documents().insert(
            id.uri.clone(),
            Document {
                version: id.version,
                text: change.text,
            },
        );
        match previous {
            Some(old) if old.version >= id.version => {
                log(
                    &ctx,
                    LOG_WARNING,
                    format!(
                        "{}: version {} arrived after version {}",
                        id.uri, id.version, old.version
                    ),
                )
                .await
            }
            Some(_) => {}
            None => {
                log(
                    &ctx,
                    LOG_WARNING,
                    format!("{}: changed before it was opened", id.uri),
                )
                .await
            }
        }
    }

    async fn did_close(&self, params: TextDocumentParams) {
        self.documents().remove(&params.text_document.uri);
    }

    async fn hover(&self, params: TextDocumentParams) -> Option<Hover> {
        let words = self
            .documents()
            .get(&params.text_document.uri)?
            .text
            .split_whitespace()
            .count();
        let value = match words {
            1 => "1 word".to_owned(),
            n => format!("{n} words"),
        };
        Some(Hover {
            contents: MarkupContent {
                kind: "plaintext".to_owned(),
                value,
            },
        })
    }

    async fn slow(&self, ctx: Context, params: SlowParams) -> Result<SlowResult, ErrorObject> {
        if params.ms > MAX_SLOW_MS {
            return Err(ErrorObject::invalid_params(format!(
                "`ms` must be at most {MAX_SLOW_MS}, got {}",
                params.ms
            )));
        }
        let may_create = self
            .client()
            .window
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        let token = format!(
            "example/slow#{}",
            self.next_token.fetch_add(1, Ordering::Relaxed)
        );
        let progress = WorkDone::begin(&ctx, may_create, token, "Sleeping").await;
        let started = Instant::now();
        let total = Duration::from_millis(params.ms);
        for step in 0..SLOW_STEPS {
            if step > 0 {
                progress.report(step * 100 / SLOW_STEPS).await;
            }
            let slice_end = total.mul_f64((step + 1) as f64 / SLOW_STEPS as f64);
            // An elapsed deadline is skipped: tokio rounds it up to the
            // next millisecond tick.
            let deadline = started + slice_end;
            if deadline > Instant::now() {
                tokio::time::sleep_until(deadline.into()).await;
            }
        }
        progress.end().await;
        Ok(SlowResult {
            slept_ms: params.ms,
        })
    }

    async fn shutdown(&self) {
        eprintln!("lsp_server: shutdown");
    }

    async fn exit(&self) {
        eprintln!("lsp_server: exit");
    }
}

/// Sends `window/logMessage` (and copies it to stderr).
async fn log(ctx: &Context, kind: u8, message: String) {
    eprintln!("lsp_server: {message}");
    let params = json!({"type": kind, "message": message});
    if let Err(e) = ctx.peer().notify("window/logMessage", params).await {
        eprintln!("lsp_server: could not send window/logMessage: {e}");
    }
}

// ---------------------------------------------------------------------------
// Work-done progress.

/// Where work-done progress goes.
enum Channel {
    /// The client sent no token and cannot take one from us.
    Nowhere,
    /// The request's own `workDoneToken`: the runtime sends `$/progress`
    /// and keeps every report before the answer.
    Request(Context),
    /// A token this server created with `window/workDoneProgress/create`.
    Created { peer: Peer, token: String },
}

/// One work-done progress from `begin` to `end`. Dropped before
/// [`end`](WorkDone::end) (the request was cancelled), it sends the `end`
/// itself, so the client's progress UI never stays open.
struct WorkDone {
    channel: Channel,
    ended: bool,
}

impl WorkDone {
    /// Picks the channel (creating a token if it must) and sends `begin`.
    async fn begin(ctx: &Context, may_create: bool, token: String, title: &str) -> WorkDone {
        let channel = if ctx.progress_token().is_some() {
            Channel::Request(ctx.clone())
        } else if may_create {
            let create = ctx
                .peer()
                .call::<()>("window/workDoneProgress/create", json!({"token": token}))
                .await;
            match create {
                Ok(()) => Channel::Created {
                    peer: ctx.peer().clone(),
                    token,
                },
                Err(e) => {
                    // The spec: a token the client refused must not be used.
                    eprintln!("lsp_server: window/workDoneProgress/create failed: {e}");
                    Channel::Nowhere
                }
            }
        } else {
            Channel::Nowhere
        };
        let progress = WorkDone {
            channel,
            ended: false,
        };
        progress
            .send(json!({"kind": "begin", "title": title, "cancellable": true, "percentage": 0}))
            .await;
        progress
    }

    async fn report(&self, percentage: u64) {
        self.send(json!({"kind": "report", "percentage": percentage}))
            .await;
    }

    async fn end(mut self) {
        self.ended = true;
        self.send(json!({"kind": "end", "message": "done"})).await;
    }

    async fn send(&self, value: Value) {
        let sent = match &self.channel {
            Channel::Nowhere => Ok(()),
            Channel::Request(ctx) => ctx.progress(value),
            Channel::Created { peer, token } => {
                peer.notify("$/progress", json!({"token": token, "value": value}))
                    .await
            }
        };
        if let Err(e) = sent {
            eprintln!("lsp_server: could not report progress: {e}");
        }
    }
}

impl Drop for WorkDone {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        eprintln!("lsp_server: example/slow stopped before it finished");
        let end = json!({"kind": "end", "message": "cancelled"});
        match &self.channel {
            Channel::Nowhere => {}
            Channel::Request(ctx) => {
                let _ = ctx.progress(end);
            }
            // Drop cannot wait for room in the outbound budget: a task does.
            Channel::Created { peer, token } => {
                let (peer, params) = (peer.clone(), json!({"token": token, "value": end}));
                tokio::spawn(async move { peer.notify("$/progress", params).await });
            }
        }
    }
}

// ---------------------------------------------------------------------------

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let config = Config::lsp();
    let transport = match Transport::stdio(&config) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("lsp_server: cannot use stdin/stdout: {e}");
            return ExitCode::FAILURE;
        }
    };
    let router = Server::default().into_router();
    let reason = Peer::builder()
        .config(config)
        .router(router)
        .serve(transport)
        .await;
    eprintln!("lsp_server: {reason}");
    // Every answer owed has been written. Exit here rather than return:
    // when stdin is a terminal, tokio reads it on a blocking thread that
    // would keep the runtime (and the process) alive until the next line.
    std::process::exit(reason.exit_code())
}
