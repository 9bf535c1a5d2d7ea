//! Code generation. Every function here returns tokens, never a `Result`:
//! all errors are found by `attr`, `ast` and `valid` first. When there are
//! errors, `fallback` emits the same items with stub bodies next to them.

use proc_macro2::{Group, Spacing, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::spanned::Spanned as _;

use crate::ast::{ErrorEnum, Method, Output, Service};
use crate::attr;
use crate::ctxt::Ctxt;
use crate::valid;

mod client;
mod describe;
mod error;
mod fallback;
mod server;

/// `#[rpc]` on an item.
pub(crate) fn service(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: syn::Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => return with_item(item, e),
    };
    let mut item = match item {
        syn::Item::Trait(item) => item,
        syn::Item::Impl(item) if item.trait_.is_some() => return implementation(args, item),
        item => {
            let error = syn::Error::new(
                item_keyword_span(&item),
                "`#[rpc]` goes on a trait (`#[rpc] trait Calculator { ... }`), or on an impl \
                 of one (`#[rpc] impl Calculator for Service { ... }`)",
            );
            return with_item(item.into_token_stream(), error);
        }
    };
    let cx = Ctxt::new();
    // #[rpc] #[rpc(client = "...")] trait T: one attribute takes every
    // argument.
    for again in item.attrs.iter().filter(|a| attr::is_rpc(a)) {
        cx.error_spanned_by(
            again,
            "`#[rpc]` is already applied to this trait; put every argument in one `#[rpc(...)]`",
        );
    }
    attr::strip(&mut item.attrs);
    let args = attr::service_args(&cx, args);
    let krate = args.krate.clone();
    let service = Service::from_syn(&cx, args, &item);
    valid::service(&cx, &service);
    let expanded = match cx.check() {
        Ok(()) => ServiceGen::new(&service, false).expand(),
        Err(errors) => fallback::service(&service, errors),
    };
    match krate {
        Some(path) => with_crate_path(expanded, &path.into_token_stream()),
        None => expanded,
    }
}

/// `#[rpc]` on `impl Trait for Type`: the impl as written, and the names of
/// the methods it writes, which the trait's `__jsonrpc_implemented` tells
/// (so a layer can tell an implemented method from a default one, as the
/// LSP layer does to derive a server's capabilities). A trait that is not
/// `#[rpc]` has no such function: rustc reports it at the trait's name.
fn implementation(args: TokenStream, mut item: syn::ItemImpl) -> TokenStream {
    if !args.is_empty() {
        let error = syn::Error::new_spanned(
            &args,
            "`#[rpc]` on an impl takes no arguments: write `#[rpc] impl Calculator for Service`",
        );
        return with_item(item.into_token_stream(), error);
    }
    let names: Vec<String> = item
        .items
        .iter()
        .filter_map(|i| match i {
            syn::ImplItem::Fn(f) => Some(crate::ast::unraw(&f.sig.ident)),
            _ => None,
        })
        .collect();
    let span = item
        .trait_
        .as_ref()
        .map_or_else(Span::call_site, |(_, path, _)| path.span());
    let method = quote::quote_spanned! {span=>
        #[doc(hidden)]
        fn __jsonrpc_implemented() -> ::core::option::Option<&'static [&'static str]> {
            ::core::option::Option::Some(&[#(#names),*])
        }
    };
    item.items.push(syn::ImplItem::Verbatim(method));
    item.into_token_stream()
}

/// The trait's hidden `__jsonrpc_implemented`: `None` (unknown) unless
/// `#[rpc]` on the impl says which methods it writes.
pub(crate) fn implemented_method() -> TokenStream {
    quote! {
        #[doc(hidden)]
        fn __jsonrpc_implemented() -> ::core::option::Option<&'static [&'static str]>
        where
            Self: ::core::marker::Sized,
        {
            ::core::option::Option::None
        }
    }
}

