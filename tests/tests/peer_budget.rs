//! The outbound budget: a peer that stops reading stalls the other side's
//! reading instead of growing its memory.

use std::time::Duration;

use jsonrpc_runtime::codec::LineCodec;
use jsonrpc_runtime::transport::TcpConnector;
use jsonrpc_runtime::{peer::SendError, Config, Peer, Transport};
use serde_json::json;
use tests::ANSWER_TIMEOUT;
use tokio::io::AsyncReadExt as _;

/// A peer whose writes go into a pipe of `pipe` bytes that nobody reads yet,
/// and the pipe's other end.
fn peer_into_a_small_pipe(budget: usize, pipe: usize) -> (Peer, tokio::io::DuplexStream) {
    let (ours, theirs) = tokio::io::duplex(pipe);
    let (read, write) = tokio::io::split(ours);
    let config = Config::default().outbound_budget(budget);
    let peer =
        Peer::builder()
            .config(config)
            .spawn(Transport::from_io(read, write, LineCodec::new()));
    (peer, theirs)
}

#[tokio::test]
async fn notify_waits_while_the_budget_is_spent_and_sends_once_the_other_side_reads() {
    let (peer, mut other_side) = peer_into_a_small_pipe(1024, 256);
    let text = "x".repeat(2048);
    // Frames larger than the budget still go, one at a time, until the pipe
    // and the queue are full; then a notify waits.
    let mut sent = 0;
    let waiting = loop {
        let next = Box::pin(peer.notify("big", (sent, &text)));
        let mut next = next;
        match tokio::time::timeout(Duration::from_millis(100), next.as_mut()).await {
            Ok(result) => result.unwrap(),
            Err(_) => break next,
        }
        sent += 1;
        assert!(sent < 8, "notify never waited for the other side to read");
    };
    let mut buf = vec![0u8; 64 * 1024];
    let reader = async {
        let mut lines = 0;
        while lines <= sent {
            let n = other_side.read(&mut buf).await.unwrap();
            assert!(n > 0, "the pipe closed");
            lines += buf[..n].iter().filter(|b| **b == b'\n').count();
        }
        lines
    };
    let (result, lines) =
        tokio::time::timeout(ANSWER_TIMEOUT, async { tokio::join!(waiting, reader) })
            .await
            .expect("the waiting notify goes out once the other side reads");
    result.unwrap();
    assert_eq!(lines, sent + 1);
}

#[tokio::test]
async fn a_closed_connection_fails_a_waiting_notify() {
    let (peer, other_side) = peer_into_a_small_pipe(16, 16);
    peer.notify("fill", ["x".repeat(64)]).await.unwrap();
    let waiting = tokio::spawn({
        let peer = peer.clone();
        async move { peer.notify("more", [1]).await }
    });
    drop(other_side);
    let sent = tokio::time::timeout(ANSWER_TIMEOUT, waiting)
        .await
        .expect("the waiting notify ends when the connection does")
        .unwrap();
    assert!(matches!(sent, Err(SendError::Closed(_))), "{sent:?}");
}

/// The resident set size of `pid` in bytes.
#[cfg(target_os = "linux")]
fn resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

/// The issue this guards: a TCP client wrote 100,000 requests of 1 KiB and
/// never read, and the server's memory grew by 105 MiB, linearly with them.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_client_that_never_reads_leaves_the_server_memory_within_the_budget() {
    use std::process::Stdio;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    const REQUESTS: usize = 100_000;
    let mut server = tokio::process::Command::new(tests::example_path("spec_server"))
        .args(["--tcp", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = server.id().unwrap();
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let listening = tests::listening_lines(&mut stderr, 1).await;
    let addr = listening[0].strip_prefix("tcp ").unwrap().to_owned();
    let pad = "p".repeat(1000);
    let config = Config::default();

    // Warm up with the same traffic, read as it should be, then measure.
    let warm = Peer::spawn(
        TcpConnector::new(&addr)
            .codec(&config)
            .connect()
            .await
            .unwrap(),
    );
    for _ in 0..200 {
        let _: serde_json::Value = warm.call("echo", json!({ "pad": pad })).await.unwrap();
    }
    let before = resident_bytes(pid);

    // The flood: written as fast as the server takes it, never read.
    let written = Arc::new(AtomicUsize::new(0));
    let flood = tokio::spawn({
        let (addr, pad, written) = (addr.clone(), pad.clone(), written.clone());
        async move {
            let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
            for id in 0..REQUESTS {
                let line = format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"echo\",\"params\":{{\"pad\":\"{pad}\"}}}}\n"
                );
                if stream.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
                written.fetch_add(1, Ordering::Relaxed);
            }
            // Keep the connection open, unread, until the test ends.
            std::future::pending::<()>().await;
        }
    });
    // Wait until the client's writes stall: the server stopped reading.
    let mut last = usize::MAX;
    let mut still = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while still < 5 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = written.load(Ordering::Relaxed);
        still = if now == last { still + 1 } else { 0 };
        last = now;
    }
    let after = resident_bytes(pid);
    let growth = after.saturating_sub(before);
    println!(
        "server RSS {} KiB before the flood, {} KiB after; {} of {REQUESTS} requests written before the writes stalled",
        before / 1024,
        after / 1024,
        last
    );
    assert!(
        last < REQUESTS,
        "the server kept reading a client that never reads"
    );
    let limit = jsonrpc_runtime::config::DEFAULT_OUTBOUND_BUDGET as u64 + 16 * 1024 * 1024;
    assert!(
        growth < limit,
        "the server grew by {growth} bytes, over the budget plus 16 MiB ({limit})"
    );

    // Another connection is still served.
    let other = Peer::spawn(
        TcpConnector::new(&addr)
            .codec(&config)
            .connect()
            .await
            .unwrap(),
    );
    let echoed: serde_json::Value = tokio::time::timeout(
        ANSWER_TIMEOUT,
        other.call("echo", json!({"still": "served"})),
    )
    .await
    .expect("a second connection is answered")
    .unwrap();
    assert_eq!(echoed, json!({"still": "served"}));
    flood.abort();
}
