//! Code generation. Every function here returns tokens, never a `Result`:
//! all errors are found by `attr`, `ast` and `valid` first.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, ToTokens};
use syn::spanned::Spanned as _;

use crate::ast::{ErrorEnum, Method, Output, Service};
use crate::attr;
use crate::ctxt::Ctxt;
use crate::valid;

mod client;
mod error;
mod server;

/// `#[rpc]` on an item.
pub(crate) fn service(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: syn::Item = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => return with_item(item, e),
    };
    let syn::Item::Trait(item) = item else {
        let error = syn::Error::new(
            item_keyword_span(&item),
            "`#[rpc]` goes on a trait: `#[rpc] trait Calculator { ... }`",
        );
        return with_item(item.into_token_stream(), error);
    };
    let cx = Ctxt::new();
    let args = attr::service_args(&cx, args);
    let service = Service::from_syn(&cx, args, &item);
    valid::service(&cx, &service);
    match cx.check() {
        Ok(()) => ServiceGen::new(&service).expand(),
        Err(errors) => with_item(stripped_trait(&item).into_token_stream(), errors),
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
        (Err(errors), _) => errors.to_compile_error(),
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

/// The trait with every `#[rpc]` helper attribute removed.
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
    /// Where-predicates every generated impl needs for the type parameters.
    bounds: Vec<TokenStream>,
    methods: Vec<MethodGen<'a>>,
}

/// Per-method names and types.
pub(crate) struct MethodGen<'a> {
    method: &'a Method<'a>,
    ident: &'a syn::Ident,
    wire: &'a str,
    /// The params type the route decodes and the client sends.
    params_ty: TokenStream,
    /// The generated params struct, when the method has named arguments.
    params_struct: Option<syn::Ident>,
    /// Where-predicates on the method's own types (see [`requirements`]).
    requirements: Vec<TokenStream>,
}

