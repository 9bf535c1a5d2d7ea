//! The `mcp_server` example, spawned as a child process and driven by a
//! [`Peer`] on the MCP preset: the handshake and its gate, version
//! negotiation, the four tools and their errors, progress order,
//! cancellation (and how soon it frees the handler), a call from the server
//! to the client (`roots`), exit at the end of input once owed answers are
//! written, the same over Streamable HTTP (`--http`) until SIGTERM, and
//! per-user bearer tokens there (`--bearer`).
#![cfg(unix)]

use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::message::{Message, Parsed};
use jsonrpc_runtime::transport::{ChildHandle, McpHttpConnector, ProcessExit, TransportError};
use jsonrpc_runtime::{
    peer::CallOptions, transport::ChildProcess, CallError, Config, Context, ErrorObject, Id, Peer,
    Router,
};
use serde_json::{json, Value};
use tests::{example_path, ANSWER_TIMEOUT};
use tokio::process::Command;

/// The versions the server supports, latest first.
const VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A running `mcp_server` and a client peer on its stdio.
struct Server {
    peer: Peer,
    child: ChildHandle,
}

impl Server {
    fn spawn() -> Server {
        let config = Config::mcp_client();
        let command = Command::new(example_path("mcp_server"));
        let (transport, child) = ChildProcess::spawn(command, &config)
            .expect("spawn mcp_server")
            .into_parts();
        Server {
            peer: Peer::builder()
                .config(config)
                .router(client_routes())
                .spawn(transport),
            child,
        }
    }

    /// Spawns the server and completes the handshake asking for `version`;
    /// returns the `initialize` result too.
    async fn initialized(version: &str) -> (Server, Value) {
        let server = Server::spawn();
        let result = server.initialize(version).await.expect("initialize");
        server
            .peer
            .notify("notifications/initialized", json!({}))
            .await
            .expect("notify initialized");
        (server, result)
    }

    async fn initialize(&self, version: &str) -> Result<Value, CallError> {
        initialize(&self.peer, version, json!({})).await
    }

    async fn call(&self, method: &str, params: Value) -> Result<Value, CallError> {
        call(&self.peer, method, params).await
    }

    async fn tool(&self, name: &str, arguments: Value) -> Result<Value, CallError> {
        tool(&self.peer, name, arguments).await
    }

    /// Ends the server's input and waits for it to exit.
    async fn finish(self) -> ProcessExit {
        self.peer.close(Duration::from_secs(1)).await;
        tokio::time::timeout(ANSWER_TIMEOUT, self.child.wait())
            .await
            .expect("the server exits once its input ends")
            .expect("wait for the server")
    }
}

/// What the test client serves: `roots/list`.
fn client_routes() -> Router {
    Router::new().request("roots/list", |_: Value, _: Context| async move {
        Ok::<_, ErrorObject>(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
    })
}

async fn initialize(peer: &Peer, version: &str, capabilities: Value) -> Result<Value, CallError> {
    let params = json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": {"name": "tests", "version": "0"},
    });
    call(peer, "initialize", params).await
}

async fn call(peer: &Peer, method: &str, params: Value) -> Result<Value, CallError> {
    tokio::time::timeout(ANSWER_TIMEOUT, peer.call(method, params))
        .await
        .expect("an answer in time")
}

