//! Every method a client sends a server, in one list: the
//! [`LanguageServer`] trait and the layer's delegation are both made from
//! it, so neither can miss one. The list is the LSP 3.18 meta-model's
//! client-to-server requests and notifications as the types crate has
//! them (`$/cancelRequest` and `$/progress` are the runtime's policies).
//! `tests/methods.rs` checks it against the types crate.

use jsonrpc_runtime::Context;

#[allow(clippy::wildcard_imports)]
use crate::types::*;
use crate::Result;

/// Calls `$callback!` with the list. `layered_*` are the methods the layer
/// acts on itself before the implementation sees them (the handshake, the
/// document store, the trace setting).
macro_rules! lsp_methods {
    ($callback:ident) => {
        $callback! {
            requests {
                /// `shutdown`: [`ShutdownRequest`](crate::types::ShutdownRequest).
                "shutdown" shutdown() -> () = Ok(());
                /// `textDocument/codeAction`: [`CodeActionRequest`](crate::types::CodeActionRequest).
                "textDocument/codeAction" code_action(params: CodeActionParams) -> Option<Vec<CodeActionResponse>>;
                /// `textDocument/codeLens`: [`CodeLensRequest`](crate::types::CodeLensRequest).
                "textDocument/codeLens" code_lens(params: CodeLensParams) -> Option<Vec<CodeLens>>;
                /// `textDocument/colorPresentation`: [`ColorPresentationRequest`](crate::types::ColorPresentationRequest).
                "textDocument/colorPresentation" color_presentation(params: ColorPresentationParams) -> Vec<ColorPresentation>;
                /// `textDocument/completion`: [`CompletionRequest`](crate::types::CompletionRequest).
                "textDocument/completion" completion(params: CompletionParams) -> Option<CompletionResponse>;
                /// `textDocument/declaration`: [`DeclarationRequest`](crate::types::DeclarationRequest).
                "textDocument/declaration" goto_declaration(params: DeclarationParams) -> Option<DeclarationResponse>;
                /// `textDocument/definition`: [`DefinitionRequest`](crate::types::DefinitionRequest).
                "textDocument/definition" goto_definition(params: DefinitionParams) -> Option<DefinitionResponse>;
                /// `textDocument/diagnostic`: [`DocumentDiagnosticRequest`](crate::types::DocumentDiagnosticRequest).
                "textDocument/diagnostic" diagnostic(params: DocumentDiagnosticParams) -> DocumentDiagnosticReport;
                /// `textDocument/documentColor`: [`DocumentColorRequest`](crate::types::DocumentColorRequest).
                "textDocument/documentColor" document_color(params: DocumentColorParams) -> Vec<ColorInformation>;
                /// `textDocument/documentHighlight`: [`DocumentHighlightRequest`](crate::types::DocumentHighlightRequest).
                "textDocument/documentHighlight" document_highlight(params: DocumentHighlightParams) -> Option<Vec<DocumentHighlight>>;
                /// `textDocument/documentLink`: [`DocumentLinkRequest`](crate::types::DocumentLinkRequest).
                "textDocument/documentLink" document_link(params: DocumentLinkParams) -> Option<Vec<DocumentLink>>;
                /// `textDocument/documentSymbol`: [`DocumentSymbolRequest`](crate::types::DocumentSymbolRequest).
                "textDocument/documentSymbol" document_symbol(params: DocumentSymbolParams) -> Option<DocumentSymbolResponse>;
                /// `textDocument/foldingRange`: [`FoldingRangeRequest`](crate::types::FoldingRangeRequest).
                "textDocument/foldingRange" folding_range(params: FoldingRangeParams) -> Option<Vec<FoldingRange>>;
                /// `textDocument/formatting`: [`DocumentFormattingRequest`](crate::types::DocumentFormattingRequest).
                "textDocument/formatting" formatting(params: DocumentFormattingParams) -> Option<Vec<TextEdit>>;
                /// `textDocument/hover`: [`HoverRequest`](crate::types::HoverRequest).
                "textDocument/hover" hover(params: HoverParams) -> Option<Hover>;
                /// `textDocument/implementation`: [`ImplementationRequest`](crate::types::ImplementationRequest).
                "textDocument/implementation" goto_implementation(params: ImplementationParams) -> Option<ImplementationResponse>;
                /// `textDocument/inlayHint`: [`InlayHintRequest`](crate::types::InlayHintRequest).
                "textDocument/inlayHint" inlay_hint(params: InlayHintParams) -> Option<Vec<InlayHint>>;
                /// `textDocument/inlineCompletion`: [`InlineCompletionRequest`](crate::types::InlineCompletionRequest).
                "textDocument/inlineCompletion" inline_completion(params: InlineCompletionParams) -> Option<InlineCompletionResponse>;
                /// `textDocument/inlineValue`: [`InlineValueRequest`](crate::types::InlineValueRequest).
                "textDocument/inlineValue" inline_value(params: InlineValueParams) -> Option<Vec<InlineValue>>;
                /// `textDocument/linkedEditingRange`: [`LinkedEditingRangeRequest`](crate::types::LinkedEditingRangeRequest).
                "textDocument/linkedEditingRange" linked_editing_range(params: LinkedEditingRangeParams) -> Option<LinkedEditingRanges>;
                /// `textDocument/moniker`: [`MonikerRequest`](crate::types::MonikerRequest).
                "textDocument/moniker" moniker(params: MonikerParams) -> Option<Vec<Moniker>>;
                /// `textDocument/onTypeFormatting`: [`DocumentOnTypeFormattingRequest`](crate::types::DocumentOnTypeFormattingRequest).
                "textDocument/onTypeFormatting" on_type_formatting(params: DocumentOnTypeFormattingParams) -> Option<Vec<TextEdit>>;
                /// `textDocument/prepareCallHierarchy`: [`CallHierarchyPrepareRequest`](crate::types::CallHierarchyPrepareRequest).
                "textDocument/prepareCallHierarchy" prepare_call_hierarchy(params: CallHierarchyPrepareParams) -> Option<Vec<CallHierarchyItem>>;
                /// `textDocument/prepareRename`: [`PrepareRenameRequest`](crate::types::PrepareRenameRequest).
                "textDocument/prepareRename" prepare_rename(params: PrepareRenameParams) -> Option<PrepareRenameResult>;
                /// `textDocument/prepareTypeHierarchy`: [`TypeHierarchyPrepareRequest`](crate::types::TypeHierarchyPrepareRequest).
                "textDocument/prepareTypeHierarchy" prepare_type_hierarchy(params: TypeHierarchyPrepareParams) -> Option<Vec<TypeHierarchyItem>>;
                /// `textDocument/rangeFormatting`: [`DocumentRangeFormattingRequest`](crate::types::DocumentRangeFormattingRequest).
                "textDocument/rangeFormatting" range_formatting(params: DocumentRangeFormattingParams) -> Option<Vec<TextEdit>>;
                /// `textDocument/rangesFormatting`: [`DocumentRangesFormattingRequest`](crate::types::DocumentRangesFormattingRequest).
                "textDocument/rangesFormatting" ranges_formatting(params: DocumentRangesFormattingParams) -> Option<Vec<TextEdit>>;
                /// `textDocument/references`: [`ReferencesRequest`](crate::types::ReferencesRequest).
                "textDocument/references" references(params: ReferenceParams) -> Option<Vec<Location>>;
                /// `textDocument/rename`: [`RenameRequest`](crate::types::RenameRequest).
                "textDocument/rename" rename(params: RenameParams) -> Option<WorkspaceEdit>;
                /// `textDocument/selectionRange`: [`SelectionRangeRequest`](crate::types::SelectionRangeRequest).
                "textDocument/selectionRange" selection_range(params: SelectionRangeParams) -> Option<Vec<SelectionRange>>;
                /// `textDocument/semanticTokens/full`: [`SemanticTokensRequest`](crate::types::SemanticTokensRequest).
                "textDocument/semanticTokens/full" semantic_tokens_full(params: SemanticTokensParams) -> Option<SemanticTokens>;
                /// `textDocument/semanticTokens/full/delta`: [`SemanticTokensDeltaRequest`](crate::types::SemanticTokensDeltaRequest).
                "textDocument/semanticTokens/full/delta" semantic_tokens_full_delta(params: SemanticTokensDeltaParams) -> Option<SemanticTokensDeltaResponse>;
                /// `textDocument/semanticTokens/range`: [`SemanticTokensRangeRequest`](crate::types::SemanticTokensRangeRequest).
                "textDocument/semanticTokens/range" semantic_tokens_range(params: SemanticTokensRangeParams) -> Option<SemanticTokens>;
                /// `textDocument/signatureHelp`: [`SignatureHelpRequest`](crate::types::SignatureHelpRequest).
                "textDocument/signatureHelp" signature_help(params: SignatureHelpParams) -> Option<SignatureHelp>;
                /// `textDocument/typeDefinition`: [`TypeDefinitionRequest`](crate::types::TypeDefinitionRequest).
                "textDocument/typeDefinition" goto_type_definition(params: TypeDefinitionParams) -> Option<TypeDefinitionResponse>;
                /// `textDocument/willSaveWaitUntil`: [`WillSaveTextDocumentWaitUntilRequest`](crate::types::WillSaveTextDocumentWaitUntilRequest).
                "textDocument/willSaveWaitUntil" will_save_wait_until(params: WillSaveTextDocumentParams) -> Option<Vec<TextEdit>>;
                /// `callHierarchy/incomingCalls`: [`CallHierarchyIncomingCallsRequest`](crate::types::CallHierarchyIncomingCallsRequest).
                "callHierarchy/incomingCalls" incoming_calls(params: CallHierarchyIncomingCallsParams) -> Option<Vec<CallHierarchyIncomingCall>>;
                /// `callHierarchy/outgoingCalls`: [`CallHierarchyOutgoingCallsRequest`](crate::types::CallHierarchyOutgoingCallsRequest).
                "callHierarchy/outgoingCalls" outgoing_calls(params: CallHierarchyOutgoingCallsParams) -> Option<Vec<CallHierarchyOutgoingCall>>;
                /// `codeAction/resolve`: [`CodeActionResolveRequest`](crate::types::CodeActionResolveRequest).
                "codeAction/resolve" code_action_resolve(params: CodeAction) -> CodeAction;
                /// `codeLens/resolve`: [`CodeLensResolveRequest`](crate::types::CodeLensResolveRequest).
                "codeLens/resolve" code_lens_resolve(params: CodeLens) -> CodeLens;
                /// `completionItem/resolve`: [`CompletionResolveRequest`](crate::types::CompletionResolveRequest).
                "completionItem/resolve" completion_resolve(params: CompletionItem) -> CompletionItem;
                /// `documentLink/resolve`: [`DocumentLinkResolveRequest`](crate::types::DocumentLinkResolveRequest).
                "documentLink/resolve" document_link_resolve(params: DocumentLink) -> DocumentLink;
                /// `inlayHint/resolve`: [`InlayHintResolveRequest`](crate::types::InlayHintResolveRequest).
                "inlayHint/resolve" inlay_hint_resolve(params: InlayHint) -> InlayHint;
                /// `typeHierarchy/subtypes`: [`TypeHierarchySubtypesRequest`](crate::types::TypeHierarchySubtypesRequest).
                "typeHierarchy/subtypes" subtypes(params: TypeHierarchySubtypesParams) -> Option<Vec<TypeHierarchyItem>>;
                /// `typeHierarchy/supertypes`: [`TypeHierarchySupertypesRequest`](crate::types::TypeHierarchySupertypesRequest).
                "typeHierarchy/supertypes" supertypes(params: TypeHierarchySupertypesParams) -> Option<Vec<TypeHierarchyItem>>;
                /// `workspace/diagnostic`: [`WorkspaceDiagnosticRequest`](crate::types::WorkspaceDiagnosticRequest).
                "workspace/diagnostic" workspace_diagnostic(params: WorkspaceDiagnosticParams) -> WorkspaceDiagnosticReport;
                /// `workspace/executeCommand`: [`ExecuteCommandRequest`](crate::types::ExecuteCommandRequest).
                "workspace/executeCommand" execute_command(params: ExecuteCommandParams) -> Option<LspAny>;
                /// `workspace/symbol`: [`WorkspaceSymbolRequest`](crate::types::WorkspaceSymbolRequest).
                "workspace/symbol" symbol(params: WorkspaceSymbolParams) -> Option<WorkspaceSymbolResponse>;
                /// `workspace/textDocumentContent`: [`TextDocumentContentRequest`](crate::types::TextDocumentContentRequest).
                "workspace/textDocumentContent" text_document_content(params: TextDocumentContentParams) -> TextDocumentContentResult;
                /// `workspace/willCreateFiles`: [`WillCreateFilesRequest`](crate::types::WillCreateFilesRequest).
                "workspace/willCreateFiles" will_create_files(params: CreateFilesParams) -> Option<WorkspaceEdit>;
                /// `workspace/willDeleteFiles`: [`WillDeleteFilesRequest`](crate::types::WillDeleteFilesRequest).
                "workspace/willDeleteFiles" will_delete_files(params: DeleteFilesParams) -> Option<WorkspaceEdit>;
                /// `workspace/willRenameFiles`: [`WillRenameFilesRequest`](crate::types::WillRenameFilesRequest).
                "workspace/willRenameFiles" will_rename_files(params: RenameFilesParams) -> Option<WorkspaceEdit>;
                /// `workspaceSymbol/resolve`: [`WorkspaceSymbolResolveRequest`](crate::types::WorkspaceSymbolResolveRequest).
                "workspaceSymbol/resolve" symbol_resolve(params: WorkspaceSymbol) -> WorkspaceSymbol;
            }
            notifications {
                /// `exit`: [`ExitNotification`](crate::types::ExitNotification).
                "exit" exit();
                /// `initialized`: [`InitializedNotification`](crate::types::InitializedNotification).
                "initialized" initialized(params: InitializedParams);
                /// `textDocument/didSave`: [`DidSaveTextDocumentNotification`](crate::types::DidSaveTextDocumentNotification).
                "textDocument/didSave" did_save(params: DidSaveTextDocumentParams);
                /// `textDocument/willSave`: [`WillSaveTextDocumentNotification`](crate::types::WillSaveTextDocumentNotification).
                "textDocument/willSave" will_save(params: WillSaveTextDocumentParams);
                /// `notebookDocument/didChange`: [`DidChangeNotebookDocumentNotification`](crate::types::DidChangeNotebookDocumentNotification).
                "notebookDocument/didChange" notebook_did_change(params: DidChangeNotebookDocumentParams);
                /// `notebookDocument/didClose`: [`DidCloseNotebookDocumentNotification`](crate::types::DidCloseNotebookDocumentNotification).
                "notebookDocument/didClose" notebook_did_close(params: DidCloseNotebookDocumentParams);
                /// `notebookDocument/didOpen`: [`DidOpenNotebookDocumentNotification`](crate::types::DidOpenNotebookDocumentNotification).
                "notebookDocument/didOpen" notebook_did_open(params: DidOpenNotebookDocumentParams);
                /// `notebookDocument/didSave`: [`DidSaveNotebookDocumentNotification`](crate::types::DidSaveNotebookDocumentNotification).
                "notebookDocument/didSave" notebook_did_save(params: DidSaveNotebookDocumentParams);
                /// `window/workDoneProgress/cancel`: [`WorkDoneProgressCancelNotification`](crate::types::WorkDoneProgressCancelNotification).
                "window/workDoneProgress/cancel" work_done_progress_cancel(params: WorkDoneProgressCancelParams);
                /// `workspace/didChangeConfiguration`: [`DidChangeConfigurationNotification`](crate::types::DidChangeConfigurationNotification).
                "workspace/didChangeConfiguration" did_change_configuration(params: DidChangeConfigurationParams);
                /// `workspace/didChangeWatchedFiles`: [`DidChangeWatchedFilesNotification`](crate::types::DidChangeWatchedFilesNotification).
                "workspace/didChangeWatchedFiles" did_change_watched_files(params: DidChangeWatchedFilesParams);
                /// `workspace/didChangeWorkspaceFolders`: [`DidChangeWorkspaceFoldersNotification`](crate::types::DidChangeWorkspaceFoldersNotification).
                "workspace/didChangeWorkspaceFolders" did_change_workspace_folders(params: DidChangeWorkspaceFoldersParams);
                /// `workspace/didCreateFiles`: [`DidCreateFilesNotification`](crate::types::DidCreateFilesNotification).
                "workspace/didCreateFiles" did_create_files(params: CreateFilesParams);
                /// `workspace/didDeleteFiles`: [`DidDeleteFilesNotification`](crate::types::DidDeleteFilesNotification).
                "workspace/didDeleteFiles" did_delete_files(params: DeleteFilesParams);
                /// `workspace/didRenameFiles`: [`DidRenameFilesNotification`](crate::types::DidRenameFilesNotification).
                "workspace/didRenameFiles" did_rename_files(params: RenameFilesParams);
            }
            layered_requests {
                /// `initialize`: [`InitializeRequest`](crate::types::InitializeRequest).
                "initialize" initialize(params: InitializeParams) -> InitializeResult = Ok(InitializeResult::default());
            }
            layered_notifications {
                /// `textDocument/didChange`: [`DidChangeTextDocumentNotification`](crate::types::DidChangeTextDocumentNotification).
                "textDocument/didChange" did_change(params: DidChangeTextDocumentParams);
                /// `textDocument/didClose`: [`DidCloseTextDocumentNotification`](crate::types::DidCloseTextDocumentNotification).
                "textDocument/didClose" did_close(params: DidCloseTextDocumentParams);
                /// `textDocument/didOpen`: [`DidOpenTextDocumentNotification`](crate::types::DidOpenTextDocumentNotification).
                "textDocument/didOpen" did_open(params: DidOpenTextDocumentParams);
                /// `$/setTrace`: [`SetTraceNotification`](crate::types::SetTraceNotification).
                "$/setTrace" set_trace(params: SetTraceParams);
            }
        }
    };
}

