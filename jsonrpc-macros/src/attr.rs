//! Reads `#[rpc(...)]` arguments: on the trait, on its methods, on method
//! arguments, and on error enum variants.
//!
//! Unknown keys, duplicate keys and values of the wrong kind are reported
//! here, each at its own token, and parsing goes on so that every mistake in
//! one attribute is reported at once. Only tokens that cannot be parsed at
//! all stop it.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;
use syn::spanned::Spanned as _;

use crate::case::RENAME_RULES;
use crate::ctxt::Ctxt;

/// The attribute's name, matched as a whole path (never by last segment).
pub(crate) const RPC: &str = "rpc";

const REQUEST: &str = "request";
const NOTIFICATION: &str = "notification";
const SUBSCRIPTION: &str = "subscription";
const UNSUBSCRIBE: &str = "unsubscribe";
const ITEMS: &str = "items";
const PROGRESS: &str = "progress";
const PARTIAL: &str = "partial";
const RENAME_ALL: &str = "rename_all";
const BOUND: &str = "bound";
const CLIENT: &str = "client";
const CRATE: &str = "crate";
const SERVER: &str = "server";
const RENAME: &str = "rename";
const PARAMS: &str = "params";
const CONTEXT: &str = "context";
const ERROR: &str = "error";
const CODE: &str = "code";
const MESSAGE: &str = "message";

/// A value with the span of the tokens it came from.
#[derive(Clone)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

/// `#[rpc(...)]` on the trait.
#[derive(Default)]
pub(crate) struct ServiceArgs {
    pub(crate) rename_all: Option<Spanned<String>>,
    pub(crate) bound: Option<Spanned<Vec<syn::WherePredicate>>>,
    pub(crate) client: Option<syn::Ident>,
    /// `crate = "..."`: the path the generated code names the runtime by.
    pub(crate) krate: Option<syn::Path>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    Request,
    Notification,
    Subscription,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Request => REQUEST,
            Kind::Notification => NOTIFICATION,
            Kind::Subscription => SUBSCRIPTION,
        }
    }
}

/// `#[rpc(...)]` on a method.
#[derive(Default)]
pub(crate) struct MethodArgs {
    /// The kind, with the span of its key.
    pub(crate) kind: Option<Spanned<Kind>>,
    /// The wire name, when given as `request = "name"`.
    pub(crate) name: Option<Spanned<String>>,
    /// Whether the method has an `#[rpc ...]` attribute at all, so a
    /// missing kind is reported once: here when the attribute is empty, by
    /// the caller when there is none.
    pub(crate) has_attr: bool,
    /// `progress = T`: the type of the method's progress reports.
    pub(crate) progress: Option<syn::Type>,
    /// `partial = T`: the type of the method's partial results.
    pub(crate) partial: Option<syn::Type>,
    /// `unsubscribe = "name"`: a subscription's unsubscribe method.
    pub(crate) unsubscribe: Option<Spanned<String>>,
    /// `items = "name"`: the method a subscription's items arrive under.
    pub(crate) items: Option<Spanned<String>>,
}

/// `#[rpc(...)]` on a method argument.
#[derive(Default)]
pub(crate) struct ArgArgs {
    pub(crate) rename: Option<Spanned<String>>,
    pub(crate) whole_params: Option<Span>,
    /// `#[rpc(context)]`: the argument is the injected context, whatever
    /// its type is called here.
    pub(crate) context: Option<Span>,
}

/// `#[rpc(error(...))]` on an enum variant.
#[derive(Default)]
pub(crate) struct ErrorArgs {
    /// Set when an `error(...)` was found.
    pub(crate) span: Option<Span>,
    pub(crate) code: Option<Code>,
    /// Set when `code = ...` was written, even with a value already
    /// reported as wrong, so it is not reported missing as well.
    pub(crate) code_written: bool,
    pub(crate) message: Option<Spanned<String>>,
}

/// An error code and the expression it was written as: `-32010` is two
/// tokens, and errors about the code underline both.
pub(crate) struct Code {
    pub(crate) value: i64,
    pub(crate) expr: syn::Expr,
}

/// Returns true for an `#[rpc ...]` attribute.
pub(crate) fn is_rpc(attr: &syn::Attribute) -> bool {
    attr.path().is_ident(RPC)
}

