//! The size sweep: messages at every size threshold of the runtime (±1
//! byte) and at every power of two up to the frame cap, in every direction
//! (request params, results, error `data`, notifications both ways,
//! progress values, batch elements), over every transport (in memory, a
//! pipe with either framer, TCP, Unix, WebSocket, a child process on stdio
//! with either framer, HTTP, MCP Streamable HTTP), from a fresh connection
//! per size and on one long-lived connection with sizes ascending,
//! descending and shuffled. What arrives must be what was sent, byte for
//! byte (a raw newline becomes a space on newline-delimited transports).
//!
//! A 32–64 KiB answer was once sent as an empty line by a fast path while
//! every other test passed: state carried from one message to the next,
//! at sizes no test used. The thresholds come from the runtime's own list
//! (`__private::SIZE_THRESHOLDS`), so a new one is swept without a change
//! here.
//!
//! `cargo test` runs the fast sweep: a frame cap of 512 KiB and an outbound
//! budget of 128 KiB (so both limits are crossed cheaply), every size on
//! the in-memory transport in every mode, and the long-lived ascending and
//! shuffled passes on every other transport. `SWEEP=full` runs the long
//! one: the default 8 MiB cap and 1 MiB budget, every transport in every
//! mode, every flavor at every size (`scripts/sweep.sh` runs it in release).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::__private::SIZE_THRESHOLDS;
use jsonrpc_runtime::codec::{Frame, Framing};
use jsonrpc_runtime::server::{HttpListener, Listener, McpHttpListener};
use jsonrpc_runtime::transport::{
    Acceptor, ChildHandle, ChildProcess, HttpConnector, McpHttpConnector, TcpAcceptor,
    TcpConnector, TransportError, UnixAcceptor, UnixConnector, WebSocketAcceptor,
    WebSocketConnector,
};
use jsonrpc_runtime::{
    server::Server, CallError, Config, Context, ErrorObject, Peer, Router, Transport,
};
use serde_json::value::RawValue;
use serde_json::Value;
use tests::sweep::{self, digest, method, on_the_wire, Ask, Digest, Flavor, FLAVORS};
use tokio::sync::mpsc;

/// How long one exchange may take before the sweep calls it lost.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(60);

/// The sweep's scale: the fast one in `cargo test`, the full one with
/// `SWEEP=full`.
#[derive(Debug, Clone, Copy)]
struct Scale {
    full: bool,
    max_frame_len: usize,
    outbound_budget: usize,
}

fn scale() -> Scale {
    if std::env::var("SWEEP").is_ok_and(|v| v == "full") {
        Scale {
            full: true,
            max_frame_len: jsonrpc_runtime::codec::DEFAULT_MAX_FRAME_LEN,
            outbound_budget: jsonrpc_runtime::config::DEFAULT_OUTBOUND_BUDGET,
        }
    } else {
        Scale {
            full: false,
            max_frame_len: 512 * 1024,
            outbound_budget: 128 * 1024,
        }
    }
}

/// One kind of message the sweep sends, and which way it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Direction {
    /// A request's params, client to server.
    Params,
    /// A result, server to client.
    Result,
    /// An error answer's `data`, server to client.
    ErrorData,
    /// A notification's params, client to server.
    Note,
    /// A notification's params, server to client.
    Pushed,
    /// A progress value, server to client.
    Progress,
    /// An element of a batch, in the batch and in the answers' array.
    Batch,
}

const ALL: [Direction; 7] = [
    Direction::Params,
    Direction::Result,
    Direction::ErrorData,
    Direction::Note,
    Direction::Pushed,
    Direction::Progress,
    Direction::Batch,
];

/// The transports the sweep runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Memory,
    PipeLines,
    PipeContentLength,
    Tcp,
    Unix,
    WebSocket,
    ChildLines,
    ChildContentLength,
    Http,
    McpHttp,
}

impl Kind {
    fn framing(self) -> Framing {
        match self {
            Kind::PipeContentLength | Kind::ChildContentLength => Framing::ContentLength,
            _ => Framing::NewlineDelimited,
        }
    }

