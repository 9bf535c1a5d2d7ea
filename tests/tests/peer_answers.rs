//! One answer per request, decided by policy; one message never ends a
//! connection; cancelling without a policy says so; call-backs nested under
//! the in-flight cap finish.

use std::future::IntoFuture as _;
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::codec::{ContentLengthCodec, LineCodec};
use jsonrpc_runtime::policy::CancellationPolicy;
use jsonrpc_runtime::transport::TcpConnector;
use jsonrpc_runtime::{
    peer::{CallOptions, SendError},
    CallError, Config, Context, ErrorObject, Peer, Reply, Router, Transport,
};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tests::{RawClient, ANSWER_TIMEOUT};
use tokio::sync::Notify;

const PRETTY: &str = "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": \"line\\nbreak\"\n}";

fn pretty() -> Box<RawValue> {
    RawValue::from_string(PRETTY.to_owned()).unwrap()
}

/// Routes whose answers hold raw newlines, in every place a value can.
fn pretty_router() -> Router {
    Router::new()
        .request("raw", |(): (), _: Context| async {
            Reply::<(), ErrorObject>::Raw(Ok(pretty()))
        })
        .request("result", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(pretty())
        })
        .request("error_data", |(): (), _: Context| async {
            let mut error = ErrorObject::new(-32050, "with pretty data");
            error.data = Some(pretty());
            Err::<(), _>(error)
        })
        .request("echo", |p: Value, _: Context| async move {
            Ok::<_, ErrorObject>(p)
        })
}

/// Every way a pretty value travels, both directions; the connection must
/// serve each and keep serving.
async fn pretty_values_travel(client: &Peer) {
    let expected: Value = serde_json::from_str(PRETTY).unwrap();
    for method in ["raw", "result"] {
        let out: Value = client.call(method, ()).await.unwrap();
        assert_eq!(out, expected, "{method}");
    }
    let err = client.call::<Value>("error_data", ()).await.unwrap_err();
    let CallError::Rpc(error) = err else {
        panic!("expected an error answer, got {err:?}")
    };
    assert_eq!(error.data_as::<Value>().unwrap(), Some(expected.clone()));
    let echoed: Value = client.call("echo", pretty()).await.unwrap();
    assert_eq!(echoed, expected);
    let sum: Value = client.call("echo", [1, 2]).await.unwrap();
    assert_eq!(sum, json!([1, 2]), "the connection still serves");
}

/// A client peer and a server peer (serving [`pretty_router`]) over a pipe
/// framed by `codec`.
fn over_a_pipe<C>(codec: C) -> (Peer, Peer)
where
    C: tokio_util::codec::Decoder<
            Item = jsonrpc_runtime::codec::Frame,
            Error = jsonrpc_runtime::codec::FramingError,
        > + tokio_util::codec::Encoder<bytes::Bytes, Error = jsonrpc_runtime::codec::FramingError>
        + Clone
        + Send
        + 'static,
{
    let (a, b) = tokio::io::duplex(1 << 16);
    let (ar, aw) = tokio::io::split(a);
    let (br, bw) = tokio::io::split(b);
    let server = Peer::builder()
        .router(pretty_router())
        .spawn(Transport::from_io(br, bw, codec.clone()));
    (Peer::spawn(Transport::from_io(ar, aw, codec)), server)
}

#[tokio::test]
async fn pretty_values_never_end_a_newline_delimited_connection() {
    let (client, _server) = over_a_pipe(LineCodec::new());
    pretty_values_travel(&client).await;
}

#[tokio::test]
async fn pretty_values_travel_over_content_length_framing() {
    let (client, _server) = over_a_pipe(ContentLengthCodec::new());
    pretty_values_travel(&client).await;
}

