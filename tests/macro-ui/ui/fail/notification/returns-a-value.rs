use jsonrpc_runtime::rpc;

#[rpc]
trait Logger {
    #[rpc(notification = "log")]
    async fn log(&self, message: String) -> bool;
}

fn main() {}