async fn tool(peer: &Peer, name: &str, arguments: Value) -> Result<Value, CallError> {
    call(
        peer,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await
}

/// The text of a `tools/call` result's only content item.
fn text(result: &Value) -> &str {
    assert_eq!(
        result["content"].as_array().map(Vec::len),
        Some(1),
        "{result}"
    );
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    result["content"][0]["text"].as_str().expect("text content")
}

fn error_code(error: &CallError) -> i64 {
    match error {
        CallError::Rpc(e) => e.code.0,
        other => panic!("expected an error answer, got {other:?}"),
    }
}

#[tokio::test]
async fn handshake_gates_requests_until_initialize_and_ping_always_answers() {
    let server = Server::spawn();
    assert_eq!(server.call("ping", json!({})).await.unwrap(), json!({}));
    let refused = server.call("tools/list", json!({})).await.unwrap_err();
    assert_eq!(error_code(&refused), -32002);

    server.initialize(VERSIONS[0]).await.unwrap();
    server
        .peer
        .notify("notifications/initialized", json!({}))
        .await
        .unwrap();
    let again = server.initialize(VERSIONS[0]).await.unwrap_err();
    assert_eq!(error_code(&again), -32600);
    let tools = server.call("tools/list", json!({})).await.unwrap();
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("a tools array")
        .iter()
        .map(|t| t["name"].as_str().expect("a tool name"))
        .collect();
    assert_eq!(names, ["echo", "add", "sleep", "roots"]);
    for tool in tools["tools"].as_array().into_iter().flatten() {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
    }
    assert_eq!(server.call("ping", json!({})).await.unwrap(), json!({}));
    assert!(server.finish().await.status.success());
}

#[tokio::test]
async fn initialize_answers_the_clients_version_when_supported_else_the_latest() {
    for (asked, answered) in [
        (VERSIONS[0], VERSIONS[0]),
        (VERSIONS[1], VERSIONS[1]),
        (VERSIONS[2], VERSIONS[2]),
        (VERSIONS[3], VERSIONS[3]),
        ("2099-01-01", VERSIONS[0]),
        ("1999-01-01", VERSIONS[0]),
    ] {
        let (server, result) = Server::initialized(asked).await;
        assert_eq!(result["protocolVersion"], answered, "asked {asked}");
        assert!(result["capabilities"]["tools"].is_object(), "{result}");
        assert!(result["serverInfo"]["name"].is_string(), "{result}");
        assert!(result["serverInfo"]["version"].is_string(), "{result}");
        assert!(server.finish().await.status.success());
    }
}

#[tokio::test]
async fn echo_and_add_answer_text_content() {
    let (server, _) = Server::initialized(VERSIONS[0]).await;
    let echo = server
        .tool("echo", json!({"text": "héllo\nwörld"}))
        .await
        .unwrap();
    assert_eq!(text(&echo), "héllo\nwörld");
    assert_eq!(echo["isError"], false);
    for (a, b, sum) in [
        (json!(2), json!(3), "5"),
        (json!(-7), json!(7), "0"),
        (json!(1.5), json!(2), "3.5"),
        (json!(i64::MAX), json!(1), "9223372036854775808"),
        (json!(u64::MAX), json!(i64::MIN), "9223372036854775807"),
    ] {
        let add = server.tool("add", json!({"a": a, "b": b})).await.unwrap();
        assert_eq!(text(&add), sum, "{a} + {b}");
    }
    assert!(server.finish().await.status.success());
}

/// Arguments that do not fit their tool.
fn bad_arguments() -> [(&'static str, Value); 5] {
    [
        ("echo", json!({})),
        ("echo", json!({"text": 1})),
        ("add", json!({"a": "x", "b": 1})),
        ("add", json!({"a": 1})),
        ("sleep", json!({"ms": -1})),
    ]
}

#[tokio::test]
async fn unknown_tool_is_invalid_params_and_bad_arguments_a_tool_error_on_2025_11_25() {
    let (server, _) = Server::initialized(VERSIONS[0]).await;
    let unknown = server.tool("nope", json!({})).await.unwrap_err();
    assert_eq!(error_code(&unknown), -32602, "{unknown:?}");

    for (tool, arguments) in bad_arguments() {
        let result = server.tool(tool, arguments.clone()).await.unwrap();
        assert_eq!(result["isError"], true, "{tool} {arguments}: {result}");
        assert!(text(&result).contains("invalid arguments"), "{result}");
    }
    // Within its type but over the tool's own limit.
    let long = server
        .tool("sleep", json!({"ms": 1_000_000_000}))
        .await
        .unwrap();
    assert_eq!(long["isError"], true, "{long}");
    let no_arguments = server
        .call("tools/call", json!({"name": "echo"}))
        .await
        .unwrap();
    assert_eq!(no_arguments["isError"], true, "{no_arguments}");
    let no_name = server
        .call("tools/call", json!({"arguments": {}}))
        .await
        .unwrap_err();
    assert_eq!(error_code(&no_name), -32602);
    // The session is still usable.
    let echo = server.tool("echo", json!({"text": "ok"})).await.unwrap();
    assert_eq!(text(&echo), "ok");
    assert!(server.finish().await.status.success());
}

#[tokio::test]
async fn bad_arguments_are_invalid_params_before_2025_11_25() {
    for version in &VERSIONS[1..] {
        let (server, _) = Server::initialized(version).await;
        for (tool, arguments) in bad_arguments() {
            let error = server.tool(tool, arguments.clone()).await.unwrap_err();
            assert_eq!(error_code(&error), -32602, "{version} {tool} {arguments}");
        }
        assert!(server.finish().await.status.success());
    }
}

#[tokio::test]
async fn sleep_reports_progress_in_order_before_its_answer() {
    let (server, _) = Server::initialized(VERSIONS[0]).await;
    let params = json!({"name": "sleep", "arguments": {"ms": 50}});
    let mut call = server
        .peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "tools/call",
            params,
            CallOptions::default(),
        )
        .unwrap();
    let mut seen = Vec::new();
    // `None` once the answer is in: everything collected here came first.
    while let Some(value) = tokio::time::timeout(ANSWER_TIMEOUT, call.next_progress())
        .await
        .expect("progress or the answer in time")
    {
        seen.push(value.expect("a JSON value"));
    }
    let result = call.result().await.unwrap();
    assert_eq!(text(&result), "slept 50 ms");
    let steps: Vec<i64> = seen
        .iter()
        .map(|v| v["progress"].as_i64().expect("a numeric progress"))
        .collect();
    assert_eq!(steps, (0..10).collect::<Vec<_>>(), "{seen:?}");
    assert!(seen.iter().all(|v| v["total"] == 10), "{seen:?}");
    println!(
        "sleep 50 ms: {} progress reports, in order, before the answer",
        seen.len()
    );
    assert!(server.finish().await.status.success());
}

/// The `stopped after X ms` a cancelled sleep logs, for request `id`.
fn stopped_after(stderr: &str, id: &Id) -> Duration {
    let marker = format!("sleep (request {id}) stopped after ");
    let line = stderr
        .lines()
        .find_map(|line| line.split_once(&marker).map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no `{marker}` in the server's stderr:\n{stderr}"));
    let ms: f64 = line
        .split_whitespace()
        .next()
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("no duration in `{line}`"));
    Duration::from_secs_f64(ms / 1000.0)
}

#[tokio::test]
async fn cancelled_sleep_gets_no_answer_and_its_handler_stops_at_once() {
    let (server, _) = Server::initialized(VERSIONS[0]).await;
    let params = json!({"name": "sleep", "arguments": {"ms": 60_000}});
    let mut call = server
        .peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "tools/call",
            params,
            CallOptions::default(),
        )
        .unwrap();
    let id = call.id().clone();
    // The first report comes as the handler starts.
    let first = tokio::time::timeout(ANSWER_TIMEOUT, call.next_progress())
        .await
        .expect("a first report in time")
        .expect("a report before any answer")
        .unwrap();
    let started_by = Instant::now();
    assert_eq!(first["progress"], 0);

    let cancelled_at = Instant::now();
    call.cancel(Some("the test is done waiting")).unwrap();
    let outcome = tokio::time::timeout(ANSWER_TIMEOUT, call.result())
        .await
        .expect("the call ends in time");
    let local = cancelled_at.elapsed();
    assert!(matches!(outcome, Err(CallError::Cancelled)), "{outcome:?}");

    // Nothing answers the cancelled request, and the session goes on.
    let echo = server.tool("echo", json!({"text": "after"})).await.unwrap();
    assert_eq!(text(&echo), "after");

    // Ending the input lets the server exit only once its handlers are done:
    // a sleep still running would keep it for a minute.
    let exit = server.finish().await;
    assert!(exit.status.success(), "{exit}");
    // The handler started no later than its first report arrived, so this
    // bounds the time from the cancel to the handler's end from above.
    let ran = stopped_after(&exit.stderr, &id);
    let freed = (started_by + ran).saturating_duration_since(cancelled_at);
    println!(
        "MCP cancel: the call failed locally after {local:?}; \
         the handler was freed within {freed:?} of the cancel (target 50 ms)"
    );
}

