//! Conformance of the `spec_server` example, driven as a child process over
//! both framings (newline-delimited and `Content-Length`): the examples of
//! the JSON-RPC 2.0 specification, the frame cap, calls from the server back
//! into the client, the `shutdown`/`exit` lifecycle, end of input, and edge
//! cases of the envelope.

use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use jsonrpc_runtime::codec::DEFAULT_MAX_FRAME_LEN;
use serde_json::{json, Value};
use tests::ANSWER_TIMEOUT;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long the server gets to stay quiet in a "no answer" check.
const SILENCE: Duration = Duration::from_millis(200);

/// A bound on the server's peak resident memory that still catches a frame
/// buffered whole (or several times over).
const PEAK_MEMORY_LIMIT: u64 = 64 * 1024 * 1024;

/// Which framing the client and the server speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    /// One message per line.
    Lines,
    /// `Content-Length: N\r\n\r\n` before each body.
    ContentLength,
}

/// A `spec_server` child process and a raw client for its stdin/stdout.
#[derive(Debug)]
struct Server {
    wire: Wire,
    child: Child,
    /// `None` once the client closed it.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Server {
    /// Spawns the server in `wire`'s framing.
    fn start(wire: Wire) -> Server {
        let mut command = Command::new(tests::example_path("spec_server"));
        if wire == Wire::ContentLength {
            command.arg("--content-length");
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn spec_server");
        // Held here, not in `child`: `Child::wait` would close it.
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        Server {
            wire,
            child,
            stdin,
            stdout,
        }
    }

    /// Frames `body` in this server's framing.
    fn frame(&self, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(body.len() + 32);
        match self.wire {
            Wire::Lines => {
                out.extend_from_slice(body);
                out.push(b'\n');
            }
            Wire::ContentLength => {
                out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
                out.extend_from_slice(body);
            }
        }
        out
    }

    /// Writes bytes as they are, without framing; panics if the server
    /// does not take them within [`ANSWER_TIMEOUT`].
    async fn write_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is still open");
        let write = async {
            stdin.write_all(bytes).await?;
            stdin.flush().await
        };
        tokio::time::timeout(ANSWER_TIMEOUT, write)
            .await
            .expect("the server reads its input in time")
            .expect("write to the server");
    }

    /// Sends one frame with this body.
    async fn send(&mut self, body: impl AsRef<[u8]>) {
        let frame = self.frame(body.as_ref());
        self.write_raw(&frame).await;
    }

    /// Closes the server's stdin: it sees the end of its input.
    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Reads the next frame body, or `None` at the end of the server's
    /// output; panics after [`ANSWER_TIMEOUT`].
    async fn next_frame(&mut self) -> Option<Vec<u8>> {
        tokio::time::timeout(ANSWER_TIMEOUT, read_frame(&mut self.stdout, self.wire))
            .await
            .expect("a frame from the server in time")
    }

    /// Reads the next frame body; panics at the end of the output.
    async fn recv_raw(&mut self) -> Vec<u8> {
        self.next_frame()
            .await
            .expect("the server closed its output instead of answering")
    }

    /// Reads the next frame body as JSON.
    async fn recv(&mut self) -> Value {
        parse(&self.recv_raw().await)
    }

    /// Sends `body` and reads the next answer.
    async fn exchange(&mut self, body: impl AsRef<[u8]>) -> Value {
        self.send(body).await;
        self.recv().await
    }

    /// Asserts that the server writes nothing for [`SILENCE`].
    async fn expect_silence(&mut self) {
        match tokio::time::timeout(SILENCE, self.stdout.fill_buf()).await {
            Err(_elapsed) => {}
            Ok(Ok([])) => panic!("expected silence, but the server closed its output"),
            Ok(Ok(bytes)) => panic!(
                "expected no answer, got {:?}",
                String::from_utf8_lossy(bytes)
            ),
            Ok(Err(e)) => panic!("reading from the server failed: {e}"),
        }
    }

