use jsonrpc_runtime::RpcError;

#[derive(Debug, RpcError)]
enum StorageError {
    #[rpc(error(code = -2147483649))]
    Full,
}

fn main() {}
