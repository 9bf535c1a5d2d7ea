//! Cancellation, progress, partial results, lifecycles and the LSP and MCP
//! presets.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonrpc_runtime::codec::Framing;
use jsonrpc_runtime::policy::{CancellationPolicy, ProgressPolicy};
use jsonrpc_runtime::{
    peer::CallOptions, CallError, CloseReason, Config, Context, ErrorCode, ErrorObject, Peer,
    Router, Transport,
};
use serde_json::{json, Value};
use tests::RawClient;

/// Sets its flag when dropped: proves a handler's future was stopped.
struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// `{"ms": n}` or `[n]`.
#[derive(serde::Deserialize)]
struct SlowParams {
    ms: u64,
}

fn slow_router(stopped: Arc<AtomicBool>) -> Router {
    Router::new()
        .request("slow", move |p: SlowParams, _: Context| {
            let flag = DropFlag(stopped.clone());
            async move {
                let _flag = flag;
                tokio::time::sleep(Duration::from_millis(p.ms)).await;
                Ok::<_, ErrorObject>(json!({"slept": true}))
            }
        })
        .request("fast", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(1)
        })
}

fn pair(config: Config, router: Router) -> (Peer, Peer) {
    let (a, b) = Transport::pair(64);
    let server = Peer::builder()
        .config(config.clone())
        .router(router)
        .spawn(b);
    (Peer::builder().config(config).spawn(a), server)
}

fn lsp_without_lifecycle() -> Config {
    Config::default()
        .cancellation(CancellationPolicy::lsp())
        .progress(ProgressPolicy::lsp())
}

fn mcp_without_lifecycle() -> Config {
    Config::default()
        .cancellation(CancellationPolicy::mcp())
        .progress(ProgressPolicy::mcp())
}

#[tokio::test]
async fn lsp_cancellation_stops_the_handler_and_answers_request_cancelled() {
    let stopped = Arc::new(AtomicBool::new(false));
    let (client, _server) = pair(lsp_without_lifecycle(), slow_router(stopped.clone()));
    let call = client
        .call_with_progress::<Value, ErrorObject, Value>(
            "slow",
            json!({"ms": 10_000}),
            CallOptions::default(),
        )
        .unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let cancelled_at = Instant::now();
    call.cancel(Some("user")).unwrap();
    let err = tokio::time::timeout(Duration::from_secs(2), call.result())
        .await
        .unwrap()
        .unwrap_err();
    assert!(
        matches!(&err, CallError::Domain(e) if e.code == ErrorCode::REQUEST_CANCELLED),
        "{err:?}"
    );
    println!("LSP cancel answered after {:?}", cancelled_at.elapsed());
    assert!(stopped.load(Ordering::SeqCst), "the handler kept running");
}

#[tokio::test]
async fn mcp_cancellation_fails_the_call_locally_and_sends_no_answer() {
    let stopped = Arc::new(AtomicBool::new(false));
    let mut raw = RawClient::start(slow_router(stopped.clone()), mcp_without_lifecycle());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow","params":[10000]}"#)
        .await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"fast"}"#)
        .await;
    // The next answer is the second request's: the cancelled one gets none.
    assert_eq!(raw.recv().await, json!({"jsonrpc":"2.0","id":2,"result":1}));
    raw.expect_silence(Duration::from_millis(200)).await;
    assert!(stopped.load(Ordering::SeqCst));

    // And the calling side learns at once.
    let (client, _server) = pair(mcp_without_lifecycle(), slow_router(Arc::default()));
    let call = client
        .call_with_progress::<Value, ErrorObject, Value>(
            "slow",
            json!({"ms": 10_000}),
            CallOptions::default(),
        )
        .unwrap();
    call.cancel(None).unwrap();
    let err = tokio::time::timeout(Duration::from_secs(1), call.result())
        .await
        .unwrap()
        .unwrap_err();
    assert!(matches!(err, CallError::Cancelled), "{err:?}");
}

