use jsonrpc_runtime::rpc;

#[rpc]
trait Store<T> {
    #[rpc(request = "get")]
    async fn get(&self, key: String) -> Option<T>;
}

struct Opaque;

struct Memory;

impl Store<Opaque> for Memory {
    async fn get(&self, _key: String) -> Option<Opaque> {
        None
    }
}

fn main() {
    let _ = Memory.into_router();
}
