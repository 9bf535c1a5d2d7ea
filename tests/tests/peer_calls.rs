//! Calls, notifications, errors and policies between two peers.

use std::future::IntoFuture as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use jsonrpc_runtime::config::{IdStrategy, UnknownMethod};
use jsonrpc_runtime::message::Extras;
use jsonrpc_runtime::router::ErrorMapping;
use jsonrpc_runtime::{
    peer::CallOptions, CallError, Config, Context, ErrorCode, ErrorObject, Id, Peer, Reply, Router,
    RpcError, Transport,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tests::RawClient;

fn connect(router: Router, config: Config) -> (Peer, Peer) {
    let (a, b) = Transport::pair(64);
    let server = Peer::builder().router(router).config(config).spawn(b);
    (Peer::spawn(a), server)
}

#[derive(Deserialize)]
struct AddParams {
    a: i64,
    b: i64,
}

fn add_router() -> Router {
    Router::new().request("add", |p: AddParams, _: Context| async move {
        Ok::<_, ErrorObject>(p.a + p.b)
    })
}

#[tokio::test]
async fn call_returns_typed_result_by_name_and_by_position() {
    let (client, _server) = connect(add_router(), Config::default());
    let by_name: i64 = client.call("add", json!({"a": 2, "b": 3})).await.unwrap();
    let by_position: i64 = client.call("add", (4, 5)).await.unwrap();
    assert_eq!((by_name, by_position), (5, 9));
}

#[tokio::test]
async fn call_over_duplex_with_content_length_framing() {
    let (x, y) = tokio::io::duplex(4096);
    let (xr, xw) = tokio::io::split(x);
    let (yr, yw) = tokio::io::split(y);
    let codec = jsonrpc_runtime::codec::ContentLengthCodec::new();
    let _server = Peer::builder()
        .router(add_router())
        .spawn(Transport::from_io(yr, yw, codec.clone()));
    let client = Peer::spawn(Transport::from_io(xr, xw, codec));
    let sum: i64 = client.call("add", json!({"a": 40, "b": 2})).await.unwrap();
    assert_eq!(sum, 42);
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
enum CalcError {
    DivisionByZero,
    Overflow { a: i64 },
}

impl RpcError for CalcError {
    fn into_error_object(self) -> ErrorObject {
        match self {
            CalcError::DivisionByZero => ErrorObject::new(-32010, "Division by zero"),
            CalcError::Overflow { a } => ErrorObject::new(-32011, "Overflow")
                .with_data(&json!({ "a": a }))
                .unwrap(),
        }
    }
    fn from_error_object(error: &ErrorObject) -> Option<Self> {
        match error.code.0 {
            -32010 => Some(CalcError::DivisionByZero),
            -32011 => {
                let data: Value = error.data_as().ok()??;
                Some(CalcError::Overflow {
                    a: data["a"].as_i64()?,
                })
            }
            _ => None,
        }
    }
}

fn div_router() -> Router {
    Router::new().request("div", |(a, b): (i64, i64), _: Context| async move {
        if b == 0 {
            return Err(CalcError::DivisionByZero);
        }
        a.checked_div(b).ok_or(CalcError::Overflow { a })
    })
}

#[tokio::test]
async fn domain_errors_come_back_typed() {
    let (client, _server) = connect(div_router(), Config::default());
    let options = CallOptions::default;
    let err = client
        .call_with::<i64, CalcError>("div", (1, 0), options())
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Domain(CalcError::DivisionByZero)),
        "{err:?}"
    );
    let err = client
        .call_with::<i64, CalcError>("div", (i64::MIN, -1), options())
        .await
        .unwrap_err();
    assert!(
        matches!(err, CallError::Domain(CalcError::Overflow { a: i64::MIN })),
        "{err:?}"
    );
    // An untyped call sees the same answer as the raw wire error.
    let err = client.call::<i64>("div", (1, 0)).await.unwrap_err();
    assert_eq!(err.as_rpc().map(|e| e.code), Some(ErrorCode(-32010)));
}