    /// Whether frames pass through a newline-delimited framer, which turns
    /// raw newlines into spaces.
    fn wire_framing(self) -> Framing {
        match self {
            Kind::Memory | Kind::WebSocket | Kind::Http | Kind::McpHttp => Framing::ContentLength,
            other => other.framing(),
        }
    }

    /// The directions this transport can carry: plain HTTP has no way from
    /// the server to the client but answers, MCP refuses batches and has
    /// a progress shape of its own.
    fn directions(self) -> &'static [Direction] {
        match self {
            Kind::Http => &[
                Direction::Params,
                Direction::Result,
                Direction::ErrorData,
                Direction::Note,
                Direction::Batch,
            ],
            Kind::McpHttp => &[
                Direction::Params,
                Direction::Result,
                Direction::ErrorData,
                Direction::Note,
                Direction::Pushed,
            ],
            _ => &ALL,
        }
    }

    fn client_config(self, scale: Scale) -> Config {
        let config = match self {
            Kind::McpHttp => Config::mcp_client()
                .max_frame_len(scale.max_frame_len)
                .id_strategy(sweep::fixed_width_ids()),
            _ => sweep::config(self.framing(), scale.max_frame_len),
        };
        config
            .outbound_budget(scale.outbound_budget)
            .request_timeout(EXCHANGE_TIMEOUT)
    }

    fn server_config(self, scale: Scale) -> Config {
        let config = match self {
            Kind::McpHttp => sweep::mcp_config(scale.max_frame_len),
            _ => sweep::config(self.framing(), scale.max_frame_len),
        };
        config.outbound_budget(scale.outbound_budget)
    }
}

/// The sweep's server on `acceptor`'s connections.
fn listen<A: Acceptor>(acceptor: A, config: Config) -> Server {
    Listener::new(acceptor)
        .config(config)
        .spawn(sweep::router())
}

/// A server for one transport, and how to open a fresh connection to it.
struct Site {
    kind: Kind,
    scale: Scale,
    server: Option<Server>,
    address: String,
    /// Server peers of the in-process transports, kept while in use.
    peers: Mutex<Vec<Peer>>,
    /// The child processes serving the stdio transports.
    children: Mutex<Vec<ChildHandle>>,
}

static NEXT_SOCKET: AtomicUsize = AtomicUsize::new(0);

impl Site {
    async fn start(kind: Kind, scale: Scale) -> Site {
        let config = kind.server_config(scale);
        let (server, address) = match kind {
            Kind::Memory
            | Kind::PipeLines
            | Kind::PipeContentLength
            | Kind::ChildLines
            | Kind::ChildContentLength => (None, String::new()),
            Kind::Tcp => {
                let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
                let addr = acceptor.local_addr().unwrap().to_string();
                (Some(listen(acceptor, config)), addr)
            }
            Kind::Unix => {
                let path = std::env::temp_dir().join(format!(
                    "jsonrpc-sweep-{}-{}.sock",
                    std::process::id(),
                    NEXT_SOCKET.fetch_add(1, Ordering::Relaxed)
                ));
                let acceptor = UnixAcceptor::bind(&path).await.unwrap();
                let path = path.to_str().unwrap().to_owned();
                (Some(listen(acceptor, config)), path)
            }
            Kind::WebSocket => {
                let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.unwrap();
                let addr = acceptor.local_addr().unwrap();
                (Some(listen(acceptor, config)), format!("ws://{addr}/"))
            }
            Kind::Http | Kind::McpHttp => {
                let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
                let addr = acceptor.local_addr().unwrap();
                if kind == Kind::Http {
                    let server = HttpListener::new(acceptor).config(config);
                    (
                        Some(server.spawn(sweep::router())),
                        format!("http://{addr}/"),
                    )
                } else {
                    let server = McpHttpListener::new(acceptor).config(config);
                    (
                        Some(server.spawn(sweep::router())),
                        format!("http://{addr}/mcp"),
                    )
                }
            }
        };
        Site {
            kind,
            scale,
            server,
            address,
            peers: Mutex::new(Vec::new()),
            children: Mutex::new(Vec::new()),
        }
    }

