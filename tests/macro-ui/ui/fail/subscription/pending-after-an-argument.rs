use jsonrpc_runtime::rpc;
use jsonrpc_runtime::router::PendingSubscription;

#[rpc]
trait Ticker {
    #[rpc(subscription = "subscribe_ticks", unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, count: u64, pending: PendingSubscription<u64>);
}

fn main() {}
