//! The server's handle on its client: typed requests and notifications to
//! it, and what the handshake told about it.

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use jsonrpc_runtime::peer::SendError;
use jsonrpc_runtime::{CallError, Peer};
use serde_json::Value;

use crate::documents::{Documents, PositionEncoding};
#[allow(clippy::wildcard_imports)]
use crate::types::*;

/// The language server's handle on its client, usable from any handler
/// and from tasks the server spawns: typed server-to-client requests and
/// notifications, the client's capabilities, the documents it has open.
///
/// [`LspServer::new`](crate::LspServer::new) hands one to the function that
/// makes the server; it is connected when `initialize` arrives (before the
/// server's own `initialize` runs), and calls made before then fail with
/// [`ClientError::NotConnected`]. Cheap to clone.
///
/// Every request of the protocol has a method here, and
/// [`send_request`](Client::send_request) and
/// [`send_notification`](Client::send_notification) send any request or
/// notification of the [types crate](crate::types) (or one of your own)
/// typed by its params and result.
///
/// # Examples
///
/// ```
/// use jsonrpc_lsp::types::{InitializedParams, MessageType};
/// use jsonrpc_lsp::{Client, Context, LanguageServer};
///
/// struct Backend {
///     client: Client,
/// }
///
/// impl LanguageServer for Backend {
///     async fn initialized(&self, _ctx: Context, _params: InitializedParams) {
///         let _ = self.client.log_message(MessageType::Info, "ready").await;
///     }
/// }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    peer: OnceLock<Peer>,
    capabilities: OnceLock<ClientCapabilities>,
    documents: Documents,
    trace: RwLock<Option<TraceValue>>,
}

/// Why a call to the client failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The client has not sent `initialize` yet: there is no one to call.
    NotConnected,
    /// The request failed: an error answer, a timeout, the connection gone.
    Call(CallError),
    /// The notification could not be sent.
    Send(SendError),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::NotConnected => {
                f.write_str("the client is not connected: `initialize` has not arrived")
            }
            ClientError::Call(e) => e.fmt(f),
            ClientError::Send(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::NotConnected => None,
            ClientError::Call(e) => Some(e),
            ClientError::Send(e) => Some(e),
        }
    }
}

impl From<CallError> for ClientError {
    fn from(e: CallError) -> Self {
        ClientError::Call(e)
    }
}

impl From<SendError> for ClientError {
    fn from(e: SendError) -> Self {
        ClientError::Send(e)
    }
}

/// The result of a call to the client.
pub type ClientResult<T> = Result<T, ClientError>;

impl Client {
    /// Connects the handle (at `initialize`).
    pub(crate) fn connect(&self, peer: &Peer, params: &InitializeParams) {
        let _ = self.inner.peer.set(peer.clone());
        let _ = self.inner.capabilities.set(params.capabilities.clone());
        self.set_trace(params.trace.clone());
    }

    /// The connection to the client, once `initialize` has arrived.
    pub fn peer(&self) -> Option<&Peer> {
        self.inner.peer.get()
    }

    /// The capabilities the client announced in `initialize`.
    pub fn capabilities(&self) -> Option<&ClientCapabilities> {
        self.inner.capabilities.get()
    }

    /// The documents the client has open (see [`Documents`]).
    pub fn documents(&self) -> &Documents {
        &self.inner.documents
    }

    /// The encoding positions count in, as the handshake settled it.
    pub fn position_encoding(&self) -> PositionEncoding {
        self.inner.documents.encoding()
    }

    /// The trace level the client asked for (`initialize`'s `trace`, then
    /// `$/setTrace`).
    pub fn trace(&self) -> TraceValue {
        self.inner
            .trace
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .unwrap_or(TraceValue::Off)
    }

    pub(crate) fn set_trace(&self, value: Option<TraceValue>) {
        *self
            .inner
            .trace
            .write()
            .unwrap_or_else(PoisonError::into_inner) = value;
    }

    fn connected(&self) -> ClientResult<&Peer> {
        self.peer().ok_or(ClientError::NotConnected)
    }

    /// Sends request `R` and waits for its typed result.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotConnected`] before `initialize`, else the call's
    /// [`CallError`] (an error answer, the callback timeout, the
    /// connection closing).
    pub async fn send_request<R: Request>(&self, params: R::Params) -> ClientResult<R::Result> {
        let peer = self.connected()?;
        Ok(peer.call::<R::Result>(R::METHOD.as_str(), params).await?)
    }

    /// Sends notification `N`.
    ///
    /// # Errors
    ///
    /// [`ClientError::NotConnected`] before `initialize`, else why it could
    /// not be sent ([`SendError`]).
    pub async fn send_notification<N: Notification>(&self, params: N::Params) -> ClientResult<()> {
        let peer = self.connected()?;
        Ok(peer.notify(N::METHOD.as_str(), params).await?)
    }

    /// `window/showMessage`.
    ///
    /// # Errors
    ///
    /// As [`send_notification`](Client::send_notification).
    pub async fn show_message(
        &self,
        typ: MessageType,
        message: impl Into<String>,
    ) -> ClientResult<()> {
        let params = ShowMessageParams {
            kind: typ,
            message: message.into(),
        };
        self.send_notification::<ShowMessageNotification>(params)
            .await
    }

