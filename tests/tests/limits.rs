//! Limits that keep one client from taking a server's memory or time:
//! the batch cap and the bound on a batch's answers.

use jsonrpc_runtime::message::{Message, ParseOptions, Parsed};
use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
use std::sync::Arc;

use serde_json::{json, Value};
use tests::RawClient;
use tokio::sync::Semaphore;

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
                refusal.error.message.contains("more than 3 elements"),
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
    // Reading stops at the element past the cap: what follows is not read,
    // broken or not.
    match Message::parse("[{}, {}, {}, {}, {", &options) {
        Parsed::Single(Message::Refused(refusal)) => assert_eq!(refusal.error.code.0, -32600),
        other => panic!("expected one refusal, got {other:?}"),
    }
    // Broken before the cap is still a parse error.
    match Message::parse("[{}, {", &options) {
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
            assert!(refusal.error.message.contains("more than 1000 elements"));
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

/// A server whose `ask` handler calls `question` back on the client and
/// answers with how that went.
fn asking_router() -> Router {
    Router::new().request("ask", |(): (), ctx: Context| async move {
        let answer: Result<String, _> = ctx.peer().call("question", ()).await;
        Ok::<_, ErrorObject>(match answer {
            Ok(text) => format!("answered {text}"),
            Err(e) => format!("failed: {e}"),
        })
    })
}

/// Serves `asking_router` with `config`, sends `ask`, never answers the
/// server's call back, and returns what `ask` answered.
async fn ask_a_silent_client(config: Config) -> Value {
    let mut raw = RawClient::start(asking_router(), config);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"ask"}"#).await;
    let call_back = raw.recv().await;
    assert_eq!(call_back["method"], "question", "{call_back}");
    // Never answered.
    raw.recv_within(std::time::Duration::from_secs(3600)).await
}

