use jsonrpc_runtime::rpc;

struct Point {
    x: i64,
}

#[rpc]
trait Canvas {
    #[rpc(request = "origin")]
    async fn origin(&self) -> Point;
}

fn main() {}
