#![deny(warnings)]

use jsonrpc_runtime::rpc;

#[rpc]
trait Greeter {
    #[rpc(request = "greet")]
    async fn greet(&self, name: String) -> String {
        format!("hello {name}")
    }
    #[rpc(notification = "ping")]
    async fn ping(&self) {}
}

struct G;

impl Greeter for G {}

fn main() {
    let _ = G.into_router();
}