    /// A fresh client transport, with a fresh server connection behind it.
    async fn transport(&self) -> Transport {
        let config = self.kind.client_config(self.scale);
        let server_config = self.kind.server_config(self.scale);
        let serve = |transport: Transport| {
            let peer = Peer::builder()
                .config(server_config.clone())
                .router(sweep::router())
                .spawn(transport);
            self.peers.lock().unwrap().push(peer);
        };
        match self.kind {
            Kind::Memory => {
                let (client, server) = Transport::pair(64);
                serve(server);
                client
            }
            Kind::PipeLines | Kind::PipeContentLength => {
                let max = self.scale.max_frame_len;
                let (ours, theirs) = tokio::io::duplex(64 * 1024);
                let (read, write) = tokio::io::split(theirs);
                serve(Transport::from_io(
                    read,
                    write,
                    self.kind.framing().codec(max),
                ));
                let (read, write) = tokio::io::split(ours);
                Transport::from_io(read, write, self.kind.framing().codec(max))
            }
            Kind::Tcp => TcpConnector::new(&self.address)
                .codec(&config)
                .connect()
                .await
                .unwrap(),
            Kind::Unix => UnixConnector::new(&self.address)
                .codec(&config)
                .connect()
                .await
                .unwrap(),
            Kind::WebSocket => WebSocketConnector::new(&self.address)
                .max_frame_len(self.scale.max_frame_len)
                .connect()
                .await
                .unwrap(),
            Kind::ChildLines | Kind::ChildContentLength => {
                let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_sweep_peer"));
                command.args(["--max-frame-len", &self.scale.max_frame_len.to_string()]);
                if self.kind == Kind::ChildContentLength {
                    command.arg("--content-length");
                }
                let (transport, child) =
                    ChildProcess::spawn(command, &config).unwrap().into_parts();
                self.children.lock().unwrap().push(child);
                transport
            }
            Kind::Http => HttpConnector::new(&self.address)
                .max_frame_len(self.scale.max_frame_len)
                .connect()
                .await
                .unwrap(),
            Kind::McpHttp => McpHttpConnector::new(&self.address)
                .max_frame_len(self.scale.max_frame_len)
                .connect()
                .await
                .unwrap(),
        }
    }

    /// A fresh client peer on a fresh connection, ready for calls.
    async fn client(&self) -> Client {
        let (pushed_tx, pushed) = mpsc::unbounded_channel();
        let router =
            Router::new().notification(method::PUSHED, move |params: Box<RawValue>, _: Context| {
                let _ = pushed_tx.send(params);
                async {}
            });
        let transport = self.transport().await;
        let peer = Peer::builder()
            .config(self.kind.client_config(self.scale))
            .router(router)
            .spawn(transport);
        if self.kind == Kind::McpHttp {
            let params = serde_json::json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "sweep", "version": "0"},
            });
            let _: Value = within("initialize", peer.call("initialize", params))
                .await
                .unwrap();
            within(
                "initialized",
                peer.notify("notifications/initialized", serde_json::json!({})),
            )
            .await
            .unwrap();
        }
        Client {
            kind: self.kind,
            peer,
            pushed,
            progress_calls: 0,
        }
    }

    async fn shutdown(self) {
        for peer in self.peers.into_inner().unwrap() {
            peer.close_now().await;
        }
        for child in self.children.into_inner().unwrap() {
            child.shutdown(Duration::from_secs(5)).await.unwrap();
        }
        if let Some(server) = self.server {
            server.shutdown(Duration::from_secs(5)).await;
        }
    }
}

/// A client peer and the notifications the server pushed to it.
struct Client {
    kind: Kind,
    peer: Peer,
    pushed: mpsc::UnboundedReceiver<Box<RawValue>>,
    /// Calls with progress made so far (each takes a token).
    progress_calls: usize,
}

