//! Limits that keep one client from taking a server's memory or time:
//! the batch cap and the bound on a batch's answers.

use jsonrpc_runtime::message::{Message, ParseOptions, Parsed};
use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
use serde_json::{json, Value};
use tests::RawClient;

fn echo_router() -> Router {
    Router::new().request("echo", |(text,): (String,), _: Context| async move {
        Ok::<_, ErrorObject>(text)
    })
}

fn batch_of(n: usize, text: &str) -> String {
    let elements: Vec<Value> = (0..n)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "echo", "params": [text]}))
        .collect();
    serde_json::to_string(&elements).unwrap()
}

#[test]
fn a_batch_over_the_cap_is_refused_whole_and_one_at_the_cap_is_served() {
    let options = ParseOptions {
        max_batch_len: 3,
        ..ParseOptions::default()
    };
    match Message::parse(&batch_of(4, "x"), &options) {
        Parsed::Single(Message::Refused(refusal)) => {
            assert_eq!(refusal.error.code.0, -32600);
            assert!(
                refusal.error.message.contains("4 elements") && refusal.error.message.contains('3'),
                "{}",
                refusal.error.message
            );
        }
        other => panic!("expected one refusal, got {other:?}"),
    }
    match Message::parse(&batch_of(3, "x"), &options) {
        Parsed::Batch(messages) => assert_eq!(messages.len(), 3),
        other => panic!("expected a batch of 3, got {other:?}"),
    }
    // Over the cap, the rest must still be JSON: a broken tail is a parse
    // error, as it would be under the cap.
    match Message::parse("[{}, {}, {}, {}, {", &options) {
        Parsed::Single(Message::Refused(refusal)) => assert_eq!(refusal.error.code.0, -32700),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn the_default_cap_is_a_thousand_elements() {
    let options = ParseOptions::default();
    assert_eq!(options.max_batch_len, 1000);
    assert!(matches!(
        Message::parse(&batch_of(1000, "x"), &options),
        Parsed::Batch(m) if m.len() == 1000
    ));
    // A frame of millions of tiny elements is one refusal, not millions of
    // answers.
    let zeros = format!("[{}0]", "0,".repeat(2_000_000));
    match Message::parse(&zeros, &options) {
        Parsed::Single(Message::Refused(refusal)) => {
            assert_eq!(refusal.error.code.0, -32600);
            assert!(refusal.error.message.contains("2000001 elements"));
        }
        other => panic!("expected one refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_peer_answers_an_oversized_batch_once_and_keeps_serving() {
    let mut raw = RawClient::start(echo_router(), Config::default().max_batch_len(10));
    raw.send(&batch_of(11, "x")).await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert_eq!(answer["id"], Value::Null);
    raw.send(&batch_of(10, "y")).await;
    let answers = raw.recv().await;
    assert_eq!(answers.as_array().map(Vec::len), Some(10), "{answers}");
    raw.send(r#"{"jsonrpc":"2.0","id":"after","method":"echo","params":["z"]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], "z");
}

#[tokio::test]
async fn a_batchs_answers_stay_within_the_outbound_budget() {
    // 20 answers of ~1 KiB against a 4 KiB budget: the first few are
    // answered, each of the rest is an error for its own id.
    let text = "a".repeat(1000);
    let mut raw = RawClient::start(echo_router(), Config::default().outbound_budget(4096));
    raw.send(&batch_of(20, &text)).await;
    let answers = raw.recv().await;
    let answers = answers.as_array().expect("an array");
    assert_eq!(answers.len(), 20);
    let mut ids: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..20).collect::<Vec<_>>(), "one answer per id");
    let served = answers
        .iter()
        .filter(|a| a["result"] == text.as_str())
        .count();
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a.get("error").is_some())
        .collect();
    // Each answer is ~1,040 bytes: three fit in 4 KiB, a fourth does not.
    assert_eq!(served, 3, "as many as fit in 4 KiB");
    assert_eq!(refused.len(), 17);
    assert!(refused.iter().all(|a| a["error"]["code"] == -32000));
    let total: usize = answers.iter().map(|a| a.to_string().len()).sum();
    assert!(total < 4096 + 16 * 200, "{total} bytes held");
}

#[tokio::test]
async fn respond_applies_the_cap_and_the_bound_too() {
    let router = echo_router();
    let options = ParseOptions {
        max_batch_len: 2,
        ..ParseOptions::default()
    };
    let out = router
        .respond_with(batch_of(3, "x").as_bytes(), &options)
        .await
        .unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(out["error"]["code"], -32600);

    let big = "b".repeat(400 * 1024);
    let out = router.respond(batch_of(4, &big).as_bytes()).await.unwrap();
    let out: Value = serde_json::from_slice(&out).unwrap();
    let codes: Vec<Value> = out
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["error"]["code"].clone())
        .collect();
    assert_eq!(
        codes.iter().filter(|c| **c == -32000).count(),
        2,
        "two answers of 400 KiB fit in 1 MiB, the other two do not: {codes:?}"
    );
}
