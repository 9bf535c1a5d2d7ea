use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

struct Service;

#[rpc(client = "Stub")]
impl Calculator for Service {}

fn main() {}