    /// `window/showMessageRequest`: a message with actions; the one the user
    /// picked, or `None`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn show_message_request(
        &self,
        params: ShowMessageRequestParams,
    ) -> ClientResult<Option<MessageActionItem>> {
        self.send_request::<ShowMessageRequest>(params).await
    }

    /// `window/logMessage`.
    ///
    /// # Errors
    ///
    /// As [`send_notification`](Client::send_notification).
    pub async fn log_message(
        &self,
        typ: MessageType,
        message: impl Into<String>,
    ) -> ClientResult<()> {
        let params = LogMessageParams {
            kind: typ,
            message: message.into(),
        };
        self.send_notification::<LogMessageNotification>(params)
            .await
    }

    /// `window/showDocument`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn show_document(
        &self,
        params: ShowDocumentParams,
    ) -> ClientResult<ShowDocumentResult> {
        self.send_request::<ShowDocumentRequest>(params).await
    }

    /// `telemetry/event`.
    ///
    /// # Errors
    ///
    /// As [`send_notification`](Client::send_notification).
    pub async fn telemetry_event(&self, value: Value) -> ClientResult<()> {
        self.send_notification::<TelemetryEventNotification>(value)
            .await
    }

    /// `$/logTrace`, when the client's trace level is not `off`; `verbose`
    /// goes along only at `verbose`.
    ///
    /// # Errors
    ///
    /// As [`send_notification`](Client::send_notification).
    pub async fn log_trace(
        &self,
        message: impl Into<String>,
        verbose: Option<String>,
    ) -> ClientResult<()> {
        let verbose = match self.trace() {
            TraceValue::Off => return Ok(()),
            TraceValue::Verbose => verbose,
            _ => None,
        };
        let params = LogTraceParams {
            message: message.into(),
            verbose,
        };
        self.send_notification::<LogTraceNotification>(params).await
    }

    /// `textDocument/publishDiagnostics`.
    ///
    /// # Errors
    ///
    /// As [`send_notification`](Client::send_notification).
    pub async fn publish_diagnostics(
        &self,
        uri: Uri,
        diagnostics: Vec<Diagnostic>,
        version: Option<i32>,
    ) -> ClientResult<()> {
        let params = PublishDiagnosticsParams {
            uri,
            version,
            diagnostics,
        };
        self.send_notification::<PublishDiagnosticsNotification>(params)
            .await
    }

    /// `workspace/configuration`: one value per item asked.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn configuration(&self, items: Vec<ConfigurationItem>) -> ClientResult<Vec<Value>> {
        self.send_request::<ConfigurationRequest>(ConfigurationParams { items })
            .await
    }

    /// `workspace/workspaceFolders`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn workspace_folders(&self) -> ClientResult<Option<Vec<WorkspaceFolder>>> {
        self.send_request::<WorkspaceFoldersRequest>(()).await
    }

    /// `workspace/applyEdit`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn apply_edit(
        &self,
        label: Option<String>,
        edit: WorkspaceEdit,
    ) -> ClientResult<ApplyWorkspaceEditResult> {
        let params = ApplyWorkspaceEditParams {
            label,
            edit,
            metadata: None,
        };
        self.send_request::<ApplyWorkspaceEditRequest>(params).await
    }

    /// `client/registerCapability`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn register_capability(&self, registrations: Vec<Registration>) -> ClientResult<()> {
        self.send_request::<RegistrationRequest>(RegistrationParams { registrations })
            .await
    }

    /// `client/unregisterCapability`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn unregister_capability(
        &self,
        unregisterations: Vec<Unregistration>,
    ) -> ClientResult<()> {
        self.send_request::<UnregistrationRequest>(UnregistrationParams { unregisterations })
            .await
    }

    /// `window/workDoneProgress/create`: asks the client to make `token` a
    /// progress token (see [`WorkDone::create`](crate::WorkDone::create),
    /// which does this and begins).
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request); a token the client
    /// refused must not be used.
    pub async fn create_work_done_progress(&self, token: ProgressToken) -> ClientResult<()> {
        self.send_request::<WorkDoneProgressCreateRequest>(WorkDoneProgressCreateParams { token })
            .await
    }

    /// `workspace/semanticTokens/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn semantic_tokens_refresh(&self) -> ClientResult<()> {
        self.send_request::<SemanticTokensRefreshRequest>(()).await
    }

    /// `workspace/inlayHint/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn inlay_hint_refresh(&self) -> ClientResult<()> {
        self.send_request::<InlayHintRefreshRequest>(()).await
    }

    /// `workspace/inlineValue/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn inline_value_refresh(&self) -> ClientResult<()> {
        self.send_request::<InlineValueRefreshRequest>(()).await
    }

    /// `workspace/diagnostic/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn workspace_diagnostic_refresh(&self) -> ClientResult<()> {
        self.send_request::<DiagnosticRefreshRequest>(()).await
    }

    /// `workspace/codeLens/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn code_lens_refresh(&self) -> ClientResult<()> {
        self.send_request::<CodeLensRefreshRequest>(()).await
    }

    /// `workspace/foldingRange/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn folding_range_refresh(&self) -> ClientResult<()> {
        self.send_request::<FoldingRangeRefreshRequest>(()).await
    }

    /// `workspace/textDocumentContent/refresh`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Client::send_request).
    pub async fn text_document_content_refresh(&self, uri: Uri) -> ClientResult<()> {
        self.send_request::<TextDocumentContentRefreshRequest>(TextDocumentContentRefreshParams {
            uri,
        })
        .await
    }
}
