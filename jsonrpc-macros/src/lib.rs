//! Procedural macros for `jsonrpc-runtime`.
//!
//! This crate is an implementation detail: depend on `jsonrpc-runtime`, which
//! re-exports `#[rpc]` and `#[derive(RpcError)]` behind its default `macros`
//! feature and documents them. The crate is laid out by phase: `attr` reads
//! `#[rpc(...)]` arguments, `ast` builds a typed model of the trait or enum,
//! `valid` checks rules across items, and `expand` generates code that only
//! calls `::jsonrpc_runtime::__private`.

mod ast;
mod attr;
mod case;
mod ctxt;
mod expand;
mod valid;

use proc_macro::TokenStream;

/// Generates a route table and a typed client from a trait. See
/// `jsonrpc_runtime::rpc` for the documentation.
#[proc_macro_attribute]
pub fn rpc(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::service(args.into(), item.into()).into()
}

/// Maps an error enum's variants to JSON-RPC error codes, both ways. See
/// `jsonrpc_runtime::RpcError` for the documentation.
#[proc_macro_derive(RpcError, attributes(rpc))]
pub fn derive_rpc_error(item: TokenStream) -> TokenStream {
    expand::error_enum(item.into()).into()
}
