use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(request = "")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

fn main() {}
