#![deny(warnings)]

// `#[rpc]` on an impl of an `#[rpc]` trait records the methods the impl
// writes, so a layer can tell them from the trait's defaults.
use jsonrpc_runtime::rpc;

#[rpc]
trait Greeter {
    #[rpc(request = "greet")]
    async fn greet(&self, name: String) -> String {
        format!("hello {name}")
    }
    #[rpc(notification = "ping")]
    async fn ping(&self) {}
}

struct Written;
struct Defaults;

#[rpc]
impl Greeter for Written {
    async fn r#ping(&self) {}
}

impl Greeter for Defaults {}

fn main() {
    assert_eq!(<Written as Greeter>::__jsonrpc_implemented(), Some(&["ping"][..]));
    assert_eq!(<Defaults as Greeter>::__jsonrpc_implemented(), None);
    let _ = Written.into_router();
}
