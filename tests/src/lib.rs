//! Shared helpers for the integration tests.

pub mod http;
pub mod sweep;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use jsonrpc_runtime::codec::Framing;
use jsonrpc_runtime::{Config, Peer, Router, Transport};
use serde_json::Value;
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf,
};

/// A directory of its own for one test's files, under the system's
/// temporary directory, removed on drop. `name` tells the tests apart; the
/// process id, runs of the suite.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Makes the directory `<temp>/<name>-<pid>`.
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// The path of `name` in the directory (which may not exist).
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Writes `contents` to the file `name` in the directory; its path.
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// How long a test waits for an answer that must come.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// The path of an example binary, building it first if it is missing.
///
/// `cargo test --workspace` builds the examples before running tests; a
/// narrower run (`cargo test -p tests`) may not, so this builds them on
/// demand. It runs what `cargo test --workspace` runs, without running
/// anything (`--no-run`): the same feature set and the same profile, so
/// after a workspace run it is a no-op, never a rebuild under the tests'
/// feet. (`cargo build` would not be: its units are not `cargo test`'s.)
pub fn example_path(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/<test> -> target/<profile>/examples/<name>
    let profile_dir = exe
        .parent()
        .and_then(|p| p.parent())
        .expect("target profile dir");
    let path = profile_dir.join("examples").join(name);
    BUILT.get_or_init(|| {
        let mut build = Command::new(env!("CARGO"));
        build
            .args(["test", "--no-run", "--quiet", "--workspace"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        // What cargo set for this test process, not for a build: a build
        // script that watches one of them (ring's watches
        // CARGO_MANIFEST_DIR) would otherwise rebuild, and everything above
        // it, here and again in the next build from a shell.
        for (name, _) in std::env::vars_os() {
            let Some(name) = name.to_str() else { continue };
            let set_for_tests = name.starts_with("CARGO_PKG_")
                || matches!(
                    name,
                    "CARGO_MANIFEST_DIR"
                        | "CARGO_MANIFEST_PATH"
                        | "CARGO_CRATE_NAME"
                        | "CARGO_BIN_NAME"
                        | "CARGO_PRIMARY_PACKAGE"
                        | "CARGO_TARGET_TMPDIR"
                        | "CARGO_RUSTC_CURRENT_DIR"
                );
            if set_for_tests {
                build.env_remove(name);
            }
        }
        let status = build.status().expect("run cargo to build the examples");
        assert!(status.success(), "building the examples failed");
    });
    assert!(path.exists(), "example binary {} not found", path.display());
    path
}

/// A client that speaks raw newline-delimited JSON to a peer under test,
/// over an in-process pipe.
#[derive(Debug)]
pub struct RawClient {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
    /// The peer under test; dropping the client keeps it until then.
    pub peer: Peer,
}

impl RawClient {
    /// Starts a peer with `router` and `config` (its framing is ignored:
    /// lines are used) and connects a raw client to it.
    pub fn start(router: Router, config: Config) -> RawClient {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (read, write) = tokio::io::split(theirs);
        let codec = Framing::NewlineDelimited.codec(jsonrpc_runtime::codec::DEFAULT_MAX_FRAME_LEN);
        let peer = Peer::builder()
            .config(config)
            .router(router)
            .spawn(Transport::from_io(read, write, codec));
        let (read, writer) = tokio::io::split(ours);
        RawClient {
            reader: BufReader::new(read),
            writer,
            peer,
        }
    }

    /// Sends one line (a newline is added).
    pub async fn send(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.expect("write");
        self.writer.write_all(b"\n").await.expect("write");
        self.writer.flush().await.expect("flush");
    }

    /// Reads the next line and parses it as JSON; panics after
    /// [`ANSWER_TIMEOUT`] or at end of stream.
    pub async fn recv(&mut self) -> Value {
        self.recv_within(ANSWER_TIMEOUT).await
    }

    /// [`recv`](Self::recv) with a limit of its own (for tests on paused
    /// time that wait minutes).
    pub async fn recv_within(&mut self, limit: Duration) -> Value {
        let mut line = String::new();
        let n = tokio::time::timeout(limit, self.reader.read_line(&mut line))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(n > 0, "the peer closed the stream instead of answering");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}"))
    }

    /// Asserts that nothing arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        let mut buf = [0u8; 1];
        if let Ok(result) = tokio::time::timeout(wait, self.reader.read(&mut buf)).await {
            let n = result.expect("read");
            if n > 0 {
                let mut rest = String::new();
                let _ = tokio::time::timeout(
                    Duration::from_millis(100),
                    self.reader.read_line(&mut rest),
                )
                .await;
                panic!(
                    "expected silence, got {:?}",
                    format!("{}{rest}", buf[0] as char)
                );
            }
        }
    }

    /// Closes the client's writing side (the peer sees end of stream).
    pub async fn shutdown_write(&mut self) {
        self.writer.shutdown().await.expect("shutdown");
    }

    /// Reads until the peer closes its side, returning the lines left.
    pub async fn read_to_end(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let mut line = String::new();
            let n = tokio::time::timeout(ANSWER_TIMEOUT, self.reader.read_line(&mut line))
                .await
                .expect("end of stream in time")
                .expect("read");
            if n == 0 {
                return out;
            }
            out.push(
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}")),
            );
        }
    }
}