    /// Reads frames until the server closes its output.
    async fn read_to_end(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(body) = self.next_frame().await {
            out.push(parse(&body));
        }
        out
    }

    /// Waits for the server to exit; panics after [`ANSWER_TIMEOUT`].
    async fn wait(&mut self) -> ExitStatus {
        tokio::time::timeout(ANSWER_TIMEOUT, self.child.wait())
            .await
            .expect("the server exits in time")
            .expect("wait for the server")
    }

    /// The server's peak resident set size in bytes (`VmHWM`), where
    /// `/proc` has it.
    fn peak_memory(&self) -> Option<u64> {
        let pid = self.child.id()?;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kib: u64 = line
            .trim_start_matches("VmHWM:")
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    }

    /// Prints the server's peak memory and asserts it is under
    /// [`PEAK_MEMORY_LIMIT`]; skipped where `/proc` is missing.
    fn check_peak_memory(&self) {
        match self.peak_memory() {
            Some(peak) => {
                println!("spec_server peak memory (VmHWM): {} KiB", peak / 1024);
                assert!(
                    peak < PEAK_MEMORY_LIMIT,
                    "spec_server peaked at {peak} bytes, over the {PEAK_MEMORY_LIMIT}-byte bound"
                );
            }
            None => println!("no /proc/<pid>/status: peak memory not checked"),
        }
    }
}

/// Reads one frame body in `wire`'s framing; `None` at a clean end of stream.
async fn read_frame(reader: &mut BufReader<ChildStdout>, wire: Wire) -> Option<Vec<u8>> {
    match wire {
        Wire::Lines => {
            let mut line = Vec::new();
            let n = reader.read_until(b'\n', &mut line).await.expect("read");
            if n == 0 {
                return None;
            }
            assert_eq!(
                line.pop(),
                Some(b'\n'),
                "the server's output ended inside a line: {:?}",
                String::from_utf8_lossy(&line)
            );
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            Some(line)
        }
        Wire::ContentLength => {
            let mut len = None;
            let mut first = true;
            loop {
                let mut header = Vec::new();
                let n = reader.read_until(b'\n', &mut header).await.expect("read");
                if n == 0 {
                    assert!(first, "the server's output ended inside a header block");
                    return None;
                }
                first = false;
                let header = String::from_utf8(header).expect("a UTF-8 header line");
                let header = header.trim_end_matches(['\r', '\n']);
                if header.is_empty() {
                    break;
                }
                let (name, value) = header
                    .split_once(':')
                    .unwrap_or_else(|| panic!("a header line without `:`: {header:?}"));
                if name.trim().eq_ignore_ascii_case("content-length") {
                    len = Some(
                        value
                            .trim()
                            .parse::<usize>()
                            .expect("a numeric Content-Length"),
                    );
                }
            }
            let len = len.expect("a Content-Length header");
            let mut body = vec![0; len];
            reader.read_exact(&mut body).await.expect("a whole body");
            Some(body)
        }
    }
}

fn parse(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or_else(|e| {
        panic!(
            "the server wrote something that is not JSON ({e}): {:?}",
            String::from_utf8_lossy(body)
        )
    })
}

/// `answer` with `error.message` (checked to be a string) and `error.data`
/// removed.
fn without_error_text(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Some(error) = answer.get_mut("error").and_then(Value::as_object_mut) {
        assert!(
            error.get("message").is_some_and(Value::is_string),
            "an error object needs a string `message`: {error:?}"
        );
        error.remove("message");
        error.remove("data");
    }
    answer
}

/// Asserts that `actual` is `expected`, error messages and data aside.
#[track_caller]
fn assert_answer(actual: &Value, expected: Value) {
    assert_eq!(
        actual["jsonrpc"], "2.0",
        "no `\"jsonrpc\": \"2.0\"` in {actual}"
    );
    assert_eq!(
        without_error_text(actual),
        expected,
        "the whole answer: {actual}"
    );
}

