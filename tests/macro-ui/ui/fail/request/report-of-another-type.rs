use jsonrpc_runtime::{rpc, context::TypedContext};

#[rpc]
trait Indexer {
    #[rpc(request = "index", progress = u32)]
    async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32;
}

struct Files;

impl Indexer for Files {
    async fn index(&self, ctx: TypedContext<u32>, files: u32) -> u32 {
        ctx.progress("halfway").ok();
        files
    }
}

fn main() {}
