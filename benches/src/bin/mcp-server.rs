//! The server end of the MCP benchmark: one tool, `add {a, b}` answering
//! the sum as text, served by the `jsonrpc-mcp` layer (`ours`) or by rmcp
//! (`rmcp`), over stdio or Streamable HTTP at `/mcp`:
//!
//! ```text
//! mcp-server ours|rmcp stdio
//! mcp-server ours|rmcp http [--json]
//! ```
//!
//! Over HTTP it prints its address on stdout and serves until stdin ends,
//! on a 2-worker multi-thread runtime (both sides alike); `--json` answers
//! with one JSON body instead of an SSE stream. Over stdio it serves one
//! session on a current-thread runtime.

use std::sync::Arc;

use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::transport::{TcpAcceptor, Transport};
use jsonrpc_runtime::{Config, Peer};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::{
    session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{tool, tool_handler, tool_router, ServerHandler, ServiceExt as _};
use tokio::io::AsyncReadExt as _;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let side = args.first().map_or("ours", String::as_str);
    let transport = args.get(1).map_or("stdio", String::as_str);
    let json = args.iter().any(|a| a == "--json");
    match transport {
        "stdio" => jsonrpc_benches::runtime().block_on(async {
            match side {
                "rmcp" => {
                    let service = Adder::new().serve(rmcp::transport::stdio()).await;
                    let _ = service.expect("rmcp serves stdio").waiting().await;
                }
                _ => {
                    let config = Config::mcp();
                    let transport = Transport::stdio(&config).expect("stdio");
                    let router = jsonrpc_benches::mcp::server().router();
                    Peer::builder()
                        .config(config)
                        .router(router)
                        .serve(transport)
                        .await;
                }
            }
        }),
        _ => {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a tokio runtime");
            runtime.block_on(async {
                match side {
                    "rmcp" => serve_rmcp(json).await,
                    _ => serve_ours(json).await,
                }
            });
        }
    }
}

/// Serves until stdin ends.
async fn until_stdin_ends() {
    let mut sink = Vec::new();
    let _ = tokio::io::stdin().read_to_end(&mut sink).await;
}

async fn serve_ours(json: bool) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.expect("bind");
    println!("{}", acceptor.local_addr().expect("an address"));
    let server = jsonrpc_benches::mcp::server();
    let _server = McpHttpListener::new(acceptor)
        .json_responses(json)
        .max_sessions(100_000)
        .spawn(move |_: &jsonrpc_runtime::connection::PeerAddr| server.router());
    until_stdin_ends().await;
}

async fn serve_rmcp(json: bool) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    println!("{}", listener.local_addr().expect("an address"));
    let config = StreamableHttpServerConfig::default()
        .with_json_response(json)
        .with_sse_keep_alive(None);
    let service: StreamableHttpService<Adder, LocalSessionManager> =
        StreamableHttpService::new(|| Ok(Adder::new()), Arc::default(), config);
    let accept = async move {
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
    };
    tokio::select! {
        () = accept => {}
        () = until_stdin_ends() => {}
    }
}

/// The tool's arguments, as rmcp takes them.
#[derive(serde::Deserialize, rmcp::schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

/// rmcp's server: the same tool, written as its documentation shows.
#[derive(Clone)]
struct Adder {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Adder {
    fn new() -> Self {
        Adder {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Adds two numbers.")]
    fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        (a + b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Adder {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}
