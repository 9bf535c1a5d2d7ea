use jsonrpc_runtime::rpc;

#[rpc]
struct Calculator {
    total: i64,
}

fn main() {}
