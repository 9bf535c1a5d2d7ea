use jsonrpc_runtime::rpc;

#[derive(Debug)]
enum CalcError {
    Overflow,
}

#[rpc]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError>;
}

fn main() {}
