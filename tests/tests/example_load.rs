//! The `load` example run as a program: a small run against `spec_server`
//! over TCP, HTTP and as a child process (every call answered once), over
//! TLS, `wss://` and `https://` with `--ca`, with request headers a server
//! checks, against a server that answers some ids twice and others never
//! (both counted, exit code 1), subscriptions (items counted, gaps found,
//! a subscription the server ends early), and bad arguments (exit code 2).
#![cfg(unix)]

use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::connection::{ConnectionInfo, Refusal};
use jsonrpc_runtime::message::{Dialect, Message, ParseOptions, Parsed, Request, Response};
use jsonrpc_runtime::server::{HttpListener, Listener};
use jsonrpc_runtime::transport::{TcpAcceptor, WebSocketAcceptor};
use jsonrpc_runtime::{Config, Context, ErrorObject, Router, Transport};
use serde_json::{json, Value};
use tests::{example_path, TempDir};
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// How long one run of the load tool may take. Its runs here take well under
/// a second when the machine is idle; this is for a machine busy with
/// builds.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `load ARGS --json` to the end.
async fn load(args: &[&str]) -> Output {
    let run = Command::new(example_path("load"))
        .args(args)
        .arg("--json")
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(RUN_TIMEOUT, run)
        .await
        .expect("the load tool ends in time")
        .expect("run the load tool")
}

