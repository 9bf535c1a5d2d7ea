use jsonrpc_runtime::rpc;

#[rpc]
trait Logger {
    #[rpc(request = "log")]
    async fn log(&self, message: impl Into<String>) -> bool;
}

fn main() {}
