//! Subscriptions served: the route pair [`Router::subscription`] registers,
//! the [`PendingSubscription`] its handler gets, and the
//! [`SubscriptionSink`] it sends items through once it accepts.
//!
//! The subscribe request is a request route whose handler runs on a task
//! of its own, beside the request's: the request waits for the handler to
//! accept or reject, is answered (the subscription's id, or the error),
//! and only once that answer is queued does `accept` return the sink, so
//! no item can overtake the answer that tells the client its id. The
//! handler's task also pumps the subscription's feed (see `peer::served`)
//! to the connection, and the handler future is dropped when the
//! connection closes.
//!
//! What the wire carries, what the buffer does when it is full and the
//! per-connection cap are described on [`Router::subscription`].

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::route::{decode_params, encode_reply, ErasedRoute, RequestRoute, Route, RouteKind};
use super::task::{Answer, BoxFuture, RequestTask};
use super::{Reply, Router};
use crate::context::Context;
use crate::id::Id;
use crate::message::{Dialect, ErrorCode, ErrorObject, RawJson, RpcError};
use crate::peer::{Feed, Refused, Shared, WhenFull};

/// Items a subscription's feed holds on their way out before its
/// [`WhenFull`] policy applies, unless the handler asks for another size.
pub const DEFAULT_FEED_CAPACITY: usize = 64;

/// The subscription is over: the client unsubscribed or left, the
/// connection closed, or the feed ended itself ([`WhenFull::Close`]).
///
/// A handler may return it (`sink.send(&item).await?`): no closing
/// notification follows a subscription the client ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriptionClosed;

impl fmt::Display for SubscriptionClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the subscription is closed")
    }
}

impl std::error::Error for SubscriptionClosed {}

impl RpcError for SubscriptionClosed {
    fn into_error_object(self) -> ErrorObject {
        ErrorObject::new(ErrorCode::SERVER_CLOSING, self.to_string())
    }

    fn from_error_object(_: &ErrorObject) -> Option<Self> {
        None
    }
}

impl From<SubscriptionClosed> for ErrorObject {
    fn from(closed: SubscriptionClosed) -> Self {
        closed.into_error_object()
    }
}

/// Why [`SubscriptionSink::try_send`] did not queue an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrySendError {
    /// The feed is full and its policy is [`WhenFull::Wait`].
    Full,
    /// The subscription is over.
    Closed,
    /// The item did not encode.
    Invalid,
}

/// What a subscription handler returns: `()` or `Result<(), E>`. An error
/// returned before the subscription was accepted answers the subscribe
/// request; one returned after ends the subscription with a closing
/// notification that carries it.
pub trait SubscriptionResult: Send + 'static {
    /// The error to end with, if any.
    fn into_error(self) -> Option<ErrorObject>;
}

impl SubscriptionResult for () {
    fn into_error(self) -> Option<ErrorObject> {
        None
    }
}

impl<E: RpcError + Send + 'static> SubscriptionResult for Result<(), E> {
    fn into_error(self) -> Option<ErrorObject> {
        self.err().map(RpcError::into_error_object)
    }
}

/// What a subscription and its handler share: the answer not sent yet, then
/// the feed.
struct Seat {
    answer: Mutex<Option<oneshot::Sender<Result<Id, ErrorObject>>>>,
    feed: std::sync::OnceLock<Arc<Feed>>,
    /// Woken when the feed may be pumped: its answer is out, or the
    /// handler is done.
    ready: tokio::sync::Notify,
}

