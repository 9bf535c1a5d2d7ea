//! The comparison: the same `add` on jsonrpsee, in process
//! (`RpcModule::raw_json_request`), over a loopback WebSocket, and over
//! HTTP.

use std::net::SocketAddr;

use jsonrpsee::core::traits::ToRpcParams;
use jsonrpsee::server::{RpcModule, Server, ServerHandle};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee_ws_client::{WsClient, WsClientBuilder};
use serde_json::value::RawValue;

use crate::AddParams;

/// `add` as an async method (like every route of ours), or as a plain
/// (synchronous) method, jsonrpsee's fastest kind.
pub fn module(sync: bool) -> RpcModule<()> {
    let mut module = RpcModule::new(());
    if sync {
        module
            .register_method("add", |params, _, _| {
                let p: AddParams = params.parse()?;
                Ok::<_, ErrorObjectOwned>(p.a + p.b)
            })
            .expect("one registration");
    } else {
        module
            .register_async_method("add", |params, _, _| async move {
                let p: AddParams = params.parse()?;
                Ok::<_, ErrorObjectOwned>(p.a + p.b)
            })
            .expect("one registration");
    }
    module
}

/// `add`'s params for jsonrpsee's client, sent as the same object our
/// clients send.
#[derive(Debug, Clone, Copy)]
pub struct Add(pub AddParams);

impl ToRpcParams for Add {
    fn to_rpc_params(self) -> Result<Option<Box<RawValue>>, serde_json::Error> {
        serde_json::value::to_raw_value(&self.0).map(Some)
    }
}

/// A jsonrpsee WebSocket server on a loopback port, serving the async
/// `add`.
pub async fn ws_server() -> (SocketAddr, ServerHandle) {
    let server = Server::builder().build("127.0.0.1:0").await.expect("bind");
    let addr = server.local_addr().expect("bound");
    (addr, server.start(module(false)))
}

/// A jsonrpsee HTTP server on a loopback port, serving the async `add`:
/// the same server as [`ws_server`] (jsonrpsee serves HTTP `POST`s and
/// WebSocket upgrades on one port), with its default limits (100
/// connections, 10 MiB bodies).
pub async fn http_server() -> (SocketAddr, ServerHandle) {
    ws_server().await
}

/// A jsonrpsee WebSocket client that allows `in_flight` concurrent calls.
pub async fn ws_client(addr: SocketAddr, in_flight: usize) -> WsClient {
    WsClientBuilder::default()
        .max_concurrent_requests(in_flight)
        .build(format!("ws://{addr}"))
        .await
        .expect("connect")
}
