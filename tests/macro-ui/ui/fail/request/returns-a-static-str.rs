use jsonrpc_runtime::rpc;

#[rpc]
trait Info {
    #[rpc(request = "version")]
    async fn version(&self) -> &'static str;
}

fn main() {}
