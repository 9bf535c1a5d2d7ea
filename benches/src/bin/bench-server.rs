//! The server end of the child-process benchmarks: the suite's service
//! (registered by hand) on stdio, served by a peer on a current-thread
//! runtime until stdin ends.

use std::sync::Arc;

use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_runtime::{Peer, Transport};

fn main() -> std::io::Result<()> {
    let runtime = jsonrpc_benches::runtime();
    runtime.block_on(async {
        let config = jsonrpc_benches::config();
        let transport = Transport::stdio(&config)?;
        let router = hand_router(Arc::new(State::default()));
        Peer::builder()
            .config(config)
            .router(router)
            .serve(transport)
            .await;
        Ok(())
    })
}