/// `tokens` with every `::jsonrpc_runtime` that begins a path replaced by
/// `path`: what `#[rpc(crate = "...")]` asks for, in one place, so every
/// generated name goes through the crate that re-exports the runtime.
fn with_crate_path(tokens: TokenStream, path: &TokenStream) -> TokenStream {
    let mut out: Vec<TokenTree> = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tree) = iter.next() {
        match tree {
            TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == Spacing::Joint => {
                let mut ahead = iter.clone();
                let second =
                    matches!(ahead.next(), Some(TokenTree::Punct(q)) if q.as_char() == ':');
                let runtime =
                    matches!(ahead.next(), Some(TokenTree::Ident(i)) if i == "jsonrpc_runtime");
                if second && runtime && begins_path(&out) {
                    iter.next();
                    iter.next();
                    out.extend(path.clone());
                } else {
                    out.push(TokenTree::Punct(p));
                }
            }
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), with_crate_path(g.stream(), path));
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Whether a `::` after `before` begins a path (`(::a`, `as ::a`, `'a ::a`)
/// rather than continues one (`other::a`).
fn begins_path(before: &[TokenTree]) -> bool {
    const KEYWORDS: [&str; 12] = [
        "as", "dyn", "impl", "for", "in", "mut", "return", "where", "let", "const", "static",
        "type",
    ];
    match before {
        [.., TokenTree::Punct(q), TokenTree::Ident(_)] if q.as_char() == '\'' => true,
        [.., TokenTree::Ident(i)] => KEYWORDS.iter().any(|k| i == k),
        _ => true,
    }
}

/// `#[derive(RpcError)]` on an item.
pub(crate) fn error_enum(item: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(item) {
        Ok(input) => input,
        Err(e) => return e.to_compile_error(),
    };
    let cx = Ctxt::new();
    let error = ErrorEnum::from_syn(&cx, &input);
    if let Some(error) = &error {
        valid::error_enum(&cx, error);
    }
    match (cx.check(), error) {
        (Ok(()), Some(error)) => error::expand(&error),
        (Err(errors), _) => fallback::error_enum(&input, errors),
        (Ok(()), None) => TokenStream::new(),
    }
}

/// The item as written (so the rest of the crate still type-checks) next to
/// the errors.
fn with_item(item: TokenStream, error: syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    quote!(#item #errors)
}

fn item_keyword_span(item: &syn::Item) -> Span {
    match item {
        syn::Item::Struct(s) => s.struct_token.span,
        syn::Item::Enum(e) => e.enum_token.span,
        syn::Item::Fn(f) => f.sig.fn_token.span,
        syn::Item::Impl(i) => i.impl_token.span,
        syn::Item::Mod(m) => m.mod_token.span,
        other => other.span(),
    }
}

/// The trait with every `#[rpc]` helper attribute (and every misplaced
/// `#[serde]` one, already reported) removed.
///
/// A pattern argument of a method without a body, already reported as an
/// `#[rpc]` mistake, becomes `_`, so rustc does not report it a second time.
fn stripped_trait(item: &syn::ItemTrait) -> syn::ItemTrait {
    let mut item = item.clone();
    for trait_item in &mut item.items {
        if let syn::TraitItem::Fn(f) = trait_item {
            attr::strip(&mut f.attrs);
            let bodyless = f.default.is_none();
            for input in &mut f.sig.inputs {
                if let syn::FnArg::Typed(t) = input {
                    attr::strip(&mut t.attrs);
                    t.attrs.retain(|a| !a.path().is_ident("serde"));
                    if bodyless && !matches!(*t.pat, syn::Pat::Ident(_) | syn::Pat::Wild(_)) {
                        *t.pat = syn::Pat::Wild(syn::PatWild {
                            attrs: Vec::new(),
                            underscore_token: syn::Token![_](t.pat.span()),
                        });
                    }
                }
            }
        }
    }
    item
}

/// Names and types computed once, used by every generated item.
pub(crate) struct ServiceGen<'a> {
    service: &'a Service<'a>,
    trait_ident: &'a syn::Ident,
    vis: &'a syn::Visibility,
    client_ident: syn::Ident,
    /// The trait's type parameters.
    type_params: Vec<&'a syn::Ident>,
    /// Where-predicates the user asked for with `bound = "..."`.
    bounds: Vec<TokenStream>,
    methods: Vec<MethodGen<'a>>,
    /// The distinct shapes of by-name params: one struct each.
    shapes: Vec<Shape>,
    /// Emit stub bodies (the fallback expansion).
    stub: bool,
}

/// The members of a by-name params struct: wire names and whether each may
/// be left out. Methods whose arguments have the same shape share a struct,
/// generic over the members' types.
#[derive(PartialEq, Eq)]
struct Shape {
    members: Vec<(String, bool)>,
}

/// Per-method names and types.
pub(crate) struct MethodGen<'a> {
    method: &'a Method<'a>,
    ident: &'a syn::Ident,
    wire: &'a str,
    /// The index of the method's params shape, when it has named
    /// arguments.
    shape: Option<usize>,
    ret: ReturnGen,
    /// Where-predicates on the method's own types (see [`requirements`]).
    requirements: Vec<TokenStream>,
}

