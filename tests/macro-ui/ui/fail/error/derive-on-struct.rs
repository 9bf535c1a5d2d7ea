use jsonrpc_runtime::RpcError;

#[derive(RpcError)]
struct CalcError {
    code: i64,
}

fn main() {}