#[tokio::test]
async fn cancellation_races_end_each_call_once_and_leave_the_session_usable() {
    let (server, _) = Server::initialized(VERSIONS[0]).await;
    let outcomes = tests::cancellation_race(
        &server.peer,
        "tools/call",
        |i| json!({"name": "sleep", "arguments": {"ms": i % 3 * 5}}),
        |i| i % 10 * 4,
    )
    .await;
    let (mut answered, mut cancelled) = (0, 0);
    for outcome in outcomes {
        match outcome {
            Ok(result) => {
                assert!(text(&result).starts_with("slept "), "{result}");
                answered += 1;
            }
            Err(CallError::Cancelled) => cancelled += 1,
            Err(other) => panic!("unexpected outcome {other:?}"),
        }
    }
    println!("MCP races: {answered} answered, {cancelled} cancelled");
    // Cancelling something long finished changes nothing.
    server.peer.cancel(&Id::from(2), None).unwrap();
    let echo = server.tool("echo", json!({"text": "still"})).await.unwrap();
    assert_eq!(text(&echo), "still");
    assert_eq!(server.call("ping", json!({})).await.unwrap(), json!({}));
    let exit = server.finish().await;
    assert!(exit.status.success(), "{exit}");
}

use tests::message_frame as frame;

/// The next frame as JSON (it must be a JSON-RPC message), or the process
/// exit once stdout ends.
async fn next(child: &mut ChildProcess) -> Result<Value, ProcessExit> {
    let item = tokio::time::timeout(ANSWER_TIMEOUT, child.next())
        .await
        .expect("output in time");
    match item {
        Some(Ok(Frame::Message(bytes))) => {
            let options = Config::mcp().parse_options();
            assert!(
                matches!(Message::parse_bytes(&bytes, &options), Parsed::Single(_)),
                "not a JSON-RPC message on stdout: {bytes:?}"
            );
            Ok(serde_json::from_slice(&bytes).expect("JSON"))
        }
        Some(Err(TransportError::ProcessExited(exit))) => Err(exit),
        other => panic!("expected a message or the exit, got {other:?}"),
    }
}

