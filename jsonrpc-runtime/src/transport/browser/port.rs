//! `postMessage` over a `MessagePort`: a page and its Web Workers, or a
//! page and an iframe.

use bytes::Bytes;
use futures_util::SinkExt as _;
use tokio::sync::mpsc;
use tokio_util::sync::PollSender;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast as _, JsValue};
use web_sys::{
    DedicatedWorkerGlobalScope, EventTarget, MessageChannel, MessageEvent, MessagePort, Window,
    Worker,
};

use super::websocket::message_bytes;
use super::{describe, Inbound, OUTBOUND_QUEUE};
use crate::codec::Frame;
use crate::transport::{Transport, TransportError};

/// The key of the message that hands a port over.
const HANDOVER_KEY: &str = "jsonrpcPort";

/// A transport over `postMessage` between two JavaScript contexts (feature
/// `browser`, on `wasm32-unknown-unknown`): a page and a Web Worker it
/// started, or a page and an iframe.
///
/// The two ends are the two ports of a `MessageChannel`. The worker (or
/// iframe) makes the channel and hands one port to the page
/// ([`connect_to_page`](Self::connect_to_page),
/// [`connect_to_parent`](Self::connect_to_parent)); the page takes it
/// ([`accept_worker`](Self::accept_worker),
/// [`accept_frame`](Self::accept_frame)). That way round nothing is lost
/// to timing: the page listens from the moment it creates the worker or
/// the iframe, long before either can speak. [`from_port`](Self::from_port) takes a
/// port handed over any other way.
///
/// Each message is posted as a string of JSON (the structured clone of a
/// string is a copy, nothing more); strings, `ArrayBuffer`s and
/// `Uint8Array`s are read. Closing one end posts `null` and closes its
/// port: the other end's stream ends. A port whose other side is gone (a
/// worker terminated) ends too, in browsers that fire the port's `close`
/// event.
///
/// Both ends are peers, so either side serves routes and calls the other:
/// a worker can serve the page's requests and call back into it.
///
/// # Examples
///
/// The page starts a worker and waits for its port:
///
/// ```no_run
/// use jsonrpc_runtime::transport::MessagePortTransport;
/// use jsonrpc_runtime::Peer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let options = web_sys::WorkerOptions::new();
/// options.set_type(web_sys::WorkerType::Module);
/// let worker = web_sys::Worker::new_with_options("./worker.js", &options).map_err(|_| "no worker")?;
/// let peer = Peer::spawn(MessagePortTransport::accept_worker(&worker).await?);
/// let sum: i64 = peer.call("sum", [1, 2, 3]).await?;
/// # Ok(())
/// # }
/// ```
///
/// and the worker (its Rust entry point) hands it over and serves:
///
/// ```no_run
/// use jsonrpc_runtime::transport::MessagePortTransport;
/// use jsonrpc_runtime::{ErrorObject, Peer, Router};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let router = Router::new().request("sum", |numbers: Vec<i64>, _| async move {
///     Ok::<_, ErrorObject>(numbers.iter().sum::<i64>())
/// });
/// let peer = Peer::builder().router(router).spawn(MessagePortTransport::connect_to_page()?);
/// peer.closed().await;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[cfg_attr(docsrs, doc(cfg(all(feature = "browser", target_arch = "wasm32"))))]
pub struct MessagePortTransport;

impl MessagePortTransport {
    /// The transport over `port`, one end of a `MessageChannel` whose other
    /// end the other side holds.
    pub fn from_port(port: MessagePort) -> Transport {
        let (inbound_tx, inbound_rx) = mpsc::unbounded_channel();
        let (outbound_tx, outbound_rx) = mpsc::channel(OUTBOUND_QUEUE);
        crate::rt::spawn(own(port, inbound_tx, outbound_rx));
        let sink = PollSender::new(outbound_tx).sink_map_err(|_| TransportError::Closed);
        Transport::new(Inbound(inbound_rx), sink)
    }

