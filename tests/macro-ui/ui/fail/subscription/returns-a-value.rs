use jsonrpc_runtime::rpc;
use jsonrpc_runtime::router::PendingSubscription;
use jsonrpc_runtime::ErrorObject;

#[rpc]
trait Ticker {
    #[rpc(subscription = "subscribe_ticks", unsubscribe = "unsubscribe_ticks")]
    async fn ticks(&self, pending: PendingSubscription<u64>) -> Result<u64, ErrorObject>;
}

fn main() {}