/// How many decimal digits `n` has.
fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

async fn within<T>(what: &str, future: impl std::future::IntoFuture<Output = T>) -> T {
    tokio::time::timeout(EXCHANGE_TIMEOUT, future.into_future())
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {EXCHANGE_TIMEOUT:?}: lost"))
}

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("the sweep's values are JSON")
}

impl Client {
    /// What `text` becomes on this client's transport.
    fn wire(&self, text: &str) -> String {
        on_the_wire(text, self.kind.wire_framing())
    }

    /// Sends a value of `ask.len` bytes in `direction` and checks that it
    /// arrived whole.
    async fn exchange(&mut self, direction: Direction, ask: Ask) {
        let what = format!(
            "{:?} over {:?}: {} bytes ({:?})",
            direction, self.kind, ask.len, ask.flavor
        );
        let text = ask.value();
        let expected = self.wire(&text);
        match direction {
            Direction::Params => {
                let got: Digest = within(&what, self.peer.call(method::PARAMS, raw(&text)))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(got, digest(&expected), "{what}");
            }
            Direction::Result => {
                let got: Box<RawValue> = within(&what, self.peer.call(method::RESULT, ask))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_same(&what, got.get(), &expected);
            }
            Direction::ErrorData => {
                let got: Result<Value, CallError> =
                    within(&what, self.peer.call(method::ERROR, ask)).await;
                match got {
                    Err(CallError::Rpc(error)) if error.code.0 == sweep::ERROR_CODE => {
                        let data = error.data.unwrap_or_else(|| panic!("{what}: no data"));
                        assert_same(&what, data.get(), &expected);
                    }
                    other => panic!("{what}: {other:?}"),
                }
            }
            Direction::Note => {
                within(&what, self.peer.notify(method::NOTE, raw(&text)))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                // On a connection a request waits for the notifications
                // before it, so the note is in by the time this is
                // answered. Over HTTP (and MCP's) each message is a POST of
                // its own, in no order: ask until it is in.
                let mut notes: Vec<Digest> = Vec::new();
                while notes.is_empty() {
                    notes = within(&what, self.peer.call(method::NOTES, ()))
                        .await
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    if !matches!(self.kind, Kind::Http | Kind::McpHttp) {
                        break;
                    }
                    tokio::task::yield_now().await;
                }
                assert_eq!(notes, [digest(&expected)], "{what}");
            }
            Direction::Pushed => {
                let sent: String = within(&what, self.peer.call(method::PUSH, ask))
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(sent, "sent", "{what}");
                let got = within(&what, self.pushed.recv())
                    .await
                    .unwrap_or_else(|| panic!("{what}: the client is gone"));
                assert_same(&what, got.get(), &expected);
            }
            Direction::Progress => {
                // Progress tokens are `progress-1`, `progress-2`, …: a wider
                // one takes its bytes from the value, so the frame keeps the
                // length the size was chosen for.
                self.progress_calls += 1;
                let wider = digits(self.progress_calls) - 1;
                let ask = Ask {
                    len: (ask.len - wider).max(2),
                    ..ask
                };
                let text = ask.value();
                let mut call = self
                    .peer
                    .call_with_progress::<String, ErrorObject, Box<RawValue>>(
                        method::PROGRESS,
                        ask,
                        Default::default(),
                    )
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let Some(got) = within(&what, call.next_progress()).await else {
                    let result = within(&what, call.result()).await;
                    panic!("{what}: no progress, and the call ended with {result:?}");
                };
                let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
                // A progress value is re-encoded into the notification:
                // its structure arrives, not its whitespace or member order.
                let got: Value = serde_json::from_str(got.get()).unwrap();
                let sent: Value = serde_json::from_str(&text).unwrap();
                assert!(got == sent, "{what}: another value arrived");
                let done = within(&what, call.result())
                    .await
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(done, "done", "{what}");
            }
            Direction::Batch => unreachable!("batches go through `batch`"),
        }
    }
}