    /// A dedicated worker's side: a new channel, one port handed to the page
    /// that started the worker (which takes it with
    /// [`accept_worker`](Self::accept_worker)).
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] outside a dedicated worker, or when the
    /// browser refuses the channel.
    pub fn connect_to_page() -> Result<Transport, TransportError> {
        let scope: DedicatedWorkerGlobalScope = js_sys::global()
            .dyn_into()
            .map_err(|_| TransportError::Invalid("not in a dedicated worker".into()))?;
        hand_over(|handover, transfer| scope.post_message_with_transfer(handover, transfer))
    }

    /// An iframe's side: a new channel, one port handed to the parent
    /// window if its document's origin is `target_origin` (such as
    /// `"https://app.example"`; the page takes it with
    /// [`accept_frame`](Self::accept_frame)).
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] outside a window that has a parent, or
    /// when the browser refuses the channel or the origin.
    pub fn connect_to_parent(target_origin: &str) -> Result<Transport, TransportError> {
        let parent = web_sys::window()
            .and_then(|window| window.parent().ok().flatten())
            .ok_or_else(|| TransportError::Invalid("not in a window with a parent".into()))?;
        hand_over(|handover, transfer| {
            parent.post_message_with_transfer(handover, target_origin, transfer)
        })
    }

    /// The page's side of `worker`: waits for the port it hands over with
    /// [`connect_to_page`](Self::connect_to_page). Call it as soon as the
    /// worker is made; other messages from the worker are left to their
    /// own listeners.
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] when the browser refuses the listener.
    pub async fn accept_worker(worker: &Worker) -> Result<Transport, TransportError> {
        accept(worker, |_| true).await
    }

    /// The page's side of an iframe: waits for the port that `frame` (the
    /// iframe's `contentWindow`) hands over with
    /// [`connect_to_parent`](Self::connect_to_parent), from a document of
    /// origin `origin`. Handovers from other windows or origins are
    /// ignored.
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] outside a window.
    pub async fn accept_frame(frame: &Window, origin: &str) -> Result<Transport, TransportError> {
        let page =
            web_sys::window().ok_or_else(|| TransportError::Invalid("not in a window".into()))?;
        let frame: JsValue = frame.clone().into();
        let origin = origin.to_owned();
        accept(&page, move |event| {
            event.origin() == origin
                && event
                    .source()
                    .is_some_and(|source| JsValue::from(source) == frame)
        })
        .await
    }
}

/// Makes a channel, posts its second port with `post`, and returns the
/// transport over the first.
fn hand_over(
    post: impl FnOnce(&JsValue, &JsValue) -> Result<(), JsValue>,
) -> Result<Transport, TransportError> {
    let refused = |e: JsValue| TransportError::Invalid(format!("postMessage: {}", describe(&e)));
    let channel = MessageChannel::new().map_err(refused)?;
    let handover = js_sys::Object::new();
    js_sys::Reflect::set(&handover, &HANDOVER_KEY.into(), &JsValue::TRUE).map_err(refused)?;
    post(&handover, &js_sys::Array::of1(&channel.port2())).map_err(refused)?;
    Ok(MessagePortTransport::from_port(channel.port1()))
}

/// Waits on `target` for a handover that `wanted` accepts.
async fn accept(
    target: &EventTarget,
    wanted: impl Fn(&MessageEvent) -> bool + 'static,
) -> Result<Transport, TransportError> {
    let (port_tx, mut port_rx) = mpsc::unbounded_channel();
    let listener = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let is_handover = js_sys::Reflect::get(&event.data(), &HANDOVER_KEY.into())
            .is_ok_and(|flag| flag.is_truthy());
        if !is_handover || !wanted(&event) {
            return;
        }
        if let Ok(port) = event.ports().get(0).dyn_into::<MessagePort>() {
            let _ = port_tx.send(port);
        }
    });
    let listening = |result: Result<(), JsValue>| {
        result
            .map_err(|e| TransportError::Invalid(format!("listening for a port: {}", describe(&e))))
    };
    listening(
        target.add_event_listener_with_callback("message", listener.as_ref().unchecked_ref()),
    )?;
    let port = port_rx.recv().await;
    listening(
        target.remove_event_listener_with_callback("message", listener.as_ref().unchecked_ref()),
    )?;
    Ok(MessagePortTransport::from_port(
        port.ok_or(TransportError::Closed)?,
    ))
}

/// What the port's callbacks report.
enum Event {
    Message(Bytes),
    /// The other side closed its end (it posted `null`), or is gone.
    End,
}

/// The task that owns the port: posts what the peer writes, forwards what
/// comes in, and closes the port when either side is done.
async fn own(
    port: MessagePort,
    inbound: mpsc::UnboundedSender<Result<Frame, TransportError>>,
    mut outbound: mpsc::Receiver<Bytes>,
) {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let message = {
        let events = events_tx.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let data = event.data();
            if data.is_null() {
                let _ = events.send(Event::End);
            } else if let Some(bytes) = message_bytes(&data) {
                let _ = events.send(Event::Message(bytes));
            } else {
                tracing::warn!("a message on the port is not JSON text or bytes; ignored");
            }
        })
    };
    let close = Closure::<dyn FnMut()>::new(move || {
        let _ = events_tx.send(Event::End);
    });
    // Setting `onmessage` starts the port.
    port.set_onmessage(Some(message.as_ref().unchecked_ref()));
    let _ = port.add_event_listener_with_callback("close", close.as_ref().unchecked_ref());
    let forward = async {
        while let Some(Event::Message(bytes)) = events.recv().await {
            if inbound.send(Ok(Frame::Message(bytes))).is_err() {
                break;
            }
        }
    };
    let send = async {
        while let Some(message) = outbound.recv().await {
            let posted = match std::str::from_utf8(&message) {
                Ok(text) => port.post_message(&JsValue::from_str(text)),
                Err(_) => port.post_message(&js_sys::Uint8Array::from(&message[..])),
            };
            if posted.is_err() {
                return;
            }
        }
        // This side is done: tell the other one.
        let _ = port.post_message(&JsValue::NULL);
    };
    tokio::select! {
        () = forward => {}
        () = send => {}
    }
    port.set_onmessage(None);
    let _ = port.remove_event_listener_with_callback("close", close.as_ref().unchecked_ref());
    port.close();
}