#[tokio::test]
async fn a_request_cancelled_before_it_starts_is_answered_once() {
    let config = lsp_without_lifecycle().max_in_flight(1);
    let mut raw = RawClient::start(slow_router(Arc::default()), config);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow","params":[300]}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"slow","params":[300]}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}"#)
        .await;
    let first = raw.recv().await;
    assert_eq!(
        (first["id"].clone(), first["error"]["code"].clone()),
        (json!(2), json!(-32800))
    );
    let second = raw.recv().await;
    assert_eq!(
        (second["id"].clone(), second["result"].clone()),
        (json!(1), json!({"slept": true}))
    );
    // Cancelling a finished request changes nothing.
    raw.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        .await;
    raw.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn protected_methods_are_not_cancelled() {
    let router = Router::new().request("initialize", |(): (), _: Context| async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Ok::<_, ErrorObject>(json!({"ok": true}))
    });
    let mut raw = RawClient::start(router, mcp_without_lifecycle());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], json!({"ok": true}));
}

#[tokio::test]
async fn dropping_a_call_future_tells_the_other_side() {
    let seen = Arc::new(AtomicBool::new(false));
    let flag = seen.clone();
    let router = Router::new().request("wait", move |(): (), ctx: Context| {
        let flag = flag.clone();
        async move {
            ctx.cancellation().cancelled().await;
            flag.store(true, Ordering::SeqCst);
            Ok::<_, ErrorObject>(())
        }
    });
    let config = Config::default().cancellation(CancellationPolicy::lsp().keep_running());
    let (client, _server) = pair(config, router);
    let _ = tokio::time::timeout(Duration::from_millis(50), client.call::<()>("wait", ())).await;
    for _ in 0..100 {
        if seen.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the handler never saw the cancellation");
}

#[tokio::test]
async fn without_a_policy_cancel_sends_nothing() {
    let mut raw = RawClient::start(slow_router(Arc::default()), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow","params":[50]}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], json!({"slept": true}));
}

fn counting_router() -> Router {
    Router::new().request("count", |p: Value, ctx: Context| async move {
        let n = p["n"].as_u64().unwrap_or(3);
        for step in 1..=n {
            ctx.progress(json!({"progress": step, "total": n})).unwrap();
            tokio::task::yield_now().await;
        }
        Ok::<_, ErrorObject>(json!({"done": true, "steps": n}))
    })
}

#[tokio::test]
async fn progress_arrives_in_order_before_the_answer() {
    for config in [lsp_without_lifecycle(), mcp_without_lifecycle()] {
        let (client, _server) = pair(config, counting_router());
        let mut call = client
            .call_with_progress::<Value, ErrorObject, Value>(
                "count",
                json!({"n": 50}),
                CallOptions::default(),
            )
            .unwrap();
        let mut steps = Vec::new();
        while let Some(value) = call.next_progress().await {
            let value = value.unwrap();
            steps.push(value["progress"].as_u64().unwrap());
        }
        assert_eq!(steps, (1..=50).collect::<Vec<_>>());
        assert_eq!(
            call.result().await.unwrap(),
            json!({"done": true, "steps": 50})
        );
    }
}

#[tokio::test]
async fn progress_is_on_the_wire_before_the_answer_and_never_after() {
    let router = Router::new().request("late", |_: Value, ctx: Context| async move {
        ctx.progress(json!({"kind": "report"})).unwrap();
        let late = ctx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            late.progress(json!({"kind": "too late"})).unwrap();
        });
        Ok::<_, ErrorObject>(1)
    });
    let mut raw = RawClient::start(router, lsp_without_lifecycle());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"late","params":{"workDoneToken":"t"}}"#)
        .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","method":"$/progress","params":{"token":"t","value":{"kind":"report"}}})
    );
    assert_eq!(raw.recv().await["result"], 1);
    raw.expect_silence(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn mcp_progress_must_increase_and_rides_in_meta() {
    let router = Router::new().request("tools/call", |_: Value, ctx: Context| async move {
        ctx.progress(json!({"progress": 1})).unwrap();
        let err = ctx.progress(json!({"progress": 1})).unwrap_err();
        Ok::<_, ErrorObject>(err.to_string())
    });
    let mut raw = RawClient::start(router, mcp_without_lifecycle());
    raw.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":9}}}"#,
    )
    .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":1}})
    );
    let answer = raw.recv().await;
    assert!(
        answer["result"].as_str().unwrap().contains("must increase"),
        "{answer}"
    );
}

#[tokio::test]
async fn progress_without_a_token_or_policy_is_a_no_op() {
    let (client, _server) = pair(Config::default(), counting_router());
    let mut call = client
        .call_with_progress::<Value, ErrorObject, Value>(
            "count",
            json!({"n": 3}),
            CallOptions::default(),
        )
        .unwrap();
    assert!(call.next_progress().await.is_none());
    assert_eq!(call.result().await.unwrap()["steps"], 3);
}