/// Reports a key given twice, at its second occurrence.
fn once<T>(cx: &Ctxt, slot: &Option<T>, meta: &ParseNestedMeta<'_>, key: &str) -> bool {
    if slot.is_some() {
        cx.error_spanned_by(&meta.path, format!("duplicate `rpc` argument `{key}`"));
        return false;
    }
    true
}

/// Reports an unknown key and skips its value, so parsing can go on.
fn unknown(cx: &Ctxt, meta: &ParseNestedMeta<'_>, expected: &str) -> syn::Result<()> {
    let name = meta
        .path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_else(|| {
            quote::ToTokens::to_token_stream(&meta.path)
                .to_string()
                .replace(' ', "")
        });
    let suggestion = habit(&name, expected)
        .or_else(|| {
            crate::case::closest(&name, expected).map(|close| format!("; did you mean `{close}`?"))
        })
        .unwrap_or_default();
    cx.error_spanned_by(
        &meta.path,
        format!("unknown `rpc` argument `{name}`, expected {expected}{suggestion}"),
    );
    if meta.input.peek(syn::Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _skipped;
        syn::parenthesized!(_skipped in meta.input);
    }
    Ok(())
}

/// Keys other frameworks use for what a key here does, with the key to
/// write instead, when it is one of `expected`.
const HABITS: [(&str, &str, &str); 8] = [
    ("name", "request", "request = \"...\""),
    ("method", "request", "request = \"...\""),
    ("notify", "notification", "notification = \"...\""),
    ("item", "items", "items = \"...\""),
    ("name", "rename", "rename = \"...\""),
    ("alias", "rename", "rename = \"...\""),
    ("rename", "request", "request = \"...\""),
    ("namespace", "rename_all", "rename_all = \"...\""),
];

/// A suggestion for a key another framework uses.
fn habit(name: &str, expected: &str) -> Option<String> {
    HABITS
        .iter()
        .find(|(habit, key, _)| *habit == name && expected.contains(&format!("`{key}`")))
        .map(|(_, _, write)| format!("; did you mean `{write}`?"))
}

/// Reports a wire name that is empty or has whitespace around it.
pub(crate) fn check_wire_name(cx: &Ctxt, name: &Spanned<String>, key: &str, example: &str) {
    if name.value.is_empty() {
        cx.error_at(
            name.span,
            format!(
                "empty name in `{key}`; write the name peers use, like `{key} = \"{example}\"`"
            ),
        );
    } else if name.value.trim() != name.value {
        cx.error_at(
            name.span,
            format!(
                "`{key}` name {:?} has whitespace around it; peers would have to send it exactly so: write {:?}",
                name.value,
                name.value.trim()
            ),
        );
    }
}

/// Reads `= "text"`, reporting any other literal or expression.
fn string_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
    example: &str,
) -> syn::Result<Option<Spanned<String>>> {
    let expr: syn::Expr = meta.value()?.parse()?;
    // A string passed through a `macro_rules!` fragment (`$name:literal`)
    // arrives in an invisible group.
    let mut inner = &expr;
    while let syn::Expr::Group(group) = inner {
        inner = &group.expr;
    }
    match inner {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(Some(Spanned {
            value: s.value(),
            span: s.span(),
        })),
        _ => {
            cx.error_spanned_by(&expr, format!("expected a string, like `{example}`"));
            Ok(None)
        }
    }
}

