use jsonrpc_runtime::{rpc, Peer, Router};

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
    #[rpc(request = "negate")]
    fn negate(&self, a: i64) -> i64;
}

struct Calc;

impl Calculator for Calc {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    fn negate(&self, a: i64) -> i64 {
        -a
    }
}

async fn call(peer: Peer) -> i64 {
    let client = CalculatorClient::new(peer);
    client.add(1, 2).await.unwrap()
}

fn main() {
    let _: Router = Calc.into_router();
    let _ = call;
}
