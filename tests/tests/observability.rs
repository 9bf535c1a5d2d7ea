//! What the runtime tells `tracing`: the wire, a span per inbound request,
//! refusals, on the targets the crate documents.

use std::io::Write;
use std::sync::{Arc, Mutex};

use jsonrpc_runtime::transport::HttpConnector;
use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
use tests::RawClient;

/// Everything the subscriber writes, shared with the test.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

/// A current-thread runtime with a subscriber filtered by `filter`, as
/// `RUST_LOG=filter` would.
fn run_with_log(filter: &str, test: impl std::future::Future<Output = ()>) -> String {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
    captured.text()
}

fn router() -> Router {
    Router::new().request("add", |(a, b): (i64, i64), _: Context| async move {
        tracing::info!(a, b, "adding");
        Ok::<_, ErrorObject>(a + b)
    })
}

async fn traffic() {
    let mut raw = RawClient::start(router(), Config::default());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}"#)
        .await;
    assert_eq!(raw.recv().await["result"], 5);
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"nope"}"#)
        .await;
    assert_eq!(raw.recv().await["error"]["code"], -32601);
}

#[test]
fn the_wire_target_shows_every_frame_in_and_out() {
    let log = run_with_log("jsonrpc_runtime::wire=trace", traffic());
    assert!(
        log.contains(
            r#"direction="in" frame={"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}"#
        ),
        "{log}"
    );
    assert!(
        log.contains(r#"direction="out" frame={"jsonrpc":"2.0","id":1,"result":5}"#),
        "{log}"
    );
    assert!(!log.contains("answered"), "only the wire target: {log}");
}

#[test]
fn debug_shows_a_span_per_request_its_outcome_and_refusals() {
    let log = run_with_log("jsonrpc_runtime=debug,observability=info", traffic());
    // The handler's own event runs inside the request's span.
    let adding = log.lines().find(|l| l.contains("adding")).expect(&log);
    assert!(
        adding.contains(r#"request{method="add" id=1 connection="#),
        "{adding}"
    );
    let answered = log
        .lines()
        .find(|l| l.contains("answered with a result"))
        .expect(&log);
    assert!(answered.contains("elapsed_us="), "{answered}");
    let refused = log.lines().find(|l| l.contains("refused")).expect(&log);
    assert!(
        refused.contains("jsonrpc_runtime::protocol") && refused.contains("code=-32601"),
        "{refused}"
    );
    assert!(!log.contains("direction="), "no wire at debug: {log}");
}

#[test]
fn debug_shows_a_span_per_call_with_its_outcome_and_time() {
    let log = run_with_log("jsonrpc_runtime::call=debug", async {
        let (a, b) = jsonrpc_runtime::Transport::pair(8);
        let router = router().request("never", |(): (), _: jsonrpc_runtime::Context| async {
            std::future::pending::<Result<(), jsonrpc_runtime::ErrorObject>>().await
        });
        let _server = jsonrpc_runtime::Peer::builder().router(router).spawn(b);
        let client = jsonrpc_runtime::Peer::spawn(a);
        let sum: i64 = client.call("add", (1, 2)).await.unwrap();
        assert_eq!(sum, 3);
        assert!(client.call::<i64>("missing", ()).await.is_err());
        let late = client
            .call::<()>("never", ())
            .timeout(std::time::Duration::from_millis(1))
            .await;
        assert!(matches!(late, Err(jsonrpc_runtime::CallError::TimedOut)));
    });
    let line = |needle: &str| log.lines().find(|l| l.contains(needle)).map(str::to_owned);
    let sent = line("call sent").expect(&log);
    assert!(sent.contains(r#"call{method="add" id=1"#), "{sent}");
    let answered = line("answered with a result").expect(&log);
    assert!(answered.contains(r#"call{method="add" id=1"#), "{answered}");
    assert!(answered.contains("elapsed_us="), "{answered}");
    let failed = line("answered with an error").expect(&log);
    assert!(failed.contains(r#"method="missing" id=2"#), "{failed}");
    assert!(failed.contains("code=-32601"), "{failed}");
    let timed_out = line("not answered").expect(&log);
    assert!(timed_out.contains(r#"method="never" id=3"#), "{timed_out}");
    assert!(timed_out.contains("given up"), "{timed_out}");
    assert!(timed_out.contains("elapsed_us="), "{timed_out}");
}

#[test]
fn nothing_is_written_when_the_targets_are_off() {
    let log = run_with_log("off", traffic());
    assert_eq!(log, "");
}

/// Runs an example binary to the end: stdout and exit code.
fn run(name: &str, args: &[&str], stdin: &str) -> (String, Option<i32>) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(tests::example_path(name))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

#[test]
fn a_recorded_session_replays_clean_and_a_changed_answer_is_reported() {
    let dir = std::env::temp_dir().join(format!("replay-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let recording = dir.join("session.jsonl");
    let recording = recording.to_str().unwrap();
    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#,
        r#"{"jsonrpc":"2.0","method":"notify_hello","params":[7]}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"sum","params":[1,2,4]}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"nope"}"#,
    ]
    .join("\n")
        + "\n";
    let (out, code) = run("spec_server", &["--record", recording], &session);
    assert_eq!(code, Some(0), "{out}");
    let lines = std::fs::read_to_string(recording).unwrap();
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.contains(r#""dir":"in""#))
            .count(),
        4,
        "{lines}"
    );
    assert_eq!(
        lines
            .lines()
            .filter(|l| l.contains(r#""dir":"out""#))
            .count(),
        3,
        "{lines}"
    );

    let server = tests::example_path("spec_server");
    let server = server.to_str().unwrap();
    let (report, code) = run("replay", &[recording, "--child", server], "");
    assert!(report.contains("3 answers compared, 0 differ"), "{report}");
    assert_eq!(code, Some(0));

    // The server "changed": the recorded answer to id 1 no longer matches.
    std::fs::write(recording, lines.replace(r#""result":19"#, r#""result":20"#)).unwrap();
    let (report, code) = run("replay", &[recording, "--child", server], "");
    assert!(report.contains("id 1: answered"), "{report}");
    assert!(report.contains("3 answers compared, 1 differ"), "{report}");
    assert_eq!(code, Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn rust_log_shows_an_examples_wire_on_stderr_and_leaves_stdout_to_json_rpc() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let mut child = Command::new(tests::example_path("spec_server"))
        .env(
            "RUST_LOG",
            "jsonrpc_runtime::wire=trace,jsonrpc_runtime::request=debug",
        )
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subtract\",\"params\":[42,23]}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stdout, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":19}\n");
    let frame_in = stderr
        .lines()
        .find(|l| l.contains("direction=\"in\""))
        .unwrap_or_else(|| panic!("no inbound frame in:\n{stderr}"));
    assert!(frame_in.contains("jsonrpc_runtime::wire"), "{frame_in}");
    assert!(frame_in.contains(r#""method":"subtract""#), "{frame_in}");
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("direction=\"out\"") && l.contains(r#""result":19"#)),
        "no outbound frame in:\n{stderr}"
    );
    assert!(
        stderr.contains("answered with a result"),
        "no request span event in:\n{stderr}"
    );
}

/// JSON-RPC over HTTP: one `add`, one unknown method, and a `POST` the
/// listener's `on_connect` hook refuses (no bearer token).
async fn http_traffic() {
    use jsonrpc_runtime::connection::Refusal;
    use jsonrpc_runtime::server::HttpListener;
    use jsonrpc_runtime::transport::TcpAcceptor;
    use jsonrpc_runtime::{CallError, Peer};

    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = HttpListener::new(acceptor)
        .on_connect(|info| match info.bearer_token() {
            Some("let-me-in") => Ok(()),
            _ => Err(Refusal::unauthorized("a bearer token is required")),
        })
        .spawn(router());
    let url = format!("http://{addr}/");
    let client = Peer::spawn(
        HttpConnector::new(&url)
            .bearer("let-me-in")
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(client.call::<i64>("add", (2, 3)).await.unwrap(), 5);
    let unknown = client.call::<i64>("nope", ()).await.unwrap_err();
    assert!(matches!(unknown, CallError::Rpc(_)), "{unknown:?}");
    let stranger = Peer::spawn(HttpConnector::new(&url).connect().await.unwrap());
    let refused = stranger.call::<i64>("add", (1, 1)).await.unwrap_err();
    assert!(matches!(refused, CallError::Rpc(_)), "{refused:?}");
    server.shutdown(std::time::Duration::from_secs(1)).await;
}

#[test]
fn http_listener_traffic_shows_its_frames_requests_and_refusals() {
    let log = run_with_log(
        "jsonrpc_runtime::wire=trace,jsonrpc_runtime=debug,observability=info",
        http_traffic(),
    );
    let server_in = log
        .lines()
        .find(|l| {
            l.contains(r#"direction="in" frame={"jsonrpc":"2.0","id":"#)
                && l.contains(r#""method":"add","params":[2,3]"#)
        })
        .expect(&log);
    assert!(server_in.contains("jsonrpc_runtime::wire"), "{server_in}");
    // The client's answer in, the server's out: both sides of the wire.
    assert!(
        log.matches(r#""result":5}"#).count() >= 2,
        "the answer out of the server and into the client: {log}"
    );
    let adding = log.lines().find(|l| l.contains("adding")).expect(&log);
    assert!(
        adding.contains(r#"request{method="add" id="#),
        "the handler runs in the request's span: {adding}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("answered with a result") && l.contains(r#"request{method="add""#)),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains("jsonrpc_runtime::protocol") && l.contains("code=-32601")),
        "{log}"
    );
    let refused = log
        .lines()
        .find(|l| l.contains("HTTP request refused"))
        .expect(&log);
    assert!(
        refused.contains("status=401") && refused.contains("a bearer token is required"),
        "{refused}"
    );
}
