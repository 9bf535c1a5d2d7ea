use jsonrpc_runtime::rpc;

#[derive(Debug)]
struct PlainError;

type CalcResult<T> = Result<T, PlainError>;

#[rpc]
trait Calculator {
    #[rpc(request = "divide")]
    async fn divide(&self, a: i64, b: i64) -> CalcResult<i64>;
}

fn main() {}