impl Seat {
    fn take_answer(&self) -> Option<oneshot::Sender<Result<Id, ErrorObject>>> {
        self.answer.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A subscribe request waiting for its handler's word: accept it to get
/// the [`SubscriptionSink`] (the request is answered with the
/// subscription's id), or reject it with an error (the request is answered
/// with that). A handler that returns without doing either answers with
/// the error it returns, or -32603.
pub struct PendingSubscription<T> {
    shared: Arc<Shared>,
    seat: Arc<Seat>,
    /// Told when the answer has been queued.
    answered: Option<oneshot::Receiver<bool>>,
    names: Arc<Names>,
    capacity: usize,
    policy: WhenFull,
    _item: PhantomData<fn(&T)>,
}

impl<T> fmt::Debug for PendingSubscription<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingSubscription")
            .field("notification", &self.names.notification)
            .field("capacity", &self.capacity)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<T: Serialize> PendingSubscription<T> {
    /// Sets how many items the feed holds on their way out (default
    /// [`DEFAULT_FEED_CAPACITY`]; at least 1).
    #[must_use]
    pub fn capacity(mut self, items: usize) -> Self {
        self.capacity = items.max(1);
        self
    }

    /// Sets what a full feed does with one more item (default
    /// [`WhenFull::Wait`]).
    #[must_use]
    pub fn when_full(mut self, policy: WhenFull) -> Self {
        self.policy = policy;
        self
    }

    /// Accepts the subscription: answers the subscribe request with the
    /// subscription's id and, once that answer is queued, returns the sink
    /// for its items.
    ///
    /// # Errors
    ///
    /// [`SubscriptionClosed`] when the answer could not go out (the
    /// connection closed, or the client cancelled the request).
    pub async fn accept(mut self) -> Result<SubscriptionSink<T>, SubscriptionClosed> {
        let answer = self.seat.take_answer().ok_or(SubscriptionClosed)?;
        let answered = self.answered.take().ok_or(SubscriptionClosed)?;
        let feed = {
            let mut served = self.shared.served();
            let id = served.next_id();
            let feed = Arc::new(Feed::new(
                id,
                self.names.notification.clone(),
                self.names.unsubscribe.clone(),
                self.capacity,
                self.policy,
            ));
            served.insert(feed.clone());
            feed
        };
        let _ = self.seat.feed.set(feed.clone());
        let out = answer.send(Ok(feed.id.clone())).is_ok() && answered.await == Ok(true);
        if !out {
            feed.stop();
        }
        self.seat.ready.notify_one();
        if !out {
            return Err(SubscriptionClosed);
        }
        Ok(SubscriptionSink {
            shared: self.shared.clone(),
            feed,
            _item: PhantomData,
        })
    }

    /// Rejects the subscription: the subscribe request is answered with
    /// `error`.
    pub fn reject(self, error: impl RpcError) {
        if let Some(answer) = self.seat.take_answer() {
            let _ = answer.send(Err(error.into_error_object()));
        }
    }
}

/// Where a subscription's items go, once accepted: each
/// [`send`](SubscriptionSink::send) queues one notification
/// `{"subscription": <id>, "result": <item>}` in the subscription's feed.
///
/// The subscription ends when the handler returns (a closing notification
/// tells the client), when the client unsubscribes or leaves (then
/// [`closed`](SubscriptionSink::closed) resolves and sends fail with
/// [`SubscriptionClosed`]), or by its [`WhenFull`] policy.
pub struct SubscriptionSink<T> {
    shared: Arc<Shared>,
    feed: Arc<Feed>,
    _item: PhantomData<fn(&T)>,
}

impl<T> fmt::Debug for SubscriptionSink<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriptionSink")
            .field("id", &self.feed.id)
            .field("closed", &self.feed.is_stopped())
            .finish_non_exhaustive()
    }
}

impl<T: Serialize> SubscriptionSink<T> {
    /// The subscription's id, as the client knows it.
    pub fn id(&self) -> &Id {
        &self.feed.id
    }

    /// Queues an item. Under [`WhenFull::Wait`] this waits while the feed
    /// is full; under the other policies it never waits.
    ///
    /// # Errors
    ///
    /// [`SubscriptionClosed`] once the subscription is over. An item that
    /// does not encode is logged and dropped.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: the item is queued only when this completes.
    pub async fn send(&self, item: &T) -> Result<(), SubscriptionClosed> {
        let frame = match self.feed.item_frame(&self.shared, item) {
            Ok(frame) => frame,
            Err(error) => {
                tracing::warn!(%error, "dropping a subscription item that does not encode");
                return Ok(());
            }
        };
        self.feed
            .push(frame, &self.shared)
            .await
            .map_err(|_| SubscriptionClosed)
    }

    /// Queues an item without waiting.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when the feed is full under
    /// [`WhenFull::Wait`], [`TrySendError::Closed`] once the subscription
    /// is over, [`TrySendError::Invalid`] when the item does not encode.
    pub fn try_send(&self, item: &T) -> Result<(), TrySendError> {
        let frame = self
            .feed
            .item_frame(&self.shared, item)
            .map_err(|_| TrySendError::Invalid)?;
        self.feed
            .try_push(frame, &self.shared)
            .map_err(|refused| match refused {
                Refused::Full => TrySendError::Full,
                Refused::Stopped => TrySendError::Closed,
            })
    }

    /// Resolves once the subscription is over.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: it only waits.
    pub async fn closed(&self) {
        self.feed.stopped().await;
    }

    /// Whether the subscription is over.
    pub fn is_closed(&self) -> bool {
        self.feed.is_stopped()
    }

    /// Items dropped under [`WhenFull::DropOldest`] so far.
    pub fn dropped(&self) -> u64 {
        self.feed.dropped()
    }
}

