use jsonrpc_runtime::RpcError;

#[derive(RpcError)]
enum CalcError {
    #[rpc(error(code = -32010))]
    DivisionByZero,
    #[rpc(error(code = -32010))]
    Overflow,
}

fn main() {}
