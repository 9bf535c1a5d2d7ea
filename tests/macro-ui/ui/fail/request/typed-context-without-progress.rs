use jsonrpc_runtime::{rpc, context::TypedContext};

#[rpc]
trait Indexer {
    #[rpc(request = "index")]
    async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32;
}

fn main() {}
