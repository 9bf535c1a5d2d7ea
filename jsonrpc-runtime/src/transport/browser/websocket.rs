//! A WebSocket from the browser, through its `WebSocket` API.

use std::time::Duration;

use bytes::Bytes;
use futures_util::SinkExt as _;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, PollSender};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast as _;
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

use super::{describe, Inbound, OUTBOUND_QUEUE};
use crate::codec::{Frame, DEFAULT_MAX_FRAME_LEN};
use crate::transport::{Transport, TransportError, WebSocketError};

/// How much the browser may hold unsent on the socket before the transport
/// waits for it to drain: the peer's outbound budget then applies, instead
/// of the browser's memory.
const SEND_HIGH_WATER: u32 = 4 * 1024 * 1024;

/// How often a socket over [`SEND_HIGH_WATER`] is looked at again.
const DRAIN_POLL: Duration = Duration::from_millis(2);

/// How long a closing socket is given for the server's close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// A client transport over the browser's `WebSocket` (feature `browser`,
/// on `wasm32-unknown-unknown`), to a `ws://` or `wss://` URL.
///
/// Each message is one text frame; binary frames that come in are read as
/// JSON text too. The browser does TLS (`wss://`) and its own certificate
/// checks, and sends the page's cookies and origin; it lets a page set no
/// other headers on the handshake, so a token travels as a
/// [`protocol`](Self::protocol), in the URL, or in a first call. An
/// incoming message over [`max_frame_len`](Self::max_frame_len) closes
/// the connection with code 1009 ([`WebSocketError::close_code`]).
///
/// The connection ends as the server closes it: a normal close (1000, 1001
/// or none) ends the stream, any other code is a
/// [`TransportError::WebSocket`] carrying the code and reason the browser
/// saw (1006 when the server just went away).
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::transport::BrowserWebSocketConnector;
/// use jsonrpc_runtime::Peer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = BrowserWebSocketConnector::new("ws://127.0.0.1:9000/").connect().await?;
/// let peer = Peer::spawn(transport);
/// let difference: i64 = peer.call("subtract", [42, 23]).await?;
/// assert_eq!(difference, 19);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[cfg_attr(docsrs, doc(cfg(all(feature = "browser", target_arch = "wasm32"))))]
pub struct BrowserWebSocketConnector {
    url: String,
    protocols: Vec<String>,
    max_frame_len: usize,
}

impl BrowserWebSocketConnector {
    /// A connector to `url` (`ws://` or `wss://`; the browser also takes a
    /// URL relative to the page, with `http(s)://` turned into `ws(s)://`).
    pub fn new(url: impl Into<String>) -> Self {
        BrowserWebSocketConnector {
            url: url.into(),
            protocols: Vec::new(),
            max_frame_len: DEFAULT_MAX_FRAME_LEN,
        }
    }

    /// Offers a subprotocol (the `Sec-WebSocket-Protocol` header, the one
    /// header a page may set). Offered in the order given.
    pub fn protocol(mut self, protocol: impl Into<String>) -> Self {
        self.protocols.push(protocol.into());
        self
    }

    /// The longest message taken, in bytes (default 8 MiB).
    pub fn max_frame_len(mut self, len: usize) -> Self {
        self.max_frame_len = len;
        self
    }

    /// Opens the connection and waits for it to be open.
    ///
    /// The socket is made and watched on a task of its own, so this future
    /// holds no JavaScript value and is `Send`, as natively (a
    /// [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer) can call
    /// it).
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] for a URL the browser refuses;
    /// [`TransportError::WebSocket`] when the connection could not be
    /// opened (the browser says nothing more than the close code, 1006, for
    /// a server that is not there or refused the handshake).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future leaves the attempt to finish on its task; a
    /// socket it opens then is closed at once.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        let (done, opened) = tokio::sync::oneshot::channel();
        crate::rt::spawn(async move {
            let _ = done.send(self.open().await);
        });
        opened.await.unwrap_or(Err(TransportError::Closed))
    }

    /// A client that connects again whenever the connection is lost,
    /// with backoff: see [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer)
    /// (calls lost with a connection fail as `CallError::Interrupted` and
    /// are never sent twice; subscriptions are opened again).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use jsonrpc_runtime::transport::BrowserWebSocketConnector;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let client = BrowserWebSocketConnector::new("wss://api.example.com/rpc")
    ///     .reconnecting()
    ///     .queue_for(Duration::from_secs(5))
    ///     .spawn();
    /// let difference: i64 = client.call("subtract", [42, 23]).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn reconnecting(self) -> crate::reconnect::ReconnectBuilder {
        crate::reconnect::ReconnectingPeer::builder(move || self.clone().connect())
    }

    /// [`connect`](Self::connect)'s work, on the task that owns the socket
    /// until it is open.
    async fn open(self) -> Result<Transport, TransportError> {
        let protocols = js_sys::Array::new();
        for protocol in &self.protocols {
            protocols.push(&protocol.into());
        }
        let socket = WebSocket::new_with_str_sequence(&self.url, &protocols)
            .map_err(|e| TransportError::Invalid(format!("`{}`: {}", self.url, describe(&e))))?;
        socket.set_binary_type(BinaryType::Arraybuffer);
        let (events, mut opened) = mpsc::unbounded_channel();
        let handlers = Handlers::attach(&socket, events, self.max_frame_len);
        match opened.recv().await {
            Some(Event::Open) => {}
            Some(Event::Closed { code, reason, .. }) => {
                let message = format!(
                    "could not open a WebSocket to {}: closed with code {code}{}",
                    self.url,
                    with_reason(&reason)
                );
                return Err(TransportError::WebSocket(WebSocketError::new(
                    message, None, None,
                )));
            }
            // A socket delivers nothing before it opens, and its callbacks
            // hold the sender: neither happens, but neither panics.
            Some(Event::Frame(_)) | None => {
                let message = format!("the WebSocket to {} did not open", self.url);
                return Err(TransportError::WebSocket(WebSocketError::new(
                    message, None, None,
                )));
            }
        }
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
        let (outbound_tx, outbound_rx) = mpsc::channel(OUTBOUND_QUEUE);
        crate::rt::spawn(own(
            socket,
            handlers,
            opened,
            inbound_tx,
            outbound_rx,
            self.url,
        ));
        let sink = PollSender::new(outbound_tx).sink_map_err(|_| TransportError::Closed);
        Ok(Transport::new(Inbound(inbound_rx), sink))
    }
}