/// The matcher every callback of [`lsp_methods`] starts with: the four
/// sections, `r` requests, `n` notifications, `lr` and `ln` the layered ones.
macro_rules! define_trait {
    (
        requests {
            $(
                $(#[$rdoc:meta])*
                $rwire:literal $rname:ident ($($rarg:ident: $rparams:ty)?) -> $rresult:ty $(= $rdefault:expr)?;
            )*
        }
        notifications {
            $(
                $(#[$ndoc:meta])*
                $nwire:literal $nname:ident ($($narg:ident: $nparams:ty)?);
            )*
        }
        layered_requests {
            $(
                $(#[$lrdoc:meta])*
                $lrwire:literal $lrname:ident ($($lrarg:ident: $lrparams:ty)?) -> $lrresult:ty $(= $lrdefault:expr)?;
            )*
        }
        layered_notifications {
            $(
                $(#[$lndoc:meta])*
                $lnwire:literal $lnname:ident ($($lnarg:ident: $lnparams:ty)?);
            )*
        }
    ) => {
        /// A language server: one method per LSP request and notification a
        /// client sends (LSP 3.18, as the [types crate](crate::types) has
        /// them), each with a default.
        ///
        /// An `#[rpc]` trait: implement the methods the server supports and
        /// serve it with [`LspServer`](crate::LspServer), which adds the
        /// handshake's bookkeeping (client capabilities, the position
        /// encoding, the document store) and the runtime's LSP rules. A
        /// request the server does not implement is answered -32601; a
        /// notification it does not implement is ignored. Every method gets
        /// the request's [`Context`] (its id, its cancellation, its progress
        /// token, the connection) and the params as the types crate decodes
        /// them; a handler that fails returns an
        /// [`ErrorObject`](jsonrpc_runtime::ErrorObject), which goes on the
        /// wire as it is.
        ///
        /// Notifications run one at a time in arrival order, and a request
        /// starts only after the notifications that arrived before it have
        /// run; requests run concurrently. So a request sees every change to
        /// the documents that arrived before it.
        ///
        /// `initialize` defaults to an empty result and `shutdown` to
        /// `Ok(())`. With [`#[rpc]`](crate::rpc) on the impl
        /// (`#[rpc] impl LanguageServer for Backend`), the layer knows which
        /// methods the server wrote and announces their providers in the
        /// `initialize` answer, where the server left them unset and their
        /// plainest options do (`hoverProvider: true`, a
        /// `completionProvider` with `resolveProvider` when
        /// `completion_resolve` is written, `renameProvider` with
        /// `prepareProvider`, the save notifications in
        /// `textDocumentSync`, ...); semantic tokens, on-type formatting,
        /// `executeCommand` and file operations need options only the server
        /// knows, and stay its to announce.
        ///
        /// `LanguageServerClient`, generated with the trait, calls a
        /// language server: one typed method per request and notification.
        ///
        /// # Examples
        ///
        /// ```
        /// use jsonrpc_lsp::types::{Contents, Hover, HoverParams, MarkupContent, MarkupKind};
        /// use jsonrpc_lsp::{Context, LanguageServer, Result};
        ///
        /// struct Backend;
        ///
        /// impl LanguageServer for Backend {
        ///     async fn hover(&self, _ctx: Context, params: HoverParams) -> Result<Option<Hover>> {
        ///         let line = params.text_document_position_params.position.line;
        ///         Ok(Some(Hover {
        ///             contents: Contents::MarkupContent(MarkupContent {
        ///                 kind: MarkupKind::Markdown,
        ///                 value: format!("line **{line}**"),
        ///             }),
        ///             range: None,
        ///         }))
        ///     }
        /// }
        /// ```
        #[jsonrpc_runtime::rpc]
        pub trait LanguageServer: Send + Sync + 'static {
            $(
                $(#[$lrdoc])*
                #[rpc(request = $lrwire)]
                async fn $lrname(&self, ctx: Context $(, #[rpc(params)] $lrarg: $lrparams)?) -> Result<$lrresult> {
                    let _ = (ctx, $($lrarg)?);
                    default_or_not_implemented!($lrwire $(, $lrdefault)?)
                }
            )*
            $(
                $(#[$rdoc])*
                #[rpc(request = $rwire)]
                async fn $rname(&self, ctx: Context $(, #[rpc(params)] $rarg: $rparams)?) -> Result<$rresult> {
                    let _ = (ctx, $($rarg)?);
                    default_or_not_implemented!($rwire $(, $rdefault)?)
                }
            )*
            $(
                $(#[$lndoc])*
                #[rpc(notification = $lnwire)]
                async fn $lnname(&self, ctx: Context $(, #[rpc(params)] $lnarg: $lnparams)?) {
                    let _ = (ctx, $($lnarg)?);
                }
            )*
            $(
                $(#[$ndoc])*
                #[rpc(notification = $nwire)]
                async fn $nname(&self, ctx: Context $(, #[rpc(params)] $narg: $nparams)?) {
                    let _ = (ctx, $($narg)?);
                }
            )*
        }
    };
}

/// A method's default body: its default answer, or -32601.
macro_rules! default_or_not_implemented {
    ($wire:literal) => {
        Err(crate::not_implemented($wire))
    };
    ($wire:literal, $default:expr) => {
        $default
    };
}

lsp_methods!(define_trait);
