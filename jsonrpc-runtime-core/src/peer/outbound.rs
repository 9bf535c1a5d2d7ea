//! Middleware around outbound calls (feature `tower`): tower layers that see
//! each call this side makes, installed with
//! [`PeerBuilder::outbound_layer`](crate::PeerBuilder::outbound_layer).

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tower::util::BoxCloneSyncService;
use tower::{BoxError, Layer, Service};

use super::{CallError, CallOptions, Peer};
use crate::message::RpcError;

/// One outbound call as the layers of
/// [`PeerBuilder::outbound_layer`](crate::PeerBuilder::outbound_layer) see it.
///
/// A layer may change any part (add extras to the options, rewrite the
/// params) before passing it on, answer it itself, or fail it.
#[derive(Debug)]
pub struct OutboundCall {
    /// The method called.
    pub method: Arc<str>,
    /// The params, encoded; `None` for none.
    pub params: Option<Box<RawValue>>,
    /// The call's options (its timeout, extras).
    pub options: CallOptions,
    /// The connection the call goes out on.
    pub peer: Peer,
}

/// What the services of an outbound stack answer: the raw result. Their
/// error is a [`tower::BoxError`]; a [`CallError`] in it reaches the caller
/// as itself, anything else as [`CallError::Layer`].
pub type OutboundResult = Result<Box<RawValue>, BoxError>;

/// A service in an outbound stack: the innermost one sends the call and
/// waits for its answer; each layer added with
/// [`PeerBuilder::outbound_layer`](crate::PeerBuilder::outbound_layer) wraps the
/// stack built so far.
#[derive(Clone)]
pub struct OutboundService(BoxCloneSyncService<OutboundCall, Box<RawValue>, BoxError>);

impl fmt::Debug for OutboundService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OutboundService").finish_non_exhaustive()
    }
}

impl OutboundService {
    /// The innermost service: sends the call on its peer and waits for the
    /// answer.
    pub(crate) fn sender() -> Self {
        OutboundService::new(tower::service_fn(send))
    }

    pub(crate) fn new<S>(service: S) -> Self
    where
        S: Service<OutboundCall, Response = Box<RawValue>> + Clone + Send + Sync + 'static,
        S::Error: Into<BoxError>,
        S::Future: Send + 'static,
    {
        OutboundService(BoxCloneSyncService::new(
            tower::util::MapErrLayer::new(Into::into).layer(service),
        ))
    }
}

impl Service<OutboundCall> for OutboundService {
    type Response = Box<RawValue>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = OutboundResult> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, call: OutboundCall) -> Self::Future {
        self.0.call(call)
    }
}

/// The innermost service's work: the call, past every layer.
async fn send(call: OutboundCall) -> OutboundResult {
    call.peer
        .call::<Box<RawValue>>(&call.method, call.params)
        .options(call.options)
        .past_layers()
        .await
        .map_err(Into::into)
}

/// Makes a stack for one connection.
pub(crate) type OutboundStack = Arc<dyn Fn() -> OutboundService + Send + Sync>;

/// The stack of `layer` around what `inner` makes (the sender when there is
/// nothing yet).
pub(crate) fn wrap<L>(inner: Option<OutboundStack>, layer: L) -> OutboundStack
where
    L: Layer<OutboundService> + Send + Sync + 'static,
    L::Service: Service<OutboundCall, Response = Box<RawValue>> + Clone + Send + Sync + 'static,
    <L::Service as Service<OutboundCall>>::Error: Into<BoxError>,
    <L::Service as Service<OutboundCall>>::Future: Send + 'static,
{
    Arc::new(move || {
        let inner = inner
            .as_ref()
            .map_or_else(OutboundService::sender, |make| make());
        OutboundService::new(layer.layer(inner))
    })
}

/// A layered call's outcome as its caller's types: the result decoded as
/// `R`, a wire error in `E` as [`CallError::Domain`].
pub(crate) fn typed<R, E>(outcome: OutboundResult) -> Result<R, CallError<E>>
where
    R: DeserializeOwned,
    E: RpcError,
{
    match outcome {
        Ok(raw) => serde_json::from_str(raw.get()).map_err(CallError::InvalidResult),
        Err(error) => Err(match error.downcast::<CallError>() {
            Ok(error) => retyped(*error),
            Err(other) => CallError::Layer(other),
        }),
    }
}

fn retyped<E: RpcError>(error: CallError<Infallible>) -> CallError<E> {
    match error {
        CallError::Domain(never) => match never {},
        CallError::Rpc(error) => CallError::from_answer(error),
        CallError::Closed(reason) => CallError::Closed(reason),
        CallError::TimedOut => CallError::TimedOut,
        CallError::Cancelled => CallError::Cancelled,
        CallError::InvalidParams(e) => CallError::InvalidParams(e),
        CallError::InvalidResult(e) => CallError::InvalidResult(e),
        CallError::InvalidResponse(e) => CallError::InvalidResponse(e),
        CallError::DuplicateId(id) => CallError::DuplicateId(id),
        CallError::NotSent(e) => CallError::NotSent(e),
        CallError::Layer(e) => CallError::Layer(e),
        CallError::Interrupted(reason) => CallError::Interrupted(reason),
        CallError::NotConnected(e) => CallError::NotConnected(e),
    }
}
