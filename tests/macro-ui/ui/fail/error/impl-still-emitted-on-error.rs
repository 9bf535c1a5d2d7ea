use jsonrpc_runtime::{ErrorObject, RpcError};

#[derive(Debug, RpcError)]
enum StorageError {
    #[rpc(error(code = -32010))]
    Full,
    #[rpc(error(cod = -32011))]
    Locked,
}

fn to_wire(e: StorageError) -> ErrorObject {
    e.into_error_object()
}

fn main() {
    let _ = to_wire;
}
