use jsonrpc_runtime::rpc;

#[rpc]
trait Lookup<T> {
    #[rpc(request = "find")]
    async fn find(&self, key: String, fallback: Option<T>) -> Option<T>;
}

#[derive(serde::Serialize, serde::Deserialize)]
struct NoDefault(u8);

struct Table;

impl Lookup<NoDefault> for Table {
    async fn find(&self, _key: String, fallback: Option<NoDefault>) -> Option<NoDefault> {
        fallback
    }
}

fn main() {
    let _ = Table.into_router();
}
