use jsonrpc_runtime::rpc;

#[rpc]
trait Cluster {
    #[rpc(request)]
    async fn peer(&self, index: u32) -> String;
}

fn main() {}
