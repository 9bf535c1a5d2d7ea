use jsonrpc_runtime::{rpc, Context as Ctx};

#[rpc]
trait Session {
    #[rpc(request = "whoami")]
    async fn whoami(&self, ctx: Ctx) -> String;
}

fn main() {}