/// The method's return type as the wire sees it.
struct ReturnGen {
    /// The type as written (`()` when none).
    ty: TokenStream,
    /// A constant expression the compiler evaluates to `true` when `ty` is
    /// a `Result`, however it is written.
    is_result: TokenStream,
    /// The result type the client decodes.
    ok: TokenStream,
    /// The domain error type the client decodes.
    err: TokenStream,
    /// For a type written `Result<T, E>`: a check that it is the `Result`
    /// it looks like, so the client's spelled-out types are right.
    check: Option<TokenStream>,
}

impl<'a> ServiceGen<'a> {
    pub(crate) fn new(service: &'a Service<'a>, stub: bool) -> Self {
        let item = service.item;
        let type_params: Vec<&syn::Ident> = item.generics.type_params().map(|p| &p.ident).collect();
        let bounds = match &service.args.bound {
            Some(bound) => bound.value.iter().map(ToTokens::to_token_stream).collect(),
            None => Vec::new(),
        };
        let mut shapes: Vec<Shape> = Vec::new();
        let methods = service
            .methods
            .iter()
            .map(|method| {
                let shape = (!method.whole_params && !method.args.is_empty()).then(|| {
                    let shape = Shape {
                        members: method
                            .args
                            .iter()
                            .map(|a| (a.wire.value.clone(), a.optional))
                            .collect(),
                    };
                    match shapes.iter().position(|s| *s == shape) {
                        Some(index) => index,
                        None => {
                            shapes.push(shape);
                            shapes.len() - 1
                        }
                    }
                });
                let ret = return_gen(&method.output, &type_params);
                MethodGen {
                    method,
                    ident: &method.item.sig.ident,
                    wire: &method.wire.value,
                    shape,
                    requirements: requirements(method, &ret),
                    ret,
                }
            })
            .collect();
        ServiceGen {
            service,
            trait_ident: &item.ident,
            vis: &item.vis,
            client_ident: service.client_ident(),
            type_params,
            bounds,
            methods,
            shapes,
            stub,
        }
    }

    fn expand(&self) -> TokenStream {
        let trait_item = self.trait_item();
        let client = self.client();
        quote! {
            #trait_item
            #client
        }
    }