/// The JSON summary on stdout.
fn summary(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "expected one JSON object on stdout ({e}): {stdout:?}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Waits for a scripted server's task, which checks what it was sent.
async fn server_ends(server: tokio::task::JoinHandle<()>) {
    tokio::time::timeout(RUN_TIMEOUT, server)
        .await
        .expect("the server task ends")
        .expect("the server task does not panic");
}

fn assert_all_answered_once(output: &Output, calls: u64) {
    let summary = summary(output);
    assert_eq!(summary["sent"], calls, "{summary}");
    assert_eq!(summary["answered"], calls, "{summary}");
    assert_eq!(summary["lost"], 0, "{summary}");
    assert_eq!(summary["duplicated"], 0, "{summary}");
    assert_eq!(summary["unexpected"], 0, "{summary}");
    assert_eq!(summary["error_answers"], 0, "{summary}");
    assert_eq!(summary["end"], "complete", "{summary}");
    assert_eq!(summary["problems"], Value::Array(vec![]), "{summary}");
    assert!(
        summary["calls_per_second"].as_f64().unwrap() > 0.0,
        "{summary}"
    );
    let latency = &summary["latency_us"];
    for name in ["p50", "p90", "p99", "p99_9", "max"] {
        assert!(latency[name].as_u64().unwrap() >= 1, "{summary}");
    }
    assert!(output.status.success(), "{:?}: {summary}", output.status);
}

#[tokio::test]
async fn every_call_to_spec_server_over_tcp_is_answered_once() {
    let mut server = Command::new(example_path("spec_server"))
        .args(["--tcp", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn spec_server");
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let listening = tests::listening_lines(&mut stderr, 1).await;
    let addr = listening[0].strip_prefix("tcp ").unwrap();

    let output = load(&["--tcp", addr, "--calls", "2000", "--in-flight", "50"]).await;
    assert_all_answered_once(&output, 2000);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn every_call_to_spec_server_as_a_child_is_answered_once() {
    let command = format!("{} --content-length", example_path("spec_server").display());
    let output = load(&[
        "--child",
        &command,
        "--content-length",
        "--calls",
        "2000",
        "--in-flight",
        "50",
    ])
    .await;
    assert_all_answered_once(&output, 2000);
}

/// A server on its own TCP port that answers each request whose id ends in
/// 3 twice and each whose id ends in 7 never, and everything else once. It
/// serves one connection and closes it after `requests` requests.
async fn unreliable_server(requests: u64) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut transport = Transport::from_tcp(stream, &Config::default());
        for _ in 0..requests {
            let Some(Ok(Frame::Message(bytes))) = transport.next().await else {
                panic!("the client closed before sending every request");
            };
            let Parsed::Single(Message::Request(request)) =
                Message::parse_bytes(&bytes, &ParseOptions::default())
            else {
                panic!("expected a request: {}", String::from_utf8_lossy(&bytes));
            };
            let times = match request.id.as_u64().unwrap() % 10 {
                3 => 2,
                7 => 0,
                _ => 1,
            };
            let answer = Message::Response(Response::result(request.id, &request.params).unwrap());
            let body = Bytes::from(answer.to_json(Dialect::Strict));
            for _ in 0..times {
                transport.feed(body.clone()).await.unwrap();
            }
            transport.flush().await.unwrap();
        }
        transport.close().await.unwrap();
    });
    (addr, task)
}

#[tokio::test]
async fn duplicated_and_lost_answers_are_counted_and_fail_the_run() {
    let (addr, server) = unreliable_server(1000).await;
    // A lost answer keeps its request in flight for good: room for all of
    // them, so that every request is sent. The server closes once it has
    // read them all, which tells the tool the rest will never come.
    let output = load(&["--tcp", &addr, "--calls", "1000", "--in-flight", "200"]).await;
    let summary = summary(&output);
    assert_eq!(summary["sent"], 1000, "{summary}");
    assert_eq!(summary["answered"], 900, "{summary}");
    assert_eq!(summary["lost"], 100, "{summary}");
    assert_eq!(summary["duplicated"], 100, "{summary}");
    assert_eq!(summary["end"], "server closed", "{summary}");
    assert_eq!(summary["ok"], false, "{summary}");
    assert_eq!(output.status.code(), Some(1), "{summary}");
    server_ends(server).await;
}

#[tokio::test]
async fn bad_arguments_print_the_usage_and_exit_with_2() {
    let cases: [&[&str]; 5] = [
        &[],
        &["--tcp", "127.0.0.1:1", "--unix", "/tmp/x.sock"],
        &["--tcp", "127.0.0.1:1", "--calls", "0"],
        &["--ws", "127.0.0.1:1", "--content-length"],
        &["--tcp", "127.0.0.1:1", "--params", "42"],
    ];
    for args in cases {
        let output = load(args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: load"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

/// Starts `spec_server ARGS` and waits until it says where it listens, on
/// `count` lines (`tcp ADDR`, `http://ADDR/`, ...).
async fn spec_server(args: &[&str], count: usize) -> (Child, Vec<String>) {
    let mut server = Command::new(example_path("spec_server"))
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn spec_server");
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let listening = tests::listening_lines(&mut stderr, count).await;
    // Keep reading, so that the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    (server, listening)
}

/// The line of `lines` that starts with `prefix`.
fn line<'a>(lines: &'a [String], prefix: &str) -> &'a str {
    lines
        .iter()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("a `{prefix}` line in {lines:?}"))
}

#[tokio::test]
async fn every_call_to_spec_server_over_http_is_answered_once() {
    let (mut server, listening) = spec_server(&["--http", "127.0.0.1:0"], 1).await;
    let url = line(&listening, "http://");

    let output = load(&["--http", url, "--calls", "2000", "--in-flight", "50"]).await;
    assert_all_answered_once(&output, 2000);
    let summary = summary(&output);
    assert_eq!(summary["transport"], "http", "{summary}");
    assert_eq!(summary["http_failures"], 0, "{summary}");
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_post_that_fails_is_an_http_failure_and_fails_the_run() {
    // A port nothing listens on: bound, then closed.
    let addr = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().to_string()
    };
    let output = load(&["--http", &addr, "--calls", "20"]).await;
    let summary = summary(&output);
    assert_eq!(summary["answered"], 20, "{summary}");
    assert_eq!(summary["error_answers"], 20, "{summary}");
    assert_eq!(summary["http_failures"], 20, "{summary}");
    assert_eq!(summary["ok"], false, "{summary}");
    assert_eq!(output.status.code(), Some(1), "{summary}");
}

/// Lets in connections (a WebSocket handshake, each `POST`) that carry
/// `Authorization: Bearer t0k` and `X-Tenant: blue`.
fn check_credentials(info: &mut ConnectionInfo) -> Result<(), Refusal> {
    if info.bearer_token() == Some("t0k") && info.header("x-tenant") == Some("blue") {
        Ok(())
    } else {
        Err(Refusal::unauthorized(
            "`Bearer t0k` and `X-Tenant: blue` are required",
        ))
    }
}

fn echo_router() -> Router {
    Router::new().request("echo", |params: Value, _: Context| async move {
        Ok::<_, ErrorObject>(params)
    })
}

#[tokio::test]
async fn headers_and_a_bearer_token_reach_websocket_and_http_servers() {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let http_url = format!("http://{}/", acceptor.local_addr().unwrap());
    let http = HttpListener::new(acceptor)
        .on_connect(check_credentials)
        .spawn(echo_router());
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.unwrap();
    let ws_url = format!("ws://{}/", acceptor.local_addr().unwrap());
    let ws = Listener::new(acceptor)
        .on_connect(check_credentials)
        .spawn(echo_router());
    let credentials = ["--bearer", "t0k", "--header", "X-Tenant: blue"];

    for (flag, url) in [("--http", &http_url), ("--ws", &ws_url)] {
        let mut args = vec![flag, url.as_str(), "--calls", "300", "--in-flight", "30"];
        args.extend(credentials);
        assert_all_answered_once(&load(&args).await, 300);
    }
    // Without the header: every POST is refused with 401, and the
    // WebSocket handshake too.
    let output = load(&["--http", &http_url, "--bearer", "t0k", "--calls", "10"]).await;
    let summary = summary(&output);
    assert_eq!(summary["http_failures"], 10, "{summary}");
    assert_eq!(output.status.code(), Some(1), "{summary}");
    let output = load(&["--ws", &ws_url, "--bearer", "t0k", "--calls", "10"]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("401"), "{stderr}");

    http.shutdown(Duration::from_secs(5)).await;
    ws.shutdown(Duration::from_secs(5)).await;
}

/// The flags of a subscription to `spec_server`'s ticks, as fast as the
/// client reads and endless unless `count` says otherwise.
fn ticks<'a>(params: &'a str, stop: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "--subscribe",
        "subscribe_ticks",
        "--unsubscribe",
        "unsubscribe_ticks",
        "--params",
        params,
    ];
    args.extend(stop);
    args
}

