use jsonrpc_runtime::{rpc, context::TypedContext};

#[rpc]
trait Indexer {
    #[rpc(request = "index", progress = u32)]
    async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32;
    #[rpc(request = "indexWithProgress")]
    async fn index_with_progress(&self, files: u32) -> u32;
}

fn main() {}