/// Compares what arrived with what was sent, naming the first difference.
fn assert_same(what: &str, got: &str, expected: &str) {
    if got != expected {
        let at = got
            .bytes()
            .zip(expected.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(got.len().min(expected.len()));
        panic!(
            "{what}: {} bytes arrived for {} sent, first difference at byte {at}",
            got.len(),
            expected.len()
        );
    }
}

/// What a batch frame adds to its value: the two requests' envelopes, the
/// second's params, and spaces that make up the difference, so that every
/// batch frame is exactly this much longer than its value.
const BATCH_OVERHEAD: usize = 240;

/// A batch of a `sweep/params` request holding a value of `ask.len` bytes
/// and a `sweep/result` request asking for one, sent as one raw frame of
/// `ask.len + BATCH_OVERHEAD` bytes; the answers' array must hold the
/// first's digest and the second's value (or, for a value over the
/// outbound budget, the -32000 a batch answers such an element with).
async fn batch(transport: &mut Transport, kind: Kind, scale: Scale, ask: Ask, n: u64) {
    let what = format!("Batch over {kind:?}: {} bytes ({:?})", ask.len, ask.flavor);
    let text = ask.value();
    let (a, b) = (format!("b{:07}", 2 * n), format!("b{:07}", 2 * n + 1));
    let mut frame = format!(
        r#"[{{"jsonrpc":"2.0","id":"{a}","method":"{}","params":{text}}},{{"jsonrpc":"2.0","id":"{b}","method":"{}","params":{}}}"#,
        method::PARAMS,
        method::RESULT,
        serde_json::to_string(&ask).unwrap(),
    );
    let padded = text.len() + BATCH_OVERHEAD - 1;
    assert!(frame.len() <= padded, "BATCH_OVERHEAD is too small");
    frame.extend(std::iter::repeat_n(' ', padded - frame.len()));
    frame.push(']');
    within(&what, transport.send(Bytes::from(frame)))
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let answer = match within(&what, transport.next()).await {
        Some(Ok(Frame::Message(bytes))) => bytes,
        Some(Ok(Frame::Refused(why))) => panic!("{what}: the answer was refused: {why}"),
        Some(Ok(other)) => panic!("{what}: {other:?}"),
        Some(Err(e)) => panic!("{what}: {e}"),
        None => panic!("{what}: the connection ended"),
    };
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        id: String,
        #[serde(borrow)]
        result: Option<&'a RawValue>,
        error: Option<ErrorObject>,
    }
    let answers: Vec<Answer<'_>> = serde_json::from_slice(&answer).unwrap_or_else(|e| {
        panic!(
            "{what}: the answers are not an array: {e}: {}",
            String::from_utf8_lossy(&answer[..answer.len().min(300)])
        )
    });
    assert_eq!(answers.len(), 2, "{what}");
    let expected = on_the_wire(&text, kind.wire_framing());
    for answer in answers {
        match (answer.id == a, answer.result, answer.error) {
            (true, Some(result), None) => {
                let got: Digest = serde_json::from_str(result.get()).unwrap();
                assert_eq!(got, digest(&expected), "{what}");
            }
            (false, Some(result), None) => {
                assert_eq!(answer.id, b, "{what}");
                assert_same(&what, result.get(), &expected);
            }
            (false, None, Some(error)) => {
                assert_eq!(error.code.0, -32000, "{what}: {error:?}");
                assert!(
                    expected.len() + 100 > scale.outbound_budget,
                    "{what}: an answer within the outbound budget was refused: {error:?}"
                );
            }
            (first, result, error) => {
                panic!(
                    "{what}: answer {} is {result:?} / {error:?}",
                    if first { a.as_str() } else { b.as_str() }
                )
            }
        }
    }
}