fn assert_ticks_delivered(output: &Output, items: u64) {
    let summary = summary(output);
    assert_eq!(summary["items"], items, "{summary}");
    assert_eq!(summary["gaps"], 0, "{summary}");
    assert_eq!(summary["missing"], 0, "{summary}");
    assert_eq!(summary["non_integer_items"], 0, "{summary}");
    assert_eq!(summary["unexpected"], 0, "{summary}");
    assert_eq!(summary["first_item"], 1, "{summary}");
    assert_eq!(summary["last_item"], items, "{summary}");
    assert_eq!(summary["unsubscribe_answer"], true, "{summary}");
    assert_eq!(summary["end"], "complete", "{summary}");
    assert_eq!(summary["problems"], Value::Array(vec![]), "{summary}");
    assert!(
        summary["items_per_second"].as_f64().unwrap() > 0.0,
        "{summary}"
    );
    assert_eq!(summary["ok"], true, "{summary}");
    assert!(output.status.success(), "{:?}: {summary}", output.status);
}

#[tokio::test]
async fn a_subscription_to_spec_server_is_counted_to_the_last_item_without_gaps() {
    let (mut server, listening) = spec_server(&["--tcp", "127.0.0.1:0"], 1).await;
    let addr = listening[0].strip_prefix("tcp ").unwrap();

    let mut args = vec!["--tcp", addr];
    args.extend(ticks("[0,0]", &["--items", "20000"]));
    let output = load(&args).await;
    assert_ticks_delivered(&output, 20000);
    assert_eq!(summary(&output)["subscription"], 1);

    // Timed: a tick every 10 ms for half a second.
    let mut args = vec!["--tcp", addr];
    args.extend(ticks(
        r#"{"interval_ms":10,"count":0}"#,
        &["--duration", "0.5"],
    ));
    let output = load(&args).await;
    let summary = summary(&output);
    assert_eq!(summary["seconds_asked"], 0.5, "{summary}");
    let items = summary["items"].as_u64().unwrap();
    assert!(items > 0, "{summary}");
    assert_ticks_delivered(&output, items);
    server.kill().await.unwrap();
}