/// Asserts that `actual` is an array holding `expected` in any order, error
/// messages and data aside.
#[track_caller]
fn assert_batch_answer(actual: &Value, expected: Vec<Value>) {
    let answers = actual
        .as_array()
        .unwrap_or_else(|| panic!("expected an array of answers, got {actual}"));
    for answer in answers {
        assert_eq!(
            answer["jsonrpc"], "2.0",
            "no `\"jsonrpc\": \"2.0\"` in {answer}"
        );
    }
    let sorted = |mut values: Vec<Value>| {
        values.sort_by_key(Value::to_string);
        values
    };
    assert_eq!(
        sorted(answers.iter().map(without_error_text).collect()),
        sorted(expected),
        "the whole answer: {actual}"
    );
}

/// The error answer with `code` and `id`, message aside.
fn error(code: i64, id: Value) -> Value {
    json!({"jsonrpc": "2.0", "error": {"code": code}, "id": id})
}

/// An `echo` request whose answer proves the server is still serving.
fn echo(id: i64) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":[{id}]}}"#)
}

fn echoed(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": [id]})
}

/// Sends a frame that must get no answer: the next answer is the following
/// request's, and nothing else comes after it.
async fn assert_unanswered(server: &mut Server, body: &str, probe_id: i64) {
    server.send(body).await;
    let next = server.exchange(echo(probe_id)).await;
    assert_eq!(next, echoed(probe_id), "{body} got an answer");
    server.expect_silence().await;
}

/// Makes one test per framing, `<name>::over_lines` and
/// `<name>::over_content_length`, each calling `name(wire)`.
macro_rules! over_both_framings {
    ($($name:ident;)*) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn over_lines() {
                super::$name(super::Wire::Lines).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn over_content_length() {
                super::$name(super::Wire::ContentLength).await
            }
        }
    )*};
}

over_both_framings! {
    spec_subtract_with_positional_params_answers_19_and_minus_19;
    spec_subtract_with_named_params_answers_19;
    spec_notifications_known_or_unknown_get_no_answer;
    spec_unknown_method_gets_method_not_found_with_its_id;
    spec_invalid_json_gets_parse_error_with_null_id;
    spec_invalid_request_object_gets_invalid_request_with_null_id;
    spec_batch_of_invalid_json_gets_one_parse_error;
    spec_empty_batch_gets_one_invalid_request;
    spec_batch_of_non_objects_gets_invalid_request_per_element;
    spec_mixed_batch_gets_an_answer_per_request_and_bad_element;
    spec_batch_of_notifications_gets_no_answer;
    server_call_to_the_client_roundtrips_into_the_answer;
    notification_that_asks_the_client_is_followed_by_a_notification;
    exit_after_shutdown_exits_with_status_0;
    exit_without_shutdown_exits_with_status_1;
    closing_stdin_still_answers_every_request_then_exits_0;
    invalid_utf8_gets_parse_error_and_next_frame_served;
}

// ---------------------------------------------------------------------------
// The examples of the JSON-RPC 2.0 specification, section 7.

async fn spec_subtract_with_positional_params_answers_19_and_minus_19(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#)
        .await;
    assert_answer(&answer, json!({"jsonrpc": "2.0", "result": 19, "id": 1}));
    let answer = server
        .exchange(r#"{"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2}"#)
        .await;
    assert_answer(&answer, json!({"jsonrpc": "2.0", "result": -19, "id": 2}));
}

async fn spec_subtract_with_named_params_answers_19(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#,
        )
        .await;
    assert_answer(&answer, json!({"jsonrpc": "2.0", "result": 19, "id": 3}));
    let answer = server
        .exchange(
            r#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4}"#,
        )
        .await;
    assert_answer(&answer, json!({"jsonrpc": "2.0", "result": 19, "id": 4}));
}

