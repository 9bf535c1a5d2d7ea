use jsonrpc_runtime::rpc;

struct Service;

#[rpc]
impl Service {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {}
