#![no_implicit_prelude]

use ::jsonrpc_runtime::{rpc, Context, ErrorObject, RpcError};
use ::serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010))]
    DivisionByZero,
    #[rpc(error(code = -32011))]
    Overflow { a: i64, b: i64 },
    #[rpc(error(code = 7))]
    BadInput(::std::string::String),
    #[rpc(error(code = 8))]
    Pair(u8, u8),
}

#[rpc(rename_all = "camelCase")]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> ::core::result::Result<i64, CalcError>;
    #[rpc(request = "scale")]
    async fn scale(&self, value: i64, scale_factor: ::core::option::Option<i64>) -> i64;
    #[rpc(request = "whoami")]
    async fn whoami(&self, ctx: Context) -> ::std::string::String;
    #[rpc(request = "echo")]
    async fn echo(
        &self,
        #[rpc(params)] values: ::std::vec::Vec<i64>,
    ) -> ::core::result::Result<::std::vec::Vec<i64>, ErrorObject>;
    #[rpc(notification = "log")]
    async fn log(&self, message: ::std::string::String);
    #[rpc(request = "total")]
    async fn total(&self) -> i64;
}

#[rpc]
trait Store<K, V> {
    #[rpc(request = "get")]
    async fn get(&self, key: K) -> ::core::option::Option<V>;
    #[rpc(notification = "put")]
    async fn put(&self, key: K, value: V);
}

fn main() {}
