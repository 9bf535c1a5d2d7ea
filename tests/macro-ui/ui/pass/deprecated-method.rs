//! A deprecated method: the generated server never warns, the client
//! method is deprecated too.
#![deny(warnings)]

use jsonrpc_runtime::rpc;

#[rpc]
trait Versions {
    #[rpc(request = "current")]
    async fn current(&self) -> u32;
    #[deprecated = "use `current`"]
    #[rpc(request = "old")]
    async fn old(&self) -> u32;
}

struct V;

#[allow(deprecated)]
impl Versions for V {
    async fn current(&self) -> u32 {
        2
    }
    async fn old(&self) -> u32 {
        1
    }
}

fn main() {
    let _ = V.into_router();
    let _ = VersionsClient::current;
}
