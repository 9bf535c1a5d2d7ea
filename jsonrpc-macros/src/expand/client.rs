//! The client side: `<Trait>Client`, a typed stub over a peer handle.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::{MethodGen, ServiceGen};
use crate::attr::Kind;

impl ServiceGen<'_> {
    /// The client struct and its impls.
    pub(crate) fn client(&self) -> TokenStream {
        let vis = self.vis;
        let client = &self.client_ident;
        let trait_ident = self.trait_ident;
        let generics = self.generics();
        let bounds = &self.bounds;
        let marker_ty = self.marker_ty();
        let (marker_field, marker_init) = if self.type_params.is_empty() {
            (quote!(), quote!())
        } else {
            (
                quote!(pub(super) __marker: #marker_ty,),
                quote!(__marker: ::core::marker::PhantomData,),
            )
        };
        let doc = format!(
            " A typed client for `{trait_ident}`: each method calls the other side of a \
             `jsonrpc_runtime::Peer` that serves the trait."
        );
        let methods = self.methods.iter().map(|m| self.client_method(m));
        let where_clause = (!bounds.is_empty()).then(|| quote!(where #(#bounds,)*));
        // The struct lives in a module of its own and is re-exported; the
        // impls name it through the module, so a user's type of the same
        // name is one error at the re-export (E0255), not one more for every
        // generated field access that would resolve to the user's type.
        let module = format_ident!("__rpc_client_of_{}", trait_ident);
        let path = quote!(#module::#client);
        quote! {
            #[doc(hidden)]
            #[allow(non_snake_case)]
            mod #module {
                #[doc = #doc]
                pub struct #client #generics {
                    pub(super) __peer: ::jsonrpc_runtime::Peer,
                    #marker_field
                }
            }
            #[allow(unused_imports)]
            #vis use #path;

            #[automatically_derived]
            impl #generics ::core::clone::Clone for #path #generics {
                fn clone(&self) -> Self {
                    #path { __peer: ::core::clone::Clone::clone(&self.__peer), #marker_init }
                }
            }

            #[automatically_derived]
            impl #generics ::core::fmt::Debug for #path #generics {
                fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    __f.debug_struct(::core::stringify!(#client)).field("peer", &self.__peer).finish()
                }
            }

            #[automatically_derived]
            impl #generics #path #generics #where_clause {
                /// A client calling the other side of `peer`.
                #vis fn new(peer: ::jsonrpc_runtime::Peer) -> Self {
                    #path { __peer: peer, #marker_init }
                }

                /// The peer handle the client calls through.
                #vis fn peer(&self) -> &::jsonrpc_runtime::Peer {
                    &self.__peer
                }

                #(#methods)*
            }
        }
    }

    /// A method's client-side arguments: what the route decodes.
    fn client_args(&self, m: &MethodGen<'_>) -> Vec<TokenStream> {
        m.method
            .args
            .iter()
            .map(|a| {
                let (ident, ty) = (a.ident, a.ty);
                if self.stub {
                    quote!(_: #ty)
                } else {
                    quote!(#ident: #ty)
                }
            })
            .collect()
    }

    /// The body of a client method: `call(..)` on the params, or a stub.
    fn client_body(&self, m: &MethodGen<'_>, call: TokenStream) -> TokenStream {
        if self.stub {
            return quote!(::core::unreachable!());
        }
        let wire = m.wire;
        let (def, value) = self.params_value(m);
        let check = &m.ret.check;
        quote! {
            #check
            #def
            #call(&self.__peer, #wire, #value)
        }
    }

    /// `where ...` with the method's requirements (none on stubs).
    fn client_where(&self, m: &MethodGen<'_>, extra: Option<TokenStream>) -> TokenStream {
        if self.stub {
            return quote!();
        }
        let requirements = &m.requirements;
        if requirements.is_empty() && extra.is_none() {
            return quote!();
        }
        quote!(where #(#requirements,)* #extra)
    }

    /// `<method>_with_progress` and `<method>_partial`, for a request
    /// declared with `progress = T` or `partial = T`: calls that return at
    /// once with a `ProgressCall` yielding typed reports, then the result.
    fn progress_variants(&self, m: &MethodGen<'_>) -> TokenStream {
        let vis = self.vis;
        let wire = m.wire;
        let (ok, err) = (&m.ret.ok, &m.ret.err);
        let cfgs: Vec<_> = m.method.cfgs().collect();
        let deprecated: Vec<_> = m.method.deprecated().collect();
        let variants = [
            (
                &m.method.progress,
                "with_progress",
                quote!(call_with_progress),
                "progress reports",
            ),
            (
                &m.method.partial,
                "partial",
                quote!(call_partial_results),
                "partial results",
            ),
        ];
        let methods = variants.into_iter().filter_map(|(ty, suffix, call, what)| {
            let ty = ty.as_ref()?;
            let name = quote::format_ident!("{}_{}", crate::ast::unraw(m.ident), suffix);
            // A method of that name was reported; a stub would collide.
            if self.stub && self.methods.iter().any(|other| *other.ident == name) {
                return None;
            }
            let args = self.client_args(m);
            let doc = format!(
                " Calls `{wire}` with a fresh token for {what}: returns at once with a \
                 `jsonrpc_runtime::peer::ProgressCall` that yields each report as `{}`, then the result.",
                quote!(#ty).to_string().replace(' ', "")
            );
            let requirement = super::data_requirement(ty);
            let where_clause = self.client_where(m, Some(quote!(#requirement,)));
            let body = self.client_body(m, quote!(::jsonrpc_runtime::__private::#call));
            Some(quote! {
                #(#cfgs)*
                #(#deprecated)*
                #[doc = #doc]
                ///
                /// # Errors
                ///
                /// Fails at once when the params cannot be encoded or the connection is
                /// closed; later failures come from the call's `result()`.
                #vis fn #name(&self, #(#args),*) -> ::core::result::Result<
                    ::jsonrpc_runtime::peer::ProgressCall<#ok, #err, #ty>,
                    ::jsonrpc_runtime::CallError<#err>,
                >
                #where_clause
                {
                    #body
                }
            })
        });
        quote!(#(#methods)*)
    }

    fn client_method(&self, m: &MethodGen<'_>) -> TokenStream {
        let vis = self.vis;
        let ident = m.ident;
        let wire = m.wire;
        let cfgs: Vec<_> = m.method.cfgs().collect();
        let deprecated: Vec<_> = m.method.deprecated().collect();
        let docs: Vec<_> = m.method.docs().collect();
        let default_doc = docs.is_empty().then(|| {
            let what = match m.method.kind {
                Kind::Request => "Calls",
                Kind::Notification => "Notifies",
                Kind::Subscription => "Subscribes with",
            };
            let doc = format!(" {what} `{wire}` on the other side.");
            quote!(#[doc = #doc])
        });
        let args = self.client_args(m);
        let where_clause = self.client_where(m, None);
        match m.method.kind {
            Kind::Request => {
                let (ok, err) = (&m.ret.ok, &m.ret.err);
                let params_ty = if self.stub {
                    quote!(())
                } else {
                    quote!(
                        impl ::jsonrpc_runtime::__private::serde::Serialize + ::core::marker::Send
                    )
                };
                let body = self.client_body(m, quote!(::jsonrpc_runtime::__private::request));
                let progress_variants = self.progress_variants(m);
                quote! {
                    #(#cfgs)*
                    #(#deprecated)*
                    #(#docs)*
                    #default_doc
                    ///
                    /// Returns a `jsonrpc_runtime::peer::Call`: `.await` it, or set a `timeout`
                    /// first, or `start()` it for its id and a way to cancel it.
                    ///
                    /// # Errors
                    ///
                    /// Every way the call can fail is a `jsonrpc_runtime::CallError`
                    /// variant; the method's own errors come back as `CallError::Domain`.
                    #vis fn #ident(&self, #(#args),*)
                        -> ::jsonrpc_runtime::peer::Call<'_, #ok, #err, #params_ty>
                    #where_clause
                    {
                        #body
                    }

                    #progress_variants
                }
            }
            Kind::Subscription => {
                let err = &m.ret.err;
                let item = m.method.subscription.as_ref().map_or(quote!(()), |p| {
                    let item = p.item;
                    quote!(#item)
                });
                let unsubscribe = m.method.subscription.as_ref().map(|p| &p.unsubscribe);
                let body = if self.stub {
                    quote!(::core::unreachable!())
                } else {
                    let (def, value) = self.params_value(m);
                    quote! {
                        #def
                        ::jsonrpc_runtime::__private::subscribe::<#item, #err>(
                            &self.__peer, #wire, #value, #unsubscribe,
                        ).await
                    }
                };
                quote! {
                    #(#cfgs)*
                    #(#deprecated)*
                    #(#docs)*
                    #default_doc
                    ///
                    /// Returns the subscription's typed stream of items
                    /// (`jsonrpc_runtime::peer::Subscription`), which unsubscribes when dropped.
                    ///
                    /// # Errors
                    ///
                    /// As a call: every way it can fail is a `jsonrpc_runtime::CallError`
                    /// variant; the method's own errors come back as `CallError::Domain`.
                    #vis async fn #ident(&self, #(#args),*) -> ::core::result::Result<
                        ::jsonrpc_runtime::peer::Subscription<#item>,
                        ::jsonrpc_runtime::CallError<#err>,
                    >
                    #where_clause
                    {
                        #body
                    }
                }
            }
            Kind::Notification => {
                let body = self.client_body(m, quote!(::jsonrpc_runtime::__private::notify));
                let body = if self.stub { body } else { quote!(#body.await) };
                quote! {
                    #(#cfgs)*
                    #(#deprecated)*
                    #(#docs)*
                    #default_doc
                    ///
                    /// # Errors
                    ///
                    /// Fails when the params cannot be encoded or the connection is closed.
                    #vis async fn #ident(&self, #(#args),*)
                        -> ::core::result::Result<(), ::jsonrpc_runtime::peer::SendError>
                    #where_clause
                    {
                        #body
                    }
                }
            }
        }
    }
}
