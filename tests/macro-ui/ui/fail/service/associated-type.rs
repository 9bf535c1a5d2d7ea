use jsonrpc_runtime::rpc;

#[rpc]
trait Store {
    type Key;

    #[rpc(request = "len")]
    async fn len(&self) -> u64;
}

fn main() {}