#[tokio::test]
async fn unknown_codes_stay_raw_for_typed_callers() {
    let router = Router::new().request("teapot", |(): (), _: Context| async {
        Err::<(), _>(ErrorObject::new(418, "I'm a teapot"))
    });
    let (client, _server) = connect(router, Config::default());
    let err = client
        .call_with::<(), CalcError>("teapot", (), CallOptions::default())
        .await
        .unwrap_err();
    let raw = err.as_rpc().expect("raw wire error");
    assert_eq!((raw.code.0, &*raw.message), (418, "I'm a teapot"));
}

#[tokio::test]
async fn mapped_errors_carry_the_value_as_data() {
    #[derive(Serialize)]
    struct Negative {
        value: i64,
    }
    let router = Router::new().request_mapped(
        "sqrt",
        |(x,): (i64,), _: Context| async move {
            if x < 0 {
                Err(Negative { value: x })
            } else {
                Ok((x as f64).sqrt())
            }
        },
        ErrorMapping::new(-32020, "Negative input"),
    );
    let (client, _server) = connect(router, Config::default());
    let err = client.call::<f64>("sqrt", (-4,)).await.unwrap_err();
    let raw = err.as_rpc().unwrap();
    assert_eq!(raw.code.0, -32020);
    assert_eq!(raw.data_as::<Value>().unwrap(), Some(json!({"value": -4})));
}

#[tokio::test]
#[should_panic(expected = "`add` is registered twice")]
async fn registering_a_method_twice_panics_with_its_name() {
    let _ = add_router().request("add", |(): (), _: Context| async {
        Ok::<_, ErrorObject>(())
    });
}

#[tokio::test]
async fn a_raw_reply_is_answered_as_it_is_under_the_request_id() {
    let router = Router::new()
        .request("raw", |(): (), _: Context| async move {
            let raw = serde_json::value::to_raw_value(&json!({"raw": true})).unwrap();
            Reply::<(), ErrorObject>::Raw(Ok(raw))
        })
        .request("raw_error", |(): (), _: Context| async move {
            Reply::<(), ErrorObject>::Raw(Err(ErrorObject::new(-32001, "as it is")))
        });
    let (client, _server) = connect(router, Config::default());
    let out: Value = client.call("raw", ()).await.unwrap();
    assert_eq!(out, json!({"raw": true}));
    let err = client.call::<Value>("raw_error", ()).await.unwrap_err();
    assert!(matches!(err, CallError::Rpc(e) if e.code.0 == -32001 && e.message == "as it is"));
}

#[tokio::test]
async fn a_panicking_handler_is_answered_internal_error_and_serving_goes_on() {
    let router = add_router()
        .request("boom", |(): (), _: Context| async {
            panic!("boom") as Result<(), ErrorObject>
        })
        .notification("boom_note", |(): (), _: Context| async {
            panic!("note boom")
        });
    let (client, _server) = connect(router, Config::default());
    let err = client.call::<()>("boom", ()).await.unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::INTERNAL_ERROR)
    );
    client.notify("boom_note", ()).await.unwrap();
    let sum: i64 = client.call("add", (1, 1)).await.unwrap();
    assert_eq!(sum, 2);
}

#[tokio::test]
async fn notifications_run_in_order_before_later_requests() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let read = seen.clone();
    let router = Router::new()
        .notification("push", move |(n,): (u32,), _: Context| {
            let log = log.clone();
            async move {
                // Uneven delays would reorder concurrent handlers.
                if n % 7 == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                log.lock().unwrap().push(n);
            }
        })
        .request("count", move |(): (), _: Context| {
            let read = read.clone();
            async move { Ok::<_, ErrorObject>(read.lock().unwrap().len()) }
        });
    let (client, _server) = connect(router, Config::default());
    for n in 0..1000u32 {
        client.notify("push", (n,)).await.unwrap();
    }
    let count: usize = client.call("count", ()).await.unwrap();
    assert_eq!(count, 1000);
    assert_eq!(*seen.lock().unwrap(), (0..1000).collect::<Vec<_>>());
}