impl<'a> ServiceGen<'a> {
    fn new(service: &'a Service<'a>) -> Self {
        let item = service.item;
        let type_params: Vec<&syn::Ident> = item.generics.type_params().map(|p| &p.ident).collect();
        let bounds = match &service.args.bound {
            Some(bound) => bound.value.iter().map(ToTokens::to_token_stream).collect(),
            None => type_params
                .iter()
                .map(|t| {
                    quote! {
                        #t: ::jsonrpc_runtime::__private::serde::Serialize
                            + ::jsonrpc_runtime::__private::serde::de::DeserializeOwned
                            + ::core::marker::Send + ::core::marker::Sync + 'static
                    }
                })
                .collect(),
        };
        let generics = if type_params.is_empty() {
            quote!()
        } else {
            quote!(<#(#type_params),*>)
        };
        let methods = service
            .methods
            .iter()
            .map(|method| {
                let (params_ty, params_struct) = if method.whole_params {
                    let ty = method.args[0].ty;
                    (quote!(#ty), None)
                } else if method.args.is_empty() {
                    (quote!(()), None)
                } else {
                    let name = format_ident!("__{}_{}_Params", item.ident, method.item.sig.ident);
                    (quote!(#name #generics), Some(name))
                };
                MethodGen {
                    method,
                    ident: &method.item.sig.ident,
                    wire: &method.wire.value,
                    params_ty,
                    params_struct,
                    requirements: requirements(method),
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
        }
    }

    fn expand(&self) -> TokenStream {
        let trait_item = self.trait_item();
        let params = self.methods.iter().map(|m| self.params_struct(m));
        let client = self.client();
        quote! {
            #trait_item
            #(#params)*
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
        item.into_token_stream()
    }

    /// The hidden struct holding one method's named arguments.
    fn params_struct(&self, m: &MethodGen<'_>) -> TokenStream {
        let Some(name) = &m.params_struct else {
            return quote!();
        };
        let generics = self.generics();
        let rename_all = self.service.args.rename_all.as_ref().map(|r| {
            let rule = &r.value;
            quote!(#[serde(rename_all = #rule)])
        });
        let fields = m.method.args.iter().map(|arg| {
            let ident = arg.ident;
            let ty = arg.ty;
            // The same predicate as on the router and client, at the same
            // span, so a missing impl is reported once.
            let bound = syn::LitStr::new(&data_requirement(ty).to_string(), ty.span());
            let rename = arg.rename.as_ref().map(|r| quote!(#[serde(rename = #r)]));
            let default = arg.optional.then(|| quote!(#[serde(default)]));
            quote!(#[serde(bound = #bound)] #rename #default #ident: #ty)
        });
        let marker = (!self.type_params.is_empty()).then(|| {
            let marker = self.marker_ty();
            quote!(#[serde(skip)] __marker: #marker,)
        });
        quote! {
            #[derive(::jsonrpc_runtime::__private::serde::Serialize, ::jsonrpc_runtime::__private::serde::Deserialize)]
            #[serde(crate = "::jsonrpc_runtime::__private::serde")]
            #rename_all
            #[allow(non_camel_case_types)]
            #[doc(hidden)]
            struct #name #generics {
                #(#fields,)*
                #marker
            }
        }
    }

    /// An expression building `m`'s params from the arguments in scope.
    fn params_value(&self, m: &MethodGen<'_>) -> TokenStream {
        if m.method.whole_params {
            let ident = m.method.args[0].ident;
            return quote!(#ident);
        }
        let Some(name) = &m.params_struct else {
            return quote!(());
        };
        let idents = m.method.args.iter().map(|a| a.ident);
        let marker =
            (!self.type_params.is_empty()).then(|| quote!(__marker: ::core::marker::PhantomData,));
        let turbofish = (!self.type_params.is_empty()).then(|| {
            let params = &self.type_params;
            quote!(::<#(#params),*>)
        });
        quote!(#name #turbofish { #(#idents,)* #marker })
    }
}

/// Rewrites `async fn f(..) -> T` into `fn f(..) -> impl Future<Output = T>
/// + Send` (so routes can be spawned), and adds `+ Send` to a written
/// `impl Future` that lacks it.
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

/// `Result<T, CallError<E>>` for the client, from the method's output.
/// The result and domain error types of a call, from the method's output.
fn call_types(output: &Output<'_>) -> (TokenStream, TokenStream) {
    match output {
        Output::Unit => (quote!(()), quote!(::core::convert::Infallible)),
        Output::Value(ty) => (quote!(#ty), quote!(::core::convert::Infallible)),
        Output::Result { ok, err } => (quote!(#ok), quote!(#err)),
    }
}

fn client_output(output: &Output<'_>) -> TokenStream {
    match output {
        Output::Unit => quote!(::core::result::Result<(), ::jsonrpc_runtime::CallError>),
        Output::Value(ty) => quote!(::core::result::Result<#ty, ::jsonrpc_runtime::CallError>),
        Output::Result { ok, err } => {
            quote!(::core::result::Result<#ok, ::jsonrpc_runtime::CallError<#err>>)
        }
    }
}

/// The where-predicates a method's types must meet: arguments and result
/// travel as JSON both ways, the error maps to and from an error object.
///
/// Each predicate goes on every generated item that relies on it (the
/// router, the client method, the params struct's serde impls), so the
/// bodies type-check against it and an unmet one is reported at the
/// predicate only. Every token of a predicate carries the user's type's
/// span, so the copies are identical and rustc reports them once, there.
fn requirements(m: &Method<'_>) -> Vec<TokenStream> {
    let result = match &m.output {
        Output::Unit => None,
        Output::Value(ty) | Output::Result { ok: ty, .. } => Some(*ty),
    };
    let error = match &m.output {
        Output::Result { err, .. } => Some(respan(
            quote!(#err: ::jsonrpc_runtime::RpcError + ::core::marker::Send + 'static),
            err.span(),
        )),
        _ => None,
    };
    m.args
        .iter()
        .map(|a| a.ty)
        .chain(result)
        .map(data_requirement)
        .chain(error)
        .collect()
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
