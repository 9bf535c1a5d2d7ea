use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(request = "negate")]
    async fn negate(&self, #[rpc(rename = "")] a: i64) -> i64;
}

fn main() {}
