use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(request = "sum")]
    async fn sum(&self, #[rpc(params)] values: Vec<i64>, scale: i64) -> i64;
}

fn main() {}
