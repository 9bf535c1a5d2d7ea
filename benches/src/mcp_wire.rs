//! Raw MCP clients for the rmcp comparison (`benches/mcp.rs`): one session
//! over a child's stdio, or over Streamable HTTP on one keep-alive
//! connection. The same client drives both servers, checks every answer
//! (`add(i, 1)` answers the text `i + 1`), and costs little next to them.

use std::collections::HashMap;
use std::process::Stdio;

use bytes::{Buf as _, BytesMut};
use serde::Deserialize;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::mcp::INITIALIZE;

/// The revision both servers are asked for.
pub const VERSION: &str = "2025-11-25";

const INITIALIZED: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// `tools/call` of `add(i, 1)` with id `i`.
pub fn call(i: u64) -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"add","arguments":{{"a":{i},"b":1}}}}}}"#
    )
    .into_bytes()
}

#[derive(Deserialize)]
struct Answer {
    id: u64,
    result: CallResult,
}

#[derive(Deserialize)]
struct CallResult {
    content: Vec<Text>,
}

#[derive(Deserialize)]
struct Text {
    text: String,
}

/// Checks one answer to [`call`]; returns its id.
pub fn check(message: &[u8]) -> u64 {
    let answer: Answer = serde_json::from_slice(message).unwrap_or_else(|e| {
        panic!(
            "not an answer to tools/call ({e}): {}",
            String::from_utf8_lossy(message)
        )
    });
    let text = answer.result.content.first().map(|t| t.text.as_str());
    assert_eq!(
        text,
        Some((answer.id + 1).to_string().as_str()),
        "wrong sum"
    );
    answer.id
}

/// A server process of the benchmark, killed when dropped.
pub struct Server {
    pub child: Child,
}

impl Server {
    /// Starts `mcp-server` with `args`.
    pub fn start(program: &str, args: &[&str]) -> Server {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start mcp-server");
        Server { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("a pid")
    }

    /// The address an HTTP server printed.
    pub async fn address(&mut self) -> String {
        let stdout = self.child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        lines.next_line().await.expect("read").expect("an address")
    }
}

/// One session over a child's stdin and stdout.
pub struct StdioSession {
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl StdioSession {
    /// Initializes a session with the server's stdio.
    pub async fn open(server: &mut Server) -> StdioSession {
        let input = server.child.stdin.take().expect("stdin");
        let output = BufReader::new(server.child.stdout.take().expect("stdout"));
        let mut session = StdioSession {
            input,
            output,
            line: Vec::new(),
        };
        session.send(INITIALIZE).await;
        let answer = session.receive().await;
        assert!(answer.contains("\"result\""), "initialize: {answer}");
        session.send(INITIALIZED).await;
        session
    }

    pub async fn send(&mut self, message: &[u8]) {
        let mut line = Vec::with_capacity(message.len() + 1);
        line.extend_from_slice(message);
        line.push(b'\n');
        self.input.write_all(&line).await.expect("write");
    }

    /// Writes several messages at once.
    pub async fn send_all(&mut self, messages: &[u8]) {
        self.input.write_all(messages).await.expect("write");
    }

    async fn receive(&mut self) -> String {
        String::from_utf8_lossy(self.read_line().await).into_owned()
    }

    /// Reads one answer and checks it; returns its id.
    pub async fn answer(&mut self) -> u64 {
        check(self.read_line().await)
    }

    async fn read_line(&mut self) -> &[u8] {
        self.line.clear();
        let n = self
            .output
            .read_until(b'\n', &mut self.line)
            .await
            .expect("read");
        assert!(n > 0, "the server closed its stdout");
        &self.line
    }
}

/// One session over Streamable HTTP, on one keep-alive connection.
pub struct HttpSession {
    stream: TcpStream,
    host: String,
    session: Option<String>,
    buf: BytesMut,
}

/// An HTTP answer: its status, headers (lower-case names) and body.
pub struct HttpAnswer {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl HttpSession {
    /// Connects to `addr` and initializes a session.
    pub async fn open(addr: &str) -> HttpSession {
        let stream = TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let mut session = HttpSession {
            stream,
            host: addr.to_owned(),
            session: None,
            buf: BytesMut::with_capacity(16 * 1024),
        };
        let answer = session.post(INITIALIZE).await;
        assert_eq!(answer.status, 200, "initialize");
        session.session = answer.headers.get("mcp-session-id").cloned();
        assert!(session.session.is_some(), "no session id");
        let answer = session.post(INITIALIZED).await;
        assert_eq!(answer.status, 202, "notifications/initialized");
        session
    }

    /// Calls `add(i, 1)` and checks the answer.
    pub async fn call(&mut self, i: u64) {
        let answer = self.post(&call(i)).await;
        assert_eq!(answer.status, 200, "tools/call");
        let message = json_message(&answer);
        assert_eq!(check(&message), i);
    }

    /// POSTs one message and reads the whole answer.
    pub async fn post(&mut self, body: &[u8]) -> HttpAnswer {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        if let Some(id) = &self.session {
            request.push_str("Mcp-Session-Id: ");
            request.push_str(id);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        let mut bytes = request.into_bytes();
        bytes.extend_from_slice(body);
        self.stream.write_all(&bytes).await.expect("write");
        self.read_answer().await
    }

    async fn read_more(&mut self) {
        self.buf.reserve(4096);
        let n = self.stream.read_buf(&mut self.buf).await.expect("read");
        assert!(n > 0, "the server closed the connection");
    }

    async fn read_answer(&mut self) -> HttpAnswer {
        let (head_len, status, headers) = loop {
            let mut slots = [httparse::EMPTY_HEADER; 24];
            let mut response = httparse::Response::new(&mut slots);
            if let httparse::Status::Complete(n) = response.parse(&self.buf).expect("HTTP/1.1") {
                let headers: HashMap<String, String> = response
                    .headers
                    .iter()
                    .map(|h| {
                        let value = String::from_utf8_lossy(h.value).into_owned();
                        (h.name.to_ascii_lowercase(), value)
                    })
                    .collect();
                break (n, response.code.unwrap_or(0), headers);
            }
            self.read_more().await;
        };
        self.buf.advance(head_len);
        let chunked = headers
            .get("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        let body = if chunked {
            self.read_chunked().await
        } else {
            let len: usize = headers
                .get("content-length")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while self.buf.len() < len {
                self.read_more().await;
            }
            self.buf.split_to(len).to_vec()
        };
        HttpAnswer {
            status,
            headers,
            body,
        }
    }

    async fn read_chunked(&mut self) -> Vec<u8> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                    break at;
                }
                self.read_more().await;
            };
            let size_text = String::from_utf8_lossy(&self.buf[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
                .expect("a chunk size");
            self.buf.advance(line_end + 2);
            while self.buf.len() < size + 2 {
                self.read_more().await;
            }
            body.extend_from_slice(&self.buf[..size]);
            self.buf.advance(size + 2);
            if size == 0 {
                return body;
            }
        }
    }
}

/// The JSON-RPC answer an HTTP answer carries: the body itself, or the
/// SSE event whose data holds a `result` or an `error`.
pub fn json_message(answer: &HttpAnswer) -> Vec<u8> {
    let sse = answer
        .headers
        .get("content-type")
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !sse {
        return answer.body.clone();
    }
    let text = String::from_utf8_lossy(&answer.body);
    text.split("\n\n")
        .map(|event| {
            event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim_start)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .find(|data| data.contains("\"result\"") || data.contains("\"error\""))
        .unwrap_or_else(|| panic!("no answer in the stream: {text}"))
        .into_bytes()
}
