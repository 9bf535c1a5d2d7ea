use jsonrpc_runtime::RpcError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(code = -32010)]
    DivisionByZero,
}

fn main() {
    let _ = CalcError::DivisionByZero.into_error_object();
}
