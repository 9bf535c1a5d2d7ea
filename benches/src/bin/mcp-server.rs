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

use jsonrpc_benches::mcp;
use jsonrpc_runtime::transport::{TcpAcceptor, Transport};
use jsonrpc_runtime::{Config, Peer};
use rmcp::ServiceExt as _;
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
                    let service = mcp::Adder::new().serve(rmcp::transport::stdio()).await;
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
            let runtime = jsonrpc_benches::two_worker_runtime();
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
    let _server = mcp::serve_ours(acceptor, json);
    until_stdin_ends().await;
}

async fn serve_rmcp(json: bool) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    println!("{}", listener.local_addr().expect("an address"));
    tokio::select! {
        () = mcp::serve_rmcp(listener, json) => {}
        () = until_stdin_ends() => {}
    }
}