async fn spec_notifications_known_or_unknown_get_no_answer(wire: Wire) {
    let mut server = Server::start(wire);
    assert_unanswered(
        &mut server,
        r#"{"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]}"#,
        1,
    )
    .await;
    assert_unanswered(&mut server, r#"{"jsonrpc": "2.0", "method": "foobar"}"#, 2).await;
}

async fn spec_unknown_method_gets_method_not_found_with_its_id(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(r#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#)
        .await;
    assert_answer(&answer, error(-32601, json!("1")));
}

async fn spec_invalid_json_gets_parse_error_with_null_id(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#)
        .await;
    assert_answer(&answer, error(-32700, Value::Null));
}

async fn spec_invalid_request_object_gets_invalid_request_with_null_id(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#)
        .await;
    assert_answer(&answer, error(-32600, Value::Null));
}

async fn spec_batch_of_invalid_json_gets_one_parse_error(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(
            r#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"}, {"jsonrpc": "2.0", "method"]"#,
        )
        .await;
    assert_answer(&answer, error(-32700, Value::Null));
}

async fn spec_empty_batch_gets_one_invalid_request(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server.exchange("[]").await;
    assert_answer(&answer, error(-32600, Value::Null));
}

async fn spec_batch_of_non_objects_gets_invalid_request_per_element(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server.exchange("[1]").await;
    assert_batch_answer(&answer, vec![error(-32600, Value::Null)]);
    let answer = server.exchange("[1,2,3]").await;
    assert_batch_answer(&answer, vec![error(-32600, Value::Null); 3]);
}

async fn spec_mixed_batch_gets_an_answer_per_request_and_bad_element(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(concat!(
            r#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},"#,
            r#" {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},"#,
            r#" {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},"#,
            r#" {"foo": "boo"},"#,
            r#" {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},"#,
            r#" {"jsonrpc": "2.0", "method": "get_data", "id": "9"}]"#,
        ))
        .await;
    assert_batch_answer(
        &answer,
        vec![
            json!({"jsonrpc": "2.0", "result": 7, "id": "1"}),
            json!({"jsonrpc": "2.0", "result": 19, "id": "2"}),
            error(-32600, Value::Null),
            error(-32601, json!("5")),
            json!({"jsonrpc": "2.0", "result": ["hello", 5], "id": "9"}),
        ],
    );
}

async fn spec_batch_of_notifications_gets_no_answer(wire: Wire) {
    let mut server = Server::start(wire);
    assert_unanswered(
        &mut server,
        concat!(
            r#"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},"#,
            r#" {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#,
        ),
        1,
    )
    .await;
}

// ---------------------------------------------------------------------------
// The frame cap.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_line_is_refused_and_next_line_served() {
    let mut server = Server::start(Wire::Lines);
    // A request that would be served, padded to one byte past the cap.
    let head = br#"{"jsonrpc":"2.0","id":6,"method":"echo","params":[""#;
    let tail = br#""]}"#;
    let mut line = Vec::with_capacity(DEFAULT_MAX_FRAME_LEN + 2);
    line.extend_from_slice(head);
    line.resize(DEFAULT_MAX_FRAME_LEN + 1 - tail.len(), b'a');
    line.extend_from_slice(tail);
    assert_eq!(line.len(), DEFAULT_MAX_FRAME_LEN + 1);
    line.push(b'\n');
    line.extend_from_slice(echo(7).as_bytes());
    line.push(b'\n');
    server.write_raw(&line).await;

    // Answered with the request's own id, read off the line's first bytes:
    // its caller learns at once.
    assert_answer(&server.recv().await, error(-32600, json!(6)));
    assert_eq!(server.recv().await, echoed(7));
    server.check_peak_memory();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_content_length_is_refused_its_body_skipped_and_next_message_served() {
    let mut server = Server::start(Wire::ContentLength);
    // One byte past the cap: refused on the header alone, before its body
    // arrives; the body is then dropped as it comes, never held whole, and
    // the connection goes on (an editor's over-cap `didOpen` must not cost
    // it its language server).
    let len = DEFAULT_MAX_FRAME_LEN + 1;
    let mut body = br#"{"jsonrpc":"2.0","id":"big","method":"echo","params":[""#.to_vec();
    body.resize(len - 3, b'a');
    body.extend_from_slice(br#""]}"#);
    server
        .write_raw(format!("Content-Length: {len}\r\n\r\n").as_bytes())
        .await;
    // Its first bytes are enough: answered with the request's own id.
    server.write_raw(&body[..300]).await;
    assert_answer(&server.recv().await, error(-32600, json!("big")));
    server.write_raw(&body[300..]).await;
    server.send(&echo(8)).await;
    assert_eq!(server.recv().await, echoed(8));
    server.check_peak_memory();
}

// ---------------------------------------------------------------------------
// Calls from the server back into the client.

async fn server_call_to_the_client_roundtrips_into_the_answer(wire: Wire) {
    let mut server = Server::start(wire);
    server
        .send(r#"{"jsonrpc":"2.0","id":1,"method":"test/roundtrip","params":{"x":1}}"#)
        .await;
    let ask = server.recv().await;
    assert_eq!(ask["jsonrpc"], "2.0", "{ask}");
    assert_eq!(ask["method"], "test/ask", "{ask}");
    assert_eq!(
        ask["params"],
        json!({"question": "roundtrip", "echo": {"x": 1}}),
        "{ask}"
    );
    let ask_id = ask.get("id").cloned().expect("test/ask is a request");
    assert!(
        ask_id.is_i64() || ask_id.is_u64() || ask_id.is_string(),
        "{ask}"
    );

    let reply = json!({"jsonrpc": "2.0", "id": ask_id, "result": "yes"});
    let answer = server.exchange(reply.to_string()).await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": {"clientSaid": "yes"}})
    );
}

async fn notification_that_asks_the_client_is_followed_by_a_notification(wire: Wire) {
    let mut server = Server::start(wire);
    server
        .send(r#"{"jsonrpc":"2.0","method":"test/notifyMe","params":{"y":2}}"#)
        .await;
    let ask = server.recv().await;
    assert_eq!(ask["jsonrpc"], "2.0", "{ask}");
    assert_eq!(ask["method"], "test/ask", "{ask}");
    assert_eq!(
        ask["params"],
        json!({"question": "notifyMe", "echo": {"y": 2}}),
        "{ask}"
    );
    let ask_id = ask.get("id").cloned().expect("test/ask is a request");

    let reply = json!({"jsonrpc": "2.0", "id": ask_id, "result": "ok"});
    let notification = server.exchange(reply.to_string()).await;
    assert_eq!(
        notification,
        json!({"jsonrpc": "2.0", "method": "test/answer", "params": {"clientSaid": "ok"}})
    );
}

// ---------------------------------------------------------------------------
// Lifecycle.

async fn exit_after_shutdown_exits_with_status_0(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#)
        .await;
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": 1, "result": null}));
    // Stdin stays open: `exit` alone must end the process.
    server.send(r#"{"jsonrpc":"2.0","method":"exit"}"#).await;
    let status = server.wait().await;
    assert_eq!(status.code(), Some(0), "{status}");
}

async fn exit_without_shutdown_exits_with_status_1(wire: Wire) {
    let mut server = Server::start(wire);
    server.send(r#"{"jsonrpc":"2.0","method":"exit"}"#).await;
    let status = server.wait().await;
    assert_eq!(status.code(), Some(1), "{status}");
}

async fn closing_stdin_still_answers_every_request_then_exits_0(wire: Wire) {
    const REQUESTS: i64 = 50;
    let mut server = Server::start(wire);
    let mut all = Vec::new();
    for id in 0..REQUESTS {
        all.extend_from_slice(&server.frame(echo(id).as_bytes()));
    }
    server.write_raw(&all).await;
    server.close_stdin();
    let closed = Instant::now();

    let mut answers = server.read_to_end().await;
    let status = server.wait().await;
    let elapsed = closed.elapsed();
    answers.sort_by_key(|a| a["id"].as_i64());
    let expected: Vec<Value> = (0..REQUESTS).map(echoed).collect();
    assert_eq!(answers, expected);
    assert_eq!(status.code(), Some(0), "{status}");
    assert!(
        elapsed < Duration::from_secs(5),
        "the server took {elapsed:?} to finish after its stdin closed"
    );
}

// ---------------------------------------------------------------------------
// Edge cases of lines and envelopes.

async fn invalid_utf8_gets_parse_error_and_next_frame_served(wire: Wire) {
    let mut server = Server::start(wire);
    let answer = server
        .exchange(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xff\xfe\"]}")
        .await;
    assert_answer(&answer, error(-32700, Value::Null));
    assert_eq!(server.exchange(echo(2)).await, echoed(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crlf_line_endings_are_accepted() {
    let mut server = Server::start(Wire::Lines);
    let mut lines = echo(1).into_bytes();
    lines.extend_from_slice(b"\r\n");
    lines.extend_from_slice(echo(2).as_bytes());
    lines.extend_from_slice(b"\r\n");
    server.write_raw(&lines).await;
    assert_eq!(server.recv().await, echoed(1));
    assert_eq!(server.recv().await, echoed(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_line_gets_parse_error_with_null_id() {
    let mut server = Server::start(Wire::Lines);
    server.write_raw(b"\n").await;
    assert_answer(&server.recv().await, error(-32700, Value::Null));
    assert_eq!(server.exchange(echo(1)).await, echoed(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn whitespace_around_the_json_is_accepted() {
    let mut server = Server::start(Wire::Lines);
    let answer = server.exchange(format!(" \t {} \t ", echo(1))).await;
    assert_eq!(answer, echoed(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_and_string_ids_keep_their_types() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":1,"method":"echo","params":["int"]}"#)
        .await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": ["int"]})
    );
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":"1","method":"echo","params":["str"]}"#)
        .await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": "1", "result": ["str"]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_past_2_pow_53_come_back_exactly() {
    let mut server = Server::start(Wire::Lines);
    for id in [
        "9007199254740993",
        "18446744073709551615",
        "-9223372036854775808",
    ] {
        server
            .send(format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":["big"]}}"#
            ))
            .await;
        let raw = server.recv_raw().await;
        let text = String::from_utf8_lossy(&raw);
        assert!(text.contains(id), "id {id} came back as {text}");
        let answer = parse(&raw);
        // serde_json keeps integers exact: a float here means the id was
        // rounded or written with a fraction or exponent.
        assert_eq!(answer["id"].to_string(), id, "{text}");
        assert_eq!(answer["result"], json!(["big"]), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fractional_id_gets_invalid_request_with_null_id() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":1.5,"method":"echo","params":[1]}"#)
        .await;
    assert_answer(&answer, error(-32600, Value::Null));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_id_is_served_with_null_id() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":null,"method":"echo","params":[1]}"#)
        .await;
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": null, "result": [1]}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_params_on_get_data_is_served() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":1,"method":"get_data","params":null}"#)
        .await;
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": 1, "result": ["hello", 5]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_jsonrpc_gets_invalid_request_with_the_id() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"id":4,"method":"echo","params":[1]}"#)
        .await;
    assert_answer(&answer, error(-32600, json!(4)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_1_0_gets_invalid_request_with_the_id() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"jsonrpc":"1.0","id":"a","method":"echo","params":[1]}"#)
        .await;
    assert_answer(&answer, error(-32600, json!("a")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_with_result_and_error_gets_invalid_request_with_null_id() {
    let mut server = Server::start(Wire::Lines);
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","id":9,"result":1,"error":{"code":1,"message":"x"}}"#)
        .await;
    assert_answer(&answer, error(-32600, Value::Null));
    let answer = server
        .exchange(r#"{"jsonrpc":"2.0","result":1,"error":{"code":1,"message":"x"}}"#)
        .await;
    assert_answer(&answer, error(-32600, Value::Null));
    assert_eq!(server.exchange(echo(1)).await, echoed(1));
}