#[tokio::test]
async fn a_subscription_the_server_ends_early_fails_the_run() {
    let command = example_path("spec_server").display().to_string();
    let mut args = vec!["--child", &command];
    args.extend(ticks("[0,100]", &["--items", "200"]));
    let output = load(&args).await;
    let summary = summary(&output);
    assert_eq!(summary["items"], 100, "{summary}");
    assert_eq!(summary["server_ended"], true, "{summary}");
    assert_eq!(summary["server_error"], Value::Null, "{summary}");
    assert_eq!(summary["end"], "server ended the subscription", "{summary}");
    assert_eq!(summary["ok"], false, "{summary}");
    assert_eq!(output.status.code(), Some(1), "{summary}");
}

/// A server on its own TCP port that answers `sub` with the id `"s-1"`,
/// sends `items` as that subscription's items, and answers `unsub ["s-1"]`
/// with `true`.
async fn scripted_subscription(items: Vec<Value>) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let task = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let mut transport = Transport::from_tcp(stream, &Config::default());
        let request = next_request(&mut transport).await;
        assert_eq!(request.method, "sub");
        send(
            &mut transport,
            Response::result(request.id, &"s-1").unwrap(),
        )
        .await;
        for item in items {
            let params = json!({"subscription": "s-1", "result": item});
            let body = json!({"jsonrpc": "2.0", "method": "note", "params": params});
            transport
                .send(Bytes::from(serde_json::to_vec(&body).unwrap()))
                .await
                .unwrap();
        }
        let request = next_request(&mut transport).await;
        assert_eq!(request.method, "unsub");
        assert_eq!(request.params.unwrap().get(), r#"["s-1"]"#);
        send(&mut transport, Response::result(request.id, &true).unwrap()).await;
        // Until the client closes.
        while let Some(Ok(_)) = transport.next().await {}
    });
    (addr, task)
}

async fn next_request(transport: &mut Transport) -> Request {
    let Some(Ok(Frame::Message(bytes))) = transport.next().await else {
        panic!("the client closed before sending its request");
    };
    match Message::parse_bytes(&bytes, &ParseOptions::default()) {
        Parsed::Single(Message::Request(request)) => request,
        _ => panic!("expected a request: {}", String::from_utf8_lossy(&bytes)),
    }
}

async fn send(transport: &mut Transport, response: Response) {
    let body = Message::Response(response).to_json(Dialect::Strict);
    transport.send(Bytes::from(body)).await.unwrap();
}

#[tokio::test]
async fn gaps_in_a_subscriptions_integer_items_are_counted_and_fail_the_run() {
    // 3 is missing, then 6, 7 and 8; "x" is counted and leaves the
    // sequence alone.
    let items = vec![
        json!(1),
        json!(2),
        json!(4),
        json!("x"),
        json!(5),
        json!(9),
        json!(10),
    ];
    let (addr, server) = scripted_subscription(items).await;
    let output = load(&[
        "--tcp",
        &addr,
        "--subscribe",
        "sub",
        "--unsubscribe",
        "unsub",
        "--items",
        "7",
    ])
    .await;
    let summary = summary(&output);
    assert_eq!(summary["subscription"], "s-1", "{summary}");
    assert_eq!(summary["items"], 7, "{summary}");
    assert_eq!(summary["non_integer_items"], 1, "{summary}");
    assert_eq!(summary["gaps"], 2, "{summary}");
    assert_eq!(summary["missing"], 4, "{summary}");
    assert_eq!(summary["first_item"], 1, "{summary}");
    assert_eq!(summary["last_item"], 10, "{summary}");
    assert_eq!(summary["unsubscribe_answer"], true, "{summary}");
    assert_eq!(summary["end"], "complete", "{summary}");
    assert_eq!(summary["ok"], false, "{summary}");
    assert_eq!(output.status.code(), Some(1), "{summary}");
    server_ends(server).await;
}