/// The value lengths to send in `direction`, whose envelope adds
/// `overhead` bytes: each threshold within the cap, ±1 byte, both as the
/// value's length and as the frame's, and every power of two up to the cap
/// (the largest frame the cap allows included).
fn sizes(scale: Scale, overhead: usize) -> Vec<usize> {
    let cap = scale.max_frame_len;
    let mut sizes = BTreeSet::new();
    let mut add = |len: usize| {
        if (2..=cap.saturating_sub(overhead)).contains(&len) {
            sizes.insert(len);
        }
    };
    for t in SIZE_THRESHOLDS.iter().map(|t| t.bytes).chain([cap]) {
        for x in [t - 1, t, t + 1] {
            add(x);
            add(x.saturating_sub(overhead));
        }
    }
    let mut p = 2;
    while p <= cap {
        add(p);
        p *= 2;
    }
    sizes.into_iter().collect()
}

/// The envelope's length in `direction` on the sweep's config: measured on
/// a probe message through an in-memory pair whose client side records the
/// length of every frame.
async fn overhead(direction: Direction) -> usize {
    let scale = scale();
    let (mut client, seen, _server) = tapped_client(scale);
    const PROBE: usize = 100;
    let ask = Ask {
        len: PROBE,
        flavor: Flavor::Plain,
        seed: 0,
    };
    if direction == Direction::Batch {
        // The batch is written here, padded to a fixed envelope.
        return BATCH_OVERHEAD;
    }
    if direction != Direction::Pushed {
        client.exchange(direction, ask).await;
    } else {
        let _: String = client.peer.call(method::PUSH, ask).await.unwrap();
    }
    let seen = seen.lock().unwrap();
    let frame = seen
        .iter()
        .copied()
        .filter(|&(out, len)| {
            out == matches!(direction, Direction::Params | Direction::Note) && len > PROBE
        })
        .map(|(_, len)| len)
        .max()
        .expect("the probe's frame");
    frame - PROBE
}

/// Frame lengths a tapped connection saw (`true` for outbound).
type Seen = Arc<Mutex<Vec<(bool, usize)>>>;

/// A client on an in-memory pair whose client side records the length of
/// every frame, and the server peer behind it.
fn tapped_client(scale: Scale) -> (Client, Seen, Peer) {
    let (client, server) = Transport::pair(64);
    let server = Peer::builder()
        .config(Kind::Memory.server_config(scale))
        .router(sweep::router())
        .spawn(server);
    let seen: Seen = Arc::default();
    let (pushed_tx, pushed) = mpsc::unbounded_channel();
    let router = Router::new().notification(method::PUSHED, move |p: Box<RawValue>, _: Context| {
        let _ = pushed_tx.send(p);
        async {}
    });
    let client = Client {
        kind: Kind::Memory,
        peer: Peer::builder()
            .config(Kind::Memory.client_config(scale))
            .router(router)
            .spawn(tapped(client, seen.clone())),
        pushed,
        progress_calls: 0,
    };
    (client, seen, server)
}

/// `transport` with the length of every frame recorded in `seen` (`true`
/// for outbound).
fn tapped(transport: Transport, seen: Seen) -> Transport {
    let (sink, stream) = transport.split();
    let inbound = seen.clone();
    let stream = stream.inspect(move |item| {
        if let Ok(Frame::Message(bytes)) = item {
            inbound.lock().unwrap().push((false, bytes.len()));
        }
    });
    let sink = sink.with(move |bytes: Bytes| {
        seen.lock().unwrap().push((true, bytes.len()));
        std::future::ready(Ok::<_, TransportError>(bytes))
    });
    Transport::new(stream, sink)
}

/// The orders a long-lived connection sees the sizes in.
#[derive(Debug, Clone, Copy)]
enum Order {
    Ascending,
    Descending,
    Shuffled,
}

fn ordered(sizes: &[usize], order: Order) -> Vec<usize> {
    let mut sizes = sizes.to_vec();
    match order {
        Order::Ascending => {}
        Order::Descending => sizes.reverse(),
        Order::Shuffled => {
            // A fixed shuffle (a linear congruential generator): large
            // after small and small after large, the same on every run.
            let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
            for i in (1..sizes.len()).rev() {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                sizes.swap(i, (state >> 33) as usize % (i + 1));
            }
        }
    }
    sizes
}