/// A tiny xorshift PRNG: reproducible split points and inputs without a
/// dependency.
#[derive(Debug, Clone)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next pseudo-random number.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// What [`decode_chunked`] saw.
#[derive(Debug)]
pub struct Chunked {
    /// Every frame decoded, in order.
    pub frames: Vec<jsonrpc_runtime::codec::Frame>,
    /// The most bytes the buffer held after a `decode` call.
    pub max_len: usize,
    /// The largest capacity the buffer reached.
    pub max_capacity: usize,
}

/// Feeds well-formed `input` to `codec` in chunks of `chunk_len()` bytes,
/// decoding after each, then ends the stream; panics on a framing error.
pub fn decode_chunked<C>(
    mut codec: C,
    input: &[u8],
    mut chunk_len: impl FnMut() -> usize,
) -> Chunked
where
    C: tokio_util::codec::Decoder<
        Item = jsonrpc_runtime::codec::Frame,
        Error = jsonrpc_runtime::codec::FramingError,
    >,
{
    let mut buf = bytes::BytesMut::new();
    let mut out = Chunked {
        frames: Vec::new(),
        max_len: 0,
        max_capacity: 0,
    };
    let mut rest = input;
    while !rest.is_empty() {
        let n = chunk_len().clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        while let Some(frame) = codec.decode(&mut buf).expect("well-formed input") {
            out.frames.push(frame);
        }
        out.max_len = out.max_len.max(buf.len());
        out.max_capacity = out.max_capacity.max(buf.capacity());
    }
    while let Some(frame) = codec.decode_eof(&mut buf).expect("well-formed input") {
        out.frames.push(frame);
    }
    out
}

/// One request (with `id`) or notification (without), encoded as a frame
/// body, for tests that drive a transport without a peer.
pub fn message_frame(id: Option<i64>, method: &str, params: Value) -> bytes::Bytes {
    use jsonrpc_runtime::message::{Dialect, Message, Notification, Request};
    use jsonrpc_runtime::Id;
    let params = Some(serde_json::value::to_raw_value(&params).expect("params encode"));
    let message = match id {
        Some(id) => Message::Request(Request {
            id: Id::from(id),
            method: method.into(),
            params,
            extras: Default::default(),
        }),
        None => Message::Notification(Notification {
            method: method.into(),
            params,
            extras: Default::default(),
        }),
    };
    bytes::Bytes::from(message.to_json(Dialect::Strict))
}