/// Parses the arguments of `#[rpc(...)]` on the trait (the attribute
/// macro's own arguments).
pub(crate) fn service_args(cx: &Ctxt, args: TokenStream) -> ServiceArgs {
    let mut out = ServiceArgs::default();
    // Set once jsonrpsee's `server` or bare `client` flag was reported: the
    // pair is one mistake, reported once.
    let mut jsonrpsee_flag = false;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident(RENAME_ALL) {
            // rename_all = "camelCase"
            if once(cx, &out.rename_all, &meta, RENAME_ALL) {
                if let Some(rule) = string_value(cx, &meta, "rename_all = \"camelCase\"")? {
                    if RENAME_RULES.contains(&rule.value.as_str()) {
                        out.rename_all = Some(rule);
                    } else {
                        let list = RENAME_RULES.map(|r| format!("`{r}`")).join(", ");
                        cx.error_at(
                            rule.span,
                            format!(
                                "unknown `rename_all` rule `{}`, expected one of {list}",
                                rule.value
                            ),
                        );
                    }
                }
            } else {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        } else if meta.path.is_ident(BOUND) {
            // bound = "T: Serialize + DeserializeOwned + Send + Sync + 'static"
            if once(cx, &out.bound, &meta, BOUND) {
                out.bound = bound_value(cx, &meta)?;
            } else {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        } else if meta.path.is_ident(CLIENT) && !meta.input.peek(syn::Token![=]) {
            // client (jsonrpsee's `#[rpc(server, client)]`)
            if !jsonrpsee_flag {
                jsonrpsee_flag = true;
                cx.error_spanned_by(
                    &meta.path,
                    "`#[rpc]` always generates the client (`<Trait>Client`); \
                     remove `client`, or name the client with `client = \"Name\"`",
                );
            }
            Ok(())
        } else if meta.path.is_ident(CLIENT) {
            // client = "CalculatorStub"
            if once(cx, &out.client, &meta, CLIENT) {
                if let Some(name) = string_value(cx, &meta, "client = \"CalculatorStub\"")? {
                    match syn::parse_str::<syn::Ident>(&name.value) {
                        Ok(ident) => {
                            out.client = Some(syn::Ident::new(&ident.to_string(), name.span))
                        }
                        Err(_) => cx.error_at(
                            name.span,
                            format!("`{}` is not a valid type name", name.value),
                        ),
                    }
                }
            } else {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        } else if meta.path.is_ident(SERVER) {
            // server (jsonrpsee's `#[rpc(server, client)]`)
            let first = !jsonrpsee_flag;
            jsonrpsee_flag = true;
            if first {
                cx.error_spanned_by(
                    &meta.path,
                    "`#[rpc]` takes no `server` or `client` flag: it always generates both, \
                 the server (`into_router`) and the client (`<Trait>Client`); write `#[rpc]`",
                );
            }
            Ok(())
        } else if meta.path.is_ident(CRATE) {
            // crate = "my_facade::jsonrpc"
            if once(cx, &out.krate, &meta, CRATE) {
                out.krate = crate_value(cx, &meta)?;
            } else {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        } else {
            unknown(cx, &meta, "one of `rename_all`, `bound`, `client`, `crate`")
        }
    });
    if let Err(e) = parser.parse2(args) {
        cx.syn_error(e);
    }
    out
}

/// The predicates of `bound = "..."`; an invalid one is reported.
fn bound_value(
    cx: &Ctxt,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<Option<Spanned<Vec<syn::WherePredicate>>>> {
    let Some(text) = string_value(cx, meta, "bound = \"T: Serialize + DeserializeOwned\"")? else {
        return Ok(None);
    };
    let parser =
        syn::punctuated::Punctuated::<syn::WherePredicate, syn::Token![,]>::parse_terminated;
    match parser.parse_str(&text.value) {
        Ok(predicates) => Ok(Some(Spanned {
            value: predicates.into_iter().collect(),
            span: text.span,
        })),
        Err(e) => {
            cx.error_at(text.span, format!("invalid `bound`: {e}"));
            Ok(None)
        }
    }
}

/// The path of `crate = "..."`; one that is not a path is reported.
fn crate_value(cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<Option<syn::Path>> {
    let Some(text) = string_value(cx, meta, "crate = \"my_facade::jsonrpc\"")? else {
        return Ok(None);
    };
    match syn::parse_str::<syn::Path>(&text.value) {
        Ok(path) => Ok(Some(path)),
        Err(_) => {
            cx.error_at(
                text.span,
                format!(
                    "`{}` is not a path; write the path the runtime is re-exported at, \
                     like `crate = \"my_facade::jsonrpc\"`",
                    text.value
                ),
            );
            Ok(None)
        }
    }
}

/// Parses every `#[rpc(...)]` on a trait method.
pub(crate) fn method_args(cx: &Ctxt, attrs: &[syn::Attribute]) -> MethodArgs {
    let mut out = MethodArgs::default();
    // Set when a mistake in the attribute was reported, which already
    // explains a missing kind.
    let mut reported = false;
    for attr in attrs.iter().filter(|a| is_rpc(a)) {
        out.has_attr = true;
        let result = attr.parse_nested_meta(|meta| {
            for (key, slot) in [(PROGRESS, &mut out.progress), (PARTIAL, &mut out.partial)] {
                if meta.path.is_ident(key) {
                    // progress = WorkDoneProgress | partial = SymbolInformation
                    let value = meta.value()?;
                    let ty: syn::Type = value.parse()?;
                    if once(cx, &*slot, &meta, key) {
                        *slot = Some(ty);
                    }
                    return Ok(());
                }
            }
            for (key, slot) in [(UNSUBSCRIBE, &mut out.unsubscribe), (ITEMS, &mut out.items)] {
                if meta.path.is_ident(key) {
                    // unsubscribe = "unsubscribe_ticks" | items = "ticks"
                    let example = format!("{key} = \"ticks\"");
                    let name = string_value(cx, &meta, &example)?;
                    if once(cx, &*slot, &meta, key) {
                        if let Some(name) = &name {
                            check_wire_name(cx, name, key, "ticks");
                        }
                        *slot = name;
                    }
                    return Ok(());
                }
            }
            let kind = if meta.path.is_ident(REQUEST) {
                Kind::Request
            } else if meta.path.is_ident(NOTIFICATION) {
                Kind::Notification
            } else if meta.path.is_ident(SUBSCRIPTION) {
                Kind::Subscription
            } else {
                reported = true;
                return unknown(
                    cx,
                    &meta,
                    "one of `request`, `notification`, `subscription`, `unsubscribe`, `items`, `progress`, `partial`",
                );
            };
            // request = "name" | request | notification = "name" | notification
            let key = kind.key();
            let name = if meta.input.peek(syn::Token![=]) {
                string_value(cx, &meta, &format!("{key} = \"name\""))?
            } else {
                None
            };
            match &out.kind {
                Some(first) if first.value == kind => {
                    cx.error_spanned_by(&meta.path, format!("duplicate `rpc` argument `{key}`"));
                }
                Some(_) => {
                    cx.error_spanned_by(
                        &meta.path,
                        "a method is one of `request`, `notification` or `subscription`, not two",
                    );
                }
                None => {
                    if let Some(name) = &name {
                        if name.value.is_empty() {
                            let message = format!(
                                "empty method name; write the name peers use, like `{key} = \"add\"`, \
                                 or just `{key}` to use the Rust method's name"
                            );
                            cx.error_at(name.span, message);
                        } else {
                            check_wire_name(cx, name, key, "add");
                        }
                    }
                    out.kind = Some(Spanned {
                        value: kind,
                        span: meta.path.span(),
                    });
                    out.name = name;
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            reported = true;
            cx.syn_error(e);
        }
    }
    let subscription = out.kind.as_ref().filter(|k| k.value == Kind::Subscription);
    match subscription {
        Some(kind) if out.unsubscribe.is_none() => cx.error_at(
            kind.span,
            "a subscription needs its unsubscribe method: add `unsubscribe = \"...\"`, \
             like `#[rpc(subscription = \"subscribe_ticks\", unsubscribe = \"unsubscribe_ticks\")]`",
        ),
        None if out.kind.is_some() => {
            for (key, name) in [(UNSUBSCRIBE, &out.unsubscribe), (ITEMS, &out.items)] {
                if let Some(name) = name {
                    cx.error_at(
                        name.span,
                        format!("`{key}` belongs to a `subscription`, and this method is not one"),
                    );
                }
            }
        }
        _ => {}
    }
    // #[rpc()]
    if out.kind.is_none() && !reported {
        if let Some(attr) = attrs.iter().find(|a| is_rpc(a)) {
            cx.error_spanned_by(
                attr,
                "expected `request`, `notification` or `subscription` in `#[rpc(...)]`, like `#[rpc(request = \"add\")]`",
            );
        }
    }
    out
}

/// Parses every `#[rpc(...)]` on a method argument.
pub(crate) fn arg_args(cx: &Ctxt, attrs: &[syn::Attribute]) -> ArgArgs {
    let mut out = ArgArgs::default();
    for attr in attrs.iter().filter(|a| is_rpc(a)) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(RENAME) {
                // rename = "textDocument"
                if once(cx, &out.rename, &meta, RENAME) {
                    out.rename = string_value(cx, &meta, "rename = \"name\"")?;
                    if let Some(name) = &out.rename {
                        check_wire_name(cx, name, RENAME, "textDocument");
                    }
                } else {
                    meta.value()?.parse::<syn::Expr>()?;
                }
                Ok(())
            } else if meta.path.is_ident(PARAMS) {
                // params
                if once(cx, &out.whole_params, &meta, PARAMS) {
                    out.whole_params = Some(meta.path.span());
                }
                Ok(())
            } else if meta.path.is_ident(CONTEXT) {
                // context
                if once(cx, &out.context, &meta, CONTEXT) {
                    out.context = Some(meta.path.span());
                }
                Ok(())
            } else {
                unknown(cx, &meta, "one of `rename`, `params`, `context`")
            }
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}

/// Parses every `#[rpc(...)]` on an error enum variant.
pub(crate) fn error_args(cx: &Ctxt, attrs: &[syn::Attribute]) -> ErrorArgs {
    let mut out = ErrorArgs::default();
    for attr in attrs.iter().filter(|a| is_rpc(a)) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(CODE) || meta.path.is_ident(MESSAGE) {
                // code = -32010 | message = "..." (outside `error(...)`)
                let key = if meta.path.is_ident(CODE) { CODE } else { MESSAGE };
                let value = meta.value()?.parse::<syn::Expr>()?;
                let value = quote::ToTokens::to_token_stream(&value)
                    .to_string()
                    .replace("- ", "-");
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "`{key}` goes inside `error(...)`: write `#[rpc(error({key} = {value}))]`"
                    ),
                );
                // The misplaced key explains a missing code.
                out.code_written = true;
                return Ok(());
            }
            if !meta.path.is_ident(ERROR) {
                return unknown(cx, &meta, "`error(code = ..., message = \"...\")`");
            }
            // error(code = -32010, message = "Negative input")
            if out.span.is_some() {
                cx.error_spanned_by(&meta.path, "duplicate `rpc` argument `error`");
            }
            out.span.get_or_insert(meta.path.span());
            meta.parse_nested_meta(|inner| {
                if inner.path.is_ident(CODE) {
                    // code = -32010
                    let expr: syn::Expr = inner.value()?.parse()?;
                    if out.code_written {
                        cx.error_spanned_by(
                            &inner.path,
                            format!("duplicate `rpc` argument `{CODE}`"),
                        );
                    } else {
                        out.code_written = true;
                        match integer(&expr) {
                            Some(value) if i32::try_from(value).is_err() => cx.error_spanned_by(
                                &expr,
                                format!(
                                    "error code {value} does not fit in 32 bits; JSON-RPC peers read codes as `i32`, \
                                     so use a code in {}..={}",
                                    i32::MIN,
                                    i32::MAX
                                ),
                            ),
                            Some(value) => out.code = Some(Code { value, expr }),
                            None => cx.error_spanned_by(
                                &expr,
                                "expected an integer error code, like `code = -32010`",
                            ),
                        }
                    }
                    Ok(())
                } else if inner.path.is_ident(MESSAGE) {
                    // message = "Negative input"
                    if once(cx, &out.message, &inner, MESSAGE) {
                        out.message = string_value(cx, &inner, "message = \"Negative input\"")?;
                    } else {
                        inner.value()?.parse::<syn::Expr>()?;
                    }
                    Ok(())
                } else {
                    // A misspelled key explains a missing code.
                    out.code_written = true;
                    unknown(cx, &inner, "one of `code`, `message`")
                }
            })
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
    out
}

/// Evaluates an integer literal, possibly negated.
fn integer(expr: &syn::Expr) -> Option<i64> {
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse().ok(),
        syn::Expr::Unary(syn::ExprUnary {
            op: syn::UnOp::Neg(_),
            expr,
            ..
        }) => match &**expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            }) => i
                .base10_parse::<i64>()
                .ok()
                .and_then(i64::checked_neg)
                .or_else(|| Some(i64::MIN).filter(|_| is_big(i))),
            _ => None,
        },
        syn::Expr::Group(g) => integer(&g.expr),
        _ => None,
    }
}

/// An integer literal too large for `i64`: reported as out of range rather
/// than as not an integer.
fn is_big(lit: &syn::LitInt) -> bool {
    lit.base10_parse::<u128>().is_ok()
}

/// Removes every `#[rpc ...]` attribute, so the item can be emitted as the
/// user wrote it.
pub(crate) fn strip(attrs: &mut Vec<syn::Attribute>) {
    attrs.retain(|a| !is_rpc(a));
}