fn with_reason(reason: &str) -> String {
    if reason.is_empty() {
        String::new()
    } else {
        format!(" ({reason})")
    }
}

/// What the socket's callbacks report, in order.
enum Event {
    Open,
    Frame(Result<Frame, TransportError>),
    Closed {
        code: u16,
        reason: String,
        clean: bool,
    },
}

/// The socket's callbacks, kept alive as long as the socket is used.
struct Handlers {
    _open: Closure<dyn FnMut()>,
    _message: Closure<dyn FnMut(MessageEvent)>,
    _close: Closure<dyn FnMut(CloseEvent)>,
}

impl Handlers {
    fn attach(socket: &WebSocket, events: mpsc::UnboundedSender<Event>, limit: usize) -> Handlers {
        let open = {
            let events = events.clone();
            Closure::<dyn FnMut()>::new(move || {
                let _ = events.send(Event::Open);
            })
        };
        let message = {
            let events = events.clone();
            let socket = socket.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                let frame = match message_bytes(&event.data()) {
                    Some(bytes) if bytes.len() > limit => {
                        let _ = socket.close_with_code_and_reason(1009, "message too big");
                        let message = format!(
                            "a message of {} bytes is over the {limit}-byte limit",
                            bytes.len()
                        );
                        Err(TransportError::WebSocket(WebSocketError::new(
                            message,
                            Some(1009),
                            None,
                        )))
                    }
                    Some(bytes) => Ok(Frame::Message(bytes)),
                    None => return,
                };
                let _ = events.send(Event::Frame(frame));
            })
        };
        let close = Closure::<dyn FnMut(CloseEvent)>::new(move |event: CloseEvent| {
            let _ = events.send(Event::Closed {
                code: event.code(),
                reason: event.reason(),
                clean: event.was_clean(),
            });
        });
        socket.set_onopen(Some(open.as_ref().unchecked_ref()));
        socket.set_onmessage(Some(message.as_ref().unchecked_ref()));
        socket.set_onclose(Some(close.as_ref().unchecked_ref()));
        Handlers {
            _open: open,
            _message: message,
            _close: close,
        }
    }
}

/// A message's bytes: a text frame's UTF-8, a binary frame's bytes.
pub(super) fn message_bytes(data: &wasm_bindgen::JsValue) -> Option<Bytes> {
    if let Some(text) = data.as_string() {
        return Some(Bytes::from(text.into_bytes()));
    }
    if let Some(buffer) = data.dyn_ref::<js_sys::ArrayBuffer>() {
        return Some(Bytes::from(js_sys::Uint8Array::new(buffer).to_vec()));
    }
    data.dyn_ref::<js_sys::Uint8Array>()
        .map(|bytes| Bytes::from(bytes.to_vec()))
}

/// The task that owns the socket: sends what the peer writes, forwards
/// what the callbacks report, and closes the socket when the peer is done
/// with it.
async fn own(
    socket: WebSocket,
    handlers: Handlers,
    mut events: mpsc::UnboundedReceiver<Event>,
    inbound: mpsc::UnboundedSender<Result<Frame, TransportError>>,
    mut outbound: mpsc::Receiver<Bytes>,
    url: String,
) {
    let closed = CancellationToken::new();
    let forward = {
        let closed = closed.clone();
        async move {
            while let Some(event) = events.recv().await {
                match event {
                    Event::Open => {}
                    Event::Frame(frame) => {
                        let _ = inbound.send(frame);
                    }
                    Event::Closed {
                        code,
                        reason,
                        clean,
                    } => {
                        if !(clean && matches!(code, 1000 | 1001 | 1005)) {
                            let message = format!(
                                "the WebSocket to {url} closed with code {code}{}",
                                with_reason(&reason)
                            );
                            let error = WebSocketError::new(message, None, None);
                            let _ = inbound.send(Err(TransportError::WebSocket(error)));
                        }
                        break;
                    }
                }
            }
            closed.cancel();
        }
    };
    let send = async {
        while let Some(message) = outbound.recv().await {
            while socket.buffered_amount() > SEND_HIGH_WATER && !closed.is_cancelled() {
                crate::rt::sleep(DRAIN_POLL).await;
            }
            let sent = match std::str::from_utf8(&message) {
                Ok(text) => socket.send_with_str(text),
                Err(_) => socket.send_with_u8_array(&message),
            };
            if sent.is_err() {
                break;
            }
        }
        // The peer is done with the socket (or it failed): close it, and
        // wait for the server's close frame.
        let _ = socket.close_with_code(1000);
    };
    tokio::pin!(forward);
    tokio::select! {
        () = send => {
            // Answers to what was sent may still come before the close.
            let _ = crate::rt::timeout(CLOSE_WAIT, &mut forward).await;
        }
        () = &mut forward => {}
    }
    socket.set_onopen(None);
    socket.set_onmessage(None);
    socket.set_onclose(None);
    drop(handlers);
}
