//! The server side: `into_router`, a provided method of the trait that
//! builds a route table dispatching with a `match` on the method name, and
//! the hidden `__jsonrpc_router` through which a subtrait serves it too.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};

use super::{MethodGen, ServiceGen};
use crate::attr::Kind;

impl ServiceGen<'_> {
    /// `fn into_router(self) -> Router` and the hidden `__jsonrpc_router`
    /// it calls.
    pub(crate) fn router_method(&self) -> TokenStream {
        let client_ident = &self.client_ident;
        let doc = format!(
            " Serves this trait with `self`: a `jsonrpc_runtime::Router` with one route per \
             method, and the routes of the trait's `#[rpc]` supertraits, dispatched with a `match` \
             on the method name. The other side calls it through `{client_ident}`."
        );
        let served = self.served_method();
        if self.stub {
            return quote! {
                #[doc = #doc]
                fn into_router(self) -> ::jsonrpc_runtime::Router
                where
                    Self: ::core::marker::Sized,
                {
                    ::core::unreachable!()
                }
                #served
            };
        }
        let predicates = self.item_predicates();
        let this = self.self_as_trait();
        quote! {
            #[doc = #doc]
            fn into_router(self) -> ::jsonrpc_runtime::Router
            where
                Self: ::core::marker::Sized + ::core::marker::Send + ::core::marker::Sync + 'static,
                #predicates
            {
                #this::__jsonrpc_router(::core::option::Option::Some(::std::sync::Arc::new(self))).0
            }
            #served
        }
    }

    /// `<Self as Trait<K, V>>`.
    pub(crate) fn self_as_trait(&self) -> TokenStream {
        let trait_ident = self.trait_ident;
        let generics = self.generics();
        quote!(<Self as #trait_ident #generics>)
    }

    /// `fn __jsonrpc_router(Option<Arc<Self>>) -> Served`, with the same
    /// name in every `#[rpc]` trait: given the implementation, the trait's
    /// router, else its method descriptions, its supertraits' included both
    /// ways. Each supertrait is asked through a path qualified by the
    /// supertrait as written (an alias works), spanned at it, so a
    /// supertrait that is not `#[rpc]` is reported there, once.
    fn served_method(&self) -> TokenStream {
        let signature = quote! {
            #[doc(hidden)]
            #[allow(deprecated)]
            fn __jsonrpc_router(
                __this: ::core::option::Option<::std::sync::Arc<Self>>,
            ) -> ::jsonrpc_runtime::__private::Served
        };
        if self.stub {
            return quote! {
                #signature
                where
                    Self: ::core::marker::Sized,
                {
                    ::core::unreachable!()
                }
            };
        }
        let predicates = self.item_predicates();
        let supertraits = self.service.supertraits.iter().map(|path| {
            let span = syn::spanned::Spanned::span(path);
            let call = quote_spanned!(span=> <Self as #path>::__jsonrpc_router);
            quote!(#call(::core::clone::Clone::clone(&__this)))
        });
        let router = self.router_body();
        let methods = self.methods_body();
        quote! {
            #signature
            where
                Self: ::core::marker::Sized + ::core::marker::Send + ::core::marker::Sync + 'static,
                #predicates
            {
                let __supertraits = [#(#supertraits),*];
                let __own = match __this {
                    ::core::option::Option::Some(__this) => (#router, ::std::vec::Vec::new()),
                    ::core::option::Option::None => (::jsonrpc_runtime::Router::new(), #methods),
                };
                ::jsonrpc_runtime::__private::with_supertraits(__own, __supertraits)
            }
        }
    }

    /// The trait's own router, from `__this: Arc<Self>`.
    fn router_body(&self) -> TokenStream {
        let structs = (0..self.shapes.len())
            .map(|index| self.params_struct(index, &format_ident!("__Params{}", index), false));
        let fields: Vec<syn::Ident> = self
            .methods
            .iter()
            .map(|m| format_ident!("__route_{}", crate::ast::unraw(m.ident)))
            .collect();
        let cfgs: Vec<Vec<&syn::Attribute>> = self
            .methods
            .iter()
            .map(|m| m.method.cfgs().collect())
            .collect();
        let arms = self
            .methods
            .iter()
            .zip(&fields)
            .zip(&cfgs)
            .map(|((m, field), cfgs)| {
                let wire = m.wire;
                match &m.method.subscription {
                    // The subscribe and the unsubscribe route.
                    Some(parts) => {
                        let unsubscribe = &parts.unsubscribe;
                        quote! {
                            #(#cfgs)* #wire => ::core::option::Option::Some(&self.#field[0]),
                            #(#cfgs)* #unsubscribe => ::core::option::Option::Some(&self.#field[1]),
                        }
                    }
                    None => quote!(#(#cfgs)* #wire => ::core::option::Option::Some(&self.#field),),
                }
            });
        let routes = self
            .methods
            .iter()
            .zip(&fields)
            .zip(&cfgs)
            .map(|((m, field), cfgs)| {
                let route = self.route(m);
                quote!(#(#cfgs)* let #field = #route;)
            });
        let field_decls = self
            .methods
            .iter()
            .zip(&fields)
            .zip(&cfgs)
            .map(|((m, field), cfgs)| {
                let route = quote!(::jsonrpc_runtime::__private::Route);
                match m.method.subscription {
                    Some(_) => quote!(#(#cfgs)* #field: [#route; 2],),
                    None => quote!(#(#cfgs)* #field: #route,),
                }
            });
        let pushes = self.methods.iter().zip(&fields).zip(&cfgs).map(|((m, field), cfgs)| {
            match m.method.subscription {
                Some(_) => quote! {
                    #(#cfgs)* ::core::iter::Extend::extend(&mut __all, ::core::clone::Clone::clone(&#field));
                },
                None => quote!(#(#cfgs)* __all.push(::core::clone::Clone::clone(&#field));),
            }
        });
        let inits = fields
            .iter()
            .zip(&cfgs)
            .map(|(field, cfgs)| quote!(#(#cfgs)* #field,));
        let name = crate::ast::unraw(self.trait_ident);
        let params = &self.type_params;
        quote! {
            {
                #(#structs)*
                struct __Table {
                    #(#field_decls)*
                    __all: ::std::vec::Vec<::jsonrpc_runtime::__private::Route>,
                    __service: ::std::string::String,
                }
                #[automatically_derived]
                impl ::jsonrpc_runtime::__private::RouteTable for __Table {
                    fn route(&self, __method: &::core::primitive::str)
                        -> ::core::option::Option<&::jsonrpc_runtime::__private::Route>
                    {
                        match __method {
                            #(#arms)*
                            _ => ::core::option::Option::None,
                        }
                    }
                    fn routes(&self) -> &[::jsonrpc_runtime::__private::Route] {
                        &self.__all
                    }
                    fn service(&self) -> &::core::primitive::str {
                        &self.__service
                    }
                }
                let _ = &__this;
                #(#routes)*
                #[allow(unused_mut)]
                let mut __all = ::std::vec::Vec::new();
                #(#pushes)*
                ::jsonrpc_runtime::__private::router_from_table(__Table {
                    #(#inits)*
                    __all,
                    __service: ::jsonrpc_runtime::__private::service_name(
                        #name,
                        &[#(::core::any::type_name::<#params>()),*],
                    ),
                })
            }
        }
    }
    /// The where-predicates of the trait items `#[rpc]` adds: the user's
    /// `bound`s and the requirements of every method compiled
    /// unconditionally (a method under `#[cfg]` may name types that exist
    /// only when it is compiled: its requirements are checked by its route
    /// instead). Identical copies on several items are reported once.
    pub(crate) fn item_predicates(&self) -> TokenStream {
        let bounds = &self.bounds;
        let requirements = self
            .methods
            .iter()
            .filter(|m| m.method.cfgs().next().is_none())
            .flat_map(|m| &m.requirements);
        quote!(#(#bounds,)* #(#requirements,)*)
    }

    /// One route: decode the params, call the method on the shared `self`.
    fn route(&self, m: &MethodGen<'_>) -> TokenStream {
        let private = quote!(::jsonrpc_runtime::__private);
        let trait_ident = self.trait_ident;
        let generics = self.generics();
        let ident = m.ident;
        let wire = m.wire;
        let params_ty = self.params_ty(m);
        let ctx_arg = m.method.context.as_ref().map(|context| {
            let ty = context.ty();
            let progress = match &m.method.progress {
                Some(progress) => quote!(#progress),
                None => quote!(#private::NoProgress),
            };
            let expr = match context {
                crate::ast::ContextArg::Plain(_) => quote!(__ctx),
                crate::ast::ContextArg::Typed(_) => {
                    quote!(::jsonrpc_runtime::context::TypedContext::<#progress>::new(__ctx))
                }
                crate::ast::ContextArg::Marked(_) => {
                    quote!(<#ty as #private::Inject<#progress>>::inject(__ctx))
                }
            };
            let expr = super::respan(expr, syn::spanned::Spanned::span(ty));
            quote!(#expr,)
        });
        let args = if m.method.whole_params {
            quote!(__params)
        } else {
            let fields = (0..m.method.args.len()).map(|i| format_ident!("__f{}", i));
            quote!(#(__params.#fields),*)
        };
        let pending_arg = m.method.subscription.as_ref().map(|_| quote!(__pending,));
        let call = quote! {
            <Self as #trait_ident #generics>::#ident(&*__this, #ctx_arg #pending_arg #args).await
        };
        if let Some(parts) = &m.method.subscription {
            let (items, unsubscribe, item) = (&parts.items, &parts.unsubscribe, parts.item);
            return quote! {
                {
                    let __this = ::core::clone::Clone::clone(&__this);
                    #private::Route::subscription(
                        #wire,
                        #items,
                        #unsubscribe,
                        move |__params: #params_ty,
                              __pending: ::jsonrpc_runtime::router::PendingSubscription<#item>,
                              __ctx: ::jsonrpc_runtime::Context| {
                            let __this = ::core::clone::Clone::clone(&__this);
                            async move { #call }
                        },
                    )
                }
            };
        }
        let (constructor, body) = match m.method.kind {
            Kind::Notification => (quote!(notification), quote!({ #call; })),
            Kind::Subscription => unreachable!("a subscription's route is built above"),
            Kind::Request => {
                let ty = &m.ret.ty;
                let is_result = &m.ret.is_result;
                (
                    quote!(request),
                    quote!(#private::split::<#ty, #is_result>(#call)),
                )
            }
        };
        quote! {
            {
                let __this = ::core::clone::Clone::clone(&__this);
                #private::Route::#constructor(
                    #wire,
                    move |__params: #params_ty, __ctx: ::jsonrpc_runtime::Context| {
                        let __this = ::core::clone::Clone::clone(&__this);
                        async move { #body }
                    },
                )
            }
        }
    }
}
