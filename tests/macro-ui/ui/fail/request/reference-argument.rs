use jsonrpc_runtime::rpc;

#[rpc]
trait Greeter {
    #[rpc(request = "greet")]
    async fn greet(&self, name: &str) -> String;
}

fn main() {}
