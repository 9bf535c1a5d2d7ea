use std::cell::RefCell;

use jsonrpc_runtime::rpc;

#[rpc]
trait Counter {
    #[rpc(request = "bump")]
    async fn bump(&self) -> u64;
}

struct Count {
    n: RefCell<u64>,
}

impl Counter for Count {
    async fn bump(&self) -> u64 {
        *self.n.borrow_mut() += 1;
        *self.n.borrow()
    }
}

fn main() {
    let _ = Count { n: RefCell::new(0) }.into_router();
}
