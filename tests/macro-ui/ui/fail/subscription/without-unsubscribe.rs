use jsonrpc_runtime::rpc;
use jsonrpc_runtime::router::PendingSubscription;

#[rpc]
trait Ticker {
    #[rpc(subscription = "subscribe_ticks")]
    async fn ticks(&self, pending: PendingSubscription<u64>);
}

fn main() {}
