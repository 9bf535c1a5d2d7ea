//! The portable core of [`jsonrpc-runtime`](https://docs.rs/jsonrpc-runtime):
//! the JSON-RPC 2.0 wire model, the framers, the peer, the router, the
//! policies and dispatch, with in-memory transports and a transport over
//! any `AsyncRead` + `AsyncWrite`.
//!
//! Nothing here opens a socket or a process: the crate builds for
//! `wasm32-unknown-unknown`, and spawning and timers go through one seam
//! (`rt`). Depend on `jsonrpc-runtime`, which re-exports every public item
//! of this crate under the same paths and adds the transports (TCP, Unix,
//! WebSocket, HTTP, MCP Streamable HTTP, TLS, child processes) and the
//! servers. The examples of these docs are written against it.
//!
//! # Cargo features
//!
//! | feature | what it adds |
//! |---|---|
//! | `tcp` | `Transport::from_tcp` |
//! | `unix` | `Transport::from_unix` (on Unix) |
//! | `stdio` | `Transport::stdio` |
//! | `tower` | `Router::layer` with tower layers, `router::Metrics`, `PeerBuilder::outbound_layer` |
//! | `openrpc` | `openrpc::Document` and `Router::discover` |
//! | `tls` | `transport::TlsError`, the failure of a TLS handshake |

#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod cfg;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

#[doc(hidden)]
#[path = "seam.rs"]
pub mod __seam;

// The modules in alphabetical order (rustfmt's); the layers, bottom up,
// are: `id`, `codec`, `message` (the wire model, its errors included),
// `connection`, `policy`, `config`, `trace`, `transport`, `peer`,
// `context`, `router`, `dispatch`, `openrpc`, `reconnect`. A module imports only from
// those below it.
pub mod codec;
pub mod config;
pub mod connection;
pub mod context;
mod dispatch;
mod id;
pub mod message;
pub mod openrpc;
pub mod peer;
pub mod policy;
pub mod reconnect;
pub mod router;
mod rt;
mod trace;
pub mod transport;

pub use self::config::Config;
pub use self::context::Context;
pub use self::dispatch::PeerBuilder;
pub use self::id::Id;
pub use self::message::{ErrorCode, ErrorObject, RpcError};
pub use self::peer::{CallError, CloseReason, Peer};
pub use self::router::{Reply, Router};
pub use self::transport::Transport;

/// The `http` crate, whose header, URI and extension types
/// [`ConnectionInfo`](connection::ConnectionInfo) uses: re-exported so
/// they need no second version.
pub use http;
