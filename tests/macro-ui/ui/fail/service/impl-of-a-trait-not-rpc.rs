use jsonrpc_runtime::rpc;

trait Plain {
    fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

struct Service;

#[rpc]
impl Plain for Service {}

fn main() {}
