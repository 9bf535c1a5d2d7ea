//! A typed JSON-RPC 2.0 peer for tokio.
//!
//! Register handlers on a [`Router`], run a [`Peer`] on any [`Transport`]
//! (stdio, an in-memory pair, any `AsyncRead` + `AsyncWrite` with a framer),
//! and call the other side with typed params and results. Every peer is both
//! ends at once: a server can call its client on the same connection.
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
//! let client = Peer::connect(client_side);
//!
//! let sum: i64 = client.call("add", serde_json::json!({"a": 2, "b": 3})).await.unwrap();
//! assert_eq!(sum, 5);
//! # });
//! ```

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
mod codec;
mod config;
mod error;
mod id;
mod message;
mod peer;
mod policy;
mod router;
mod transport;

pub use self::codec::{
    ContentLengthCodec, Frame, FrameRefusal, Framing, FramingCodec, FramingError, LineCodec,
    DEFAULT_MAX_FRAME_LEN,
};
pub use self::config::{Config, Decision, Gate, GateInput, Handshake, IdStrategy, UnknownMethod};
pub use self::error::{
    CallError, CloseReason, ErrorCode, ErrorObject, ErrorStage, RpcError, SendError, TransportError,
};
pub use self::error::{ProcessExit, WebSocketError};
pub use self::id::Id;
pub use self::message::{
    Batches, Dialect, Extras, Message, Notification, NullId, NullParams, ParseOptions, Parsed,
    Refusal, Request, Response,
};
pub use self::peer::{CallOptions, Peer, PeerBuilder, ProgressCall};
pub use self::policy::{CancellationPolicy, Lifecycle, ProgressPolicy};
pub use self::router::{Cancellation, Context, ErrorMapping, IntoReply, Reply, Router};
#[cfg(unix)]
pub use self::transport::UnixAcceptor;
#[cfg(feature = "websocket")]
pub use self::transport::WebSocketAcceptor;
pub use self::transport::{
    Acceptor, ChildHandle, ChildProcess, Listener, MakeRouter, PeerAddr, Server, TcpAcceptor,
};
pub use self::transport::{MemoryReceiver, MemorySender, Transport};

#[cfg(feature = "macros")]
#[doc = include_str!("../docs/rpc.md")]
pub use jsonrpc_macros::rpc;
#[cfg(feature = "macros")]
#[doc = include_str!("../docs/derive_rpc_error.md")]
pub use jsonrpc_macros::RpcError;

/// Re-exported for handlers that race work against cancellation.
pub use tokio_util::sync::CancellationToken;