#[tokio::test]
async fn pretty_values_travel_over_tcp_and_the_memory_pair() {
    let acceptor = jsonrpc_runtime::transport::TcpAcceptor::bind("127.0.0.1:0")
        .await
        .unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = jsonrpc_runtime::server::Listener::new(acceptor).spawn(pretty_router());
    let client = Peer::spawn(TcpConnector::new(addr).connect().await.unwrap());
    pretty_values_travel(&client).await;
    client.close_now().await;
    server.shutdown(Duration::from_secs(1)).await;

    let (a, b) = Transport::pair(8);
    let _server = Peer::builder().router(pretty_router()).spawn(b);
    pretty_values_travel(&Peer::spawn(a)).await;
}

/// A handler that stops early when cancelled, answering on its own.
fn early_stopper(started: Arc<Notify>) -> Router {
    Router::new()
        .request("work", move |(): (), ctx: Context| {
            let started = started.clone();
            async move {
                started.notify_one();
                tokio::select! {
                    _ = ctx.cancellation().cancelled() => Ok::<_, ErrorObject>("stopped at step 7"),
                    _ = tokio::time::sleep(ANSWER_TIMEOUT) => Ok("finished"),
                }
            }
        })
        .request("fast", |(): (), _: Context| async {
            Ok::<_, ErrorObject>("fast")
        })
}

/// Starts `work` under `policy` and sends `cancel` once it runs.
async fn start_then_cancel(policy: CancellationPolicy, cancel: &str) -> RawClient {
    let started = Arc::new(Notify::new());
    let config = Config::default().cancellation(policy);
    let mut raw = RawClient::start(early_stopper(started.clone()), config);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"work"}"#)
        .await;
    started.notified().await;
    raw.send(cancel).await;
    raw
}

const LSP_CANCEL: &str = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#;
const MCP_CANCEL: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;

#[tokio::test]
async fn a_cancelled_lsp_request_is_answered_request_cancelled_whatever_its_handler_returns() {
    for policy in [
        CancellationPolicy::lsp(),
        // The handler only sees the cancellation and answers; the policy
        // still decides, since it does not let the handler run on.
        CancellationPolicy::new("$/cancelRequest", "id")
            .answer_with(ErrorObject::new(-32800, "Request cancelled")),
    ] {
        let mut raw = start_then_cancel(policy, LSP_CANCEL).await;
        let answer = raw.recv().await;
        assert_eq!(answer["id"], 1);
        assert_eq!(answer["error"]["code"], -32800, "{answer}");
        assert!(answer.get("result").is_none(), "{answer}");
    }
}

