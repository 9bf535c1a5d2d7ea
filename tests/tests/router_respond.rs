//! `Router::respond`: one frame in, its answer out, in process.

use jsonrpc_runtime::message::{Batches, ParseOptions};
use jsonrpc_runtime::{Context, ErrorObject, Router};
use serde_json::{json, Value};

fn router() -> Router {
    Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("whoami", |(): (), ctx: Context| async move {
            Ok::<_, ErrorObject>(
                json!({"id": ctx.id(), "method": ctx.method(), "extras": ctx.extras()}),
            )
        })
        .request("call_back", |(): (), ctx: Context| async move {
            let out: Value = ctx.peer().call("anything", ()).await?;
            Ok::<_, ErrorObject>(out)
        })
        .request("boom", |(): (), _: Context| async {
            panic!("boom") as Result<(), ErrorObject>
        })
        .request("wait", |(): (), _: Context| async {
            tokio::task::yield_now().await;
            Ok::<_, ErrorObject>("waited")
        })
        .notification("note", |(): (), _: Context| async {})
}

async fn respond(frame: &str) -> Option<Value> {
    let bytes = router().respond(frame.as_bytes()).await?;
    Some(serde_json::from_slice(&bytes).unwrap())
}

#[tokio::test]
async fn a_request_is_answered_and_a_notification_is_not() {
    assert_eq!(
        respond(r#"{"jsonrpc":"2.0","id":7,"method":"add","params":[2,3]}"#).await,
        Some(json!({"jsonrpc": "2.0", "id": 7, "result": 5}))
    );
    assert_eq!(respond(r#"{"jsonrpc":"2.0","method":"note"}"#).await, None);
    assert_eq!(
        respond(r#"{"jsonrpc":"2.0","method":"add","params":[1,1]}"#).await,
        None
    );
    assert_eq!(
        respond(r#"{"jsonrpc":"2.0","id":1,"method":"wait"}"#)
            .await
            .unwrap()["result"],
        "waited",
        "handlers that wait are awaited in place"
    );
}

#[tokio::test]
async fn handlers_see_id_method_and_extras_but_no_connection() {
    let out = respond(r#"{"jsonrpc":"2.0","id":"a","method":"whoami","trace":"t1"}"#)
        .await
        .unwrap();
    assert_eq!(
        out["result"],
        json!({"id": "a", "method": "whoami", "extras": {"trace": "t1"}})
    );
    let out = respond(r#"{"jsonrpc":"2.0","id":2,"method":"call_back"}"#)
        .await
        .unwrap();
    assert_eq!(out["error"]["code"], -32603, "{out}");
}

#[tokio::test]
async fn every_failure_is_an_error_answer() {
    let code = |v: Option<Value>| v.unwrap()["error"]["code"].clone();
    assert_eq!(code(respond("{not json").await), -32700);
    assert_eq!(code(respond(r#"{"jsonrpc":"2.0","id":1}"#).await), -32600);
    assert_eq!(
        code(respond(r#"{"jsonrpc":"2.0","id":1,"method":"nope"}"#).await),
        -32601
    );
    assert_eq!(
        code(respond(r#"{"jsonrpc":"2.0","id":1,"method":"note"}"#).await),
        -32601
    );
    assert_eq!(
        code(respond(r#"{"jsonrpc":"2.0","id":1,"method":"add","params":["x"]}"#).await),
        -32602
    );
    assert_eq!(
        code(respond(r#"{"jsonrpc":"2.0","id":1,"method":"boom"}"#).await),
        -32603
    );
    assert_eq!(code(respond("[]").await), -32600);
    let bad_utf8 = router()
        .respond(b"{\"id\":1,\"method\":\"\xff\"}")
        .await
        .unwrap();
    let bad_utf8: Value = serde_json::from_slice(&bad_utf8).unwrap();
    assert_eq!(bad_utf8["error"]["code"], -32700);
}

#[tokio::test]
async fn a_batch_is_answered_as_one_array_without_its_notifications() {
    let out = respond(
        r#"[{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]},
            {"jsonrpc":"2.0","method":"note"},
            {"jsonrpc":"2.0","id":2,"method":"nope"},
            5]"#,
    )
    .await
    .unwrap();
    let answers = out.as_array().unwrap();
    assert_eq!(answers.len(), 3, "{out}");
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": 3}));
    assert_eq!(answers[1]["error"]["code"], -32601);
    assert_eq!(answers[2]["error"]["code"], -32600);
    assert_eq!(
        respond(r#"[{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","method":"note"}]"#).await,
        None
    );
}

#[tokio::test]
async fn parse_options_apply() {
    let options = ParseOptions {
        batches: Batches::Refuse,
        ..ParseOptions::default()
    };
    let out = router()
        .respond_with(
            br#"[{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]}]"#,
            &options,
        )
        .await
        .unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["error"]["code"], -32600);
}
