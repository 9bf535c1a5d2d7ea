//! tower layers around routes: the metrics layer, tower's own layers, and a
//! user's layer that sees each request and can answer it itself; and around
//! outbound calls: a recording layer, tower's limit and timeout.

use std::future::IntoFuture as _;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use jsonrpc_runtime::peer::{OutboundCall, OutboundResult};
use jsonrpc_runtime::router::{Metrics, RpcRequest, RpcResult};
use jsonrpc_runtime::transport::HttpConnector;
use jsonrpc_runtime::{rpc, CallError, Config, Context, ErrorObject, Router};
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tests::RawClient;
use tower::{Layer, Service};

#[rpc]
trait Calc {
    #[rpc(request = "add")]
    async fn add(&self, a: i64, b: i64) -> i64;
    #[rpc(request = "fail")]
    async fn fail(&self) -> Result<(), ErrorObject>;
    #[rpc(notification = "note")]
    async fn note(&self, text: String);
}

#[derive(Clone, Default)]
struct CalcService {
    notes: Arc<Mutex<Vec<String>>>,
}

impl Calc for CalcService {
    async fn add(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    async fn fail(&self) -> Result<(), ErrorObject> {
        Err(ErrorObject::server_error(-32010, "it failed"))
    }
    async fn note(&self, text: String) {
        self.notes.lock().unwrap().push(text);
    }
}

#[tokio::test]
async fn the_metrics_layer_counts_a_macro_routers_requests_by_method_and_outcome() {
    let metrics = Metrics::new();
    let service = CalcService::default();
    let router = service.clone().into_router().layer(metrics.clone());
    let mut raw = RawClient::start(router, Config::default());
    for id in 1..=3 {
        raw.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "add", "params": [id, 1]}).to_string(),
        )
        .await;
        assert_eq!(raw.recv().await["result"], id + 1);
    }
    raw.send(r#"{"jsonrpc":"2.0","id":9,"method":"fail"}"#)
        .await;
    let failed = raw.recv().await;
    assert_eq!(failed["error"]["code"], -32010, "{failed}");
    raw.send(r#"{"jsonrpc":"2.0","method":"note","params":["hi"]}"#)
        .await;
    raw.send(r#"{"jsonrpc":"2.0","id":10,"method":"add","params":[0,0]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 0);
    assert_eq!(*service.notes.lock().unwrap(), vec!["hi".to_owned()]);

    let stats = metrics.snapshot();
    assert_eq!((stats["add"].ok, stats["add"].errors), (4, 0));
    assert_eq!((stats["fail"].ok, stats["fail"].errors), (0, 1));
    assert_eq!(stats["note"].ok, 1);
    let text = metrics.render_prometheus();
    assert!(
        text.contains(r#"jsonrpc_requests_total{method="add",outcome="ok"} 4"#),
        "{text}"
    );
    assert!(
        text.contains(r#"jsonrpc_request_duration_seconds_count{method="fail"} 1"#),
        "{text}"
    );
}

#[tokio::test]
async fn towers_timeout_layer_answers_a_slow_handler_with_an_error() {
    let router = Router::new()
        .request("slow", |(): (), _: Context| async {
            std::future::pending::<()>().await;
            Ok::<_, ErrorObject>(())
        })
        .request("quick", |(): (), _: Context| async {
            Ok::<_, ErrorObject>("done")
        })
        .layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(50)));
    let mut raw = RawClient::start(router, Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"slow"}"#)
        .await;
    let answer = raw.recv().await;
    assert_eq!(answer["error"]["code"], -32603, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("timed out"),
        "{answer}"
    );
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"quick"}"#)
        .await;
    assert_eq!(raw.recv().await["result"], "done");
}

/// A layer that refuses every method but those it allows, seeing the
/// method, id, params and context, and records what it saw.
#[derive(Clone)]
struct Allow {
    allowed: &'static [&'static str],
    seen: Arc<Mutex<Vec<Value>>>,
}

impl<S> Layer<S> for Allow {
    type Service = AllowService<S>;
    fn layer(&self, inner: S) -> AllowService<S> {
        AllowService {
            inner,
            allow: self.clone(),
        }
    }
}

#[derive(Clone)]
struct AllowService<S> {
    inner: S,
    allow: Allow,
}

