//! MCP `tools/call` through the `jsonrpc-mcp` layer and through a
//! hand-written route doing the same work on the same peer: what the layer
//! costs per call, on a session and on a stateless (2026-07-28) request.

use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::{Context, ErrorObject, Router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

/// The tool's arguments.
#[derive(Deserialize, JsonSchema)]
pub struct AddArgs {
    /// The first number.
    pub a: i64,
    /// The second number.
    pub b: i64,
}

/// A server with one tool, `add`.
pub fn server() -> McpServer {
    McpServer::new("bench", "0").tool(
        "add",
        "Adds two numbers.",
        |args: AddArgs, _: ToolContext| async move { Ok::<_, ToolError>((args.a + args.b).to_string()) },
    )
}

/// The floor: `initialize` and `tools/call` of `add` answered by hand, the
/// arguments decoded into the same type and the result built as the layer
/// builds it.
pub fn plain_router() -> Router {
    #[derive(Deserialize)]
    struct Call {
        #[allow(dead_code)]
        name: String,
        arguments: AddArgs,
    }
    Router::new()
        .request("initialize", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "bench", "version": "0"}}))
        })
        .request("tools/call", |call: Call, _: Context| async move {
            let sum = (call.arguments.a + call.arguments.b).to_string();
            Ok::<_, ErrorObject>(json!({"content": [{"type": "text", "text": sum}], "isError": false}))
        })
}

/// `initialize` on 2025-11-25.
pub const INITIALIZE: &[u8] = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

/// `tools/call` of `add` on a session.
pub const CALL: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#;

/// `tools/call` of `add` as a stateless request.
pub const CALL_STATELESS: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
