//! A typed JSON-RPC 2.0 peer for tokio.
//!
//! Register handlers on a [`Router`], run a [`Peer`] on any [`Transport`]
//! (stdio, an in-memory pair, any `AsyncRead` + `AsyncWrite` with a framer),
//! and call the other side with typed params and results. Every peer is both
//! ends at once: a server can call its client on the same connection.
//!
//! The root holds the everyday names; the modules hold the rest:
//!
//! | module | what it holds |
//! |---|---|
//! | [`peer`] | the call types: [`Call`](peer::Call) and the other call futures, [`CallOptions`](peer::CallOptions), progress streams, send errors; outbound middleware (feature `tower`) |
//! | [`message`] | the wire model: messages, classification options, extras |
//! | [`codec`] | framers: newline-delimited and `Content-Length` |
//! | `tls` | TLS settings: certificates, keys and trusted roots from PEM files (feature `tls`) |
//! | [`transport`] | in-memory, stdio, child process, TCP, Unix, WebSocket, HTTP and MCP Streamable HTTP clients, TLS; acceptors |
//! | [`config`] | [`Config`] and its parts: unknown methods, id strategies |
//! | [`policy`] | cancellation, progress, lifecycles, gates |
//! | [`context`] | what a handler sees |
//! | [`connection`] | who is calling ([`ConnectionInfo`](connection::ConnectionInfo)): address, path, headers, state attached at connect; refusals |
//! | [`router`] | routes, replies, error mappings; middleware (feature `tower`) |
//! | [`openrpc`] | method descriptions from `#[rpc]` traits; OpenRPC documents (feature `openrpc`) |
//! | [`server`] | listeners serving many connections, HTTP, and MCP over Streamable HTTP |
//! | [`error`] | an index of every error type, wherever it is defined |
//!
//! # Cargo features
//!
//! Without default features the crate is its portable core (the wire
//! model, framers, peer, router, policies and in-memory transports), which
//! also builds for `wasm32-unknown-unknown`; spawning and timers go
//! through one internal seam (`rt`).
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `macros` | yes | `#[rpc]` and `#[derive(RpcError)]` |
//! | `tcp` | yes | `transport::TcpConnector`, `transport::TcpAcceptor`, `Transport::from_tcp` |
//! | `unix` | yes | Unix domain sockets (on Unix): `transport::UnixConnector`, `transport::UnixAcceptor`, `Transport::from_unix` |
//! | `stdio` | yes | `Transport::stdio` |
//! | `child` | yes | `transport::ChildProcess` (a child process over its stdin and stdout), `transport::RawClient` |
//! | `server` | yes | `server::Listener` over any `transport::Acceptor`, `server::Server`, graceful drain |
//! | `websocket` | no | `transport::WebSocketConnector` (`ws://`, `wss://`), `transport::WebSocketAcceptor` and the handshakes over any stream, on tokio-tungstenite |
//! | `http` | no | JSON-RPC over HTTP, on hyper: `server::HttpListener` (HTTP/1.1 and h2c, a `/health` endpoint that turns 503 while draining) and the client `transport::HttpConnector` |
//! | `mcp-http` | no | MCP over Streamable HTTP (implies `http`): `server::McpHttpListener` (a `Peer` per session, SSE streams resumable with `Last-Event-ID`, session ids a load balancer can route on, idle expiry, `Origin` checks) and the client `transport::McpHttpConnector` |
//! | `tower` | no | middleware: `Router::layer` with any tower layer, and the `router::Metrics` layer (Prometheus text) |
//! | `openrpc` | no | `openrpc::Document` (OpenRPC 1.3 with JSON Schemas from schemars) and `Router::discover` (`rpc.discover`) |
//! | `tls` | no | TLS on rustls (the `ring` provider): `tls::ServerTls` and `tls::ClientTls` from PEM files, `transport::TlsAcceptor`, and `tls(..)` on the connectors of TCP, `wss://` and `https://` |
//! | `tls-webpki-roots` | no | `tls::ClientTls::webpki_roots`: Mozilla's root certificates, compiled in |
//!
//! # Examples
//!
//! ```
//! use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct AddParams { a: i64, b: i64 }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let router = Router::new().request("add", |p: AddParams, _ctx: Context| async move {
//!     Ok::<_, ErrorObject>(p.a + p.b)
//! });
//!
//! let (client_side, server_side) = Transport::pair(64);
//! let _server = Peer::builder().router(router).spawn(server_side);
//! let client = Peer::spawn(client_side);
//!
//! let sum: i64 = client.call("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(sum, 5);
//! # });
//! ```
//!
//! # Observability
//!
//! The runtime reports through [`tracing`](https://docs.rs/tracing), on
//! targets a filter can pick (for example `RUST_LOG` with
//! `tracing-subscriber`'s `EnvFilter`):
//!
//! | target | level | what |
//! |---|---|---|
//! | `jsonrpc_runtime::wire` | `trace` | every frame in and out: `connection`, `direction`, `frame` |
//! | `jsonrpc_runtime::request` | `debug` | a span `request{method, id, connection}` per inbound request, which its handler runs in (so the handler's own events carry it), and an event when it is answered: result or error `code`, `elapsed_us` |
//! | `jsonrpc_runtime::protocol` | `debug` | every message refused at admission: `id`, `code`, `message`; every HTTP request an HTTP server refuses before reading its messages (the `on_connect` hook's `401`, `413`, `415`): `status`, `reason` |
//! | `jsonrpc_runtime::call` | `debug` | a span `call{method, id, connection}` per call this side sends, with an event when it is sent and one when it ends: its answer (a result, or the error `code`) or why there was none (`outcome`: timed out or given up, cancelled, connection closed, not sent), with `elapsed_us` |
//! | the module's path, under `jsonrpc_runtime_core` (the peer, dispatch) or `jsonrpc_runtime` (transports, servers) | `debug`, `warn`, `error` | connections closing and why; broken framing (`warn`); panicking handlers (`error`) |
//!
//! Every transport reports the same way, [`HttpListener`](server::HttpListener)
//! included: each of its connections has a `connection` number, its `POST`
//! bodies and answers are its frames in and out, and each request in a
//! body gets its span. (A frame answered in process by
//! [`Router::respond`] has `connection=0`.)
//!
//! `RUST_LOG=jsonrpc_runtime=debug` tells what each request did (a
//! target filter matches by prefix, so it takes in `jsonrpc_runtime_core`);
//! `RUST_LOG=jsonrpc_runtime::wire=trace` shows the traffic (a subscriber
//! writing to stderr never mixes it into a stdio transport's stdout). With
//! no subscriber, or these targets off, the cost is one cached check per
//! call site. [`Transport::recorded`] writes a session to a JSON Lines file
//! that the `replay` example plays back against a server.

