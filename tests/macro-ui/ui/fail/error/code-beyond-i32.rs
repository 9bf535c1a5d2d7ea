use jsonrpc_runtime::RpcError;

#[derive(Debug, RpcError)]
enum StorageError {
    #[rpc(error(code = 4294967296))]
    Full,
}

fn main() {}
