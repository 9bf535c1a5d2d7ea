use jsonrpc_runtime::rpc;

#[rpc]
trait Greeter<'a> {
    #[rpc(request = "greet")]
    async fn greet(&self, name: String) -> String;
}

fn main() {}
