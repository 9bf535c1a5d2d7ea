use jsonrpc_runtime::rpc;

#[rpc(rename_all = "camelcase")]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, first_term: i64, second_term: i64) -> i64;
}

fn main() {}
