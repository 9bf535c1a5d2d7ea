//! Transports: a stream of inbound frames and a sink of outbound messages.
//!
//! A peer needs two things from a connection: a [`Stream`](futures_core::Stream) of inbound
//! [`Frame`](crate::codec::Frame)s and a [`Sink`](futures_sink::Sink) that takes one serialized message (a complete
//! JSON envelope, without framing) at a time. [`Transport`] holds the two.
//! Build one from any `AsyncRead` + `AsyncWrite` pair and a framer
//! ([`Transport::from_io`]), from stdio ([`Transport::stdio`]), as a
//! connected in-memory pair for tests ([`Transport::pair`]), or from your own
//! stream and sink ([`Transport::new`]).
//!
//! A transport is itself a `Stream` and a `Sink`, so it can be used without
//! a peer when the caller wants to control the wire order message by message.
//!
//! Clients connect with a [`Connector`], one per kind, each taking only the
//! settings its kind has:
//!
//! | kind | client | server side |
//! |---|---|---|
//! | TCP, and TLS over TCP (feature `tls`) | [`TcpConnector`] | [`TcpAcceptor`], `TlsAcceptor` |
//! | Unix domain socket | [`UnixConnector`] | [`UnixAcceptor`] |
//! | WebSocket, `ws://` and `wss://` (feature `websocket`) | `WebSocketConnector` | `WebSocketAcceptor` |
//! | JSON-RPC over HTTP, `http://` and `https://` (feature `http`) | `HttpConnector` | `server::HttpListener` |
//! | MCP Streamable HTTP (feature `mcp-http`) | `McpHttpConnector` | `server::McpHttpListener` |
//! | the browser (feature `browser`, wasm32): WebSocket, `fetch` (JSON-RPC and MCP), `postMessage` | `BrowserWebSocketConnector`, `FetchConnector`, `McpFetchConnector`, `MessagePortTransport` | the servers above; `MessagePortTransport` in a worker or iframe |
//! | a child process's stdin and stdout | [`ChildProcess`] | [`Transport::stdio`] in the child |
//!
//! The server side of the sockets is one
//! [`Listener`](crate::server::Listener), generic over an [`Acceptor`], that
//! runs one peer per connection and opens each with [`OpenOptions`] (the
//! framer, the `on_connect` hook).

pub use jsonrpc_runtime_core::transport::*;

mod accept;
mod connect;

cfg_feature! { "child",
    mod child;
    mod raw;
    pub use self::child::{ChildHandle, ChildProcess, StderrMode};
    pub use self::raw::{RawClient, RawError, RawSendError};
}
cfg_feature! { "tcp",
    mod tcp;
    pub use self::tcp::{TcpAcceptor, TcpConnector};
}
cfg_unix! {
    mod unix;
    pub use self::unix::{UnixAcceptor, UnixConnector};
}
cfg_feature! { "websocket",
    pub(crate) mod websocket;
    pub use self::websocket::{WebSocketAcceptor, WebSocketConnector};
}
cfg_feature! { "http",
    mod http;
    pub use self::http::HttpConnector;
}
#[cfg(any(feature = "http", all(feature = "browser", target_arch = "wasm32")))]
pub(crate) mod post;
#[cfg(any(feature = "http", all(feature = "browser", target_arch = "wasm32")))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "http", feature = "browser"))))]
pub use self::post::HttpFailure;
#[cfg(all(feature = "browser", target_arch = "wasm32"))]
mod browser;
#[cfg(all(feature = "browser", target_arch = "wasm32"))]
pub use self::browser::{BrowserWebSocketConnector, FetchConnector, MessagePortTransport};
#[cfg(any(feature = "mcp-http", all(feature = "browser", target_arch = "wasm32")))]
mod mcp_http;
#[cfg(any(feature = "mcp-http", all(feature = "browser", target_arch = "wasm32")))]
pub(crate) mod sse;
#[cfg(all(feature = "browser", target_arch = "wasm32"))]
pub use self::mcp_http::McpFetchConnector;
cfg_feature! { "mcp-http",
    pub use self::mcp_http::{McpHttpConnector, OAuthClient, MAX_AUTHORIZATIONS, MAX_OAUTH_DOCUMENT};
}
cfg_feature! { "mcp-params",
    mod param_headers;
    pub use self::param_headers::{InvalidParamHeader, ParamHeaderMismatch, ParamHeaders};
}
cfg_feature! { "tls",
    mod tls;
    pub use self::tls::{TlsAcceptor, TlsConnection};
}

pub use self::accept::{Acceptor, OpenOptions};
pub use self::connect::{kind, Connector};
