//! A trait and its `#[rpc]` supertrait, served together in one line.
use jsonrpc_runtime::{rpc, Router};

#[rpc]
trait Base {
    #[rpc(request = "ping")]
    async fn ping(&self) -> String;
}

#[rpc]
trait Full: Base {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

#[derive(Clone)]
struct Service;

impl Base for Service {
    async fn ping(&self) -> String {
        "pong".into()
    }
}

impl Full for Service {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

fn main() {
    let service = Service;
    let _: Router = Full::into_router(service.clone()).merge(Base::into_router(service));
}