#[tokio::test]
async fn owed_answers_are_written_before_it_exits_at_the_end_of_input() {
    let command = Command::new(example_path("mcp_server"));
    let mut child = ChildProcess::spawn(command, &Config::mcp()).unwrap();
    let init = json!({
        "protocolVersion": VERSIONS[0],
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    });
    child
        .send(frame(Some(1), "initialize", init))
        .await
        .unwrap();
    let answer = next(&mut child).await.unwrap();
    assert_eq!(answer["id"], 1);
    child
        .send(frame(None, "notifications/initialized", json!({})))
        .await
        .unwrap();
    let sleep = json!({"name": "sleep", "arguments": {"ms": 200}, "_meta": {"progressToken": "p"}});
    child
        .send(frame(Some(2), "tools/call", sleep))
        .await
        .unwrap();
    child
        .send(frame(
            Some(3),
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        ))
        .await
        .unwrap();
    // The end of input, with both answers still owed.
    child.close().await.unwrap();

    let mut answers = Vec::new();
    let mut reports = 0;
    let exit = loop {
        match next(&mut child).await {
            Ok(message) if message["method"] == "notifications/progress" => {
                assert!(
                    answers.iter().all(|id| *id != json!(2)),
                    "a report after the answer"
                );
                reports += 1;
            }
            Ok(message) => answers.push(message["id"].clone()),
            Err(exit) => break exit,
        }
    };
    assert_eq!(answers, [json!(3), json!(2)]);
    assert_eq!(reports, 10);
    assert!(exit.status.success(), "{exit}");
    assert!(exit.stderr.contains("closed the connection"), "{exit}");
}