#[tokio::test(start_paused = true)]
async fn a_handlers_call_back_times_out_by_default_after_five_minutes() {
    let started = tokio::time::Instant::now();
    let answer = ask_a_silent_client(Config::default()).await;
    assert_eq!(answer["id"], 1);
    let result = answer["result"].as_str().unwrap();
    assert!(
        result.starts_with("failed:") && result.contains("time"),
        "{result}"
    );
    let waited = started.elapsed();
    assert!(
        waited >= std::time::Duration::from_secs(300)
            && waited < std::time::Duration::from_secs(301),
        "waited {waited:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_call_back_timeout_is_configurable() {
    let started = tokio::time::Instant::now();
    let answer =
        ask_a_silent_client(Config::default().callback_timeout(std::time::Duration::from_secs(2)))
            .await;
    assert!(answer["result"].as_str().unwrap().starts_with("failed:"));
    assert!(started.elapsed() < std::time::Duration::from_secs(3));
}

/// A Content-Length peer over a pipe: the peer, and the other end's halves.
fn content_length_peer(
    max_frame_len: usize,
) -> (
    jsonrpc_runtime::Peer,
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
) {
    use jsonrpc_runtime::codec::Framing;
    use jsonrpc_runtime::{Peer, Transport};
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(theirs);
    let config = Config::default()
        .framing(Framing::ContentLength)
        .max_frame_len(max_frame_len);
    let codec = Framing::ContentLength.codec(max_frame_len);
    let peer = Peer::builder()
        .config(config)
        .router(echo_router())
        .spawn(Transport::from_io(read, write, codec));
    let (read, write) = tokio::io::split(ours);
    (peer, read, write)
}

/// Everything the peer writes until it closes the stream, as JSON bodies.
async fn bodies_until_closed(mut read: impl tokio::io::AsyncRead + Unpin) -> Vec<Value> {
    use tokio::io::AsyncReadExt as _;
    let mut out = Vec::new();
    tokio::time::timeout(tests::ANSWER_TIMEOUT, read.read_to_end(&mut out))
        .await
        .expect("the peer closes the stream")
        .expect("read");
    let mut bodies = Vec::new();
    let mut rest = &out[..];
    while !rest.is_empty() {
        let text = std::str::from_utf8(rest).unwrap();
        let end = text.find("\r\n\r\n").expect("a header block");
        let len: usize = text[..end]
            .strip_prefix("Content-Length: ")
            .expect("a length")
            .parse()
            .unwrap();
        let body = &rest[end + 4..end + 4 + len];
        bodies.push(serde_json::from_slice(body).unwrap());
        rest = &rest[end + 4 + len..];
    }
    bodies
}

#[tokio::test]
async fn a_declared_length_over_the_cap_is_answered_and_the_connection_goes_on() {
    use tokio::io::AsyncWriteExt as _;
    let (peer, read, mut write) = content_length_peer(1024);
    let ok = br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":["after"]}"#;
    write
        .write_all(b"Content-Length: 5000\r\n\r\n")
        .await
        .unwrap();
    write.write_all(&[b'x'; 5000]).await.unwrap();
    write
        .write_all(format!("Content-Length: {}\r\n\r\n", ok.len()).as_bytes())
        .await
        .unwrap();
    write.write_all(ok).await.unwrap();
    write.shutdown().await.unwrap();
    let bodies = bodies_until_closed(read).await;
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert_eq!(bodies[0]["error"]["code"], -32600);
    assert_eq!(bodies[1]["result"], "after");
    let reason = peer.closed().await.to_string();
    assert!(!reason.contains("limit"), "{reason}");
}

#[tokio::test]
async fn a_broken_header_is_answered_with_a_parse_error_then_the_connection_closes() {
    use tokio::io::AsyncWriteExt as _;
    let (peer, read, mut write) = content_length_peer(1024);
    let ok = br#"{"jsonrpc":"2.0","id":1,"method":"echo","params":["x"]}"#;
    write
        .write_all(format!("Content-Length: {}\r\n\r\n", ok.len()).as_bytes())
        .await
        .unwrap();
    write.write_all(ok).await.unwrap();
    write
        .write_all(b"Content-Length: lots\r\n\r\n{}")
        .await
        .unwrap();
    let bodies = bodies_until_closed(read).await;
    eprintln!("reason {}", peer.closed().await);
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    assert_eq!(bodies[0]["result"], "x");
    assert_eq!(bodies[1]["error"]["code"], -32700);
    assert_eq!(bodies[1]["id"], Value::Null);
    let message = bodies[1]["error"]["message"].as_str().unwrap();
    assert!(message.contains("Content-Length: lots"), "{message}");
    let reason = peer.closed().await.to_string();
    assert!(reason.contains("invalid message header"), "{reason}");
}

/// A router whose `hold` requests each wait for a permit of `release`.
fn holding_router(release: Arc<Semaphore>) -> Router {
    Router::new().request("hold", move |(_pad,): (String,), _: Context| {
        let release = release.clone();
        async move {
            release.acquire().await.expect("open").forget();
            Ok::<_, ErrorObject>("released")
        }
    })
}

/// Waits (on events, with a generous limit) until `budget` counts
/// `requests`.
async fn until_admitted(budget: &jsonrpc_runtime::policy::SharedBudget, requests: usize) {
    tokio::time::timeout(tests::ANSWER_TIMEOUT, async {
        while budget.requests() != requests {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the requests are admitted");
}

fn hold(id: u32, pad: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "hold", "params": ["p".repeat(pad)]}).to_string()
}

#[tokio::test]
async fn requests_past_the_connections_parked_bytes_are_refused() {
    let release = Arc::new(Semaphore::new(0));
    let config = Config::default().max_parked_bytes(10_000);
    let mut raw = RawClient::start(holding_router(release.clone()), config);
    // Three of ~4 KiB fit in 10,000 bytes... two do; the third is refused.
    for id in 1..=3 {
        raw.send(&hold(id, 4000)).await;
    }
    let refused = raw.recv().await;
    assert_eq!(refused["id"], 3, "{refused}");
    assert_eq!(refused["error"]["code"], -32000);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bytes of params"),
        "{refused}"
    );
    // Once they are answered, the room comes back.
    release.add_permits(2);
    let mut answered = vec![
        raw.recv().await["id"].clone(),
        raw.recv().await["id"].clone(),
    ];
    answered.sort_by_key(|id| id.as_i64());
    assert_eq!(answered, vec![json!(1), json!(2)]);
    raw.send(&hold(4, 4000)).await;
    raw.send(&hold(5, 4000)).await;
    release.add_permits(2);
    for _ in 0..2 {
        let answer = raw.recv().await;
        assert_eq!(answer["result"], "released", "{answer}");
    }
}

#[tokio::test]
async fn a_shared_budget_caps_requests_across_connections_and_gives_room_back() {
    use jsonrpc_runtime::policy::SharedBudget;
    let budget = SharedBudget::new(3, usize::MAX);
    let release = Arc::new(Semaphore::new(0));
    let config = Config::default().shared_budget(budget.clone());
    let mut a = RawClient::start(holding_router(release.clone()), config.clone());
    let mut b = RawClient::start(holding_router(release.clone()), config);
    a.send(&hold(1, 10)).await;
    a.send(&hold(2, 10)).await;
    until_admitted(&budget, 2).await;
    b.send(&hold(3, 10)).await;
    b.send(&hold(4, 10)).await;
    let refused = b.recv().await;
    assert_eq!(refused["id"], 4, "{refused}");
    assert_eq!(refused["error"]["code"], -32000);
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("across the server"),
        "{refused}"
    );
    assert_eq!(budget.requests(), 3);
    assert_eq!(budget.bytes(), 3 * r#"["pppppppppp"]"#.len());
    release.add_permits(3);
    for _ in 0..2 {
        assert_eq!(a.recv().await["result"], "released");
    }
    assert_eq!(b.recv().await["result"], "released");
    assert_eq!((budget.requests(), budget.bytes()), (0, 0));
}

#[tokio::test]
async fn a_shared_budget_caps_bytes_and_lets_one_large_request_through() {
    use jsonrpc_runtime::policy::SharedBudget;
    let budget = SharedBudget::new(100, 5_000);
    let release = Arc::new(Semaphore::new(0));
    let config = Config::default().shared_budget(budget.clone());
    let mut a = RawClient::start(holding_router(release.clone()), config.clone());
    let mut b = RawClient::start(holding_router(release.clone()), config);
    // Alone, a request larger than the whole budget still runs.
    a.send(&hold(1, 8_000)).await;
    until_admitted(&budget, 1).await;
    b.send(&hold(2, 10)).await;
    let refused = b.recv().await;
    assert_eq!(refused["error"]["code"], -32000, "{refused}");
    release.add_permits(1);
    assert_eq!(a.recv().await["result"], "released");
    assert_eq!((budget.requests(), budget.bytes()), (0, 0));
}
