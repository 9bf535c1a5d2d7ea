//! What the layer's tests share: a session over an in-memory connection,
//! each side on its MCP preset, and the error code of a failed call.

#![allow(dead_code)] // each test file uses its own part

use jsonrpc_mcp::McpServer;
use jsonrpc_runtime::{CallError, Config, Peer, Transport};
use serde_json::{json, Value};

/// A client peer on a fresh session of `server`, and the server's peer.
pub(crate) fn connect(server: &McpServer) -> (Peer, Peer) {
    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder()
        .config(Config::mcp())
        .router(server.router())
        .spawn(server_side);
    let client = Peer::builder()
        .config(Config::mcp_client())
        .spawn(client_side);
    (client, server)
}

/// `initialize` asking for `version`, declaring `roots`; its result.
pub(crate) async fn initialize(client: &Peer, version: &str) -> Value {
    client
        .call(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {"roots": {"listChanged": true}},
                "clientInfo": {"name": "test-client", "version": "0.0.1"}
            }),
        )
        .await
        .expect("initialize")
}

/// The code of an error answer.
pub(crate) fn code(error: CallError) -> i64 {
    match error {
        CallError::Rpc(error) => error.code.0,
        other => panic!("expected an error answer, got {other:?}"),
    }
}