/// The three method names of one subscription.
struct Names {
    notification: Arc<str>,
    unsubscribe: Arc<str>,
}

/// The subscribe route.
struct SubscribeRoute<F, P, T> {
    handler: Arc<F>,
    names: Arc<Names>,
    _marker: PhantomData<fn(P, T)>,
}

fn unavailable(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "`{method}` opens a subscription, which needs a connection that carries \
             notifications (WebSocket, TCP, Unix, stdio, a child process); this one cannot"
        ),
    )
}

impl<P, T, R, F, Fut> ErasedRoute for SubscribeRoute<F, P, T>
where
    P: DeserializeOwned + Send + 'static,
    T: Serialize + Send + 'static,
    R: SubscriptionResult,
    F: Fn(P, PendingSubscription<T>, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    /// Over HTTP and in process: refused.
    fn start(
        &self,
        _params: Option<RawJson<'_>>,
        ctx: Context,
        _dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject> {
        Err(unavailable(ctx.method()))
    }

    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        dialect: Dialect,
        mut task: RequestTask,
    ) -> Result<(), (ErrorObject, RequestTask)> {
        if task.job.ticket.batch.is_some() {
            let error = ErrorObject::invalid_request(format!(
                "`{}` opens a subscription, which cannot be done inside a batch",
                ctx.method()
            ));
            return Err((error, task));
        }
        let params = match decode_params::<P>(params) {
            Ok(params) => params,
            Err(error) => return Err((error, task)),
        };
        let shared = ctx.peer().shared().clone();
        let cap = shared.config.max_subscriptions;
        if shared.served().reserve(cap).is_err() {
            let error = crate::policy::overloaded(format_args!(
                "this connection has {cap} subscriptions open, the most it may"
            ));
            return Err((error, task));
        }
        let (answer_tx, answer_rx) = oneshot::channel();
        let (answered_tx, answered_rx) = oneshot::channel();
        task.job.ticket.answered = Some(answered_tx);
        let seat = Arc::new(Seat {
            answer: Mutex::new(Some(answer_tx)),
            feed: std::sync::OnceLock::new(),
            ready: tokio::sync::Notify::new(),
        });
        let pending = PendingSubscription {
            shared: shared.clone(),
            seat: seat.clone(),
            answered: Some(answered_rx),
            names: self.names.clone(),
            capacity: DEFAULT_FEED_CAPACITY,
            policy: WhenFull::Wait,
            _item: PhantomData,
        };
        let handler = (self.handler)(params, pending, ctx);
        crate::rt::spawn(run(handler, seat, shared));
        let id = task.job.id.clone();
        task.spawn(async move {
            let reply = match answer_rx.await {
                Ok(Ok(sub)) => Reply::Ok(sub),
                Ok(Err(error)) => Reply::Err(error),
                Err(_) => Reply::Err(ErrorObject::new(
                    ErrorCode::SERVER_CLOSING,
                    "the connection closed before the subscription was accepted",
                )),
            };
            encode_reply(dialect, &id, reply)
        });
        Ok(())
    }

    fn invoke(
        &self,
        _params: Option<RawJson<'_>>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject> {
        Err(unavailable(ctx.method()))
    }

    fn is_subscription(&self) -> bool {
        true
    }
}

/// A subscription's task: its handler and its feed's pump, until both are
/// done or the connection stops them.
async fn run<R: SubscriptionResult>(
    handler: impl Future<Output = R>,
    seat: Arc<Seat>,
    shared: Arc<Shared>,
) {
    let handler = async {
        let error = handler.await.into_error();
        seat.ready.notify_one();
        match seat.feed.get() {
            // Accepted (or being accepted): the subscription ends.
            Some(feed) if !feed.is_stopped() => feed.finish(&shared, error.as_ref()),
            Some(_) => {}
            // Neither accepted nor rejected: the request gets the error.
            None => {
                if let Some(answer) = seat.take_answer() {
                    let error = error.unwrap_or_else(|| {
                        ErrorObject::internal_error(
                            "the subscription handler returned without accepting the subscription",
                        )
                    });
                    let _ = answer.send(Err(error));
                }
            }
        }
    };
    let pump = async {
        // The pump starts once the answer is out (or the handler is done).
        seat.ready.notified().await;
        if let Some(feed) = seat.feed.get() {
            feed.clone().pump(shared.clone()).await;
        }
    };
    let mut both = std::pin::pin!(futures_util::future::join(handler, pump));
    let stopped = tokio::select! {
        biased;
        _ = &mut both => false,
        _ = shared.abort_handlers.cancelled() => true,
    };
    if stopped {
        // The connection is gone: the handler learns it from its sink and
        // runs once more, up to its next wait, before it is dropped.
        if let Some(feed) = seat.feed.get() {
            feed.stop();
        }
        std::future::poll_fn(|cx| {
            let _ = both.as_mut().poll(cx);
            std::task::Poll::Ready(())
        })
        .await;
    }
    if seat.feed.get().is_none() {
        shared.served().release();
    }
}

