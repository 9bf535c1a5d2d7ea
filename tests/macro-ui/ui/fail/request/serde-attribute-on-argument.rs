use jsonrpc_runtime::rpc;

#[rpc]
trait Documents {
    #[rpc(request = "open")]
    async fn open(&self, #[serde(rename = "textDocument")] document: String) -> bool;
}

fn main() {}
