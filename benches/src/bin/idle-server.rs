//! The server end of the idle-connection benchmark: the suite's service on
//! a TCP or WebSocket listener (`idle-server tcp|ws`), on a current-thread
//! runtime (or two workers, with `IDLE_SERVER_RUNTIME=multi`), with a
//! counting allocator. It prints its address on stdout and
//! serves until stdin ends; the route `heap` answers the bytes of heap live.

use std::sync::Arc;

use jsonrpc_benches::alloc::{self, Counting};
use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{TcpAcceptor, WebSocketAcceptor};
use jsonrpc_runtime::{Context, ErrorObject};
use tokio::io::AsyncReadExt as _;

#[global_allocator]
static ALLOC: Counting = Counting;

fn main() -> std::io::Result<()> {
    let kind = std::env::args().nth(1).unwrap_or_else(|| "tcp".to_owned());
    let runtime = match std::env::var("IDLE_SERVER_RUNTIME").as_deref() {
        Ok("multi") => jsonrpc_benches::two_worker_runtime(),
        _ => jsonrpc_benches::runtime(),
    };
    runtime.block_on(async {
        let config = jsonrpc_benches::config();
        let router = hand_router(Arc::new(State::default()))
            .request("heap", |(): (), _: Context| async {
                Ok::<_, ErrorObject>(alloc::snapshot().live)
            });
        let server = match kind.as_str() {
            "ws" => {
                let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await?;
                println!("ws://{}/", acceptor.local_addr()?);
                Listener::new(acceptor).config(config).spawn(router)
            }
            _ => {
                let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
                println!("{}", acceptor.local_addr()?);
                Listener::new(acceptor).config(config).spawn(router)
            }
        };
        // Serve until stdin ends.
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
        drop(server);
        Ok(())
    })
}
