//! Client and server on each transport the suite compares: our peers, and
//! the raw floor on the very same kind of connection.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::transport::{ChildHandle, WebSocketAcceptor, WebSocketConnector};
use jsonrpc_runtime::{server::Server, transport::ChildProcess, Peer, Transport};
use tokio::net::{TcpListener, TcpStream, UnixStream};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::raw::{self, FrameClient, LineClient};
use crate::service::{hand_router, State};
use crate::{config, AddParams};

/// The transports of the round-trip and throughput benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `Transport::pair`, both peers in this process.
    Memory,
    /// A connected `UnixStream` pair, both peers in this process.
    Unix,
    /// A loopback TCP connection, both peers in this process.
    Tcp,
    /// A child process's stdin and stdout; the server is the child.
    Child,
    /// A loopback WebSocket (ours: `WebSocketAcceptor`), both peers in this
    /// process.
    WebSocket,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Memory => "memory",
            Kind::Unix => "unix",
            Kind::Tcp => "tcp",
            Kind::Child => "child_stdio",
            Kind::WebSocket => "websocket",
        }
    }
}

/// Capacity of each direction of the in-memory pair: room for the largest
/// burst the suite sends, so the raw floor (which writes a whole burst
/// before reading) never waits on itself.
pub const PAIR_CAPACITY: usize = 4096;

/// Our client and server peers on one connection.
#[derive(Debug)]
pub struct Ours {
    pub client: Peer,
    pub state: Arc<State>,
    _server: Option<Peer>,
    _listener: Option<Server>,
    _child: Option<ChildHandle>,
}

/// Starts our server and client peers on `kind`. `server_bin` is the path
/// of the `bench-server` binary (for [`Kind::Child`]). Must run inside the
/// runtime.
pub async fn ours(kind: Kind, server_bin: &Path) -> Ours {
    let state = Arc::new(State::default());
    let config = config();
    let serve = |transport: Transport| {
        Peer::builder()
            .config(config.clone())
            .router(hand_router(state.clone()))
            .spawn(transport)
    };
    let (client, server, listener, child) = match kind {
        Kind::Memory => {
            let (a, b) = Transport::pair(PAIR_CAPACITY);
            (a, Some(serve(b)), None, None)
        }
        Kind::Unix => {
            let (a, b) = UnixStream::pair().expect("socketpair");
            (
                Transport::from_unix(a, &config),
                Some(serve(Transport::from_unix(b, &config))),
                None,
                None,
            )
        }
        Kind::Tcp => {
            let (a, b) = tcp_pair().await;
            (
                Transport::from_tcp(a, &config),
                Some(serve(Transport::from_tcp(b, &config))),
                None,
                None,
            )
        }
        Kind::Child => {
            let (transport, handle) = ChildProcess::spawn(Command::new(server_bin), &config)
                .expect("spawn bench-server")
                .into_parts();
            (transport, None, None, Some(handle))
        }
        Kind::WebSocket => {
            let acceptor = WebSocketAcceptor::bind("127.0.0.1:0").await.expect("bind");
            let url = format!("ws://{}/", acceptor.local_addr().expect("bound"));
            let listener = Listener::new(acceptor)
                .config(config.clone())
                .spawn(hand_router(state.clone()));
            let transport = WebSocketConnector::new(&url)
                .connect()
                .await
                .expect("connect");
            (transport, None, Some(listener), None)
        }
    };
    let client = Peer::builder().config(config.clone()).spawn(client);
    let ours = Ours {
        client,
        state,
        _server: server,
        _listener: listener,
        _child: child,
    };
    // One call before timing: connections are up, buffers allocated.
    assert_eq!(ours.add(2, 3).await, 5);
    ours
}

impl Ours {
    pub async fn add(&self, a: i64, b: i64) -> i64 {
        self.client
            .call("add", AddParams { a, b })
            .await
            .expect("add")
    }

    /// `n` calls in flight at once, awaited together where they lie (see
    /// [`add_in_place`](Self::add_in_place)) for the bursts the suite
    /// measures, with `join_all` otherwise.
    pub async fn add_pipelined(&self, n: usize) -> i64 {
        match n {
            16 => self.add_in_place::<16>().await,
            64 => self.add_in_place::<64>().await,
            1024 => self.add_in_place::<1024>().await,
            n => self.add_join_all(n).await,
        }
    }

