//! `#[rpc(context)]` marks the context when it is imported under another
//! name.
use jsonrpc_runtime::rpc;
use jsonrpc_runtime::Context as Ctx;

#[rpc]
trait Calculator {
    #[rpc(request = "whoami")]
    async fn whoami(&self, #[rpc(context)] ctx: Ctx) -> String;
}

struct Calc;

impl Calculator for Calc {
    async fn whoami(&self, ctx: Ctx) -> String {
        ctx.method().to_owned()
    }
}

fn main() {
    let _ = Calc.into_router();
    let _ = CalculatorClient::whoami;
}
