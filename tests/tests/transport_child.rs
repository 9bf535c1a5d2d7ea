//! Child processes: calls through a peer, the transport used alone (the
//! caller controls the wire order), a child dying mid-call, over-long
//! lines, a chatty stderr, and kill and reap on shutdown and on drop.
#![cfg(unix)]

use std::future::IntoFuture as _;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::join_all;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::{Frame, FrameRefusal, Framing, FramingError, DEFAULT_MAX_FRAME_LEN};
use jsonrpc_runtime::message::{Dialect, Message, ParseOptions, Parsed, Response};
use jsonrpc_runtime::transport::{ProcessExit, TransportError};
use jsonrpc_runtime::{
    transport::ChildProcess, CallError, CloseReason, Config, Context, ErrorObject, Id, Peer, Router,
};
use serde_json::{json, Value};
use tests::{example_path, ANSWER_TIMEOUT};
use tokio::process::Command;

fn spec_server() -> Command {
    Command::new(example_path("spec_server"))
}

fn sh(script: &str) -> Command {
    let mut command = Command::new("sh");
    command.arg("-c").arg(script);
    command
}

/// The process exit inside a call error, or a panic naming what came.
fn process_exit<E: std::fmt::Debug>(error: &CallError<E>) -> &ProcessExit {
    match error {
        CallError::Closed(CloseReason::Transport(e)) => match &**e {
            TransportError::ProcessExited(exit) => exit,
            other => panic!("expected the process exit, got {other:?}"),
        },
        other => panic!("expected the call to fail as closed, got {other:?}"),
    }
}

