use jsonrpc_runtime::{rpc, Context};

#[rpc]
trait Indexer {
    #[rpc(request = "index", progress = u32)]
    async fn index(&self, ctx: Context, files: u32) -> u32;
}

fn main() {}
