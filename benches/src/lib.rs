//! Shared pieces of the benchmark suite: the `add` method written every way
//! the suite compares (hand-written floors, a hand-registered route, a
//! `#[rpc]` route, jsonrpsee), an in-process transport, raw line clients and
//! servers (the floors of the transport benchmarks), large payloads, and
//! process memory probes.
//!
//! The benchmarks themselves are in `benches/`; `BENCHMARKS.md` at the root
//! of the repository says what each one measures and holds the latest
//! figures.

#![allow(missing_docs, clippy::missing_panics_doc)]

pub mod alloc;
pub mod feeds;
pub mod http;
pub mod jsonrpsee_side;
pub mod lsp;
pub mod mcp;
pub mod mcp_wire;
pub mod multicore;
pub mod sys;

// The lean half (`core/`), under the paths the benchmarks have always used.
pub use jsonrpc_bench_core::{
    check_add_response, config, floor, large, loopback, raw, runtime, service, setup,
    two_worker_runtime, variants, AddParams, ADD_REQUEST, ADD_RESPONSE, MAX_FRAME_LEN, NOTE,
    UNKNOWN_REQUEST,
};
