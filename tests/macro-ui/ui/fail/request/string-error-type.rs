use jsonrpc_runtime::rpc;

#[rpc]
trait Files {
    #[rpc(request = "read")]
    async fn read(&self, path: String) -> Result<String, String>;
}

fn main() {}
