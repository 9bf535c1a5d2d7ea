//! A method under `#[cfg]` that is compiled out takes its route and client
//! method with it, types and all.
#![deny(warnings)]

use jsonrpc_runtime::rpc;

#[rpc]
trait Versions {
    #[rpc(request = "current")]
    async fn current(&self) -> u32;
    #[cfg(any())]
    #[rpc(request = "never")]
    async fn never(&self, gone: NotAType) -> NotAType;
}

struct V;

impl Versions for V {
    async fn current(&self) -> u32 {
        2
    }
}

fn main() {
    let _ = V.into_router();
    let _ = VersionsClient::current;
}
