use jsonrpc_runtime::RpcError;

#[derive(RpcError)]
enum CalcError {
    #[rpc(error(code = -32600))]
    Invalid,
}

fn main() {}