#[tokio::test]
async fn roots_asks_the_client_when_it_declared_the_capability() {
    let server = Server::spawn();
    initialize(&server.peer, VERSIONS[0], json!({"roots": {}}))
        .await
        .unwrap();
    let roots = server.tool("roots", json!({})).await.unwrap();
    assert_eq!(text(&roots), "file:///work (work)");
    assert!(server.finish().await.status.success());

    let (server, _) = Server::initialized(VERSIONS[0]).await;
    let refused = server.tool("roots", json!({})).await.unwrap();
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("roots"), "{refused}");
    assert!(server.finish().await.status.success());
}

/// Starts `mcp_server --http 127.0.0.1:0` with `args` after it; returns
/// the child, the URL it serves, and a task that gathers the rest of its
/// stderr until it exits.
async fn serve_http(
    args: &[&str],
) -> (
    tokio::process::Child,
    String,
    tokio::task::JoinHandle<Vec<String>>,
) {
    use tokio::io::{AsyncBufReadExt as _, BufReader};

    let mut child = Command::new(example_path("mcp_server"))
        .args(["--http", "127.0.0.1:0"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = tokio::time::timeout(ANSWER_TIMEOUT, stderr.next_line())
            .await
            .expect("mcp_server says where it listens")
            .unwrap()
            .expect("mcp_server is still running");
        if let Some(url) = line.strip_prefix("mcp_server: listening on ") {
            break url.to_owned();
        }
    };
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let logs = tokio::spawn(async move {
        let mut all = Vec::new();
        while let Ok(Some(line)) = stderr.next_line().await {
            all.push(line);
        }
        all
    });
    (child, url, logs)
}

#[tokio::test]
async fn serves_streamable_http_with_the_same_tools_and_exits_cleanly_on_sigterm() {
    let (mut child, url, logs) = serve_http(&[]).await;

    let config = Config::mcp_client();
    let peer = Peer::builder()
        .config(config.clone())
        .router(client_routes())
        .spawn(McpHttpConnector::new(&url).connect().await.unwrap());
    let init = initialize(&peer, VERSIONS[0], json!({"roots": {}}))
        .await
        .unwrap();
    assert_eq!(init["protocolVersion"], VERSIONS[0]);
    peer.notify("notifications/initialized", json!({}))
        .await
        .unwrap();
    let tools = call(&peer, "tools/list", json!({})).await.unwrap();
    assert_eq!(tools["tools"].as_array().map(Vec::len), Some(4), "{tools}");
    let add = tool(&peer, "add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(text(&add), "5");
    let roots = tool(&peer, "roots", json!({})).await.unwrap();
    assert_eq!(text(&roots), "file:///work (work)");

    let params = json!({"name": "sleep", "arguments": {"ms": 50}});
    let mut sleep = peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "tools/call",
            params,
            CallOptions::default(),
        )
        .unwrap();
    let mut steps = Vec::new();
    while let Some(report) = tokio::time::timeout(ANSWER_TIMEOUT, sleep.next_progress())
        .await
        .expect("progress or the answer in time")
    {
        steps.push(report.unwrap()["progress"].as_i64().unwrap());
    }
    assert_eq!(steps, (0..10).collect::<Vec<_>>());
    assert_eq!(text(&sleep.result().await.unwrap()), "slept 50 ms");

    let params = json!({"name": "sleep", "arguments": {"ms": 60_000}});
    let mut long = peer
        .call_with_progress::<Value, ErrorObject, Value>(
            "tools/call",
            params,
            CallOptions::default(),
        )
        .unwrap();
    tokio::time::timeout(ANSWER_TIMEOUT, long.next_progress())
        .await
        .expect("a first report")
        .expect("a report before the answer")
        .unwrap();
    long.cancel(Some("enough")).unwrap();
    assert!(matches!(long.result().await, Err(CallError::Cancelled)));
    let echo = tool(&peer, "echo", json!({"text": "after"})).await.unwrap();
    assert_eq!(text(&echo), "after");
    peer.close(Duration::from_secs(5)).await;

    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
    let logs = logs.await.unwrap().join("\n");
    assert!(
        logs.contains("stopped after"),
        "the cancelled sleep stopped:\n{logs}"
    );
    assert!(
        logs.contains("the client deleted it"),
        "close sent DELETE:\n{logs}"
    );
    assert!(logs.contains("SIGTERM, shutting down"), "{logs}");
}

// ---------------------------------------------------------------------------
// `--bearer NAME=TOKEN`: per-user tokens over Streamable HTTP, driven by a
// raw HTTP client so that statuses and headers can be read.

/// The two users of the bearer tests.
const USERS: [&str; 4] = [
    "--bearer",
    "alice=token-of-alice",
    "--bearer",
    "bob=token-of-bob",
];
const ALICE: (&str, &str) = ("authorization", "Bearer token-of-alice");
const BOB: (&str, &str) = ("authorization", "Bearer token-of-bob");

/// One whole HTTP answer.
struct Answer {
    status: u16,
    headers: hyper::HeaderMap,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The one JSON-RPC message of a JSON or SSE answer.
    fn message(&self) -> Value {
        let text = match self.header("content-type") {
            Some("text/event-stream") => self
                .body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim_start)
                .collect::<Vec<_>>()
                .join("\n"),
            _ => self.body.clone(),
        };
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends one request to `url` on a connection of its own and reads the
/// whole answer.
async fn http(url: &str, method: &str, headers: &[(&str, &str)], body: Option<Value>) -> Answer {
    use http_body_util::{BodyExt as _, Full};

    let uri: hyper::Uri = url.parse().unwrap();
    let authority = uri.authority().expect("an address").as_str().to_owned();
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(uri.path())
        .header("host", &authority)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSIONS[0]);
    if body.is_some() {
        request = request.header("content-type", "application/json");
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let request = request.body(Full::new(bytes::Bytes::from(body))).unwrap();
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(&authority).await.unwrap();
        let (mut send, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .unwrap();
        tokio::spawn(connection);
        let (parts, body) = send.send_request(request).await.unwrap().into_parts();
        let body = body.collect().await.expect("the whole body").to_bytes();
        Answer {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        }
    };
    tokio::time::timeout(ANSWER_TIMEOUT, exchange)
        .await
        .expect("an answer in time")
}

fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": VERSIONS[0], "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

fn tool_request(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments}})
}