/// Races cancellation against 40 concurrent calls to `method`: call `i`
/// gets `params(i)` and is cancelled after `delay_ms(i)` (before the server
/// reads it, while it runs, around when it answers). Returns each call's
/// outcome, in order; panics if one does not end within [`ANSWER_TIMEOUT`].
pub async fn cancellation_race(
    peer: &Peer,
    method: &'static str,
    params: impl Fn(u64) -> Value,
    delay_ms: impl Fn(u64) -> u64,
) -> Vec<Result<Value, jsonrpc_runtime::CallError<jsonrpc_runtime::ErrorObject>>> {
    let mut tasks = Vec::new();
    for i in 0..40u64 {
        let peer = peer.clone();
        let (params, delay) = (params(i), Duration::from_millis(delay_ms(i)));
        tasks.push(tokio::spawn(async move {
            let call = peer
                .call_with_progress::<Value, jsonrpc_runtime::ErrorObject, Value>(
                    method,
                    params,
                    jsonrpc_runtime::peer::CallOptions::default(),
                )
                .expect("the call starts");
            tokio::time::sleep(delay).await;
            let _ = call.cancel(None);
            call.result().await
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        let outcome = tokio::time::timeout(ANSWER_TIMEOUT, task)
            .await
            .expect("every call ends in time")
            .expect("the call task does not panic");
        outcomes.push(outcome);
    }
    outcomes
}

/// Reads `spec_server`'s stderr until it has said where it listens `count`
/// times, and returns each place (`tcp ADDR`, `unix PATH`, a WebSocket URL).
pub async fn listening_lines(
    stderr: &mut tokio::io::Lines<BufReader<tokio::process::ChildStderr>>,
    count: usize,
) -> Vec<String> {
    let mut lines = Vec::new();
    while lines.len() < count {
        let line = tokio::time::timeout(ANSWER_TIMEOUT, stderr.next_line())
            .await
            .expect("spec_server says where it listens")
            .unwrap()
            .expect("spec_server is still running");
        if let Some(rest) = line.strip_prefix("spec_server: listening on ") {
            lines.push(rest.to_owned());
        }
    }
    lines
}

/// Sends SIGTERM to an example server and waits for it to exit (within
/// [`ANSWER_TIMEOUT`]); returns how it exited.
pub async fn terminate(child: &mut tokio::process::Child) -> std::process::ExitStatus {
    let pid = child.id().expect("the child is running").to_string();
    let killed = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .expect("kill runs");
    assert!(killed.success(), "kill -TERM {pid} failed");
    tokio::time::timeout(ANSWER_TIMEOUT, child.wait())
        .await
        .expect("the server exits after SIGTERM")
        .expect("waiting for the server")
}

/// Posts a body of 1,024 times `cap` bytes (more than the kernel's socket
/// buffers take while the server reads nothing) to `path`, declared with
/// `Content-Length` and then chunked, and checks that each gets its whole
/// 413 without a reset.
pub async fn assert_413_without_reset(
    addr: std::net::SocketAddr,
    path: &str,
    headers: &str,
    cap: usize,
) {
    let body = vec![b' '; cap * 1024];
    for chunked in [false, true] {
        let answer = post_whole(addr, path, headers, &body, chunked).await;
        assert!(
            answer.starts_with("HTTP/1.1 413 "),
            "chunked {chunked}: {answer}"
        );
        assert!(
            answer.ends_with(&format!("the body is over the {cap}-byte limit\n")),
            "chunked {chunked}: {answer}"
        );
    }
}

/// Posts `body` (declared with `Content-Length`, or chunked) to `path` on a
/// fresh connection, writing it whole before reading, and returns what the
/// server sent until it closed: a reset on the way (writing or reading)
/// fails the test. `headers` are extra header lines, each ending in `\r\n`.
pub async fn post_whole(
    addr: std::net::SocketAddr,
    path: &str,
    headers: &str,
    body: &[u8],
    chunked: bool,
) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_owned()
    } else {
        format!("Content-Length: {}", body.len())
    };
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n{headers}{framing}\r\n\r\n"
    );
    let mut request = head.into_bytes();
    if chunked {
        for chunk in body.chunks(16 * 1024) {
            request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            request.extend_from_slice(chunk);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
    } else {
        request.extend_from_slice(body);
    }
    tokio::time::timeout(ANSWER_TIMEOUT, stream.write_all(&request))
        .await
        .expect("the body is taken in time")
        .expect("the whole body is written: no reset");
    let mut answer = Vec::new();
    tokio::time::timeout(ANSWER_TIMEOUT, stream.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes in time")
        .expect("the answer is read to its end: no reset");
    String::from_utf8_lossy(&answer).into_owned()
}
