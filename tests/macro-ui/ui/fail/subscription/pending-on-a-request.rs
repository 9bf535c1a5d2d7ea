use jsonrpc_runtime::rpc;
use jsonrpc_runtime::router::PendingSubscription;

#[rpc]
trait Ticker {
    #[rpc(request = "ticks")]
    async fn ticks(&self, pending: PendingSubscription<u64>) -> u64;
}

fn main() {}
