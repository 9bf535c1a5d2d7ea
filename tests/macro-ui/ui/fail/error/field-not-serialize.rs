use jsonrpc_runtime::RpcError;

#[derive(Debug, RpcError)]
enum StoreError {
    #[rpc(error(code = -32010, message = "I/O failed"))]
    Io(std::io::Error),
}

fn main() {}
