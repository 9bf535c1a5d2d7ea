//! A trait served with its `#[rpc]` supertraits, marker supertraits
//! skipped: `Full::into_router` serves `Base`'s methods too.
use jsonrpc_runtime::{rpc, Router};

#[rpc]
trait Base {
    #[rpc(request = "ping")]
    async fn ping(&self) -> String;
}

#[rpc]
trait Full: Base + Send + Sync + Clone + 'static {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
}

#[derive(Clone)]
struct Service;

impl Base for Service {
    async fn ping(&self) -> String {
        "pong".into()
    }
}

impl Full for Service {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
}

#[rpc]
trait Keyed<K> {
    #[rpc(request = "key")]
    async fn key(&self) -> K;
}

/// `Keyed`'s bounds on `K` are repeated: its router requires them.
#[rpc(bound = "K: serde::Serialize + serde::de::DeserializeOwned + Send + 'static")]
trait MoreKeyed<K>: Keyed<K> {
    #[rpc(request = "count")]
    async fn count(&self) -> u32;
}

impl Keyed<String> for Service {
    async fn key(&self) -> String {
        "k".into()
    }
}

impl MoreKeyed<String> for Service {
    async fn count(&self) -> u32 {
        1
    }
}

fn main() {
    let keyed = <Service as MoreKeyed<String>>::into_router(Service);
    assert!(keyed.contains("key") && keyed.contains("count"));
    let router: Router = Full::into_router(Service);
    assert!(router.contains("ping") && router.contains("add"));
    assert_eq!(<Service as Full>::openrpc_methods().len(), 2);
}
