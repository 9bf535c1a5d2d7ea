use jsonrpc_runtime::rpc;

#[rpc]
trait Gateway {
    #[rpc(request = "route")]
    async fn into_router(&self, path: String) -> String;
}

fn main() {}
