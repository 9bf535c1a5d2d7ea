use jsonrpc_runtime::{rpc, context::TypedContext};

#[rpc]
trait Indexer {
    #[rpc(request = "index", progress = u32)]
    async fn index(&self, ctx: TypedContext<String>, files: u32) -> u32;
}

fn main() {}
