use jsonrpc_runtime::rpc;

#[rpc]
trait Ticker {
    #[rpc(subscription = "subscribe_ticks", unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, count: u64);
}

fn main() {}
