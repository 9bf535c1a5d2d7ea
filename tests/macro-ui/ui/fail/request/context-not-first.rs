use jsonrpc_runtime::{rpc, Context};

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, ctx: Context) -> i64;
}

fn main() {}
