// A crate that re-exports the runtime under another path names that path,
// and everything the macro generates goes through it.
mod facade {
    pub use ::jsonrpc_runtime as rt;
}

use facade::rt::{rpc, ErrorObject};

#[rpc(crate = "crate::facade::rt")]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> Result<i64, ErrorObject>;
    #[rpc(notification = "log")]
    async fn log(&self, message: String);
}

struct Calc;

impl Calculator for Calc {
    async fn add(&self, a: i64, b: i64) -> Result<i64, ErrorObject> {
        Ok(a + b)
    }
    async fn log(&self, _message: String) {}
}

fn main() {
    let router: facade::rt::Router = Calc.into_router();
    assert!(router.contains("add"));
    let _client = |peer: facade::rt::Peer| CalculatorClient::new(peer);
}