#[tokio::test]
async fn partial_results_stream_before_the_final_answer() {
    let router = Router::new().request("symbols", |_: Value, ctx: Context| async move {
        for chunk in [["a", "b"], ["c", "d"]] {
            ctx.partial_result(chunk).unwrap();
        }
        Ok::<_, ErrorObject>(Vec::<String>::new())
    });
    let (client, _server) = pair(lsp_without_lifecycle(), router);
    let mut call = client
        .call_partial_results::<Vec<String>, ErrorObject, Vec<String>>(
            "symbols",
            json!({}),
            CallOptions::default(),
        )
        .unwrap();
    let mut items = Vec::new();
    while let Some(chunk) = call.next_progress().await {
        items.extend(chunk.unwrap());
    }
    assert_eq!(items, ["a", "b", "c", "d"]);
    assert!(call.result().await.unwrap().is_empty());
}

#[tokio::test]
async fn progress_can_keep_a_call_alive_past_its_timeout() {
    let router = Router::new().request("steady", |_: Value, ctx: Context| async move {
        for step in 1..=6 {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ctx.progress(json!({"progress": step})).unwrap();
        }
        Ok::<_, ErrorObject>("finished")
    });
    let base = mcp_without_lifecycle().request_timeout(Duration::from_millis(150));
    let (client, _server) = pair(base.clone().progress_resets_timeout(true), router.clone());
    let call = client
        .call_with_progress::<String, ErrorObject, Value>(
            "steady",
            json!({}),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(call.result().await.unwrap(), "finished");

    let (client, _server) = pair(base, router);
    let call = client
        .call_with_progress::<String, ErrorObject, Value>(
            "steady",
            json!({}),
            CallOptions::default(),
        )
        .unwrap();
    assert!(matches!(call.result().await, Err(CallError::TimedOut)));
}

fn lsp_router() -> Router {
    Router::new()
        .request("initialize", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({"capabilities": {}}))
        })
        .request("shutdown", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(())
        })
        .request("hover", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>("hover")
        })
}

