//! The server side: `into_router`, a provided method of the trait that
//! builds a route table dispatching with a `match` on the method name.

use proc_macro2::TokenStream;
use quote::quote;

use super::{MethodGen, ServiceGen};
use crate::ast::Output;
use crate::attr::Kind;

impl ServiceGen<'_> {
    /// `fn into_router(self) -> Router`.
    pub(crate) fn router_method(&self) -> TokenStream {
        let client_ident = &self.client_ident;
        let bounds = &self.bounds;
        let count = self.methods.len();
        let arms = self.methods.iter().enumerate().map(|(index, m)| {
            let wire = m.wire;
            quote!(#wire => ::core::option::Option::Some(&self.routes[#index]),)
        });
        let routes = self.methods.iter().map(|m| self.route(m));
        let requirements = self.methods.iter().flat_map(|m| &m.requirements);
        let doc = format!(
            " Serves this trait with `self`: a `jsonrpc_runtime::Router` with one route per \
             method, dispatched with a `match` on the method name. The other side calls it through \
             `{client_ident}`."
        );
        quote! {
            #[doc = #doc]
            fn into_router(self) -> ::jsonrpc_runtime::Router
            where
                Self: ::core::marker::Sized + ::core::marker::Send + ::core::marker::Sync + 'static,
                #(#bounds,)*
                #(#requirements,)*
            {
                struct __Table {
                    routes: [::jsonrpc_runtime::__private::Route; #count],
                }
                #[automatically_derived]
                impl ::jsonrpc_runtime::__private::RouteTable for __Table {
                    fn route(&self, method: &::core::primitive::str)
                        -> ::core::option::Option<&::jsonrpc_runtime::__private::Route>
                    {
                        match method {
                            #(#arms)*
                            _ => ::core::option::Option::None,
                        }
                    }
                    fn routes(&self) -> &[::jsonrpc_runtime::__private::Route] {
                        &self.routes
                    }
                }
                let __this = ::std::sync::Arc::new(self);
                let _ = &__this;
                ::jsonrpc_runtime::__private::router_from_table(__Table {
                    routes: [#(#routes,)*],
                })
            }
        }
    }

    /// One route: decode the params, call the method on the shared `self`.
    fn route(&self, m: &MethodGen<'_>) -> TokenStream {
        let trait_ident = self.trait_ident;
        let generics = self.generics();
        let ident = m.ident;
        let wire = m.wire;
        let params_ty = &m.params_ty;
        let ctx_arg = m.method.context.then(|| quote!(__ctx,));
        let args = if m.method.whole_params {
            quote!(__params)
        } else if m.params_struct.is_some() {
            let idents = m.method.args.iter().map(|a| a.ident);
            quote!(#(__params.#idents),*)
        } else {
            quote!()
        };
        let call = quote! {
            <Self as #trait_ident #generics>::#ident(&*__this, #ctx_arg #args).await
        };
        let (constructor, body) = match (m.method.kind, &m.method.output) {
            (Kind::Notification, _) => (quote!(notification), quote!({ #call; })),
            (Kind::Request, Output::Result { .. }) => (quote!(request), call),
            (Kind::Request, _) => (
                quote!(request),
                quote!(::jsonrpc_runtime::__private::infallible(#call)),
            ),
        };
        let unused_params = (m.params_struct.is_none() && !m.method.whole_params)
            .then(|| quote!(let _ = __params;));
        let unused_ctx = (!m.method.context).then(|| quote!(let _ = __ctx;));
        quote! {
            {
                let __this = ::core::clone::Clone::clone(&__this);
                ::jsonrpc_runtime::__private::Route::#constructor(
                    #wire,
                    move |__params: #params_ty, __ctx: ::jsonrpc_runtime::Context| {
                        let __this = ::core::clone::Clone::clone(&__this);
                        #unused_params
                        #unused_ctx
                        async move { #body }
                    },
                )
            }
        }
    }
}
