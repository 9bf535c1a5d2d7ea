use jsonrpc_runtime::RpcError;

#[derive(RpcError)]
enum CalcError {
    #[rpc(error(code = -32010, mesage = "Overflow"))]
    Overflow,
}

fn main() {}
