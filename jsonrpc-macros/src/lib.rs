//! Procedural macros for `jsonrpc-runtime`.
//!
//! This crate is an implementation detail: depend on `jsonrpc-runtime`, which
//! re-exports everything here behind its default `macros` feature.
