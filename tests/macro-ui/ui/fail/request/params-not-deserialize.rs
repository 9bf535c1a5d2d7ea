use jsonrpc_runtime::rpc;

struct Point {
    x: i64,
}

#[rpc]
trait Canvas {
    #[rpc(request = "draw")]
    async fn draw(&self, at: Point) -> bool;
}

fn main() {}
