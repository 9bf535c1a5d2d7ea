//! The client side: `<Trait>Client`, a typed stub over a peer handle.

use proc_macro2::TokenStream;
use quote::quote;

use super::{client_output, MethodGen, ServiceGen};
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
                }
            }
            Kind::Notification => quote! {
                #(#docs)*
                #default_doc
                ///
                /// # Errors
                ///
                /// Fails when the params cannot be encoded or the connection is closed.
                #vis fn #ident(&self, #(#args),*)
                    -> ::core::result::Result<(), ::jsonrpc_runtime::SendError>
                where
                    #(#requirements,)*
                {
                    ::jsonrpc_runtime::__private::notify(&self.peer, #wire, #params)
                }
            },
        }
    }
}
