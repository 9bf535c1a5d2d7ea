use jsonrpc_runtime::rpc;

#[rpc]
trait Logger {
    #[rpc(notify = "log")]
    async fn log(&self, message: String);
}

fn main() {}