#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
extern crate jsonrpc_runtime_core;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

// The portable core (`jsonrpc-runtime-core`) holds the layers up to
// dispatch: `id`, `codec`, `message`, `connection`, `policy`, `config`,
// the core of `transport`, `peer`, `context`, `router`, `openrpc`. This
// crate adds, above them: the transports over sockets and processes
// (`transport`), `tls`, `server`; `error` indexes the errors of all.
pub use jsonrpc_runtime_core::{
    codec, config, connection, context, message, openrpc, peer, policy, reconnect, router,
};
pub mod error;
cfg_feature! { "server",
    pub mod server;
}
cfg_feature! { "tls",
    pub mod tls;
}
pub mod transport;

// What the transports and servers use of the core's internals (which
// ones depends on the features on).
#[allow(unused_imports)]
use jsonrpc_runtime_core::__seam::{rt, trace};

pub use jsonrpc_runtime_core::{
    CallError, CloseReason, Config, Context, ErrorCode, ErrorObject, Id, Peer, PeerBuilder, Reply,
    Router, RpcError, Transport,
};

/// The `http` crate, whose header, URI and extension types
/// [`ConnectionInfo`](connection::ConnectionInfo) and the connectors'
/// `header` use: re-exported so they need no second version.
pub use jsonrpc_runtime_core::http;

#[cfg(feature = "macros")]
#[doc = include_str!("../docs/rpc.md")]
pub use jsonrpc_macros::rpc;
#[cfg(feature = "macros")]
#[doc = include_str!("../docs/derive_rpc_error.md")]
pub use jsonrpc_macros::RpcError;