/// The flavors sent at the `i`-th size of a pass: one, rotating, in the
/// fast sweep; all of them in the full one.
fn flavors(scale: Scale, i: usize, pass: usize) -> Vec<Flavor> {
    if scale.full {
        FLAVORS.to_vec()
    } else {
        vec![FLAVORS[(i + pass) % FLAVORS.len()]]
    }
}

/// Every size in `direction` on one connection, in `order`.
async fn long_lived(site: &Site, direction: Direction, order: Order, pass: usize) {
    let sizes = ordered(&sizes(site.scale, overhead(direction).await), order);
    if direction == Direction::Batch {
        let mut transport = site.transport().await;
        for (i, &len) in sizes.iter().enumerate() {
            for flavor in flavors(site.scale, i, pass) {
                batch(
                    &mut transport,
                    site.kind,
                    site.scale,
                    Ask {
                        len,
                        flavor,
                        seed: i as u64,
                    },
                    i as u64,
                )
                .await;
            }
        }
        return;
    }
    let mut client = site.client().await;
    for (i, &len) in sizes.iter().enumerate() {
        for flavor in flavors(site.scale, i, pass) {
            let ask = Ask {
                len,
                flavor,
                seed: i as u64,
            };
            client.exchange(direction, ask).await;
        }
    }
    client.peer.close(Duration::from_secs(5)).await;
}

/// Every size in `direction`, each on a connection of its own.
async fn fresh(site: &Site, direction: Direction, pass: usize) {
    let sizes = sizes(site.scale, overhead(direction).await);
    for (i, &len) in sizes.iter().enumerate() {
        for flavor in flavors(site.scale, i, pass) {
            let ask = Ask {
                len,
                flavor,
                seed: i as u64,
            };
            if direction == Direction::Batch {
                let mut transport = site.transport().await;
                batch(&mut transport, site.kind, site.scale, ask, 0).await;
            } else {
                let mut client = site.client().await;
                client.exchange(direction, ask).await;
                client.peer.close(Duration::from_secs(5)).await;
            }
        }
    }
}

/// Sweeps `kind`: the modes the scale asks for, every direction the
/// transport carries.
async fn sweep_transport(kind: Kind, everything: bool) {
    let scale = scale();
    let site = Site::start(kind, scale).await;
    let all_modes = everything || scale.full;
    for (pass, &direction) in kind.directions().iter().enumerate() {
        if all_modes {
            fresh(&site, direction, pass).await;
            long_lived(&site, direction, Order::Descending, pass + 1).await;
        }
        long_lived(&site, direction, Order::Ascending, pass + 2).await;
        long_lived(&site, direction, Order::Shuffled, pass + 3).await;
    }
    site.shutdown().await;
}

fn run(test: impl Future<Output = ()>) {
    // `RUST_LOG=jsonrpc_runtime=debug` shows what the runtime did about a
    // message that did not arrive.
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .try_init();
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(test);
}

#[test]
fn memory_every_size_every_direction_every_mode() {
    run(sweep_transport(Kind::Memory, true));
}

#[test]
fn pipe_newline_delimited() {
    run(sweep_transport(Kind::PipeLines, false));
}

#[test]
fn pipe_content_length() {
    run(sweep_transport(Kind::PipeContentLength, false));
}

#[test]
fn tcp() {
    run(sweep_transport(Kind::Tcp, false));
}

#[test]
fn unix() {
    run(sweep_transport(Kind::Unix, false));
}

#[test]
fn websocket() {
    run(sweep_transport(Kind::WebSocket, false));
}

#[test]
fn child_process_newline_delimited() {
    run(sweep_transport(Kind::ChildLines, false));
}

#[test]
fn child_process_content_length() {
    run(sweep_transport(Kind::ChildContentLength, false));
}

#[test]
fn http() {
    run(sweep_transport(Kind::Http, false));
}

#[test]
fn mcp_streamable_http() {
    run(sweep_transport(Kind::McpHttp, false));
}

