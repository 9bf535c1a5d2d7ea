use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, (a, b): (i32, i32)) -> i32;
}

fn main() {}