#[tokio::test]
async fn requests_run_concurrently() {
    let router = Router::new().request("wait", |(ms,): (u64,), _: Context| async move {
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok::<_, ErrorObject>(ms)
    });
    let (client, _server) = connect(router, Config::default());
    let started = std::time::Instant::now();
    let calls = (0..20).map(|_| client.call::<u64>("wait", (200,)).into_future());
    let results = futures_util::future::join_all(calls).await;
    assert!(results.iter().all(|r| matches!(r, Ok(200))));
    // Twenty sequential 200 ms sleeps would take 4 s.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

/// A router whose `outer` request asks the caller `inner` before answering.
fn callback_router() -> Router {
    Router::new().request("outer", |(n,): (i64,), ctx: Context| async move {
        let doubled: i64 = ctx.peer().call("inner", (n,)).await?;
        Ok::<_, ErrorObject>(doubled + 1)
    })
}

#[tokio::test]
async fn handlers_calling_back_at_the_in_flight_cap_do_not_deadlock() {
    let (a, b) = Transport::pair(4);
    let config = Config::default().max_in_flight(1);
    let _server = Peer::builder()
        .router(callback_router())
        .config(config.clone())
        .spawn(b);
    let client_router = Router::new().request("inner", |(n,): (i64,), _: Context| async move {
        Ok::<_, ErrorObject>(n * 2)
    });
    let client = Peer::builder()
        .router(client_router)
        .config(config)
        .spawn(a);
    let calls = (0..50).map(|n| client.call::<i64>("outer", (n,)).into_future());
    let results = tokio::time::timeout(
        Duration::from_secs(10),
        futures_util::future::join_all(calls),
    )
    .await
    .expect("no deadlock");
    for (n, r) in results.into_iter().enumerate() {
        assert_eq!(r.unwrap(), n as i64 * 2 + 1);
    }
}

#[tokio::test]
async fn requests_past_max_queued_are_refused_as_overloaded() {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let hold = gate.clone();
    let router = Router::new().request("hold", move |(): (), _: Context| {
        let hold = hold.clone();
        async move {
            let _ = hold.acquire().await;
            Ok::<_, ErrorObject>(())
        }
    });
    let config = Config::default().max_in_flight(1).max_queued(2);
    let (client, _server) = connect(router, config);
    let first = tokio::spawn({
        let c = client.clone();
        async move { c.call::<()>("hold", ()).await }
    });
    let second = tokio::spawn({
        let c = client.clone();
        async move { c.call::<()>("hold", ()).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let err = client.call::<()>("hold", ()).await.unwrap_err();
    assert_eq!(
        err.as_rpc().map(|e| e.code),
        Some(ErrorCode::SERVER_OVERLOADED)
    );
    gate.add_permits(2);
    first.await.unwrap().unwrap();
    second.await.unwrap().unwrap();
}

#[tokio::test]
async fn request_timeout_fails_the_call_and_options_override_it() {
    let router = Router::new().request("slow", |(): (), _: Context| async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok::<_, ErrorObject>("late")
    });
    let config_client = Config::default().request_timeout(Duration::from_millis(50));
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(router).spawn(b);
    let client = Peer::builder().config(config_client).spawn(a);
    let err = client.call::<String>("slow", ()).await.unwrap_err();
    assert!(matches!(err, CallError::TimedOut), "{err:?}");
    let options = CallOptions::default().timeout(Duration::from_secs(5));
    let late: String = client
        .call_with::<_, ErrorObject>("slow", (), options)
        .await
        .unwrap();
    assert_eq!(late, "late");
}

#[tokio::test]
async fn per_call_extras_reach_the_handler() {
    let router = Router::new().request("whoami", |(): (), ctx: Context| async move {
        let session = ctx.extras().and_then(|e| e.get("sessionId")).cloned();
        Ok::<_, ErrorObject>(session)
    });
    let (client, _server) = connect(router, Config::default());
    let mut extras = Extras::new();
    extras.insert("sessionId".into(), json!("abc123"));
    let options = CallOptions::default().extras(extras);
    let session: Option<Value> = client
        .call_with::<_, ErrorObject>("whoami", (), options)
        .await
        .unwrap();
    assert_eq!(session, Some(json!("abc123")));
    let none: Option<Value> = client.call("whoami", ()).await.unwrap();
    assert_eq!(none, None);
}

fn id_echo_router() -> Router {
    Router::new().request("id", |(): (), ctx: Context| async move {
        Ok::<_, ErrorObject>(ctx.id().cloned())
    })
}

#[tokio::test]
async fn ids_are_sequential_from_one_by_default() {
    let (client, _server) = connect(id_echo_router(), Config::default());
    let first: Id = client.call("id", ()).await.unwrap();
    let second: Id = client.call("id", ()).await.unwrap();
    assert_eq!((first, second), (Id::from(1), Id::from(2)));
}

#[tokio::test]
async fn custom_id_strategy_makes_string_ids_and_never_reuses_a_waiting_id() {
    let counter = Arc::new(AtomicUsize::new(0));
    let next = counter.clone();
    let strategy = IdStrategy::custom(move || {
        Id::from(format!("req-{}", next.fetch_add(1, Ordering::SeqCst)))
    });
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(id_echo_router()).spawn(b);
    let client = Peer::builder()
        .config(Config::default().id_strategy(strategy))
        .spawn(a);
    let id: Id = client.call("id", ()).await.unwrap();
    assert_eq!(id, Id::from("req-0"));

    // A generator that repeats itself: the second concurrent call is refused.
    let fixed = IdStrategy::custom(|| Id::from("same"));
    let (a, b) = Transport::pair(8);
    let router = Router::new().request("slow", |(): (), _: Context| async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok::<_, ErrorObject>(())
    });
    let _server = Peer::builder().router(router).spawn(b);
    let client = Peer::builder()
        .config(Config::default().id_strategy(fixed))
        .spawn(a);
    let (first, second) = tokio::join!(client.call::<()>("slow", ()), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        client.call::<()>("slow", ()).await
    });
    first.unwrap();
    assert!(matches!(second, Err(CallError::DuplicateId(id)) if id == Id::from("same")));
}

#[tokio::test]
async fn unknown_methods_follow_the_policy() {
    let mut raw = RawClient::start(add_router(), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","method":"nope"}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(1), json!(-32601))
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"rpc.discover"}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32601);

    let strict =
        Config::default().unknown_method(UnknownMethod::strict().ignoring(|m| m.starts_with("$/")));
    let mut raw = RawClient::start(add_router(), strict);
    raw.send(r#"{"jsonrpc":"2.0","method":"$/setTrace"}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","method":"nope"}"#).await;
    let answer = raw.recv().await;
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32601))
    );
    raw.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_request_for_a_notification_route_is_refused() {
    let router = Router::new().notification("log", |_: Value, _: Context| async {});
    let mut raw = RawClient::start(router, Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"log","params":["x"]}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32601);
}

