//! A `Result` written through an alias is a `Result` on the wire, and the
//! client's types say so.
use jsonrpc_runtime::{rpc, CallError, Peer, RpcError};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010))]
    DivisionByZero,
}

type CalcResult<T> = Result<T, CalcError>;

#[rpc]
trait Calculator {
    #[rpc(request = "divide")]
    async fn divide(&self, a: i64, b: i64) -> CalcResult<i64>;
}

async fn typed(peer: Peer) -> Result<i64, CallError<CalcError>> {
    CalculatorClient::new(peer).divide(1, 2).await
}

fn main() {
    let _ = typed;
}
