//! Every supertrait of an `#[rpc]` trait but std's markers is served with
//! it, so it must be an `#[rpc]` trait itself.
use jsonrpc_runtime::rpc;

trait Named {
    fn name(&self) -> String;
}

#[rpc]
trait Full: Named + Send {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

fn main() {}
