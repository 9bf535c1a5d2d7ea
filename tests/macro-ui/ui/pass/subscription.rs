//! A subscription compiles without the prelude and with every lint denied.
#![no_implicit_prelude]
#![deny(warnings, missing_docs)]

/// Errors of the ticker.
#[derive(::std::fmt::Debug, ::serde::Serialize, ::serde::Deserialize, ::jsonrpc_runtime::RpcError)]
pub enum TickError {
    /// Asked for too many.
    #[rpc(error(code = -32020, message = "Too many ticks"))]
    TooMany,
}

/// A ticker.
#[::jsonrpc_runtime::rpc]
pub trait Ticker {
    /// Ticks.
    #[rpc(subscription = "subscribe_ticks", items = "ticks", unsubscribe = "unsubscribe_ticks")]
    async fn ticks(
        &self,
        pending: ::jsonrpc_runtime::router::PendingSubscription<u64>,
        count: u64,
    ) -> ::std::result::Result<(), TickError>;

    /// Names, with the context.
    #[rpc(subscription = "subscribe_names", unsubscribe = "unsubscribe_names")]
    async fn names(
        &self,
        ctx: ::jsonrpc_runtime::Context,
        pending: ::jsonrpc_runtime::router::PendingSubscription<::std::string::String>,
    );
}

fn main() {
    let _ = TickerClient::ticks;
    let _ = TickerClient::names;
}
