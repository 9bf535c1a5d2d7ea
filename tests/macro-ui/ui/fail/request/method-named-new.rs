use jsonrpc_runtime::rpc;

#[rpc]
trait Documents {
    #[rpc(request = "new")]
    async fn new(&self, name: String) -> u32;
}

fn main() {}
