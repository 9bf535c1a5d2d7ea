//! The benchmark suite's lean half: the `add` method written every way the
//! suite compares that needs only the runtime (hand-written floors, a
//! hand-registered route, a `#[rpc]` route), an in-process transport, raw
//! line clients and servers (the floors of the transport benchmarks), large
//! payloads, and the variants one run of `profile` or `guard` times
//! ([`variants`]). The root package (`jsonrpc-benches`) re-exports all of
//! it beside the comparisons with other frameworks.

#![allow(missing_docs, clippy::missing_panics_doc)]

pub mod floor;
pub mod large;
pub mod loopback;
pub mod raw;
pub mod service;
pub mod setup;
pub mod variants;

use serde::{Deserialize, Serialize};

/// The params of `add` (and of the `note` notification).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct AddParams {
    pub a: i64,
    pub b: i64,
}

/// One `add` request line, as a client sends it (no newline).
pub const ADD_REQUEST: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":2,"b":3}}"#;
/// The answer every implementation must produce for [`ADD_REQUEST`].
pub const ADD_RESPONSE: &[u8] = br#"{"jsonrpc":"2.0","id":1,"result":5}"#;
/// One `note` notification line.
pub const NOTE: &[u8] = br#"{"jsonrpc":"2.0","method":"note","params":{"a":2,"b":3}}"#;
/// A request for a method nobody serves.
pub const UNKNOWN_REQUEST: &[u8] =
    br#"{"jsonrpc":"2.0","id":1,"method":"nope","params":{"a":2,"b":3}}"#;

/// The largest frame the suite's peers accept: room for the 8 MiB payloads
/// plus their envelope and escapes.
pub const MAX_FRAME_LEN: usize = 32 * 1024 * 1024;

/// The config every peer in the suite runs with: the defaults, with a frame
/// cap that fits the large messages.
pub fn config() -> jsonrpc_runtime::Config {
    jsonrpc_runtime::Config::default().max_frame_len(MAX_FRAME_LEN)
}

/// A current-thread runtime with I/O and timers, as every in-process
/// benchmark uses.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// A multi-thread runtime of two workers, as a server on this 2-vCPU
/// machine runs.
pub fn two_worker_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

/// Checks that an answer is the expected `add` answer (ignoring the id).
pub fn check_add_response(body: &[u8], expected_sum: i64) {
    #[derive(Deserialize)]
    struct Answer {
        result: i64,
    }
    let answer: Answer = serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("not an add answer ({e}): {}", String::from_utf8_lossy(body)));
    assert_eq!(answer.result, expected_sum);
}
