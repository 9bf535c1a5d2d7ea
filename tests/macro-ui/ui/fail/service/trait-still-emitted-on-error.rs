use jsonrpc_runtime::rpc;

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
    #[rpc(reqest = "negate")]
    async fn negate(&self, a: i64) -> i64;
}

struct Calc;

impl Calculator for Calc {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    async fn negate(&self, a: i64) -> i64 {
        -a
    }
}

async fn use_it(calc: &impl Calculator) -> i64 {
    calc.add(1, 2).await + calc.negate(3).await
}

fn main() {
    let _ = use_it(&Calc);
}