    /// `<K, V>`, or nothing.
    fn generics(&self) -> TokenStream {
        let params = &self.type_params;
        if params.is_empty() {
            quote!()
        } else {
            quote!(<#(#params),*>)
        }
    }

    /// `PhantomData<fn() -> (K, V)>` for generated types that carry the
    /// trait's type parameters without storing them.
    fn marker_ty(&self) -> TokenStream {
        let params = &self.type_params;
        quote!(::core::marker::PhantomData<fn() -> (#(#params,)*)>)
    }

    /// The user's trait: helper attributes stripped, `async fn`s turned into
    /// methods returning `Send` futures, and `into_router` added.
    fn trait_item(&self) -> TokenStream {
        let mut item = stripped_trait(self.service.item);
        for trait_item in &mut item.items {
            if let syn::TraitItem::Fn(f) = trait_item {
                make_send_future(f);
            }
        }
        let into_router = self.router_method();
        item.items.push(syn::TraitItem::Verbatim(into_router));
        item.items
            .push(syn::TraitItem::Verbatim(self.describe_method()));
        item.items
            .push(syn::TraitItem::Verbatim(implemented_method()));
        item.into_token_stream()
    }

    /// The struct of one by-name params shape, generic over the members'
    /// types: deserializing on the server, serializing on the client.
    fn params_struct(&self, index: usize, name: &syn::Ident, serialize: bool) -> TokenStream {
        let shape = &self.shapes[index];
        let private = quote!(::jsonrpc_runtime::__private);
        let types: Vec<syn::Ident> = (0..shape.members.len())
            .map(|i| format_ident!("__T{}", i))
            .collect();
        let fields =
            shape
                .members
                .iter()
                .zip(&types)
                .enumerate()
                .map(|(i, ((wire, optional), ty))| {
                    let field = format_ident!("__f{}", i);
                    let default = (*optional && !serialize).then(
                        || quote!(#[serde(default = "::jsonrpc_runtime::__private::absent")]),
                    );
                    quote!(#[serde(rename = #wire)] #default #field: #ty)
                });
        let (derive, bound) = if serialize {
            (quote!(#private::serde::Serialize), None)
        } else {
            let bounds = shape.members.iter().zip(&types).map(|((_, optional), ty)| {
                let absent = optional.then(|| quote!(+ ::jsonrpc_runtime::__private::Absent));
                quote!(#ty: ::jsonrpc_runtime::__private::serde::Deserialize<'de> #absent)
            });
            let bound = quote!(#(#bounds),*).to_string();
            (
                quote!(#private::serde::Deserialize),
                Some(quote!(#[serde(bound(deserialize = #bound))])),
            )
        };
        quote! {
            #[derive(#derive)]
            #[serde(crate = "::jsonrpc_runtime::__private::serde")]
            #bound
            struct #name<#(#types),*> {
                #(#fields,)*
            }
        }
    }

    /// The params type of `m` as the route decodes it (server side).
    fn params_ty(&self, m: &MethodGen<'_>) -> TokenStream {
        if m.method.whole_params {
            let ty = m.method.args[0].ty;
            return quote!(#ty);
        }
        match m.shape {
            Some(index) => {
                let name = format_ident!("__Params{}", index);
                let types = m.method.args.iter().map(|a| a.ty);
                quote!(#name<#(#types),*>)
            }
            None => quote!(::jsonrpc_runtime::__private::NoParams),
        }
    }

    /// A client method's params: the local struct (if any) and an
    /// expression building the value from the arguments in scope.
    fn params_value(&self, m: &MethodGen<'_>) -> (TokenStream, TokenStream) {
        if m.method.whole_params {
            let ident = m.method.args[0].ident;
            return (quote!(), quote!(#ident));
        }
        let Some(index) = m.shape else {
            return (quote!(), quote!(()));
        };
        let name = format_ident!("__Params");
        let def = self.params_struct(index, &name, true);
        let fields = m.method.args.iter().enumerate().map(|(i, a)| {
            let field = format_ident!("__f{}", i);
            let ident = a.ident;
            quote!(#field: #ident)
        });
        (def, quote!(#name { #(#fields),* }))
    }
}

/// Rewrites `async fn f(..) -> T` into `fn f(..) -> impl Future<Output = T>
/// + Send` (so routes can be spawned), and adds `+ Send` to a written
/// `impl Future` that lacks it. A default body becomes an `async move`
/// block, and its method requires `Self: Sync` (the future holds `&self`).
fn make_send_future(f: &mut syn::TraitItemFn) {
    let span = f.sig.ident.span();
    if let Some(asyncness) = f.sig.asyncness.take() {
        let output = match &f.sig.output {
            syn::ReturnType::Default => quote!(()),
            syn::ReturnType::Type(_, ty) => ty.to_token_stream(),
        };
        let ty: syn::Type = syn::parse_quote_spanned! {span=>
            impl ::core::future::Future<Output = #output> + ::core::marker::Send
        };
        f.sig.output = syn::ReturnType::Type(syn::Token![->](asyncness.span), Box::new(ty));
        if let Some(body) = &mut f.default {
            let stmts = &body.stmts;
            *body = syn::parse_quote_spanned!(span=> { async move { #(#stmts)* } });
            f.sig
                .generics
                .make_where_clause()
                .predicates
                .push(syn::parse_quote_spanned!(span=> Self: ::core::marker::Sync));
        }
    } else if let syn::ReturnType::Type(_, ty) = &mut f.sig.output {
        if let syn::Type::ImplTrait(imp) = &mut **ty {
            let has_send = imp.bounds.iter().any(|b| match b {
                syn::TypeParamBound::Trait(t) => {
                    t.path.segments.last().is_some_and(|s| s.ident == "Send")
                }
                _ => false,
            });
            if !has_send {
                imp.bounds
                    .push(syn::parse_quote_spanned!(span=> ::core::marker::Send));
            }
        }
    }
}

/// How the method's return type travels, decided by trait resolution: the
/// `is_result` constant picks `Split<true>` (a `Result`, through any alias)
/// or `Split<false>` (a value that cannot fail).
fn return_gen(output: &Output<'_>, type_params: &[&syn::Ident]) -> ReturnGen {
    let private = quote!(::jsonrpc_runtime::__private);
    let Some(ty) = output.ty() else {
        return ReturnGen {
            ty: quote!(()),
            is_result: quote!(false),
            ok: quote!(()),
            err: quote!(::core::convert::Infallible),
            check: None,
        };
    };
    // A constant cannot depend on the trait's type parameters: they are
    // replaced by `()`. A bare parameter is a value; `MyResult<T>` is a
    // `Result` whatever `T` is.
    let erased = erase(ty.to_token_stream(), type_params);
    let is_result = respan(
        quote!({
            #[allow(unused_imports)]
            use #private::NotResult as _;
            #private::Probe::<#erased>::IS_RESULT
        }),
        ty.span(),
    );
    match output {
        Output::Result { ok, err, .. } => ReturnGen {
            ty: quote!(#ty),
            check: Some(respan(
                quote!(#private::assert_split::<#ty, #ok, #err, #is_result>();),
                ty.span(),
            )),
            is_result,
            ok: quote!(#ok),
            err: quote!(#err),
        },
        _ => ReturnGen {
            ty: quote!(#ty),
            ok: respan(quote!(<#ty as #private::Split<#is_result>>::Ok), ty.span()),
            err: respan(quote!(<#ty as #private::Split<#is_result>>::Err), ty.span()),
            is_result,
            check: None,
        },
    }
}

/// `tokens` with every identifier in `params` replaced by `()`.
fn erase(tokens: TokenStream, params: &[&syn::Ident]) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => {
                let mut erased = Group::new(group.delimiter(), erase(group.stream(), params));
                erased.set_span(group.span());
                TokenTree::Group(erased)
            }
            TokenTree::Ident(ident) if params.iter().any(|p| **p == ident) => TokenTree::Group(
                Group::new(proc_macro2::Delimiter::Parenthesis, TokenStream::new()),
            ),
            other => other,
        })
        .collect()
}

/// The where-predicates a method's types must meet: arguments and result
/// travel as JSON both ways, the error maps to and from an error object.
///
/// Each predicate goes on every generated item that relies on it (the
/// router and the client method), so the bodies type-check against it and
/// an unmet one is reported at the predicate only. Every token of a
/// predicate carries the user's type's span, so the copies are identical
/// and rustc reports them once, there.
fn requirements(m: &Method<'_>, ret: &ReturnGen) -> Vec<TokenStream> {
    let mut out: Vec<TokenStream> = m.args.iter().map(|a| data_requirement(a.ty)).collect();
    match &m.output {
        Output::Unit => {}
        Output::Result { ok, err, .. } => {
            out.push(data_requirement(ok));
            out.push(error_requirement(&quote!(#err), err.span()));
        }
        Output::Other(ty) => {
            let ok = &ret.ok;
            out.push(respan(
                quote! {
                    #ok: ::jsonrpc_runtime::__private::serde::Serialize
                        + ::jsonrpc_runtime::__private::serde::de::DeserializeOwned
                        + ::core::marker::Send + 'static
                },
                ty.span(),
            ));
            out.push(error_requirement(&ret.err, ty.span()));
            // The handler's future yields the value itself.
            out.push(respan(
                quote!(#ty: ::core::marker::Send + 'static),
                ty.span(),
            ));
        }
    }
    if let Some(parts) = &m.subscription {
        out.push(data_requirement(parts.item));
        if let Some(ty) = m.output.ty() {
            out.push(respan(
                quote!(#ty: ::jsonrpc_runtime::router::SubscriptionResult),
                ty.span(),
            ));
        }
    }
    out
}

/// `ty: Serialize + DeserializeOwned + Send + 'static`, at `ty`.
fn data_requirement(ty: &syn::Type) -> TokenStream {
    respan(
        quote! {
            #ty: ::jsonrpc_runtime::__private::serde::Serialize
                + ::jsonrpc_runtime::__private::serde::de::DeserializeOwned
                + ::core::marker::Send + 'static
        },
        ty.span(),
    )
}

/// `err: RpcError + Send + 'static`, at `span`.
fn error_requirement(err: &TokenStream, span: Span) -> TokenStream {
    respan(
        quote!(#err: ::jsonrpc_runtime::RpcError + ::core::marker::Send + 'static),
        span,
    )
}

/// `tokens`, every one of them at `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let TokenTree::Group(group) = &token {
                let mut respanned = Group::new(group.delimiter(), respan(group.stream(), span));
                respanned.set_span(span);
                token = TokenTree::Group(respanned);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crate_path_replaces_every_runtime_path_and_nothing_else() {
        let generated = quote! {
            impl ::jsonrpc_runtime::RpcError for E {}
            fn f<'a>(p: &'a ::jsonrpc_runtime::Peer) -> Vec<::jsonrpc_runtime::__private::Value> {
                other::jsonrpc_runtime::x(); <T as ::jsonrpc_runtime::RpcError>::f(); ::core::mem::drop(p)
            }
        };
        let path: syn::Path = syn::parse_str("crate::facade::rt").unwrap();
        let out = with_crate_path(generated, &path.into_token_stream()).to_string();
        assert_eq!(out.matches("jsonrpc_runtime").count(), 1, "{out}");
        assert_eq!(out.matches("crate :: facade :: rt ::").count(), 4, "{out}");
        // A path that only ends in the name is someone else's.
        assert!(out.contains("other :: jsonrpc_runtime :: x"), "{out}");
        assert!(out.contains(":: core :: mem :: drop"), "{out}");
    }
}
