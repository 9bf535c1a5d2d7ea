//! The fallback expansion, in the manner of thiserror's: when the trait or
//! enum has mistakes, emit it next to the errors together with every item
//! the macro would have generated, with bodies that are never run, so that
//! one mistake is one error and the rest of the user's crate type-checks.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

use super::{stripped_trait, ServiceGen};
use crate::ast::Service;
use crate::valid::{CLIENT_ITEMS, TRAIT_ITEMS};

/// The trait as written, `into_router` and the client, all stubs.
pub(super) fn service(service: &Service<'_>, errors: syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    let mut item = stripped_trait(service.item);
    // Methods named like generated items were reported; their stubs would
    // only collide again.
    let generated = |ident: &syn::Ident| {
        let name = crate::ast::unraw(ident);
        TRAIT_ITEMS.contains(&name.as_str()) || CLIENT_ITEMS.contains(&name.as_str())
    };
    let methods_ok = !service.methods.iter().any(|m| generated(&m.item.sig.ident));
    let service_gen = ServiceGen::new(service, true);
    if methods_ok {
        item.items
            .push(syn::TraitItem::Verbatim(service_gen.router_method()));
        item.items
            .push(syn::TraitItem::Verbatim(service_gen.describe_method()));
        item.items
            .push(syn::TraitItem::Verbatim(super::implemented_method()));
    }
    let client_ok = service
        .args
        .client
        .as_ref()
        .is_none_or(|client| *client != service.item.ident);
    let client = (methods_ok && client_ok).then(|| service_gen.client());
    let item = item.into_token_stream();
    quote! {
        #item
        #client
        #errors
    }
}

/// The enum as written (a derive does not re-emit it) and its `RpcError`
/// impl.
pub(super) fn error_enum(input: &syn::DeriveInput, errors: syn::Error) -> TokenStream {
    let errors = errors.to_compile_error();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics ::jsonrpc_runtime::RpcError for #ident #ty_generics #where_clause {
            fn into_error_object(self) -> ::jsonrpc_runtime::ErrorObject {
                ::core::unreachable!()
            }

            fn from_error_object(
                _: &::jsonrpc_runtime::ErrorObject,
            ) -> ::core::option::Option<Self> {
                ::core::unreachable!()
            }
        }
        #errors
    }
}
