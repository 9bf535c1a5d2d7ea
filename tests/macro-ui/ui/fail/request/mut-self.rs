use jsonrpc_runtime::rpc;

#[rpc]
trait Counter {
    #[rpc(request = "increment")]
    async fn increment(&mut self) -> u64;
}

fn main() {}
