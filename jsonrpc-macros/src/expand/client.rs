//! The client side: `<Trait>Client`, a typed stub over a peer handle.

use proc_macro2::TokenStream;
use quote::quote;

use super::{call_types, client_output, data_requirement, MethodGen, ServiceGen};
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
                quote!(_marker: #marker_ty,),
                quote!(_marker: ::core::marker::PhantomData,),
            )
        };
        let doc = format!(
            " A typed client for `{trait_ident}`: each method calls the other side of a \
             `jsonrpc_runtime::Peer` that serves the trait."
        );
        let methods = self.methods.iter().map(|m| self.client_method(m));
        quote! {
            #[doc = #doc]
            #vis struct #client #generics {
                peer: ::jsonrpc_runtime::Peer,
                #marker_field
            }

            #[automatically_derived]
            impl #generics ::core::clone::Clone for #client #generics {
                fn clone(&self) -> Self {
                    #client { peer: ::core::clone::Clone::clone(&self.peer), #marker_init }
                }
            }

            #[automatically_derived]
            impl #generics ::core::fmt::Debug for #client #generics {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(::core::stringify!(#client)).field("peer", &self.peer).finish()
                }
            }

            #[automatically_derived]
            impl #generics #client #generics
            where
                #(#bounds,)*
            {
                /// A client calling the other side of `peer`.
                #vis fn new(peer: ::jsonrpc_runtime::Peer) -> Self {
                    #client { peer, #marker_init }
                }

                /// The peer handle the client calls through.
                #vis fn peer(&self) -> &::jsonrpc_runtime::Peer {
                    &self.peer
                }

                #(#methods)*
            }
        }
    }

    /// `<method>_with_progress` and `<method>_partial`, for a request
    /// declared with `progress = T` or `partial = T`: calls that return at
    /// once with a `ProgressCall` yielding typed reports, then the result.
    fn progress_variants(&self, m: &MethodGen<'_>) -> TokenStream {
        let vis = self.vis;
        let wire = m.wire;
        let (ok, err) = call_types(&m.method.output);
        let requirements = &m.requirements;
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
            let name = quote::format_ident!("{}_{}", m.ident, suffix);
            let args = m.method.args.iter().map(|a| {
                let (ident, ty) = (a.ident, a.ty);
                quote!(#ident: #ty)
            });
            let params = self.params_value(m);
            let doc = format!(
                " Calls `{wire}` with a fresh token for {what}: returns at once with a \
                 `jsonrpc_runtime::ProgressCall` that yields each report as `{}`, then the result.",
                quote!(#ty).to_string().replace(' ', "")
            );
            let requirement = data_requirement(ty);
            Some(quote! {
                #[doc = #doc]
                ///
                /// # Errors
                ///
                /// Fails at once when the params cannot be encoded or the connection is
                /// closed; later failures come from the call's `result()`.
                #vis fn #name(&self, #(#args),*) -> ::core::result::Result<
                    ::jsonrpc_runtime::ProgressCall<#ok, #err, #ty>,
                    ::jsonrpc_runtime::CallError<#err>,
                >
                where
                    #(#requirements,)*
                    #requirement,
                {
                    ::jsonrpc_runtime::__private::#call(&self.peer, #wire, #params)
                }
            })
        });
        quote!(#(#methods)*)
    }

    fn client_method(&self, m: &MethodGen<'_>) -> TokenStream {
        let vis = self.vis;
        let ident = m.ident;
        let wire = m.wire;
        let docs: Vec<_> = m.method.docs().collect();
        let default_doc = docs.is_empty().then(|| {
            let what = match m.method.kind {
                Kind::Request => "Calls",
                Kind::Notification => "Notifies",
            };
            let doc = format!(" {what} `{wire}` on the other side.");
            quote!(#[doc = #doc])
        });
        let args = m.method.args.iter().map(|a| {
            let (ident, ty) = (a.ident, a.ty);
            quote!(#ident: #ty)
        });
        let params = self.params_value(m);
        let requirements = &m.requirements;
        let progress_variants = self.progress_variants(m);
        match m.method.kind {
            Kind::Request => {
                let output = client_output(&m.method.output);
                quote! {
                    #(#docs)*
                    #default_doc
                    ///
                    /// # Errors
                    ///
                    /// Every way the call can fail is a `jsonrpc_runtime::CallError`
                    /// variant; the method's own errors come back as `CallError::Domain`.
                    #vis async fn #ident(&self, #(#args),*) -> #output
                    where
                        #(#requirements,)*
                    {
                        ::jsonrpc_runtime::__private::call(&self.peer, #wire, #params).await
                    }

                    #progress_variants
                }
            }
            Kind::Notification => quote! {
                #(#docs)*
                #default_doc
                ///
                /// # Errors
                ///
                /// Fails when the params cannot be encoded or the connection is closed.
                #vis async fn #ident(&self, #(#args),*)
                    -> ::core::result::Result<(), ::jsonrpc_runtime::SendError>
                where
                    #(#requirements,)*
                {
                    ::jsonrpc_runtime::__private::notify(&self.peer, #wire, #params).await
                }
            },
        }
    }
}
