use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(reqest = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
    #[rpc(notification = "log")]
    async fn log(&mut self, message: String);
}

fn main() {}