#[tokio::test]
async fn lsp_lifecycle_gates_requests_and_exit_sets_the_code() {
    let config = Config::lsp().framing(Framing::NewlineDelimited);
    let mut raw = RawClient::start(lsp_router(), config.clone());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"hover","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32002);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], json!({"capabilities": {}}));
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"hover","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], "hover");
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"$/unknownRequest"}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32601);
    raw.send(r#"{"jsonrpc":"2.0","method":"$/setTrace","params":{"value":"off"}}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":6,"method":"shutdown"}"#)
        .await;
    assert_eq!(raw.recv().await["result"], Value::Null);
    raw.send(r#"{"jsonrpc":"2.0","id":7,"method":"hover","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","method":"exit"}"#).await;
    let reason = tokio::time::timeout(Duration::from_secs(3), raw.peer.closed())
        .await
        .unwrap();
    assert!(
        matches!(reason, CloseReason::Exit { code: 0 }),
        "{reason:?}"
    );

    let mut raw = RawClient::start(lsp_router(), config);
    raw.send(r#"{"jsonrpc":"2.0","method":"exit"}"#).await;
    let reason = tokio::time::timeout(Duration::from_secs(3), raw.peer.closed())
        .await
        .unwrap();
    assert_eq!(reason.exit_code(), 1);
}

#[tokio::test]
async fn mcp_preset_answers_ping_refuses_batches_and_null_ids_and_stays_usable() {
    let router = Router::new().request("initialize", |_: Value, _: Context| async {
        Ok::<_, ErrorObject>(json!({"protocolVersion": "2025-06-18"}))
    });
    let mut raw = RawClient::start(router, Config::mcp());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .await;
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc":"2.0","id":1,"result":{}})
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32002);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#)
        .await;
    assert_eq!(raw.recv().await["result"]["protocolVersion"], "2025-06-18");
    raw.send(r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32600);
    raw.send(r#"{"jsonrpc":"2.0","id":5,"method":"server/discover"}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32601);
    raw.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#)
        .await;
    assert_eq!(raw.recv().await["result"], json!({}));
}

#[tokio::test]
async fn a_custom_progress_policy_travels_and_received_reports_must_increase() {
    let policy = ProgressPolicy::new("progress", "task")
        .value_inline()
        .token_path(["meta", "task"])
        .increasing("done");
    let config = Config::default().progress(policy);
    let router = Router::new().request("work", |p: Value, ctx: Context| async move {
        // The token arrived where the policy puts it.
        let token = ctx.progress_token().cloned().expect("a token");
        assert_eq!(p["meta"]["task"], serde_json::to_value(&token).unwrap());
        // Through the policy, a report that does not increase is refused.
        ctx.progress(json!({"done": 2, "of": 3})).unwrap();
        assert!(ctx.progress(json!({"done": 2})).is_err());
        // Sent by hand, it reaches the caller, which drops it.
        let by_hand = json!({"task": token, "done": 1});
        ctx.peer().notify("progress", by_hand).await.unwrap();
        ctx.progress(json!({"done": 3, "of": 3})).unwrap();
        Ok::<_, ErrorObject>("done")
    });
    let (client, _server) = pair(config, router);
    let mut call = client
        .call_with_progress::<String, ErrorObject, Value>("work", json!({}), CallOptions::default())
        .unwrap();
    let mut seen = Vec::new();
    while let Some(report) = call.next_progress().await {
        seen.push(report.unwrap());
    }
    assert_eq!(
        seen,
        [json!({"done": 2, "of": 3}), json!({"done": 3, "of": 3})]
    );
    assert_eq!(call.result().await.unwrap(), "done");
}

#[tokio::test]
async fn a_cancellation_can_be_spelled_another_way() {
    let policy = CancellationPolicy::new("abort", "target")
        .shape(
            |id, reason| json!({"target": {"request": id}, "why": reason}),
            |params| serde_json::from_value(params["target"]["request"].clone()).ok(),
        )
        .answer_with(ErrorObject::new(-32800, "Request cancelled"));
    let stopped = Arc::new(AtomicBool::new(false));
    let mut raw = RawClient::start(
        slow_router(stopped.clone()),
        Config::default().cancellation(policy),
    );
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow","params":[60000]}"#)
        .await;
    raw.send(
        r#"{"jsonrpc":"2.0","method":"abort","params":{"target":{"request":1},"why":"user"}}"#,
    )
    .await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32800, "{answer}");
    assert!(stopped.load(Ordering::SeqCst), "the handler was stopped");
}

#[tokio::test]
async fn progress_on_a_token_the_other_side_made_is_received_until_dropped_or_closed() {
    let config = lsp_without_lifecycle();
    let (client, server) = pair(config, Router::new());
    let token = jsonrpc_runtime::Id::from("indexing");
    let mut reports = client.subscribe_progress::<Value>(token.clone()).unwrap();
    assert!(
        client.subscribe_progress::<Value>(token.clone()).is_err(),
        "one subscription per token"
    );
    for step in 1..=2 {
        let report = json!({"token": "indexing", "value": {"step": step}});
        server.notify("$/progress", report).await.unwrap();
    }
    assert_eq!(reports.next().await.unwrap().unwrap(), json!({"step": 1}));
    assert_eq!(reports.next().await.unwrap().unwrap(), json!({"step": 2}));
    drop(reports);
    // Dropped: the token is free again; a new subscription sees only what
    // comes after it, and ends when the connection does.
    let mut again = client.subscribe_progress::<Value>(token).unwrap();
    server.close_now().await;
    assert!(tokio::time::timeout(tests::ANSWER_TIMEOUT, again.next())
        .await
        .expect("the stream ends with the connection")
        .is_none());
}

#[tokio::test]
async fn under_the_mcp_preset_a_malformed_client_response_is_never_answered() {
    let mut raw = RawClient::start(Router::new(), Config::mcp());
    for line in [
        r#"{"jsonrpc":"2.0","result":1}"#,
        r#"{"jsonrpc":"2.0","id":9,"result":1,"error":{"code":1,"message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":9,"error":"not an object"}"#,
    ] {
        raw.send(line).await;
    }
    raw.send(r#"{"jsonrpc":"2.0","id":null,"result":1}"#).await;
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .await;
    // Only the null id (rule 4), the array params and the ping are answered.
    let null_id = raw.recv().await;
    assert_eq!(
        (null_id["id"].clone(), null_id["error"]["code"].clone()),
        (json!(null), json!(-32600))
    );
    let array = raw.recv().await;
    assert_eq!(
        (array["id"].clone(), array["error"]["code"].clone()),
        (json!(1), json!(-32602))
    );
    assert_eq!(
        raw.recv().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
    raw.expect_silence(Duration::from_millis(100)).await;
}