/// The probe that sizes the envelopes is itself checked: on a tapped
/// in-memory connection, every threshold within the cap is hit by a frame
/// of exactly its length, one byte less and one byte more, in every
/// direction that sends a frame of the sweep's own making.
#[test]
fn the_sizes_land_each_frame_on_each_threshold() {
    run(async {
        let scale = scale();
        for direction in [
            Direction::Params,
            Direction::Result,
            Direction::ErrorData,
            Direction::Note,
            Direction::Pushed,
            Direction::Progress,
        ] {
            let overhead = overhead(direction).await;
            let frames: BTreeSet<usize> = sizes(scale, overhead)
                .into_iter()
                .map(|len| len + overhead)
                .collect();
            // The tap's own measure: the frame lengths seen for a few sizes.
            for t in SIZE_THRESHOLDS.iter().map(|t| t.bytes) {
                if t + 1 > scale.max_frame_len {
                    continue;
                }
                for x in [t - 1, t, t + 1] {
                    assert!(
                        frames.contains(&x),
                        "{direction:?}: no frame of {x} bytes (threshold {t})"
                    );
                }
            }
            let (mut client, seen, _server) = tapped_client(scale);
            let probe = [1023, 65_535, 65_536, 65_537];
            for &frame in &probe {
                let ask = Ask {
                    len: frame - overhead,
                    flavor: Flavor::Escapes,
                    seed: 1,
                };
                client.exchange(direction, ask).await;
                let outbound = matches!(direction, Direction::Params | Direction::Note);
                assert!(
                    seen.lock()
                        .unwrap()
                        .iter()
                        .any(|&(out, len)| out == outbound && len == frame),
                    "{direction:?}: the tap saw no frame of {frame} bytes"
                );
            }
        }
    });
}

/// A frame one byte over the cap is refused, not lost, and the caller
/// learns of it at once: a request over the server's cap is answered
/// -32600 with its own id (read off its first bytes), an answer over the
/// client's cap fails the call it was for; the connection goes on.
#[test]
fn one_byte_over_the_cap_fails_the_call_at_once_and_the_connection_goes_on() {
    run(async {
        let scale = scale();
        for kind in [
            Kind::PipeLines,
            Kind::PipeContentLength,
            Kind::Tcp,
            Kind::ChildContentLength,
        ] {
            let site = Site::start(kind, scale).await;
            let mut client = site.client().await;
            let over = |direction| async move {
                Ask {
                    len: scale.max_frame_len + 1 - overhead(direction).await,
                    flavor: Flavor::Escapes,
                    seed: 0,
                }
            };
            // Well before the call's own timeout (60 s).
            let quickly = Duration::from_secs(30);

            let ask = over(Direction::Params).await;
            let params = raw(&ask.value());
            let got: Result<Digest, CallError> =
                tokio::time::timeout(quickly, client.peer.call(method::PARAMS, params))
                    .await
                    .unwrap_or_else(|_| panic!("{kind:?}: an over-cap request was not answered"));
            match got {
                Err(CallError::Rpc(error)) => assert_eq!(error.code.0, -32600, "{kind:?}"),
                other => panic!("{kind:?}: an over-cap request got {other:?}"),
            }

            let ask = over(Direction::Result).await;
            let got: Result<Box<RawValue>, CallError> =
                tokio::time::timeout(quickly, client.peer.call(method::RESULT, ask))
                    .await
                    .unwrap_or_else(|_| {
                        panic!("{kind:?}: an over-cap answer left the call waiting")
                    });
            match got {
                Err(CallError::InvalidResponse(error)) => {
                    assert!(error.message.contains("frame limit"), "{kind:?}: {error:?}")
                }
                other => panic!("{kind:?}: an over-cap answer gave {other:?}"),
            }

            for direction in [Direction::Params, Direction::Result] {
                let ask = Ask {
                    len: 1000,
                    flavor: Flavor::NonAscii,
                    seed: 0,
                };
                client.exchange(direction, ask).await;
            }
            client.peer.close(Duration::from_secs(5)).await;
            site.shutdown().await;
        }
    });
}
