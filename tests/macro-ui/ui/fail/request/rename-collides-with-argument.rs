use jsonrpc_runtime::rpc;

#[rpc]
trait Links {
    #[rpc(request = "open")]
    async fn open(&self, #[rpc(rename = "uri")] target: String, uri: String) -> bool;
}

fn main() {}
