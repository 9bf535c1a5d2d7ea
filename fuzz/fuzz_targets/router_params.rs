//! `Router::respond_with` on a router with typed routes (integers, strings,
//! structs with `Option` fields, arrays, enums, raw values, an `#[rpc]`
//! trait): the answer, when there is one, is JSON and a well-formed
//! response or batch of responses, and it answers exactly the messages the
//! classifier says are owed an answer, each once, by id.

#![no_main]

use std::sync::OnceLock;

use jsonrpc_runtime::message::{Message, Parsed};
use jsonrpc_runtime::router::ErrorMapping;
use jsonrpc_runtime::{rpc, Context, ErrorObject, Id, Reply, Router, RpcError};
use jsonrpc_runtime_fuzz::{check_response, parse_options, take_answered};
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

#[derive(Debug, Serialize, Deserialize)]
struct Point {
    x: i32,
    y: i32,
    #[serde(default)]
    label: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Shape {
    name: String,
    points: Vec<Point>,
    closed: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tags: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct Page {
    limit: Option<u8>,
    cursor: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Unit,
    Tuple(u8, char),
    Struct { x: i64, nested: Option<Box<Kind>> },
}

#[derive(Debug, Serialize, Deserialize, RpcError)]
enum CalcError {
    #[rpc(error(code = -32010, message = "Division by zero"))]
    DivisionByZero,
    #[rpc(error(code = -32011))]
    Overflow { a: i64, b: i64 },
}

#[rpc]
trait Calc {
    #[rpc(request = "calc.divide")]
    async fn divide(&self, a: i64, b: i64) -> Result<i64, CalcError>;

    #[rpc(request = "calc.greet")]
    async fn greet(&self, name: String, title: Option<String>) -> String;

    #[rpc(notification = "calc.log")]
    async fn log(&self, message: String, level: Option<u8>);
}

#[derive(Clone)]
struct Calculator;

impl Calc for Calculator {
    async fn divide(&self, a: i64, b: i64) -> Result<i64, CalcError> {
        match b {
            0 => Err(CalcError::DivisionByZero),
            _ => a.checked_div(b).ok_or(CalcError::Overflow { a, b }),
        }
    }

    async fn greet(&self, name: String, title: Option<String>) -> String {
        match title {
            Some(title) => format!("{title} {name}"),
            None => name,
        }
    }

    async fn log(&self, _message: String, _level: Option<u8>) {}
}

fn router() -> Router {
    Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            a.checked_add(b)
                .ok_or_else(|| ErrorObject::new(-32001, "overflow"))
        })
        .request(
            "concat",
            |(a, b): (String, String), _: Context| async move { Ok::<_, ErrorObject>(a + &b) },
        )
        .request("point", |p: Point, _: Context| async move {
            Ok::<_, ErrorObject>(p)
        })
        .request("shape", |s: Shape, _: Context| async move {
            Ok::<_, ErrorObject>(s)
        })
        .request("page", |p: Option<Page>, _: Context| async move {
            let p = p.unwrap_or(Page {
                limit: None,
                cursor: None,
            });
            Ok::<_, ErrorObject>((p.limit.unwrap_or(10), p.cursor))
        })
        .request("sum", |xs: Vec<u64>, _: Context| async move {
            Ok::<_, ErrorObject>(xs.iter().fold(0u64, |s, &x| s.saturating_add(x)))
        })
        .request("kind", |k: Kind, _: Context| async move {
            Ok::<_, ErrorObject>(k)
        })
        .request("double", |(x,): (f64,), _: Context| async move {
            // Overflows to infinity, which JSON has no word for.
            Ok::<_, ErrorObject>(x * 2.0)
        })
        .request("unit", |(): (), _: Context| async move {
            Ok::<_, ErrorObject>("ok")
        })
        .request(
            "fail",
            |(code, data): (i64, Value), _: Context| async move {
                let error = ErrorObject::new(code, "failed");
                Err::<(), _>(error.with_data(&data).unwrap_or_else(|e| {
                    ErrorObject::internal_error(format!("data not encodable: {e}"))
                }))
            },
        )
        .request("raw", |v: Box<RawValue>, _: Context| async move {
            Reply::<(), ErrorObject>::Raw(Ok(v))
        })
        .request_mapped(
            "mapped",
            |(ok, v): (bool, Value), _: Context| async move {
                if ok {
                    Ok(v)
                } else {
                    Err(v)
                }
            },
            ErrorMapping::new(-32020, "mapped"),
        )
        .request("whoami", |(): (), ctx: Context| async move {
            Ok::<_, ErrorObject>(serde_json::json!({
                "id": ctx.id(),
                "extras": ctx.extras(),
            }))
        })
        .notification("note", |(_,): (String,), _: Context| async {})
        .merge(Calc::into_router(Calculator))
}

fuzz_target!(|data: &[u8]| {
    static ROUTER: OnceLock<Router> = OnceLock::new();
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
    }
    let Some((&options, frame)) = data.split_first() else {
        return;
    };
    let options = parse_options(options);
    let router = ROUTER.get_or_init(router);
    let answer = RUNTIME.with(|rt| rt.block_on(router.respond_with(frame, &options)));

    // What is owed, by the classifier's reading of the frame.
    let parsed = Message::parse_bytes(frame, &options);
    let (batch, messages) = match &parsed {
        Parsed::Single(m) => (false, std::slice::from_ref(m)),
        Parsed::Batch(ms) => (true, &ms[..]),
        _ => unreachable!("a new kind of frame"),
    };
    let mut owed: Vec<Id> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Request(r) => Some(r.id.clone()),
            Message::Refused(r) => Some(r.id.clone()),
            _ => None,
        })
        .collect();

    let Some(answer) = answer else {
        assert!(owed.is_empty(), "no answer, {} owed", owed.len());
        return;
    };
    let text = String::from_utf8_lossy(&answer);
    let value: Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("the answer is not JSON ({e}): {text}"));
    let responses = match (&value, batch) {
        (Value::Array(responses), true) => &responses[..],
        (single, false) => std::slice::from_ref(single),
        _ => panic!("a batch answers with an array, a message with an object: {text}"),
    };
    assert_eq!(responses.len(), owed.len(), "answers owed: {text}");
    let mut nulls = owed.iter().filter(|id| id.is_null()).count();
    for response in responses {
        let id = check_response(response, options.dialect);
        if id.is_null() {
            nulls = nulls
                .checked_sub(1)
                .unwrap_or_else(|| panic!("too many null ids: {text}"));
        }
        take_answered(&mut owed, &id);
    }
});