/// Starts `work`, cancels it the MCP way once it runs, then calls `fast`:
/// the only answer must be `fast`'s.
async fn mcp_cancel_gets_no_answer(policy: CancellationPolicy) {
    let mut raw = start_then_cancel(policy, MCP_CANCEL).await;
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"fast"}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 2, "result": "fast"}));
    raw.expect_silence(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn a_cancelled_mcp_request_gets_no_answer_even_when_its_handler_returns() {
    mcp_cancel_gets_no_answer(CancellationPolicy::mcp()).await;
}

#[tokio::test]
async fn keep_running_lets_the_handlers_answer_through_where_the_protocol_allows_one() {
    let mut raw = start_then_cancel(CancellationPolicy::lsp().keep_running(), LSP_CANCEL).await;
    assert_eq!(raw.recv().await["result"], "stopped at step 7");
    // MCP allows no answer after a cancellation, running on or not.
    mcp_cancel_gets_no_answer(CancellationPolicy::mcp().keep_running()).await;
}

#[tokio::test]
async fn cancel_without_a_policy_is_an_error_and_the_call_keeps_waiting() {
    let started = Arc::new(Notify::new());
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder()
        .router(early_stopper(started.clone()))
        .spawn(b);
    let client = Peer::spawn(a);

    let err = client
        .cancel(&jsonrpc_runtime::Id::from(1), None)
        .unwrap_err();
    assert!(matches!(err, SendError::NoCancellationPolicy), "{err:?}");
    assert!(err.to_string().contains("no cancellation policy"), "{err}");

    let call = client
        .call_with_progress::<String, ErrorObject, Value>("work", json!({}), CallOptions::default())
        .unwrap();
    started.notified().await;
    let err = call.cancel(None).unwrap_err();
    assert!(matches!(err, SendError::NoCancellationPolicy), "{err:?}");
    // Nothing was sent: the call still gets the handler's full answer later;
    // here it is dropped, and the connection keeps serving.
    drop(call);
    let fast: String = client.call("fast", ()).await.unwrap();
    assert_eq!(fast, "fast");
}

#[tokio::test]
async fn call_backs_nested_under_an_in_flight_cap_of_one_finish() {
    // server.outer calls client.middle, which calls server.inner: with one
    // request in flight at a time, inner can only run while outer waits.
    let server_router = Router::new()
        .request("outer", |(): (), ctx: Context| async move {
            let middle: String = ctx.peer().call("middle", ()).await?;
            Ok::<_, ErrorObject>(format!("outer({middle})"))
        })
        .request("inner", |(): (), _: Context| async {
            Ok::<_, ErrorObject>("inner".to_owned())
        });
    let client_router = Router::new().request("middle", |(): (), ctx: Context| async move {
        let inner: String = ctx.peer().call("inner", ()).await?;
        Ok::<_, ErrorObject>(format!("middle({inner})"))
    });
    let config = Config::default().max_in_flight(1);
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder()
        .config(config.clone())
        .router(server_router)
        .spawn(b);
    let client = Peer::builder()
        .config(config)
        .router(client_router)
        .spawn(a);
    let out: String = tokio::time::timeout(ANSWER_TIMEOUT, client.call("outer", ()))
        .await
        .expect("no deadlock")
        .unwrap();
    assert_eq!(out, "outer(middle(inner))");
}

#[tokio::test]
async fn the_in_flight_cap_still_holds_for_handlers_that_do_not_call_back() {
    let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let most = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let router = Router::new().request("busy", {
        let (running, most) = (running.clone(), most.clone());
        move |(): (), _: Context| {
            let (running, most) = (running.clone(), most.clone());
            async move {
                use std::sync::atomic::Ordering::SeqCst;
                let now = running.fetch_add(1, SeqCst) + 1;
                most.fetch_max(now, SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                running.fetch_sub(1, SeqCst);
                Ok::<_, ErrorObject>(())
            }
        }
    });
    let (a, b) = Transport::pair(64);
    let _server = Peer::builder()
        .config(Config::default().max_in_flight(2))
        .router(router)
        .spawn(b);
    let client = Peer::spawn(a);
    let calls = (0..20).map(|_| client.call::<()>("busy", ()).into_future());
    for result in futures_util::future::join_all(calls).await {
        result.unwrap();
    }
    assert_eq!(most.load(std::sync::atomic::Ordering::SeqCst), 2);
}

// Large frames: the route decodes the params as the frame is read.

/// A document as an editor opens it.
#[derive(serde::Deserialize)]
struct Open {
    uri: String,
    text: String,
}

/// About `len` bytes of source text, dense with what JSON escapes.
fn source(len: usize) -> String {
    let line = "\tprintln!(\"{} \\ {}\", a, \"b\"); // ünï\r\n";
    let mut text = line.repeat(len / line.len() + 1);
    let end = (0..=len)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    text.truncate(end);
    text
}

/// `open` answers with the document's text; `opened` keeps it for `last`.
fn documents_router() -> Router {
    let last = Arc::new(std::sync::Mutex::new(String::new()));
    let keep = last.clone();
    Router::new()
        .request("open", |p: Open, _: Context| async move {
            Ok::<_, ErrorObject>(json!([p.uri, p.text]))
        })
        .notification("opened", move |p: Open, _: Context| {
            *keep.lock().unwrap() = p.text;
            async {}
        })
        .request("last", move |(): (), _: Context| {
            let text = last.lock().unwrap().clone();
            async move { Ok::<_, ErrorObject>(text) }
        })
}

#[tokio::test]
async fn large_frames_are_served_in_any_member_order_and_broken_ones_refused() {
    let text = source(200_000);
    let doc = json!({"uri": "file:///a.rs", "text": text}).to_string();
    let mut client = RawClient::start(documents_router(), Config::default());
    for (id, line) in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"open","params":{doc}}}"#),
        format!(r#"{{"params":{doc},"method":"open","id":2,"jsonrpc":"2.0"}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"open","params":[{doc}]}}"#).replace(
            &format!("[{doc}]"),
            &format!(r#"["file:///a.rs",{}]"#, json!(text)),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        client.send(&line).await;
        let answer = client.recv().await;
        assert_eq!(answer["id"], json!(id + 1), "{answer:.200}");
        assert_eq!(answer["result"], json!(["file:///a.rs", text]));
    }

    // A notification, read back by a request.
    client
        .send(&format!(
            r#"{{"jsonrpc":"2.0","method":"opened","params":{doc}}}"#
        ))
        .await;
    client
        .send(r#"{"jsonrpc":"2.0","id":4,"method":"last"}"#)
        .await;
    assert_eq!(client.recv().await["result"], json!(text));

    // The wrong type is invalid params, with the id; broken JSON deep in
    // the text is a parse error.
    let wrong = doc.replace(r#""uri":"file:///a.rs""#, r#""uri":5"#);
    client
        .send(&format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"open","params":{wrong}}}"#
        ))
        .await;
    let answer = client.recv().await;
    assert_eq!(answer["id"], json!(5));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    let at = doc.len() / 2;
    let at = (at..).find(|&i| doc.is_char_boundary(i)).unwrap();
    for broken in [
        format!("{}\u{1}{}", &doc[..at], &doc[at..]),
        format!("{}\\q{}", &doc[..at], &doc[at..]),
        doc[..doc.len() - 1].to_owned(),
    ] {
        client
            .send(&format!(
                r#"{{"jsonrpc":"2.0","id":6,"method":"open","params":{broken}}}"#
            ))
            .await;
        let answer = client.recv().await;
        assert_eq!(answer["error"]["code"], json!(-32700), "{answer}");
        assert_eq!(answer["id"], Value::Null);
    }

    // The connection still serves, and `respond` answers the same.
    client
        .send(r#"{"jsonrpc":"2.0","id":7,"method":"last"}"#)
        .await;
    assert_eq!(client.recv().await["result"], json!(text));
    let line = format!(r#"{{"jsonrpc":"2.0","id":8,"method":"open","params":{doc}}}"#);
    let answer = documents_router().respond(line.as_bytes()).await.unwrap();
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["result"], json!(["file:///a.rs", text]));
}

/// How many times `Counted` params were decoded.
static DECODES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A document whose decoding is counted.
struct Counted(Open);

impl<'de> serde::Deserialize<'de> for Counted {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DECODES.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Open::deserialize(d).map(Counted)
    }
}

#[tokio::test]
async fn a_large_frames_params_are_decoded_once_through_the_peer_and_respond() {
    use std::sync::atomic::Ordering::SeqCst;
    let router = || {
        Router::new().request("count", |Counted(p): Counted, _: Context| async move {
            Ok::<_, ErrorObject>(p.text.len())
        })
    };
    let doc = json!({"uri": "file:///a.rs", "text": source(100_000)}).to_string();
    let line = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"count","params":{doc}}}"#);
    let mut client = RawClient::start(router(), Config::default());
    client.send(&line).await;
    assert_eq!(client.recv().await["result"], json!(100_000));
    // Once: the value decoded while the frame was read is the one the
    // handler gets (were it dropped, the route would decode the text again).
    assert_eq!(DECODES.load(SeqCst), 1);
    let answer = router().respond(line.as_bytes()).await.unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&answer).unwrap()["result"],
        json!(100_000)
    );
    assert_eq!(DECODES.load(SeqCst), 2);
}
