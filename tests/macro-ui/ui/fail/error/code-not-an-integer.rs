use jsonrpc_runtime::RpcError;

#[derive(RpcError)]
enum CalcError {
    #[rpc(error(code = "x"))]
    Overflow,
}

fn main() {}