    /// `N` calls in flight at once, their futures in an array: each one is
    /// polled once (which sends it), then they are awaited in order, as
    /// answers on one connection mostly come. A `CallFuture` is `Unpin`, so
    /// the calls need no task and no allocation of their own: what is
    /// measured is the peers' work, as the raw floor's client writes its `N`
    /// requests and reads `N` answers.
    pub async fn add_in_place<const N: usize>(&self) -> i64 {
        use futures_util::future::{maybe_done, MaybeDone};
        use std::future::{Future as _, IntoFuture as _};
        use std::pin::Pin;
        use std::task::Poll;

        let mut calls: [MaybeDone<_>; N] = std::array::from_fn(|i| {
            let params = AddParams { a: i as i64, b: 1 };
            maybe_done(self.client.call::<i64>("add", params).into_future())
        });
        // Every call polled once: each is sent, and registers the waker.
        std::future::poll_fn(|cx| {
            for call in &mut calls {
                let _ = Pin::new(call).poll(cx);
            }
            Poll::Ready(())
        })
        .await;
        // Then in order: a pending call has the waker of its last poll, and
        // wakes the task when its answer comes.
        for call in &mut calls {
            call.await;
        }
        calls
            .iter_mut()
            .map(|call| Pin::new(call).take_output().expect("done").expect("add"))
            .sum()
    }

    /// `n` calls in flight at once, awaited with `join_all`: past 30
    /// futures, it gives each one a task of its own (an allocation, and a
    /// wake-up queue's work per call).
    pub async fn add_join_all(&self, n: usize) -> i64 {
        let calls = (0..n as i64).map(|i| self.add(i, 1));
        futures_util::future::join_all(calls)
            .await
            .into_iter()
            .sum()
    }

    /// `n` notifications, then one call: the server handles notifications
    /// in order and before a request that follows them.
    pub async fn notes_then_add(&self, n: usize) -> i64 {
        for i in 0..n as i64 {
            self.client
                .notify("note", AddParams { a: i, b: 1 })
                .await
                .expect("notify");
        }
        self.add(1, 1).await
    }
}

async fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("bound");
    let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
    (client.expect("connect"), accepted.expect("accept").0)
}

/// The raw floor's client, on one transport.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per benchmark group
pub enum Floor {
    Frames(FrameClient),
    Unix(LineClient<tokio::net::unix::OwnedReadHalf, tokio::net::unix::OwnedWriteHalf>),
    Tcp(LineClient<tokio::net::tcp::OwnedReadHalf, tokio::net::tcp::OwnedWriteHalf>),
    Child(LineClient<ChildStdout, ChildStdin>, Child),
}

/// Starts the raw floor on `kind` (not WebSocket). `raw_bin` is the path of
/// the `raw-server` binary. Must run inside the runtime.
pub async fn floor(kind: Kind, raw_bin: &Path) -> Floor {
    let mut floor = match kind {
        Kind::Memory => {
            let (a, b) = Transport::pair(PAIR_CAPACITY);
            tokio::spawn(raw::serve_frames(b));
            Floor::Frames(FrameClient::new(a))
        }
        Kind::Unix => {
            let (a, b) = UnixStream::pair().expect("socketpair");
            let (read, write) = b.into_split();
            tokio::spawn(raw::serve_lines(read, write));
            let (read, write) = a.into_split();
            Floor::Unix(LineClient::new(read, write))
        }
        Kind::Tcp => {
            let (a, b) = tcp_pair().await;
            a.set_nodelay(true).expect("nodelay");
            b.set_nodelay(true).expect("nodelay");
            let (read, write) = b.into_split();
            tokio::spawn(raw::serve_lines(read, write));
            let (read, write) = a.into_split();
            Floor::Tcp(LineClient::new(read, write))
        }
        Kind::Child => {
            let mut child = Command::new(raw_bin)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true)
                .spawn()
                .expect("spawn raw-server");
            let stdin = child.stdin.take().expect("piped");
            let stdout = child.stdout.take().expect("piped");
            Floor::Child(LineClient::new(stdout, stdin), child)
        }
        Kind::WebSocket => panic!("no raw floor over WebSocket"),
    };
    assert_eq!(floor.add(2, 3).await, 5);
    floor
}

impl Floor {
    pub async fn add(&mut self, a: i64, b: i64) -> i64 {
        match self {
            Floor::Frames(c) => c.add(a, b).await,
            Floor::Unix(c) => c.add(a, b).await,
            Floor::Tcp(c) => c.add(a, b).await,
            Floor::Child(c, _) => c.add(a, b).await,
        }
    }

    pub async fn add_pipelined(&mut self, n: usize) -> i64 {
        match self {
            Floor::Frames(c) => c.add_pipelined(n).await,
            Floor::Unix(c) => c.add_pipelined(n).await,
            Floor::Tcp(c) => c.add_pipelined(n).await,
            Floor::Child(c, _) => c.add_pipelined(n).await,
        }
    }

    pub async fn notes_then_add(&mut self, n: usize) -> i64 {
        match self {
            Floor::Frames(c) => c.notes_then_add(n).await,
            Floor::Unix(c) => c.notes_then_add(n).await,
            Floor::Tcp(c) => c.notes_then_add(n).await,
            Floor::Child(c, _) => c.notes_then_add(n).await,
        }
    }
}
