use jsonrpc_runtime::{rpc, Context};

#[rpc]
trait Calculator {
    #[rpc(request = "whoami")]
    async fn whoami(&self, ctx: &Context) -> String;
}

fn main() {}
