//! A documented crate: the generated client and `into_router` are
//! documented too, so `missing_docs` stays quiet.
#![deny(missing_docs)]

use jsonrpc_runtime::{rpc, RpcError};
use serde::{Deserialize, Serialize};

/// Why a calculation failed.
#[derive(Debug, Serialize, Deserialize, RpcError)]
pub enum CalcError {
    /// The divisor was zero.
    #[rpc(error(code = -32010))]
    DivisionByZero,
}

/// A calculator.
#[rpc]
pub trait Calculator {
    /// Divides two numbers.
    #[rpc(request = "divide")]
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;

    #[rpc(request = "total")]
    /// The running total.
    async fn total(&self) -> i64;

    /// Records a message.
    #[rpc(notification = "log")]
    async fn log(&self, message: String);
}

/// A generic store.
#[rpc]
pub trait Store<K, V> {
    /// Reads a value.
    #[rpc(request = "get")]
    async fn get(&self, key: K) -> Option<V>;
}

fn main() {}
