//! Items the `#[rpc]` and `#[derive(RpcError)]` expansions call, and the
//! size thresholds the tests sweep. Not part of the public API: names and
//! signatures change without notice.

use jsonrpc_runtime_core::__private::SIZE_THRESHOLDS as CORE;
pub use jsonrpc_runtime_core::__private::*;

/// The size thresholds of this crate's transports and servers.
const OWN: &[SizeThreshold] = &[
    #[cfg(feature = "websocket")]
    size_threshold!(transport::websocket::WS_READ_BUFFER, "one WebSocket read"),
    #[cfg(feature = "websocket")]
    size_threshold!(
        transport::websocket::WS_WRITE_BUFFER,
        "gathered WebSocket frames"
    ),
    #[cfg(feature = "mcp-http")]
    size_threshold!(
        server::mcp_http::session::BACKLOG_LIMIT,
        "a session's unsent messages"
    ),
    #[cfg(feature = "mcp-http")]
    size_threshold!(
        server::mcp_http::session::MAX_PARKED_BYTES,
        "a session's parked messages"
    ),
    #[cfg(feature = "mcp-http")]
    size_threshold!(
        server::DEFAULT_REPLAY_BUFFER,
        "an SSE stream's replay buffer"
    ),
];

const ALL_LEN: usize = CORE.len() + OWN.len();

/// Every size threshold of the runtime, the core's and this crate's, so
/// that the size sweep (`tests/tests/size_sweep.rs`) walks each of them
/// (±1 byte) in every direction and over every transport. A new threshold
/// belongs in the list of the crate that defines it.
pub const SIZE_THRESHOLDS: &[SizeThreshold] = &{
    let mut all = [CORE[0]; ALL_LEN];
    let mut i = 0;
    while i < ALL_LEN {
        all[i] = if i < CORE.len() {
            CORE[i]
        } else {
            OWN[i - CORE.len()]
        };
        i += 1;
    }
    all
};
