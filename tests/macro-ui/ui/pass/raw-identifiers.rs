#![deny(warnings)]

use jsonrpc_runtime::rpc;

#[rpc]
trait Game {
    #[rpc(request)]
    async fn r#move(&self, r#type: String, r#where: u32) -> bool;
}

struct G;

impl Game for G {
    async fn r#move(&self, r#type: String, r#where: u32) -> bool {
        r#type.len() as u32 == r#where
    }
}

fn main() {
    let _ = G.into_router();
}