#[tokio::test]
async fn bearer_http_refuses_a_missing_or_unknown_token_with_401_and_a_challenge() {
    let (mut child, url, _logs) = serve_http(&USERS).await;
    for method in ["POST", "GET", "DELETE"] {
        let body = (method == "POST").then(initialize_request);
        let missing = http(&url, method, &[], body.clone()).await;
        assert_eq!(missing.status, 401, "{method}: {}", missing.body);
        // No credentials: a challenge without an error code (RFC 6750, 3.1).
        assert_eq!(
            missing.header("www-authenticate"),
            Some(r#"Bearer realm="mcp""#),
            "{method}"
        );
        let basic = http(
            &url,
            method,
            &[("authorization", "Basic YWxpY2U6")],
            body.clone(),
        )
        .await;
        assert_eq!(basic.status, 401, "{method}");
        assert_eq!(
            basic.header("www-authenticate"),
            Some(r#"Bearer realm="mcp""#)
        );

        let wrong = http(
            &url,
            method,
            &[("authorization", "Bearer token-of-eve")],
            body,
        )
        .await;
        assert_eq!(wrong.status, 401, "{method}: {}", wrong.body);
        let challenge = wrong.header("www-authenticate").expect("a challenge");
        assert!(
            challenge.starts_with(r#"Bearer realm="mcp", error="invalid_token""#),
            "{method}: {challenge}"
        );
    }
    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
}

#[tokio::test]
async fn bearer_http_session_serves_the_user_who_opened_it_and_is_404_to_another() {
    let (mut child, url, logs) = serve_http(&USERS).await;

    let opened = http(&url, "POST", &[ALICE], Some(initialize_request())).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    assert_eq!(opened.message()["result"]["protocolVersion"], VERSIONS[0]);
    let id = opened
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    let session = ("mcp-session-id", id.as_str());
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let ready = http(&url, "POST", &[ALICE, session], Some(initialized)).await;
    assert_eq!(ready.status, 202, "{}", ready.body);
    let add = tool_request(2, "add", json!({"a": 2, "b": 3}));
    let sum = http(&url, "POST", &[ALICE, session], Some(add.clone())).await;
    assert_eq!(sum.status, 200, "{}", sum.body);
    assert_eq!(text(&sum.message()["result"]), "5");

    // Bob's token is valid, but the session is Alice's: he is told it does
    // not exist, whatever he does with it.
    let stolen = http(&url, "POST", &[BOB, session], Some(add.clone())).await;
    assert_eq!(stolen.status, 404, "{}", stolen.body);
    let never = http(
        &url,
        "POST",
        &[BOB, ("mcp-session-id", "0123")],
        Some(add.clone()),
    )
    .await;
    assert_eq!(never.status, 404);
    assert_eq!(stolen.body, never.body, "nothing tells the two apart");
    let delete = http(&url, "DELETE", &[BOB, session], None).await;
    assert_eq!(delete.status, 404);
    // Bob opens a session of his own.
    let his = http(&url, "POST", &[BOB], Some(initialize_request())).await;
    assert_eq!(his.status, 200, "{}", his.body);

    // Alice's session outlived all that.
    let echo = tool_request(3, "echo", json!({"text": "still mine"}));
    let again = http(&url, "POST", &[ALICE, session], Some(echo)).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(text(&again.message()["result"]), "still mine");
    let delete = http(&url, "DELETE", &[ALICE, session], None).await;
    assert_eq!(delete.status, 204);

    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
    let logs = logs.await.unwrap().join("\n");
    assert!(
        logs.contains("initialize from raw 0 (user alice)"),
        "{logs}"
    );
    assert!(logs.contains("initialize from raw 0 (user bob)"), "{logs}");
}

#[test]
fn bearer_flag_refuses_a_token_outside_rfc_6750_or_given_twice() {
    for args in [
        &["--bearer", "alice"][..],
        &["--bearer", "=token"],
        &["--bearer", "alice="],
        &["--bearer", "alice=two words"],
        &["--bearer", "alice=same", "--bearer", "bob=same"],
    ] {
        let output = std::process::Command::new(example_path("mcp_server"))
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("usage: mcp_server"), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn resources_and_the_prompt_are_served_from_the_layer() {
    let (server, init) = Server::initialized(VERSIONS[0]).await;
    assert!(init["capabilities"]["resources"].is_object(), "{init}");
    assert!(init["capabilities"]["prompts"].is_object(), "{init}");
    let list = server.call("resources/list", json!({})).await.unwrap();
    assert_eq!(list["resources"][0]["uri"], "example://readme", "{list}");
    let echoed = server
        .call("resources/read", json!({"uri": "example://echo/hi"}))
        .await
        .unwrap();
    assert_eq!(echoed["contents"][0]["text"], "hi", "{echoed}");
    let missing = server
        .call("resources/read", json!({"uri": "example://nope"}))
        .await
        .unwrap_err();
    assert_eq!(error_code(&missing), -32002);
    let review = server
        .call(
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x = 1"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        review["messages"][0]["content"]["text"],
        "Review this code, looking for anything worth fixing:\n\nx = 1",
        "{review}"
    );
    assert!(server.finish().await.status.success());
}
