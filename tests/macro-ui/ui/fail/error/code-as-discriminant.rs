use jsonrpc_runtime::RpcError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    DivisionByZero = -32010,
}

fn main() {
    let _ = CalcError::DivisionByZero.into_error_object();
}
