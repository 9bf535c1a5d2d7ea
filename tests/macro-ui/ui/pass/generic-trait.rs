use jsonrpc_runtime::{rpc, ErrorObject, Peer};
use serde::de::DeserializeOwned;
use serde::Serialize;

#[rpc]
trait Store<K, V> {
    #[rpc(request = "get")]
    async fn get(&self, key: K) -> Option<V>;
    #[rpc(request = "put")]
    async fn put(&self, key: K, value: V) -> Result<(), ErrorObject>;
    #[rpc(request = "keys")]
    async fn keys(&self) -> Vec<K>;
}

#[rpc(bound = "T: Serialize + DeserializeOwned + Send + Sync + 'static")]
trait Echo<T> {
    #[rpc(request = "echo")]
    async fn echo(&self, #[rpc(params)] value: T) -> T;
}

struct Empty;

impl Store<String, u32> for Empty {
    async fn get(&self, key: String) -> Option<u32> {
        let _ = key;
        None
    }
    async fn put(&self, key: String, value: u32) -> Result<(), ErrorObject> {
        let _ = (key, value);
        Err(ErrorObject::new(-32050, "read only"))
    }
    async fn keys(&self) -> Vec<String> {
        Vec::new()
    }
}

impl Echo<u8> for Empty {
    async fn echo(&self, value: u8) -> u8 {
        value
    }
}

fn main() {
    let _ = Store::<String, u32>::into_router(Empty);
    let _ = Echo::<u8>::into_router(Empty);
    let _: fn(Peer) -> StoreClient<String, u32> = StoreClient::new;
    let _: fn(Peer) -> EchoClient<u8> = EchoClient::new;
}