#[tokio::test]
async fn handshake_gate_refuses_requests_until_initialize_succeeds() {
    let router = add_router()
        .request("initialize", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(json!({"capabilities": {}}))
        })
        .notification("note", |(): (), _: Context| async {
            unreachable!("dropped before the handshake")
        });
    let config = Config::default().require_handshake(
        "initialize",
        ErrorObject::new(-32002, "Server not initialized"),
    );
    let (client, _server) = connect(router, config);
    client.notify("note", ()).await.unwrap();
    let err = client.call::<i64>("add", (1, 2)).await.unwrap_err();
    assert_eq!(err.as_rpc().map(|e| e.code.0), Some(-32002));
    let _: Value = client.call("initialize", ()).await.unwrap();
    let sum: i64 = client.call("add", (1, 2)).await.unwrap();
    assert_eq!(sum, 3);
}

#[tokio::test]
async fn routes_without_params_accept_absent_null_and_empty_forms() {
    let router = Router::new().request("ping", |(): (), _: Context| async {
        Ok::<_, ErrorObject>("pong")
    });
    let mut raw = RawClient::start(router, Config::default());
    for params in [
        "",
        r#","params":null"#,
        r#","params":{}"#,
        r#","params":[]"#,
    ] {
        raw.send(&format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping"{params}}}"#
        ))
        .await;
        assert_eq!(raw.recv().await["result"], "pong", "params {params:?}");
    }
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":[1]}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32602);
}

