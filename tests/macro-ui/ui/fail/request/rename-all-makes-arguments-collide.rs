use jsonrpc_runtime::rpc;

#[rpc(rename_all = "camelCase")]
trait Pages {
    #[rpc(request = "list")]
    async fn list(&self, page_size: u32, #[rpc(rename = "pageSize")] size: u32) -> bool;
}

fn main() {}