/// The unsubscribe route's params: `[id]`, as jsonrpsee and Ethereum-style
/// clients send them, or `{"subscription": id}`.
#[derive(Deserialize)]
#[serde(untagged)]
enum UnsubscribeParams {
    Positional((Id,)),
    Named { subscription: Id },
}

impl Router {
    /// Registers a subscription: `subscribe` opens it, its items go out as
    /// `notification`s, and `unsubscribe` ends it.
    ///
    /// The handler gets the subscribe request's params, a
    /// [`PendingSubscription`] and the request's [`Context`]. It accepts
    /// (the request is answered with the subscription's id) and sends
    /// items through the [`SubscriptionSink`] it gets, or rejects (the
    /// request is answered with the error). On the wire, the format of
    /// jsonrpsee and Ethereum-style nodes:
    ///
    /// - items: `{"jsonrpc":"2.0","method":<notification>,"params":{"subscription":<id>,"result":<item>}}`;
    /// - `unsubscribe` takes `[<id>]` (or `{"subscription": <id>}`) and
    ///   answers `true`, or `false` for an id this connection does not have
    ///   open under this method;
    /// - when the server ends the subscription (the handler returned, or
    ///   [`WhenFull::Close`]), one last notification carries `error` in
    ///   place of `result`: `null` when the handler finished, else the
    ///   error object. None follows an unsubscribe.
    ///
    /// Each subscription's feed holds up to [`DEFAULT_FEED_CAPACITY`] items
    /// (or its [`PendingSubscription::capacity`]) beyond the connection's
    /// outbound budget; what one more does is its [`WhenFull`] policy. A
    /// connection has at most [`Config::max_subscriptions`](crate::Config::max_subscriptions)
    /// open. Subscribe requests are refused inside a batch and over
    /// transports that cannot carry notifications (HTTP), each with a clear
    /// error. The handler runs until it returns or the connection closes;
    /// it learns of an unsubscribe, or of a client that left, from
    /// [`SubscriptionSink::closed`] or a failed send. Once the connection
    /// has closed, it runs up to its next wait and is then dropped.
    ///
    /// # Examples
    ///
    /// See [`Subscription`](crate::peer::Subscription).
    ///
    /// # Panics
    ///
    /// Panics if `subscribe` or `unsubscribe` already has a route.
    #[track_caller]
    pub fn subscription<P, T, R, F, Fut>(
        self,
        subscribe: &str,
        notification: &str,
        unsubscribe: &str,
        handler: F,
    ) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        R: SubscriptionResult,
        F: Fn(P, PendingSubscription<T>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let [open, close] = Route::subscription(subscribe, notification, unsubscribe, handler);
        self.insert(&open.name.clone(), open.kind, open.handler)
            .insert(&close.name.clone(), close.kind, close.handler)
    }
}

impl Route {
    /// The subscribe and unsubscribe routes of a subscription, as
    /// [`Router::subscription`] registers them.
    pub fn subscription<P, T, R, F, Fut>(
        subscribe: &str,
        notification: &str,
        unsubscribe: &str,
        handler: F,
    ) -> [Route; 2]
    where
        P: DeserializeOwned + Send + 'static,
        T: Serialize + Send + 'static,
        R: SubscriptionResult,
        F: Fn(P, PendingSubscription<T>, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let names = Arc::new(Names {
            notification: Arc::from(notification),
            unsubscribe: Arc::from(unsubscribe),
        });
        let open = Route::new(
            RouteKind::Request,
            subscribe.into(),
            Arc::new(SubscribeRoute {
                handler: Arc::new(handler),
                names,
                _marker: PhantomData,
            }),
        );
        let close = Route::new(
            RouteKind::Request,
            unsubscribe.into(),
            Arc::new(RequestRoute {
                handler: |params: UnsubscribeParams, ctx: Context| {
                    let id = match params {
                        UnsubscribeParams::Positional((id,)) => id,
                        UnsubscribeParams::Named { subscription } => subscription,
                    };
                    let open = ctx.peer().shared().served().unsubscribe(&id, ctx.method());
                    std::future::ready(Ok::<_, ErrorObject>(open))
                },
                _marker: PhantomData,
            }),
        );
        [open, close]
    }
}
