//! The capabilities a server's methods imply, for the `initialize` answer:
//! a provider the server wrote the method of and did not announce itself is
//! announced with its plainest options.

#[allow(clippy::wildcard_imports)]
use crate::types::*;

/// Fills in the providers of `implemented` (the names of the
/// `LanguageServer` methods the server wrote) that `capabilities` leaves
/// unset. Providers whose options cannot be guessed (semantic tokens need a
/// legend, on-type formatting its trigger characters, `executeCommand` its
/// commands, file operations their filters) are left to the server.
pub(super) fn derive(capabilities: &mut ServerCapabilities, implemented: &[&str]) {
    let has = |name: &str| implemented.contains(&name);
    // `Some(true)` when the method is written, else `None`.
    let resolve = |name: &str| has(name).then_some(true);
    let c = capabilities;
    macro_rules! simple {
        ($($method:literal => $field:ident),* $(,)?) => {
            $(
                if has($method) && c.$field.is_none() {
                    c.$field = Some(true.into());
                }
            )*
        };
    }
    simple! {
        "hover" => hover_provider,
        "goto_declaration" => declaration_provider,
        "goto_definition" => definition_provider,
        "goto_type_definition" => type_definition_provider,
        "goto_implementation" => implementation_provider,
        "references" => references_provider,
        "document_highlight" => document_highlight_provider,
        "document_symbol" => document_symbol_provider,
        "document_color" => color_provider,
        "formatting" => document_formatting_provider,
        "folding_range" => folding_range_provider,
        "selection_range" => selection_range_provider,
        "prepare_call_hierarchy" => call_hierarchy_provider,
        "linked_editing_range" => linked_editing_range_provider,
        "moniker" => moniker_provider,
        "prepare_type_hierarchy" => type_hierarchy_provider,
        "inline_value" => inline_value_provider,
        "inline_completion" => inline_completion_provider,
    }
    if has("completion") && c.completion_provider.is_none() {
        c.completion_provider = Some(CompletionOptions {
            resolve_provider: resolve("completion_resolve"),
            ..CompletionOptions::default()
        });
    }
    if has("signature_help") && c.signature_help_provider.is_none() {
        c.signature_help_provider = Some(SignatureHelpOptions::default());
    }
    if has("code_action") && c.code_action_provider.is_none() {
        c.code_action_provider = Some(true_or(has("code_action_resolve"), || CodeActionOptions {
            resolve_provider: Some(true),
            ..CodeActionOptions::default()
        }));
    }
    if has("code_lens") && c.code_lens_provider.is_none() {
        c.code_lens_provider = Some(CodeLensOptions {
            resolve_provider: resolve("code_lens_resolve"),
            ..CodeLensOptions::default()
        });
    }
    if has("document_link") && c.document_link_provider.is_none() {
        c.document_link_provider = Some(DocumentLinkOptions {
            resolve_provider: resolve("document_link_resolve"),
            ..DocumentLinkOptions::default()
        });
    }
    if has("symbol") && c.workspace_symbol_provider.is_none() {
        c.workspace_symbol_provider =
            Some(true_or(has("symbol_resolve"), || WorkspaceSymbolOptions {
                resolve_provider: Some(true),
                ..WorkspaceSymbolOptions::default()
            }));
    }
    let ranges = has("ranges_formatting");
    if (has("range_formatting") || ranges) && c.document_range_formatting_provider.is_none() {
        c.document_range_formatting_provider =
            Some(true_or(ranges, || DocumentRangeFormattingOptions {
                ranges_support: Some(true),
                ..DocumentRangeFormattingOptions::default()
            }));
    }
    if has("rename") && c.rename_provider.is_none() {
        c.rename_provider = Some(true_or(has("prepare_rename"), || RenameOptions {
            prepare_provider: Some(true),
            ..RenameOptions::default()
        }));
    }
    if has("inlay_hint") && c.inlay_hint_provider.is_none() {
        c.inlay_hint_provider = Some(true_or(has("inlay_hint_resolve"), || InlayHintOptions {
            resolve_provider: Some(true),
            ..InlayHintOptions::default()
        }));
    }
    if has("diagnostic") && c.diagnostic_provider.is_none() {
        c.diagnostic_provider = Some(
            DiagnosticOptions {
                identifier: None,
                inter_file_dependencies: false,
                workspace_diagnostics: has("workspace_diagnostic"),
                work_done_progress_options: WorkDoneProgressOptions::default(),
            }
            .into(),
        );
    }
}

/// A provider of `true`, or `options` when the server wrote what they
/// announce (a resolve or prepare method).
fn true_or<P: From<bool> + From<O>, O>(options_needed: bool, options: impl FnOnce() -> O) -> P {
    if options_needed {
        options().into()
    } else {
        true.into()
    }
}

/// The `textDocumentSync` the layer answers when the server sets none:
/// incremental changes with open and close (the document store needs
/// them), and the save notifications the server wrote methods for.
pub(super) fn sync(implemented: Option<&[&str]>) -> TextDocumentSync {
    let has = |name: &str| implemented.is_some_and(|names| names.contains(&name));
    TextDocumentSyncOptions {
        open_close: Some(true),
        change: Some(TextDocumentSyncKind::Incremental),
        will_save: has("will_save").then_some(true),
        will_save_wait_until: has("will_save_wait_until").then_some(true),
        save: has("did_save").then(|| true.into()),
    }
    .into()
}