#[tokio::test]
async fn responses_for_unknown_ids_are_dropped_and_serving_goes_on() {
    let mut raw = RawClient::start(add_router(), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":77,"result":1}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}"#)
        .await;
    assert_eq!(raw.recv().await, json!({"jsonrpc":"2.0","id":1,"result":3}));
}

#[tokio::test]
async fn send_unmatched_uses_the_given_id_and_leaves_no_waiter() {
    let (a, b) = Transport::pair(8);
    let router = Router::new().request("id", |(): (), ctx: Context| {
        let peer = ctx.peer().clone();
        async move {
            // Tell the caller which id arrived, out of band.
            peer.notify("seen", (ctx.id().cloned(),)).await.unwrap();
            Ok::<_, ErrorObject>(())
        }
    });
    let _server = Peer::builder().router(router).spawn(b);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let client_router = Router::new().notification("seen", move |(id,): (Id,), _: Context| {
        let _ = tx.send(id);
        async {}
    });
    let client = Peer::builder().router(client_router).spawn(a);
    client
        .send_unmatched(Id::from("forwarded-9"), "id", (), &Default::default())
        .await
        .unwrap();
    assert_eq!(rx.recv().await, Some(Id::from("forwarded-9")));
    // The answer to the unmatched request was dropped; ordinary calls still work.
    client.call::<()>("id", ()).await.unwrap();
}

#[tokio::test]
async fn params_that_are_not_structured_are_refused_before_sending() {
    let (client, _server) = connect(add_router(), Config::default());
    let err = client.call::<i64>("add", 5).await.unwrap_err();
    assert!(matches!(err, CallError::InvalidParams(_)), "{err:?}");
    assert!(client.notify("add", "text").await.is_err());
}

#[tokio::test]
async fn a_result_of_the_wrong_type_is_reported() {
    let (client, _server) = connect(add_router(), Config::default());
    let err = client.call::<String>("add", (1, 2)).await.unwrap_err();
    assert!(matches!(err, CallError::InvalidResult(_)), "{err:?}");
}

#[tokio::test]
async fn invoke_runs_a_route_without_a_transport_and_keeps_its_mapping() {
    let tools = div_router();
    // An MCP-style fan-out: one wire route dispatching to named tools.
    #[derive(Deserialize)]
    struct ToolCall {
        name: String,
        arguments: Box<serde_json::value::RawValue>,
    }
    let router = Router::new().request("tools/call", move |call: ToolCall, ctx: Context| {
        let tools = tools.clone();
        async move { tools.invoke(&call.name, Some(&call.arguments), ctx).await }
    });
    let params =
        serde_json::value::to_raw_value(&json!({"name": "div", "arguments": [1, 0]})).unwrap();
    let err = router
        .invoke(
            "tools/call",
            Some(&params),
            Context::detached(Some(Id::from(1))),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code.0, -32010);
    let params =
        serde_json::value::to_raw_value(&json!({"name": "nope", "arguments": []})).unwrap();
    let err = router
        .invoke("tools/call", Some(&params), Context::detached(None))
        .await
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND);
}

#[test]
fn call_and_close_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (a, _b) = Transport::pair(1);
        let peer = Peer::spawn(a);
        assert_send(&peer.call::<i64>("add", (1, 2)));
        assert_send(&peer.call_with::<i64, CalcError>("div", (1, 2), CallOptions::default()));
        assert_send(&peer.close(Duration::ZERO));
        assert_send(&peer.closed());
        assert_send(&Router::new().invoke("x", None, Context::detached(None)));
    });
}

#[tokio::test]
async fn extras_can_be_fixed_per_connection_computed_per_request_or_given_per_call() {
    let router = Router::new().request("extras", |(): (), ctx: Context| async move {
        Ok::<_, ErrorObject>(json!(ctx.extras()))
    });
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(router).spawn(b);
    let mut fixed = Extras::new();
    fixed.insert("client".into(), "tests".into());
    fixed.insert("traceId".into(), "fixed".into());
    let config = Config::default().extras(fixed).extras_for(|id| {
        let mut extras = Extras::new();
        extras.insert("traceId".into(), format!("trace-{id}").into());
        extras
    });
    let client = Peer::builder().config(config).spawn(a);
    let out: Value = client.call("extras", ()).await.unwrap();
    assert_eq!(out, json!({"client": "tests", "traceId": "trace-1"}));
    let mut own = Extras::new();
    own.insert("session".into(), "s1".into());
    let out: Value = client.call("extras", ()).extras(own).await.unwrap();
    assert_eq!(out, json!({"session": "s1"}));
    let mut reserved = Extras::new();
    reserved.insert("method".into(), "other".into());
    let err = client
        .call::<Value>("extras", ())
        .extras(reserved)
        .await
        .unwrap_err();
    assert!(matches!(err, CallError::InvalidParams(_)), "{err:?}");
}
