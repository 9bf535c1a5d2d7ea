//! The expansion itself causes no warnings: no unused variables, imports
//! or dead code beyond what the user wrote.
#![deny(warnings)]

use jsonrpc_runtime::{rpc, Context, Peer, RpcError, Transport};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010))]
    DivisionByZero,
    #[rpc(error(code = -32011))]
    Overflow { a: i64, b: i64 },
    #[rpc(error(code = 7))]
    Pair(u8, u8),
}

#[rpc]
trait Calculator {
    #[rpc(request = "divide")]
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;
    #[rpc(request = "total")]
    async fn total(&self) -> i64;
    #[rpc(request = "whoami")]
    async fn whoami(&self, ctx: Context) -> String;
    #[rpc(request = "sum")]
    async fn sum(&self, #[rpc(params)] values: Vec<i64>) -> i64;
    #[rpc(notification = "log")]
    async fn log(&self, message: String);
}

#[rpc]
trait Store<K, V> {
    #[rpc(request = "get")]
    async fn get(&self, key: K) -> Option<V>;
}

struct Calc;

impl Calculator for Calc {
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError> {
        match (dividend, divisor) {
            (_, 0) => Err(CalcError::DivisionByZero),
            (a, -1) if a == i64::MIN => Err(CalcError::Overflow { a, b: -1 }),
            (1, 2) => Err(CalcError::Pair(1, 2)),
            (a, b) => Ok(a / b),
        }
    }
    async fn total(&self) -> i64 {
        0
    }
    async fn whoami(&self, ctx: Context) -> String {
        ctx.method().to_owned()
    }
    async fn sum(&self, values: Vec<i64>) -> i64 {
        values.iter().sum()
    }
    async fn log(&self, message: String) {
        drop(message);
    }
}

struct Numbers;

impl Store<String, u32> for Numbers {
    async fn get(&self, key: String) -> Option<u32> {
        key.parse().ok()
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(Calc.into_router()).spawn(b);
    let calc = CalculatorClient::new(Peer::spawn(a));
    assert_eq!(calc.divide(6, 3).await.unwrap(), 2);
    assert_eq!(calc.total().await.unwrap(), 0);
    assert_eq!(calc.whoami().await.unwrap(), "whoami");
    assert_eq!(calc.sum(vec![1, 2]).await.unwrap(), 3);
    calc.log(String::new()).await.unwrap();

    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(Numbers.into_router()).spawn(b);
    let store: StoreClient<String, u32> = StoreClient::new(Peer::spawn(a));
    assert_eq!(store.get("7".into()).await.unwrap(), Some(7));
    let _ = store.peer();
}
