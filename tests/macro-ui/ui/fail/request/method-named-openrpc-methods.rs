use jsonrpc_runtime::rpc;

#[rpc]
trait Gateway {
    #[rpc(request = "route")]
    async fn openrpc_methods(&self, path: String) -> String;
}

fn main() {}
