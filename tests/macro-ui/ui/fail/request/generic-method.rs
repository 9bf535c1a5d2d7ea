use jsonrpc_runtime::rpc;

#[rpc]
trait Store {
    #[rpc(request = "get")]
    async fn get<K>(&self, key: K) -> String;
}

fn main() {}
