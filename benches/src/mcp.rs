//! MCP `tools/call` through the `jsonrpc-mcp` layer and through a
//! hand-written route doing the same work on the same peer: what the layer
//! costs per call, on a session and on a stateless (2026-07-28) request;
//! and the two servers of the rmcp comparison (`benches/mcp.rs`): ours and
//! rmcp's, each with the same `add` tool.

use std::sync::Arc;

use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::transport::TcpAcceptor;
use jsonrpc_runtime::{Context, ErrorObject, Router};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};
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

/// Serves [`server`] over Streamable HTTP at `/mcp` on `acceptor`: SSE
/// answers, or JSON ones with `json`.
pub fn serve_ours(acceptor: TcpAcceptor, json: bool) -> jsonrpc_runtime::server::Server {
    let server = server();
    McpHttpListener::new(acceptor)
        .json_responses(json)
        .max_sessions(100_000)
        .spawn(move |_: &PeerAddr| server.router())
}

/// Serves [`Adder`] with rmcp's Streamable HTTP service on `listener`, each
/// connection run by hyper's HTTP/1 server, until the future is dropped.
pub async fn serve_rmcp(listener: tokio::net::TcpListener, json: bool) {
    // Its defaults (SSE keep-alive included, as ours), JSON answers aside.
    let config = StreamableHttpServerConfig::default().with_json_response(json);
    let service: StreamableHttpService<Adder, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(Adder::new()), Arc::default(), config);
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// rmcp's tool arguments.
#[derive(Deserialize, rmcp::schemars::JsonSchema)]
pub struct RmcpAddArgs {
    /// The first number.
    pub a: i64,
    /// The second number.
    pub b: i64,
}

/// rmcp's server: the same tool, written as its documentation shows.
#[derive(Clone)]
pub struct Adder {
    tool_router: ToolRouter<Self>,
}

impl Default for Adder {
    fn default() -> Self {
        Adder::new()
    }
}

#[tool_router]
impl Adder {
    pub fn new() -> Self {
        Adder {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Adds two numbers.")]
    fn add(&self, Parameters(RmcpAddArgs { a, b }): Parameters<RmcpAddArgs>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Adder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}
