//! `#[derive(RpcError)]`: the variants' codes, both ways.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::{ErrorEnum, ErrorVariant};

pub(crate) fn expand(error: &ErrorEnum<'_>) -> TokenStream {
    let ident = &error.item.ident;
    let mut generics = error.item.generics.clone();
    {
        let where_clause = generics.make_where_clause();
        for param in error.item.generics.type_params() {
            let t = &param.ident;
            where_clause.predicates.push(syn::parse_quote! {
                #t: ::jsonrpc_runtime::__private::serde::Serialize
                    + ::jsonrpc_runtime::__private::serde::de::DeserializeOwned
            });
        }
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let into_arms = error.variants.iter().map(into_arm);
    let from_arms = error.variants.iter().map(from_arm);
    let codes = error.variants.iter().map(|v| v.code.value);
    let messages = error.variants.iter().map(|v| &v.message);
    quote! {
        #[automatically_derived]
        impl #impl_generics ::jsonrpc_runtime::RpcError for #ident #ty_generics #where_clause {
            fn into_error_object(self) -> ::jsonrpc_runtime::ErrorObject {
                match self {
                    #(#into_arms)*
                }
            }

            fn from_error_object(
                __error: &::jsonrpc_runtime::ErrorObject,
            ) -> ::core::option::Option<Self> {
                match __error.code.0 {
                    #(#from_arms)*
                    _ => ::core::option::Option::None,
                }
            }

            fn documented_errors() -> ::std::vec::Vec<(i64, &'static str)> {
                ::std::vec![#((#codes, #messages)),*]
            }
        }
    }
}

/// `Self::V { a, b } => error_with_data(code, message, {"a": .., "b": ..})`.
fn into_arm(variant: &ErrorVariant<'_>) -> TokenStream {
    let v = variant.ident;
    let code = variant.code.value;
    let message = &variant.message;
    let private = quote!(::jsonrpc_runtime::__private);
    match variant.fields {
        syn::Fields::Unit => quote! {
            Self::#v => #private::error(#code, #message),
        },
        syn::Fields::Named(named) => {
            let idents: Vec<_> = named
                .named
                .iter()
                .filter_map(|f| f.ident.as_ref())
                .collect();
            // Each field is bound to a generated name, so a field named
            // like a local of this arm (`data`) cannot shadow it.
            let bindings: Vec<_> = (0..idents.len())
                .map(|i| format_ident!("__field{}", i))
                .collect();
            let names = idents.iter().map(|i| crate::ast::unraw(i));
            let codecs = named.named.iter().map(|f| codec(&f.ty));
            quote! {
                Self::#v { #(#idents: #bindings),* } => {
                    let mut __data = #private::serde_json::Map::new();
                    #(__data.insert(::std::borrow::ToOwned::to_owned(#names), #codecs.encode(&#bindings));)*
                    #private::error_with_data(#code, #message, #private::serde_json::Value::Object(__data))
                }
            }
        }
        syn::Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            let codec = codec(&unnamed.unnamed[0].ty);
            quote! {
                Self::#v(__value) => #private::error_with_data(#code, #message, #codec.encode(&__value)),
            }
        }
        syn::Fields::Unnamed(unnamed) => {
            let idents: Vec<_> = (0..unnamed.unnamed.len())
                .map(|i| format_ident!("__field{}", i))
                .collect();
            let codecs = unnamed.unnamed.iter().map(|f| codec(&f.ty));
            quote! {
                Self::#v(#(#idents),*) => #private::error_with_data(
                    #code,
                    #message,
                    #private::serde_json::Value::Array(::std::vec![#(#codecs.encode(&#idents)),*]),
                ),
            }
        }
    }
}

/// `field::<ty, _>()`, every token at the field's type: the same tokens
/// both ways, so a type without serde is one error, there.
fn codec(ty: &syn::Type) -> TokenStream {
    super::respan(
        quote!(::jsonrpc_runtime::__private::field::<#ty, _>()),
        syn::spanned::Spanned::span(ty),
    )
}

/// `code => Some(Self::V { a: from data["a"]?, .. })`.
fn from_arm(variant: &ErrorVariant<'_>) -> TokenStream {
    let v = variant.ident;
    let code = variant.code.value;
    let private = quote!(::jsonrpc_runtime::__private);
    let value = match variant.fields {
        syn::Fields::Unit => quote!(Self::#v),
        syn::Fields::Named(named) => {
            let fields = named
                .named
                .iter()
                .filter_map(|f| Some((f.ident.as_ref()?, codec(&f.ty))))
                .map(|(i, codec)| {
                    let name = crate::ast::unraw(i);
                    quote!(#i: #codec.decode(__data.get(#name))?)
                });
            quote!({
                let __data = #private::data(__error);
                Self::#v { #(#fields),* }
            })
        }
        syn::Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
            let codec = codec(&unnamed.unnamed[0].ty);
            quote!({
                let __data = #private::data(__error);
                Self::#v(#codec.decode(::core::option::Option::Some(&__data))?)
            })
        }
        syn::Fields::Unnamed(unnamed) => {
            let fields = unnamed.unnamed.iter().enumerate().map(|(i, f)| {
                let codec = codec(&f.ty);
                quote!(#codec.decode(__data.get(#i))?)
            });
            quote!({
                let __data = #private::data(__error);
                Self::#v(#(#fields),*)
            })
        }
    };
    quote! {
        #code => ::core::option::Option::Some(#value),
    }
}
