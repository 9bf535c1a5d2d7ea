#![deny(warnings)]

// An `#[rpc]` trait written by a `macro_rules!` macro: wire names arrive
// as `$name:literal` fragments and types as `$t:ty`, each in an invisible
// group.
macro_rules! service {
    ($($wire:literal $name:ident($arg:ident: $ty:ty) -> $out:ty;)*) => {
        #[jsonrpc_runtime::rpc]
        trait Generated {
            $(
                #[rpc(request = $wire)]
                async fn $name(&self, #[rpc(params)] $arg: $ty) -> $out {
                    $arg.into()
                }
            )*
        }
    };
}

service! {
    "echo" echo(text: String) -> String;
    "widen" widen(n: u32) -> u64;
}

struct S;

impl Generated for S {}

fn main() {
    let router = S.into_router();
    assert!(router.contains("echo") && router.contains("widen"));
}