/// A self-signed certificate for `localhost` and 127.0.0.1 and its key,
/// as PEM files in `dir`.
fn certificate(dir: &TempDir) -> (String, String) {
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "example_load test");
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let path = |p: PathBuf| p.to_str().unwrap().to_owned();
    (
        path(dir.write("cert.pem", &cert.pem())),
        path(dir.write("key.pem", &key.serialize_pem())),
    )
}

#[tokio::test]
async fn tls_over_tcp_wss_and_https_are_checked_against_the_ca_file() {
    let dir = TempDir::new("example-load-tls");
    let (cert, key) = certificate(&dir);
    let (mut server, listening) = spec_server(
        &[
            "--tcp",
            "127.0.0.1:0",
            "--ws",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ],
        3,
    )
    .await;
    let tls_addr = line(&listening, "tls ").strip_prefix("tls ").unwrap();
    let wss = line(&listening, "wss://");
    let https = line(&listening, "https://");

    for (flag, target, kind) in [
        ("--tcp", tls_addr, "tls"),
        ("--ws", wss, "ws"),
        ("--http", https, "http"),
    ] {
        let output = load(&[
            flag,
            target,
            "--ca",
            &cert,
            "--calls",
            "500",
            "--in-flight",
            "50",
        ])
        .await;
        assert_all_answered_once(&output, 500);
        assert_eq!(summary(&output)["transport"], kind);
    }
    let mut args = vec!["--ws", wss, "--ca", &cert];
    args.extend(ticks("[0,0]", &["--items", "5000"]));
    assert_ticks_delivered(&load(&args).await, 5000);

    // Without the certificate among the roots, the server is not trusted.
    let output = load(&["--ws", wss, "--calls", "10"]).await;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot connect"), "{stderr}");
    server.kill().await.unwrap();
}

#[tokio::test]
async fn connection_and_subscription_flags_that_do_not_fit_exit_with_2() {
    let subscription = ["--subscribe", "s", "--unsubscribe", "u"];
    let cases: Vec<Vec<&str>> = vec![
        vec!["--tcp", "127.0.0.1:1", "--bearer", "t0k"],
        vec!["--unix", "/tmp/x.sock", "--header", "X-Tenant: blue"],
        vec!["--ws", "127.0.0.1:1", "--header", "no colon"],
        vec!["--tcp", "127.0.0.1:1", "--subscribe", "s"],
        vec!["--tcp", "127.0.0.1:1", "--unsubscribe", "u"],
        vec!["--tcp", "127.0.0.1:1", "--items", "5"],
        [&["--http", "127.0.0.1:1"][..], &subscription].concat(),
        [&["--tcp", "127.0.0.1:1", "--calls", "5"][..], &subscription].concat(),
        [
            &["--tcp", "127.0.0.1:1", "--items", "5", "--duration", "1"][..],
            &subscription,
        ]
        .concat(),
        vec!["--ws", "ws://127.0.0.1:1/", "--ca", "ca.pem"],
        vec!["--child", "spec_server", "--ca", "ca.pem"],
        vec!["--ws", "wss://127.0.0.1:1/", "--ca", "/nonexistent/ca.pem"],
        vec!["--http", "127.0.0.1:1", "--content-length"],
    ];
    for args in cases {
        let output = load(&args).await;
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("usage: load"), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}
