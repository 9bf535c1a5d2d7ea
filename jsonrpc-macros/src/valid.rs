//! Rules across items: duplicate wire names, notifications that return
//! values, duplicate and reserved error codes.

use std::collections::HashMap;

use crate::ast::{ErrorEnum, Output, Service};
use crate::attr::Kind;
use crate::ctxt::Ctxt;

pub(crate) fn service(cx: &Ctxt, service: &Service<'_>) {
    let mut seen: HashMap<&str, proc_macro2::Span> = HashMap::new();
    for method in &service.methods {
        let name = method.wire.value.as_str();
        if let Some(first) = seen.get(name) {
            cx.error_at(
                method.wire.span,
                format!(
                    "duplicate method name `{name}`: another method of this trait already uses it"
                ),
            );
            cx.error_at(*first, format!("`{name}` is first used here"));
        } else {
            seen.insert(name, method.wire.span);
        }
        if method.kind == Kind::Notification {
            for ty in method.progress.iter().chain(&method.partial) {
                cx.error_spanned_by(
                    ty,
                    "a notification has no progress or partial results, only a request does; \
                     remove it or make the method a `request`",
                );
            }
        }
        if method.kind == Kind::Notification && !matches!(method.output, Output::Unit) {
            let message = "a notification cannot return a value: nothing is sent back; remove the return type or make it a `request`";
            match (&method.item.sig.output, method.output.ty()) {
                (syn::ReturnType::Type(_, ty), _) if method.item.sig.asyncness.is_some() => {
                    cx.error_spanned_by(ty, message)
                }
                (_, Some(ty)) => cx.error_spanned_by(ty, message),
                _ => cx.error_spanned_by(&method.item.sig.output, message),
            }
        }
    }
}

/// Codes JSON-RPC 2.0 predefines, with their names for messages.
const PREDEFINED: [(i64, &str); 5] = [
    (-32700, "Parse error"),
    (-32600, "Invalid Request"),
    (-32601, "Method not found"),
    (-32602, "Invalid params"),
    (-32603, "Internal error"),
];

/// Why an application may not use `code`, if it may not.
pub(crate) fn reserved_code(code: i64) -> Option<String> {
    if let Some((_, name)) = PREDEFINED.iter().find(|(c, _)| *c == code) {
        return Some(format!(
            "error code {code} is reserved by JSON-RPC 2.0 ({name}); use -32000..=-32099 or a code outside -32768..=-32000"
        ));
    }
    if (-32768..=-32100).contains(&code) {
        return Some(format!(
            "error code {code} is in the block JSON-RPC 2.0 reserves (-32768..=-32100); use -32000..=-32099 or a code outside -32768..=-32000"
        ));
    }
    None
}

pub(crate) fn error_enum(cx: &Ctxt, error: &ErrorEnum<'_>) {
    let mut seen: HashMap<i64, (&syn::Expr, &syn::Ident)> = HashMap::new();
    for variant in &error.variants {
        let code = variant.code.value;
        if let Some(why) = reserved_code(code) {
            cx.error_spanned_by(&variant.code.expr, why);
        }
        if let Some((expr, first)) = seen.get(&code) {
            cx.error_spanned_by(
                &variant.code.expr,
                format!("duplicate error code {code}: variant `{first}` already uses it; give each variant its own code"),
            );
            cx.error_spanned_by(expr, format!("error code {code} is first used here"));
        } else {
            seen.insert(code, (&variant.code.expr, variant.ident));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserved_codes_are_the_predefined_ones_and_the_reserved_block() {
        for code in [
            -32700, -32600, -32601, -32602, -32603, -32768, -32100, -32500,
        ] {
            assert!(reserved_code(code).is_some(), "{code}");
        }
        for code in [-32099, -32000, -32800, -31999, 0, 404] {
            assert!(reserved_code(code).is_none(), "{code}");
        }
    }
}
