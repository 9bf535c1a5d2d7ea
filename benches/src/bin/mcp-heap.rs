//! Heap per idle MCP session, exact: ours and rmcp's Streamable HTTP
//! servers in this process, behind a counting allocator, each given 500
//! sessions (initialize, one call, then left); prints the live heap they
//! add per session. Run it with `cargo run --release --bin mcp-heap`
//! (`-- ours` or `-- rmcp` for one side).

use std::time::Duration;

use jsonrpc_benches::alloc::{self, Counting};
use jsonrpc_benches::mcp;
use jsonrpc_benches::mcp_wire::HttpSession;
use jsonrpc_runtime::transport::TcpAcceptor;

#[global_allocator]
static ALLOC: Counting = Counting;

const SESSIONS: usize = 500;

fn main() {
    let runtime = jsonrpc_benches::two_worker_runtime();
    runtime.block_on(async {
        // `mcp-heap ours` or `mcp-heap rmcp`: one side only (to profile it).
        let only = std::env::args().nth(1);
        for side in ["ours", "rmcp"] {
            if only.as_deref().is_some_and(|only| only != side) {
                continue;
            }
            let (addr, server) = match side {
                "ours" => {
                    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.expect("bind");
                    let addr = acceptor.local_addr().expect("an address");
                    let server = mcp::serve_ours(acceptor, false);
                    (
                        addr,
                        tokio::spawn(async move {
                            std::future::pending::<()>().await;
                            drop(server)
                        }),
                    )
                }
                _ => {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                        .await
                        .expect("bind");
                    let addr = listener.local_addr().expect("an address");
                    (addr, tokio::spawn(mcp::serve_rmcp(listener, false)))
                }
            };
            let addr = addr.to_string();
            let mut probe = HttpSession::open(&addr).await;
            probe.call(1).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let before = alloc::snapshot().live;
            for i in 0..SESSIONS {
                let mut session = HttpSession::open(&addr).await;
                session.call(i as u64).await;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            let after = alloc::snapshot().live;
            println!(
                "{side}: {:.1} KiB of heap per idle session",
                (after as f64 - before as f64) / SESSIONS as f64 / 1024.0
            );
            server.abort();
        }
    });
}
