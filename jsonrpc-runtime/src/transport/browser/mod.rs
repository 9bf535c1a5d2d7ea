//! The browser's transports (feature `browser`, on
//! `wasm32-unknown-unknown`): the page's `WebSocket`, `fetch` for JSON-RPC
//! over HTTP (and for MCP Streamable HTTP: `McpFetchConnector`, in
//! `mcp_http`), and `postMessage` over a `MessagePort` between a page and
//! its Web Workers or iframes.
//!
//! Each transport is a [`Transport`](super::Transport) like any other, so
//! [`Peer`](crate::Peer), `#[rpc]` clients and servers, timeouts,
//! cancellation, progress and subscriptions work on it unchanged. The
//! JavaScript objects (the socket, the port, the callbacks they call) live
//! in a task of their own on the event loop; the transport talks to that
//! task through channels, so it stays `Send` like every other transport.

mod fetch;
mod port;
mod websocket;

pub use self::fetch::FetchConnector;
pub(crate) use self::fetch::{check_headers, resolve, FetchClient};
pub use self::port::MessagePortTransport;
pub use self::websocket::BrowserWebSocketConnector;

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_core::Stream;
use tokio::sync::mpsc;
use wasm_bindgen::{JsCast as _, JsValue};

use super::TransportError;
use crate::codec::Frame;

/// What a thrown JavaScript value says: an `Error`'s message, a string, or
/// the value as JavaScript would print it.
pub(crate) fn describe(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    if let Some(text) = value.as_string() {
        return text;
    }
    format!("{value:?}")
}

/// The inbound half of a browser transport: what its callbacks pushed.
///
/// Unbounded: the browser gives no way to stop a socket or a port from
/// delivering (it has buffered the message already when the callback
/// runs); the peer's reader takes frames as fast as they come and applies
/// its own limits to what they ask for.
pub(crate) struct Inbound(pub(crate) mpsc::UnboundedReceiver<Result<Frame, TransportError>>);

impl Stream for Inbound {
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// How many messages wait for the task that owns the JavaScript object; the
/// peer's own outbound queue holds the rest.
pub(crate) const OUTBOUND_QUEUE: usize = 64;
