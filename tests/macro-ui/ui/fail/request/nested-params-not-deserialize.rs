use jsonrpc_runtime::rpc;

struct Point {
    x: i64,
}

#[rpc]
trait Canvas {
    #[rpc(request = "polygon")]
    async fn polygon(&self, corners: Vec<Point>) -> bool;
}

fn main() {}