/// Waits up to three seconds for process `pid` to be gone from the process
/// table: exited and reaped, not a zombie.
async fn assert_reaped(pid: u32) {
    let stat = format!("/proc/{pid}/stat");
    let deadline = Instant::now() + Duration::from_secs(3);
    while let Ok(line) = std::fs::read_to_string(&stat) {
        assert!(
            Instant::now() < deadline,
            "process {pid} is still in the process table: {line}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

use tests::message_frame as message;

async fn next_message(child: &mut ChildProcess) -> Message {
    let frame = tokio::time::timeout(ANSWER_TIMEOUT, child.next())
        .await
        .expect("a message in time")
        .expect("a message, not the end")
        .expect("a message, not an error");
    let Frame::Message(bytes) = frame else {
        panic!("expected a message, got {frame:?}");
    };
    match Message::parse_bytes(&bytes, &ParseOptions::default()) {
        Parsed::Single(message) => message,
        other => panic!("expected one message, got {other:?}"),
    }
}

#[tokio::test]
async fn round_trip_through_a_peer_then_clean_shutdown() {
    let config = Config::default();
    let (transport, child) = ChildProcess::spawn(spec_server(), &config)
        .unwrap()
        .into_parts();
    let pid = child.id().expect("a pid");
    let peer = Peer::builder().config(config).spawn(transport);
    let difference: i64 = peer.call("subtract", [42, 23]).await.unwrap();
    let sum: i64 = peer.call("sum", [1, 2, 3]).await.unwrap();
    let echo: Value = peer.call("echo", json!({"a": [1, "x"]})).await.unwrap();
    assert_eq!((difference, sum), (19, 6));
    assert_eq!(echo, json!({"a": [1, "x"]}));

    peer.close(Duration::from_secs(1)).await;
    let exit = child.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(exit.status.success(), "{exit}");
    assert_reaped(pid).await;
}

#[tokio::test]
async fn round_trip_with_content_length_framing() {
    let config = Config::default().framing(Framing::ContentLength);
    let mut command = spec_server();
    command.arg("--content-length");
    let (transport, child) = ChildProcess::spawn(command, &config).unwrap().into_parts();
    let peer = Peer::builder().config(config).spawn(transport);
    assert_eq!(peer.call::<i64>("subtract", [5, 3]).await.unwrap(), 2);
    peer.close(Duration::from_secs(1)).await;
    assert!(child
        .shutdown(Duration::from_secs(5))
        .await
        .unwrap()
        .status
        .success());
}

/// The shape of a hand-driven stdio client: send a request and keep its id,
/// send a notification, read the next incoming message whatever it is,
/// answer the child's own request with a result or an error, shut down.
/// The caller decides every byte's order; no peer is involved.
#[tokio::test]
async fn the_transport_alone_lets_the_caller_control_the_wire_order() {
    let mut child = ChildProcess::spawn(spec_server(), &Config::default()).unwrap();

    // A request whose handler calls back into us before answering.
    let first = Id::from(1);
    child
        .send(message(Some(1), "test/roundtrip", json!({"n": 1})))
        .await
        .unwrap();
    // The next incoming message is the child's own request.
    let Message::Request(ask) = next_message(&mut child).await else {
        panic!("expected the child's test/ask request");
    };
    assert_eq!(ask.method, "test/ask");
    // Respond to it with a result...
    let answer = Response::result(ask.id, &json!("forty-two")).unwrap();
    child
        .send(Bytes::from(
            Message::Response(answer).to_json(Dialect::Strict),
        ))
        .await
        .unwrap();
    let Message::Response(response) = next_message(&mut child).await else {
        panic!("expected the answer to our request");
    };
    assert_eq!(response.id, first);
    let result: Value = serde_json::from_str(response.outcome.unwrap().get()).unwrap();
    assert_eq!(result, json!({"clientSaid": "forty-two"}));

    // ...and the next one with an error, which travels back to us.
    child
        .send(message(Some(2), "test/roundtrip", json!({"n": 2})))
        .await
        .unwrap();
    let Message::Request(ask) = next_message(&mut child).await else {
        panic!("expected the child's test/ask request");
    };
    let refusal = Response::error(ask.id, ErrorObject::new(-32050, "not today"));
    child
        .send(Bytes::from(
            Message::Response(refusal).to_json(Dialect::Strict),
        ))
        .await
        .unwrap();
    let Message::Response(response) = next_message(&mut child).await else {
        panic!("expected the answer to our request");
    };
    assert_eq!(response.id, Id::from(2));
    let error = response.outcome.unwrap_err();
    assert_eq!((error.code.0, &*error.message), (-32050, "not today"));

    // A notification gets no answer: the next message answers request 3.
    child
        .send(message(None, "notify_hello", json!([7])))
        .await
        .unwrap();
    child
        .send(message(Some(3), "subtract", json!([42, 23])))
        .await
        .unwrap();
    let Message::Response(response) = next_message(&mut child).await else {
        panic!("expected the answer to request 3");
    };
    assert_eq!(response.id, Id::from(3));
    assert_eq!(response.outcome.unwrap().get(), "19");

    let exit = child.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(exit.status.success(), "{exit}");
}

#[tokio::test]
async fn child_dying_mid_call_fails_the_call_within_a_second_with_status_and_stderr() {
    let script = r#"read line; echo "fatal: out of cheese" >&2; exit 3"#;
    let (transport, child) = ChildProcess::spawn(sh(script), &Config::default())
        .unwrap()
        .into_parts();
    let peer = Peer::spawn(transport);
    let started = Instant::now();
    let err = tokio::time::timeout(Duration::from_secs(1), peer.call::<Value>("work", ()))
        .await
        .expect("the call fails within a second")
        .unwrap_err();
    let elapsed = started.elapsed();
    let exit = process_exit(&err);
    assert_eq!(exit.status.code(), Some(3));
    assert!(exit.stderr.contains("fatal: out of cheese"), "{exit:?}");
    let text = err.to_string();
    assert!(text.contains("exit status: 3"), "{text}");
    assert!(text.contains("fatal: out of cheese"), "{text}");
    println!("the call failed {elapsed:?} after it was made: {text}");

    // The connection's end reports the same, and the handle agrees.
    let reason = peer.closed().await;
    assert!(
        matches!(&reason, CloseReason::Transport(e) if matches!(&**e, TransportError::ProcessExited(_))),
        "{reason:?}"
    );
    let exit = child.wait().await.unwrap();
    assert_eq!(exit.status.code(), Some(3));
}

#[tokio::test]
async fn every_pending_call_fails_when_the_child_exits() {
    // Reads three requests, then fails without answering any.
    let script = r#"read a; read b; read c; echo "giving up" >&2; exit 1"#;
    let (transport, _child) = ChildProcess::spawn(sh(script), &Config::default())
        .unwrap()
        .into_parts();
    let peer = Peer::spawn(transport);
    let calls = (0..10).map(|i| peer.call::<Value>("work", [i]).into_future());
    let results = tokio::time::timeout(ANSWER_TIMEOUT, join_all(calls))
        .await
        .expect("no call hangs");
    for result in results {
        let err = result.unwrap_err();
        let exit = process_exit(&err);
        assert_eq!(exit.status.code(), Some(1));
        assert_eq!(exit.stderr.trim(), "giving up");
    }
}

#[tokio::test]
async fn nine_mib_line_is_refused_and_drained_and_the_next_line_is_served() {
    let script =
        r#"head -c 9437184 /dev/zero | tr '\0' a; echo; echo '{"jsonrpc":"2.0","method":"after"}'"#;
    let mut child = ChildProcess::spawn(sh(script), &Config::default()).unwrap();
    let first = tokio::time::timeout(ANSWER_TIMEOUT, child.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        first,
        Frame::Refused(FrameRefusal::TooLong {
            limit: DEFAULT_MAX_FRAME_LEN,
            head: vec![b'a'; 256].into(),
        })
    );
    let Message::Notification(after) = next_message(&mut child).await else {
        panic!("expected the line after the long one");
    };
    assert_eq!(after.method, "after");
    // Then stdout ends: the exit is reported, then the stream ends.
    match child.next().await {
        Some(Err(TransportError::ProcessExited(exit))) => assert!(exit.status.success()),
        other => panic!("expected the process exit, got {other:?}"),
    }
    assert!(child.next().await.is_none());
}

#[tokio::test]
async fn a_peer_answers_a_nine_mib_line_and_keeps_reading() {
    // Reads our request, writes a 9 MiB line, then the answer to id 1.
    let script = r#"read line; head -c 9437184 /dev/zero | tr '\0' a; echo; echo '{"jsonrpc":"2.0","id":1,"result":42}'; read ignored"#;
    let (transport, child) = ChildProcess::spawn(sh(script), &Config::default())
        .unwrap()
        .into_parts();
    let peer = Peer::spawn(transport);
    let answer: i64 = tokio::time::timeout(ANSWER_TIMEOUT, peer.call("anything", ()))
        .await
        .expect("an answer in time")
        .unwrap();
    assert_eq!(answer, 42);
    peer.close(Duration::from_secs(1)).await;
    child.shutdown(Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn stderr_is_drained_concurrently_and_only_its_first_64_kib_kept() {
    // 1 MiB of stderr would block a child whose stderr nobody reads.
    let script = r#"head -c 1048576 /dev/zero | tr '\0' e >&2; echo '{"jsonrpc":"2.0","method":"done"}'; exit 4"#;
    let mut child = ChildProcess::spawn(sh(script), &Config::default()).unwrap();
    let Message::Notification(done) = next_message(&mut child).await else {
        panic!("expected the line written after stderr");
    };
    assert_eq!(done.method, "done");
    match child.next().await {
        Some(Err(TransportError::ProcessExited(exit))) => {
            assert_eq!(exit.status.code(), Some(4));
            assert_eq!(exit.stderr.len(), ProcessExit::STDERR_CAPTURE_LIMIT);
            assert!(exit.stderr.bytes().all(|b| b == b'e'));
            assert!(exit.stderr_truncated);
            assert!(exit.to_string().contains("truncated"), "{exit}");
        }
        other => panic!("expected the process exit, got {other:?}"),
    }
}

#[tokio::test]
async fn shutdown_kills_a_child_that_ignores_its_stdin_and_reaps_it() {
    let mut command = Command::new("sleep");
    command.arg("30");
    let child = ChildProcess::spawn(command, &Config::default()).unwrap();
    let pid = child.id().expect("a pid");
    let started = Instant::now();
    let exit = child.shutdown(Duration::from_millis(100)).await.unwrap();
    assert!(!exit.status.success(), "killed, not exited: {exit}");
    assert!(exit.to_string().contains("signal: 9"), "{exit}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_reaped(pid).await;
}

#[tokio::test]
async fn dropping_the_child_kills_and_reaps_it() {
    let mut command = Command::new("sleep");
    command.arg("30");
    let child = ChildProcess::spawn(command, &Config::default()).unwrap();
    let pid = child.id().expect("a pid");
    drop(child);
    assert_reaped(pid).await;
}

#[tokio::test]
async fn dropping_the_handle_and_the_transport_kills_and_reaps_it() {
    let mut command = Command::new("sleep");
    command.arg("30");
    let (transport, handle) = ChildProcess::spawn(command, &Config::default())
        .unwrap()
        .into_parts();
    let pid = handle.id().expect("a pid");
    drop(handle);
    // The transport alone keeps the child.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(std::fs::metadata(format!("/proc/{pid}")).is_ok());
    drop(transport);
    assert_reaped(pid).await;
}

#[tokio::test]
async fn a_peer_whose_handle_was_dropped_still_talks_and_reaps_the_child_at_close() {
    let (transport, handle) = ChildProcess::spawn(spec_server(), &Config::default())
        .unwrap()
        .into_parts();
    let pid = handle.id().expect("a pid");
    drop(handle);
    let peer = Peer::spawn(transport);
    assert_eq!(peer.call::<i64>("sum", [1, 1]).await.unwrap(), 2);
    peer.close(Duration::from_secs(1)).await;
    assert_reaped(pid).await;
}

#[tokio::test]
async fn handle_shutdown_under_a_running_peer_reports_the_exit_to_the_peer() {
    let (transport, handle) = ChildProcess::spawn(spec_server(), &Config::default())
        .unwrap()
        .into_parts();
    let router = Router::new().request("test/ask", |_: Value, _: Context| async {
        Ok::<_, ErrorObject>("yes")
    });
    let peer = Peer::builder().router(router).spawn(transport);
    assert_eq!(peer.call::<i64>("subtract", [3, 1]).await.unwrap(), 2);
    // Closing stdin under the peer: spec_server finishes and exits 0.
    let exit = handle.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(exit.status.success(), "{exit}");
    let reason = tokio::time::timeout(ANSWER_TIMEOUT, peer.closed())
        .await
        .expect("the peer sees the child go");
    match &reason {
        CloseReason::Transport(e) => match &**e {
            TransportError::ProcessExited(exit) => assert!(exit.status.success()),
            other => panic!("expected the process exit, got {other:?}"),
        },
        other => panic!("expected the process exit, got {other:?}"),
    }
    // Calls after that fail with the same reason.
    let err = peer.call::<i64>("subtract", [3, 1]).await.unwrap_err();
    assert_eq!(process_exit(&err).status.code(), Some(0));
}

#[tokio::test]
async fn spawning_a_missing_program_fails_with_not_found() {
    let err = ChildProcess::spawn(
        Command::new("/nonexistent/jsonrpc-test-server"),
        &Config::default(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, TransportError::Framing(FramingError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound),
        "{err:?}"
    );
}

#[tokio::test]
async fn stderr_lines_reach_a_callback_as_they_come_and_are_still_kept() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let each = {
        let seen = seen.clone();
        move |line: &str| seen.lock().unwrap().push(line.to_owned())
    };
    let command = sh("printf 'one\\ntwo\\r\\n' >&2; printf three >&2");
    let mode = jsonrpc_runtime::transport::StderrMode::Lines(std::sync::Arc::new(each));
    let (_transport, child) = ChildProcess::spawn_with(command, &Config::default(), mode)
        .unwrap()
        .into_parts();
    let exit = tokio::time::timeout(ANSWER_TIMEOUT, child.wait())
        .await
        .expect("the child exits")
        .unwrap();
    assert!(exit.status.success());
    assert_eq!(*seen.lock().unwrap(), ["one", "two", "three"]);
    assert_eq!(exit.stderr, "one\ntwo\r\nthree");
    assert_eq!(exit.stderr_error, None);
}

#[tokio::test]
async fn forwarded_stderr_is_still_kept_for_the_exit_report() {
    let command = sh("echo forwarded >&2");
    let mode = jsonrpc_runtime::transport::StderrMode::Forward;
    let (_transport, child) = ChildProcess::spawn_with(command, &Config::default(), mode)
        .unwrap()
        .into_parts();
    let exit = tokio::time::timeout(ANSWER_TIMEOUT, child.wait())
        .await
        .expect("the child exits")
        .unwrap();
    assert_eq!(exit.stderr, "forwarded\n");
}

#[tokio::test]
async fn a_child_that_closes_stdout_but_runs_on_is_killed_reaped_and_reported() {
    let command = sh("exec 1>&-; echo closing stdout >&2; sleep 60");
    let (transport, child) = ChildProcess::spawn(command, &Config::default())
        .unwrap()
        .into_parts();
    let pid = child.id().unwrap();
    let peer = Peer::spawn(transport);
    let err = tokio::time::timeout(ANSWER_TIMEOUT, peer.call::<Value>("work", ()))
        .await
        .expect("the call fails well before the child would exit")
        .unwrap_err();
    let exit = process_exit(&err);
    assert!(!exit.status.success(), "killed: {}", exit.status);
    assert_eq!(exit.stderr, "closing stdout\n");
    assert_reaped(pid).await;
}

#[tokio::test]
async fn a_raw_client_drives_the_wire_message_by_message() {
    use jsonrpc_runtime::transport::RawClient;

    let mut client = RawClient::spawn(spec_server(), &Config::default()).unwrap();
    let first = client.send_request("subtract", [42, 23]).await.unwrap();
    let second = client
        .send_request("subtract", json!({"minuend": 1, "subtrahend": 1}))
        .await
        .unwrap();
    assert_eq!((first.clone(), second.clone()), (Id::from(1), Id::from(2)));
    client.send_notification("update", [1, 2]).await.unwrap();
    // The server calls back: `test/roundtrip` asks the client `test/ask`.
    let third = client
        .send_request("test/roundtrip", json!({"n": 1}))
        .await
        .unwrap();
    let mut results = std::collections::HashMap::new();
    while results.len() < 3 {
        let message = tokio::time::timeout(ANSWER_TIMEOUT, client.next())
            .await
            .expect("the server answers")
            .expect("the stream is open")
            .unwrap();
        match message {
            Message::Response(response) => {
                let outcome = response.outcome.map(|raw| raw.get().to_owned());
                results.insert(response.id, outcome);
            }
            Message::Request(request) => {
                assert_eq!(request.method, "test/ask");
                client
                    .respond(request.id, json!("from the raw client"))
                    .await
                    .unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(results[&first].as_deref().unwrap(), "19");
    assert_eq!(results[&second].as_deref().unwrap(), "0");
    assert!(results[&third]
        .as_ref()
        .unwrap()
        .contains("from the raw client"));
    // An unknown method is an error answer; the stream stays aligned.
    let fourth = client.send_request("nope", ()).await.unwrap();
    match client.next().await.unwrap().unwrap() {
        Message::Response(r) => {
            assert_eq!(r.id, fourth);
            assert_eq!(r.outcome.unwrap_err().code.0, -32601);
        }
        other => panic!("unexpected {other:?}"),
    }
    let exit = client.shutdown(Duration::from_secs(5)).await.unwrap();
    assert!(exit.status.success(), "{exit}");
}

#[tokio::test]
async fn a_raw_client_reports_bad_lines_and_reads_on() {
    use jsonrpc_runtime::transport::{RawClient, RawError};

    let long = "x".repeat(64);
    let script =
        format!("printf 'not json\\n{long}\\n{{\"jsonrpc\":\"2.0\",\"method\":\"note\"}}\\n'");
    let config = Config::default().max_frame_len(48);
    let mut client = RawClient::spawn(sh(&script), &config).unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let next = tokio::time::timeout(ANSWER_TIMEOUT, client.next()).await;
        seen.push(next.expect("in time").expect("the stream is open"));
    }
    assert!(
        matches!(&seen[0], Err(RawError::Malformed(r)) if r.error.code.0 == -32700),
        "{seen:?}"
    );
    assert!(matches!(&seen[1], Err(RawError::Refused(_))), "{seen:?}");
    assert!(
        matches!(&seen[2], Ok(Message::Notification(n)) if n.method == "note"),
        "{seen:?}"
    );
}
