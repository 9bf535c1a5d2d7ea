use jsonrpc_runtime::rpc;

#[rpc(server, client)]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

fn main() {
    fn _client(c: &CalculatorClient) {
        let _ = c.add(1, 2);
    }
}
