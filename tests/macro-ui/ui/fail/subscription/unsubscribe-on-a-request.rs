use jsonrpc_runtime::rpc;

#[rpc]
trait Ticker {
    #[rpc(request = "ticks", unsubscribe = "unticks")]
    async fn ticks(&self) -> u64;
}

fn main() {}