impl<S> Service<RpcRequest> for AllowService<S>
where
    S: Service<RpcRequest, Response = Box<serde_json::value::RawValue>, Error = ErrorObject>,
    S::Future: Send + 'static,
{
    type Response = Box<serde_json::value::RawValue>;
    type Error = ErrorObject;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = RpcResult> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), ErrorObject>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: RpcRequest) -> Self::Future {
        self.allow.seen.lock().unwrap().push(json!({
            "method": &*request.method,
            "id": request.id.as_ref().map(ToString::to_string),
            "params": request.params.as_ref().map(|p| p.get().to_owned()),
            "ctx_method": request.ctx.method(),
        }));
        if !self.allow.allowed.contains(&&*request.method) {
            let method = request.method.clone();
            return Box::pin(async move {
                Err(ErrorObject::server_error(
                    -32050,
                    format!("`{method}` is not allowed"),
                ))
            });
        }
        Box::pin(self.inner.call(request))
    }
}

#[tokio::test]
async fn a_users_layer_sees_each_request_and_can_answer_it_itself() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let router = CalcService::default().into_router().layer(Allow {
        allowed: &["add"],
        seen: seen.clone(),
    });
    let mut raw = RawClient::start(router, Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":"a","method":"add","params":{"a":2,"b":5}}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 7);
    raw.send(r#"{"jsonrpc":"2.0","id":"b","method":"fail"}"#)
        .await;
    let refused = raw.recv().await;
    assert_eq!(refused["error"]["code"], -32050, "{refused}");
    assert_eq!(
        seen.lock().unwrap()[0],
        json!({"method": "add", "id": "\"a\"", "params": r#"{"a":2,"b":5}"#, "ctx_method": "add"})
    );
}

#[tokio::test]
async fn layers_compose_with_concurrency_limits_and_respond() {
    let router = Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .layer(Metrics::new());
    let answer = router
        .respond(br#"[{"jsonrpc":"2.0","id":1,"method":"add","params":[1,2]},{"jsonrpc":"2.0","id":2,"method":"add","params":["x"]}]"#)
        .await
        .unwrap();
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer[0]["result"], 3);
    assert_eq!(answer[1]["error"]["code"], -32602, "{answer}");
}

#[test]
fn spec_server_prints_its_metrics_as_prometheus_text_at_exit() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(tests::example_path("spec_server"))
        .arg("--metrics")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = [
        r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"subtract","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"sum","params":[1,2]}"#,
    ]
    .join("\n")
        + "\n";
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    for line in [
        r#"jsonrpc_requests_total{method="subtract",outcome="ok"} 1"#,
        r#"jsonrpc_requests_total{method="subtract",outcome="error"} 1"#,
        r#"jsonrpc_requests_total{method="sum",outcome="ok"} 1"#,
        r#"jsonrpc_request_duration_seconds_count{method="subtract"} 2"#,
    ] {
        assert!(stderr.contains(line), "{line} missing from:\n{stderr}");
    }
}

#[tokio::test]
async fn the_http_server_serves_the_metrics_of_its_layered_routes_as_prometheus_text() {
    use jsonrpc_runtime::server::HttpListener;
    use jsonrpc_runtime::transport::TcpAcceptor;
    use jsonrpc_runtime::Peer;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let metrics = Metrics::new();
    let router = CalcService::default().into_router().layer(metrics.clone());
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = HttpListener::new(acceptor)
        .metrics("/metrics", metrics)
        .spawn(router);

    let client = Peer::spawn(
        HttpConnector::new(format!("http://{addr}/"))
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(client.call::<i64>("add", (2, 3)).await.unwrap(), 5);
    assert!(client.call::<()>("fail", ()).await.is_err());

    let get = |method: &'static str| async move {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request =
            format!("{method} /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        tokio::time::timeout(tests::ANSWER_TIMEOUT, stream.read_to_string(&mut response))
            .await
            .expect("answered in time")
            .unwrap();
        response
    };
    let page = get("GET").await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(
        page.contains("content-type: text/plain; version=0.0.4"),
        "{page}"
    );
    for line in [
        r#"jsonrpc_requests_total{method="add",outcome="ok"} 1"#,
        r#"jsonrpc_requests_total{method="fail",outcome="error"} 1"#,
        r#"jsonrpc_request_duration_seconds_count{method="add"} 1"#,
    ] {
        assert!(page.contains(line), "{line} missing from:\n{page}");
    }
    let post = get("POST").await;
    assert!(post.starts_with("HTTP/1.1 405"), "{post}");
    server.shutdown(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn the_metrics_layer_counts_cancelled_requests_and_describes_its_metrics() {
    use jsonrpc_runtime::policy::CancellationPolicy;
    use jsonrpc_runtime::{Peer, Transport};

    /// Says when the handler it lives in is dropped (cancelled).
    struct Dropped(tokio::sync::mpsc::UnboundedSender<()>);
    impl Drop for Dropped {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    let metrics = Metrics::new();
    let (started_tx, mut started) = tokio::sync::mpsc::unbounded_channel();
    let (dropped_tx, mut dropped) = tokio::sync::mpsc::unbounded_channel();
    let router = Router::new()
        .request("reindex", move |(): (), _: Context| {
            let (started, dropped) = (started_tx.clone(), Dropped(dropped_tx.clone()));
            async move {
                let _dropped = dropped;
                let _ = started.send(());
                std::future::pending::<()>().await;
                Ok::<_, ErrorObject>(())
            }
        })
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .layer(metrics.clone());
    let config = Config::default().cancellation(CancellationPolicy::mcp());
    let (a, b) = Transport::pair(8);
    let _server = Peer::builder()
        .config(config.clone())
        .router(router)
        .spawn(b);
    let client = Peer::builder().config(config).spawn(a);

    let calls: Vec<_> = (0..3)
        .map(|_| client.call::<()>("reindex", ()).start())
        .collect();
    for _ in 0..3 {
        tokio::time::timeout(tests::ANSWER_TIMEOUT, started.recv())
            .await
            .expect("the handler starts");
    }
    for call in calls {
        call.cancel().unwrap();
        assert!(matches!(call.await, Err(CallError::Cancelled)));
    }
    for _ in 0..3 {
        tokio::time::timeout(tests::ANSWER_TIMEOUT, dropped.recv())
            .await
            .expect("the cancelled handler is dropped");
    }
    assert_eq!(client.call::<i64>("add", (1, 2)).await.unwrap(), 3);

    let stats = metrics.snapshot();
    assert_eq!(
        (
            stats["reindex"].ok,
            stats["reindex"].errors,
            stats["reindex"].cancelled
        ),
        (0, 0, 3)
    );
    let text = metrics.render_prometheus();
    for line in [
        r#"jsonrpc_requests_total{method="reindex",outcome="cancelled"} 3"#,
        r#"jsonrpc_requests_total{method="add",outcome="cancelled"} 0"#,
        "# HELP jsonrpc_requests_total ",
        "# TYPE jsonrpc_requests_total counter",
        "# HELP jsonrpc_request_duration_seconds ",
        "# TYPE jsonrpc_request_duration_seconds histogram",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
}

#[test]
fn metric_labels_escape_quotes_backslashes_and_newlines() {
    let metrics = Metrics::new();
    let router = Router::new()
        .request("say \"hi\"\\\n", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(())
        })
        .layer(metrics.clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(router.respond(br#"{"jsonrpc":"2.0","id":1,"method":"say \"hi\"\\\n"}"#))
        .unwrap();
    let text = metrics.render_prometheus();
    assert!(
        text.contains(r#"jsonrpc_requests_total{method="say \"hi\"\\\n",outcome="ok"} 1"#),
        "{text}"
    );
}

/// An outbound layer that records each call's method and params, and the
/// raw result or error it saw.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<String>>>);

impl<S> Layer<S> for Recorder {
    type Service = RecordService<S>;

    fn layer(&self, inner: S) -> RecordService<S> {
        RecordService {
            inner,
            log: self.0.clone(),
        }
    }
}

#[derive(Clone)]
struct RecordService<S> {
    inner: S,
    log: Arc<Mutex<Vec<String>>>,
}

impl<S> Service<OutboundCall> for RecordService<S>
where
    S: Service<OutboundCall, Response = Box<RawValue>, Error = tower::BoxError> + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Box<RawValue>;
    type Error = tower::BoxError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = OutboundResult> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), tower::BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: OutboundCall) -> Self::Future {
        let log = self.log.clone();
        let what = format!(
            "{} {}",
            call.method,
            call.params.as_ref().map_or("-", |p| p.get())
        );
        // A layer may refuse a call itself: `forbidden` never leaves.
        if &*call.method == "forbidden" {
            return Box::pin(async move {
                log.lock().unwrap().push(format!("{what} -> refused"));
                Err(
                    CallError::<std::convert::Infallible>::Rpc(ErrorObject::server_error(
                        -32010,
                        "refused by a layer",
                    ))
                    .into(),
                )
            });
        }
        let outcome = self.inner.call(call);
        Box::pin(async move {
            let outcome = outcome.await;
            let seen = match &outcome {
                Ok(raw) => raw.get().to_owned(),
                Err(e) => format!("error: {e}"),
            };
            log.lock().unwrap().push(format!("{what} -> {seen}"));
            outcome
        })
    }
}

#[derive(Debug, PartialEq, jsonrpc_runtime::RpcError)]
enum Refused {
    #[rpc(error(code = -32010, message = "refused by a layer"))]
    ByLayer,
}

#[tokio::test]
async fn outbound_layers_see_every_awaited_call_of_a_peer_and_of_a_generated_client() {
    let recorder = Recorder::default();
    let (a, b) = jsonrpc_runtime::Transport::pair(8);
    let _server = jsonrpc_runtime::Peer::builder()
        .router(CalcService::default().into_router())
        .spawn(b);
    let peer = jsonrpc_runtime::Peer::builder()
        .outbound_layer(recorder.clone())
        .spawn(a);

    assert_eq!(peer.call::<i64>("add", (2, 3)).await.unwrap(), 5);
    let client = CalcClient::new(peer.clone());
    assert_eq!(client.add(40, 2).await.unwrap(), 42);
    let failed = peer.call::<()>("fail", ()).await.unwrap_err();
    assert_eq!(failed.as_rpc().map(|e| e.code.0), Some(-32010));
    // A layer's own CallError reaches the caller typed by the call's errors.
    let refused = peer
        .call::<()>("forbidden", ())
        .errors::<Refused>()
        .await
        .unwrap_err();
    assert!(
        matches!(refused, CallError::Domain(Refused::ByLayer)),
        "{refused:?}"
    );
    // Started calls (which need their id at once) go out directly.
    let started = peer.call::<i64>("add", (1, 1)).start();
    assert_eq!(started.await.unwrap(), 2);

    let log = recorder.0.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "add [2,3] -> 5".to_owned(),
            "add {\"a\":40,\"b\":2} -> 42".to_owned(),
            "fail - -> error: the peer answered with an error: it failed (code -32010)".to_owned(),
            "forbidden - -> refused".to_owned(),
        ]
    );
}

#[tokio::test]
async fn towers_layers_limit_and_time_out_outbound_calls() {
    let (a, b) = jsonrpc_runtime::Transport::pair(8);
    let router = Router::new()
        .request("never", |(): (), _: Context| async {
            std::future::pending::<Result<(), ErrorObject>>().await
        })
        .request("echo", |(n,): (i64,), _: Context| async move {
            Ok::<_, ErrorObject>(n)
        });
    let _server = jsonrpc_runtime::Peer::builder().router(router).spawn(b);
    let peer = jsonrpc_runtime::Peer::builder()
        .outbound_layer(tower::limit::ConcurrencyLimitLayer::new(1))
        .outbound_layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(50)))
        .spawn(a);

    let timed_out = peer.call::<()>("never", ()).await.unwrap_err();
    match &timed_out {
        CallError::Layer(e) => assert!(e.is::<tower::timeout::error::Elapsed>(), "{e}"),
        other => panic!("expected the timeout layer's error, got {other:?}"),
    }
    // The limit's permit came back when the timed-out call ended.
    let answers = futures_util::future::join_all(
        (0..4).map(|n| peer.call::<i64>("echo", (n,)).into_future()),
    )
    .await;
    let answers: Vec<i64> = answers.into_iter().map(Result::unwrap).collect();
    assert_eq!(answers, vec![0, 1, 2, 3]);
}
