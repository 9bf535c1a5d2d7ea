use jsonrpc_runtime::rpc;

#[rpc]
trait Documents {
    #[rpc(request = "open")]
    async fn open(&self, #[rpc(name = "textDocument")] document: String) -> bool;
}

fn main() {}
