use jsonrpc_runtime::{rpc, Context, ErrorObject, RpcError};
use serde::{Deserialize, Serialize};

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010, message = "Division by zero"))]
    DivisionByZero,
    #[rpc(error(code = -32011))]
    Overflow { a: i64, b: i64 },
    #[rpc(error(code = 7))]
    BadInput(String),
}

#[derive(Serialize, Deserialize)]
struct Point {
    x: i64,
    y: i64,
}

#[rpc(rename_all = "camelCase", client = "CalcStub")]
trait Calculator {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError>;
    #[rpc(request)]
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError>;
    #[rpc(request = "scale")]
    async fn scale(&self, value: i64, scale_factor: Option<i64>) -> i64;
    #[rpc(request = "whoami")]
    async fn whoami(&self, ctx: Context) -> String;
    #[rpc(request = "origin")]
    async fn origin(&self, #[rpc(params)] at: Point) -> Result<Point, ErrorObject>;
    #[rpc(request = "renamed")]
    async fn renamed(&self, #[rpc(rename = "x_value")] x: i64) -> i64;
    #[rpc(notification = "log")]
    async fn log(&self, message: String);
    #[rpc(notification)]
    async fn ping(&self);
}

struct Calc;

impl Calculator for Calc {
    async fn add(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        a.checked_add(b).ok_or(CalcError::Overflow { a, b })
    }
    async fn divide(&self, dividend: i64, divisor: i64) -> Result<i64, CalcError> {
        match divisor {
            0 => Err(CalcError::DivisionByZero),
            _ if dividend < 0 => Err(CalcError::BadInput(dividend.to_string())),
            _ => Ok(dividend / divisor),
        }
    }
    async fn scale(&self, value: i64, scale_factor: Option<i64>) -> i64 {
        value * scale_factor.unwrap_or(1)
    }
    async fn whoami(&self, ctx: Context) -> String {
        ctx.method().to_owned()
    }
    async fn origin(&self, at: Point) -> Result<Point, ErrorObject> {
        Ok(Point { x: -at.x, y: -at.y })
    }
    async fn renamed(&self, x: i64) -> i64 {
        x
    }
    async fn log(&self, message: String) {
        let _ = message;
    }
    async fn ping(&self) {}
}

fn main() {
    let router = Calc.into_router();
    let _ = router;
    let _: fn(jsonrpc_runtime::Peer) -> CalcStub = CalcStub::new;
}
