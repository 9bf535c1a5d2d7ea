use jsonrpc_runtime::{rpc, context::TypedContext};

struct Report {
    done: u32,
}

#[rpc]
trait Indexer {
    #[rpc(request = "index", progress = Report)]
    async fn index(&self, ctx: TypedContext<Report>) -> u32;
}

fn main() {}
