use jsonrpc_runtime::RpcError;

#[derive(RpcError)]
enum CalcError {
    #[rpc(error(code = -32150))]
    Overflow,
}

fn main() {}
