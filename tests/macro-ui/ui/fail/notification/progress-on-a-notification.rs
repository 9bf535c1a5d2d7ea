use jsonrpc_runtime::rpc;

#[rpc]
trait Logger {
    #[rpc(notification = "log", progress = u32)]
    async fn log(&self, message: String);
}

fn main() {}
