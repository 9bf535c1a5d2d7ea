//! The floors of the transport benchmarks: a raw newline-delimited
//! ping-pong over the same transport, with the hand-written two-phase
//! dispatch on the server and a typed parse of each answer on the client.
//! No peer, no pending table, no tasks per request: a client that owns the
//! stream writes a request and reads the answer; a server that reads a
//! line, answers it, and writes its answers when its input runs dry (one
//! write per burst, like the peer's writer).

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::Transport;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};

use crate::floor;
use crate::AddParams;

const BUF: usize = 64 * 1024;

/// A raw line server: serves until the stream ends.
pub async fn serve_lines<R, W>(read: R, mut write: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(BUF, read);
    let mut line = Vec::with_capacity(256);
    let mut out = Vec::with_capacity(BUF);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if floor::two_phase(&line, &mut out) {
            out.push(b'\n');
        }
        if reader.buffer().is_empty() && !out.is_empty() {
            if write.write_all(&out).await.is_err() {
                break;
            }
            out.clear();
        }
    }
    let _ = write.shutdown().await;
}

/// A raw line client: one request at a time, or a burst.
#[derive(Debug)]
pub struct LineClient<R, W> {
    reader: BufReader<R>,
    write: W,
    out: Vec<u8>,
    line: Vec<u8>,
    next_id: u64,
}

impl<R, W> LineClient<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    pub fn new(read: R, write: W) -> Self {
        LineClient {
            reader: BufReader::with_capacity(BUF, read),
            write,
            out: Vec::with_capacity(BUF),
            line: Vec::with_capacity(256),
            next_id: 1,
        }
    }

    /// Sends one `add` and reads its answer.
    pub async fn add(&mut self, a: i64, b: i64) -> i64 {
        self.out.clear();
        let id = self.next_id;
        self.next_id += 1;
        floor::write_call(&mut self.out, Some(id), "add", AddParams { a, b });
        self.write.write_all(&self.out).await.expect("write");
        let (got, sum) = self.read_answer::<i64>().await;
        debug_assert_eq!(got, id);
        sum
    }

    /// Sends `n` `add` requests in one write, then reads the `n` answers.
    pub async fn add_pipelined(&mut self, n: usize) -> i64 {
        self.out.clear();
        for i in 0..n as i64 {
            let id = self.next_id;
            self.next_id += 1;
            floor::write_call(&mut self.out, Some(id), "add", AddParams { a: i, b: 1 });
        }
        self.write.write_all(&self.out).await.expect("write");
        let mut total = 0;
        for _ in 0..n {
            total += self.read_answer::<i64>().await.1;
        }
        total
    }

    /// Sends `n` `note` notifications and one `add` in one write, and reads
    /// the answer: the server has handled every notification by then.
    pub async fn notes_then_add(&mut self, n: usize) -> i64 {
        self.out.clear();
        for i in 0..n as i64 {
            floor::write_call(&mut self.out, None, "note", AddParams { a: i, b: 1 });
        }
        let id = self.next_id;
        self.next_id += 1;
        floor::write_call(&mut self.out, Some(id), "add", AddParams { a: 1, b: 1 });
        self.write.write_all(&self.out).await.expect("write");
        self.read_answer::<i64>().await.1
    }

    /// Sends one request with `params` and reads a typed answer. Keeps at
    /// most one copy of a large message at a time: the params are dropped
    /// once written out, the request bytes once sent, the answer's bytes
    /// once decoded.
    pub async fn call<P: serde::Serialize, T: serde::de::DeserializeOwned>(
        &mut self,
        method: &str,
        params: P,
    ) -> T {
        self.out.clear();
        let id = self.next_id;
        self.next_id += 1;
        floor::write_call(&mut self.out, Some(id), method, params);
        self.write.write_all(&self.out).await.expect("write");
        if self.out.capacity() > BUF {
            self.out = Vec::with_capacity(BUF);
        }
        let answer = self.read_answer::<T>().await.1;
        if self.line.capacity() > BUF {
            self.line = Vec::with_capacity(256);
        }
        answer
    }

    async fn read_answer<T: serde::de::DeserializeOwned>(&mut self) -> (u64, T) {
        self.line.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.line)
            .await
            .expect("read");
        assert!(n > 0, "the server closed the connection");
        self.line.pop();
        floor::read_answer(&self.line)
    }

    /// Closes the writing side (the server then ends).
    pub async fn shutdown(&mut self) {
        let _ = self.write.shutdown().await;
    }
}

/// The raw floor on an in-memory transport: a server task that answers each
/// frame with the two-phase floor. Frames need no framing here.
pub async fn serve_frames(mut transport: Transport) {
    while let Some(Ok(frame)) = transport.next().await {
        let Frame::Message(bytes) = frame else {
            continue;
        };
        let mut out = Vec::with_capacity(64);
        if floor::two_phase(&bytes, &mut out) && transport.feed(Bytes::from(out)).await.is_err() {
            break;
        }
    }
}

/// The raw floor's client on an in-memory transport.
#[derive(Debug)]
pub struct FrameClient {
    transport: Transport,
    next_id: u64,
}

impl FrameClient {
    pub fn new(transport: Transport) -> Self {
        FrameClient {
            transport,
            next_id: 1,
        }
    }

    fn frame(&mut self, id: Option<u64>, method: &str, a: i64, b: i64) -> Bytes {
        let mut out = Vec::with_capacity(64);
        floor::write_call(&mut out, id, method, AddParams { a, b });
        out.pop();
        Bytes::from(out)
    }

    async fn answer(&mut self) -> i64 {
        match self.transport.next().await {
            Some(Ok(Frame::Message(bytes))) => floor::read_answer::<i64>(&bytes).1,
            other => panic!("no answer: {other:?}"),
        }
    }

    pub async fn add(&mut self, a: i64, b: i64) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let frame = self.frame(Some(id), "add", a, b);
        self.transport.send(frame).await.expect("send");
        self.answer().await
    }

    pub async fn add_pipelined(&mut self, n: usize) -> i64 {
        for i in 0..n as i64 {
            let id = self.next_id;
            self.next_id += 1;
            let frame = self.frame(Some(id), "add", i, 1);
            self.transport.feed(frame).await.expect("send");
        }
        self.transport.flush().await.expect("flush");
        let mut total = 0;
        for _ in 0..n {
            total += self.answer().await;
        }
        total
    }

    pub async fn notes_then_add(&mut self, n: usize) -> i64 {
        for i in 0..n as i64 {
            let frame = self.frame(None, "note", i, 1);
            self.transport.feed(frame).await.expect("send");
        }
        let id = self.next_id;
        self.next_id += 1;
        let frame = self.frame(Some(id), "add", 1, 1);
        self.transport.send(frame).await.expect("send");
        self.answer().await
    }
}
