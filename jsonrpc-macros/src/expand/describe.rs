//! `openrpc_methods()`: the trait's methods, and its `#[rpc]`
//! supertraits', described for OpenRPC documents
//! (`jsonrpc_runtime::openrpc`).

use proc_macro2::TokenStream;
use quote::quote;

use super::{MethodGen, ServiceGen};
use crate::attr::Kind;

impl ServiceGen<'_> {
    /// The trait's associated function listing its methods, its `#[rpc]`
    /// supertraits' included (as `into_router` serves them).
    pub(crate) fn describe_method(&self) -> TokenStream {
        let doc = " The methods of this trait and of its `#[rpc]` supertraits described for an \
                   OpenRPC document (`jsonrpc_runtime::openrpc::Document::methods`): wire names, \
                   doc comments, params, results and declared errors.";
        let (predicates, body) = if self.stub {
            (None, quote!(::core::unreachable!()))
        } else {
            let this = self.self_as_trait();
            (
                Some(self.item_predicates()),
                quote!(#this::__jsonrpc_router(::core::option::Option::None).1),
            )
        };
        quote! {
            #[doc = #doc]
            fn openrpc_methods() -> ::std::vec::Vec<::jsonrpc_runtime::openrpc::MethodDoc>
            where
                Self: ::core::marker::Sized + ::core::marker::Send + ::core::marker::Sync + 'static,
                #predicates
            {
                #body
            }
        }
    }

    /// The trait's own methods described: a `Vec<MethodDoc>` expression.
    pub(crate) fn methods_body(&self) -> TokenStream {
        let pushes = self.methods.iter().map(|m| describe(m));
        quote! {
            {
                let mut __methods = ::std::vec::Vec::new();
                #(#pushes)*
                __methods
            }
        }
    }
}

/// `(&Probe::<ty>::new()).schema(__g)`: the type's schema, or "any value"
/// when it has none.
fn schema_fn(ty: &TokenStream) -> TokenStream {
    quote! {
        |__g: &mut ::jsonrpc_runtime::openrpc::SchemaGen| {
            #[allow(unused_imports)]
            use ::jsonrpc_runtime::openrpc::{Described as _, Undescribed as _};
            (&::jsonrpc_runtime::openrpc::Probe::<#ty>::new()).schema(__g)
        }
    }
}

/// Pushes one method's description.
fn describe(m: &MethodGen<'_>) -> TokenStream {
    let wire = m.wire;
    let cfgs: Vec<_> = m.method.cfgs().collect();
    let docs = doc_text(m);
    let notification = m.method.kind == Kind::Notification;
    let whole = m.method.whole_params;
    let deprecated = m.method.deprecated().next().is_some();
    let params = m.method.args.iter().map(|a| {
        let name = &a.wire.value;
        let required = !a.optional;
        let ty = a.ty;
        let schema = schema_fn(&quote!(#ty));
        quote!(::jsonrpc_runtime::openrpc::param_doc(#name, #required, #schema))
    });
    let (result, errors) = if notification {
        (
            quote!(::core::option::Option::None),
            quote!(::std::vec::Vec::new()),
        )
    } else {
        // A subscription's answer is its id.
        let ok = match m.method.kind {
            Kind::Subscription => quote!(::jsonrpc_runtime::Id),
            _ => m.ret.ok.clone(),
        };
        let err = &m.ret.err;
        let schema = schema_fn(&ok);
        (
            quote!(::core::option::Option::Some(#schema)),
            quote!(<#err as ::jsonrpc_runtime::RpcError>::documented_errors()),
        )
    };
    quote! {
        #(#cfgs)*
        __methods.push(::jsonrpc_runtime::openrpc::method_doc(
            #wire,
            #docs,
            #notification,
            #whole,
            #deprecated,
            ::std::vec![#(#params),*],
            #result,
            #errors,
        ));
    }
}

/// The method's doc comment as text.
fn doc_text(m: &MethodGen<'_>) -> String {
    let lines: Vec<String> = m
        .method
        .docs()
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').unwrap_or(&line).to_owned())
        .collect();
    lines.join("\n")
}
