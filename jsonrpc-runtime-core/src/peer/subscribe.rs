//! Subscriptions this side opened: [`Peer::subscribe`], the typed
//! [`Subscription`] stream it returns, and the table the reader hands
//! items to.
//!
//! A subscription is registered by the reader itself, as it reads the
//! answer to the subscribe call (the call's slot does it, on the reader's
//! side), so an item that follows the answer on the wire always finds it.
//! Items wait in the subscription's own bounded queue; one that finds it
//! full ends the subscription with [`SubscriptionError::Lagged`] (and the
//! other side is asked to unsubscribe) instead of stalling the reader,
//! whose answers the consumer may itself be waiting for.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future as _;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::call::{forget_call, poll_answer};
use super::pending::{Outcome, Receiver, Slot, SlotHandle, TypedSlot};
use super::{CallError, CloseReason, Peer, Shared};
use crate::id::Id;
use crate::message::{ErrorObject, RawJson, RpcError};

/// Items a [`Subscription`] holds unread before it ends as
/// [`SubscriptionError::Lagged`], unless [`SubscribeOptions::buffer`] says
/// otherwise.
pub const DEFAULT_SUBSCRIPTION_BUFFER: usize = 1024;

/// The subscriptions of one connection, by the id the other side gave.
#[derive(Default)]
pub(crate) struct ClientTable {
    /// Set once a subscription was opened: until then the reader never
    /// looks at notifications for items.
    used: AtomicBool,
    /// Keyed by ids the other side chose: a keyed hash.
    inboxes: Mutex<HashMap<Id, Arc<Inbox>>>,
    /// An item left its subscription's queue half full or more: the
    /// reader yields once before its next frame, so a consumer on the same
    /// thread gets to read before the queue fills (a burst read in one go
    /// can hold thousands of items).
    pressure: AtomicBool,
}

impl ClientTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Id, Arc<Inbox>>> {
        self.inboxes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether an item delivered since the last call left its queue half
    /// full or more; clears it.
    pub(crate) fn take_pressure(&self) -> bool {
        self.pressure.load(Ordering::Relaxed) && self.pressure.swap(false, Ordering::Relaxed)
    }

    /// Hands a notification's item to its subscription; true if `params`
    /// were an item or the end of one of this side's subscriptions.
    pub(crate) fn deliver(&self, shared: &Shared, params: Option<RawJson<'_>>) -> bool {
        if !self.used.load(Ordering::Acquire) {
            return false;
        }
        let Some(params) = params else { return false };
        let Ok(payload) = serde_json::from_str::<Payload<'_>>(params.get()) else {
            return false;
        };
        let Some(inbox) = self.lock().get(&payload.subscription).cloned() else {
            return false;
        };
        let ended = match (payload.result, payload.error) {
            (Some(item), None) => {
                if let Some(queued) = inbox.push(item) {
                    if queued >= inbox.capacity.div_ceil(2) {
                        self.pressure.store(true, Ordering::Relaxed);
                    }
                    return true;
                }
                unsubscribe_now(shared, &payload.subscription, &inbox.unsubscribe);
                true
            }
            (None, Some(error)) if error.get() == "null" => inbox.end(End::Finished),
            (None, Some(error)) => {
                // An error object, or (as jsonrpsee's servers send for an
                // error given as text) a string: then that is the message.
                let error = serde_json::from_str::<ErrorObject>(error.get()).unwrap_or_else(|_| {
                    let message = serde_json::from_str::<String>(error.get())
                        .unwrap_or_else(|_| error.get().to_owned());
                    ErrorObject::new(-32603, message)
                });
                inbox.end(End::Failed(error))
            }
            _ => return false,
        };
        if ended {
            self.lock().remove(&payload.subscription);
        }
        true
    }

    /// Ends every subscription: the connection closed.
    pub(crate) fn close(&self, reason: &CloseReason) {
        let inboxes: Vec<_> = self.lock().drain().map(|(_, inbox)| inbox).collect();
        for inbox in inboxes {
            inbox.end(End::Closed(reason.clone()));
        }
    }
}

/// A subscription notification's params.
#[derive(Deserialize)]
struct Payload<'a> {
    subscription: Id,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// A member that is there, `null` included.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Sends the unsubscribe request of a subscription this side gave up on,
/// without waiting for its answer (which is dropped when it comes).
fn unsubscribe_now(shared: &Shared, id: &Id, unsubscribe: &str) {
    if shared.done.is_cancelled() {
        return;
    }
    let call = shared.ids.next();
    if let Ok(body) = shared.request_frame(&call, unsubscribe, &[id], None) {
        let _ = shared.send_now(body);
    }
}

/// How a subscription ended.
#[derive(Debug, Clone)]
enum End {
    /// The other side finished it.
    Finished,
    /// The other side ended it with this error.
    Failed(ErrorObject),
    /// Items came faster than they were read.
    Lagged(usize),
    Closed(CloseReason),
    /// This side unsubscribed.
    Unsubscribed,
}

/// One subscription's unread items.
struct Inbox {
    state: Mutex<InboxState>,
    capacity: usize,
    unsubscribe: Arc<str>,
}

#[derive(Default)]
struct InboxState {
    items: VecDeque<Box<RawValue>>,
    end: Option<End>,
    /// The end has been reported to the consumer.
    reported: bool,
    waker: Option<Waker>,
}

impl Inbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues an item and says how many are queued; `None` if the queue
    /// was full (the subscription then ends as lagged).
    fn push(&self, item: &RawValue) -> Option<usize> {
        let mut state = self.lock();
        if state.end.is_some() {
            return Some(0);
        }
        let queued = if state.items.len() >= self.capacity {
            state.end = Some(End::Lagged(self.capacity));
            None
        } else {
            state.items.push_back(item.to_owned());
            Some(state.items.len())
        };
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        queued
    }

    /// Ends the subscription unless it has ended; true if this ended it.
    fn end(&self, end: End) -> bool {
        let mut state = self.lock();
        if state.end.is_some() {
            return false;
        }
        state.end = Some(end);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        true
    }

    fn poll_item(&self, cx: &mut TaskContext<'_>) -> Poll<Option<Result<Box<RawValue>, End>>> {
        let mut state = self.lock();
        if let Some(item) = state.items.pop_front() {
            return Poll::Ready(Some(Ok(item)));
        }
        match &state.end {
            Some(_) if state.reported => Poll::Ready(None),
            Some(end) => {
                let end = end.clone();
                state.reported = true;
                Poll::Ready(Some(Err(end)))
            }
            None => {
                if !state
                    .waker
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    state.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }
}

/// The slot of a subscribe call: as the reader reads the answer, it
/// registers the subscription under the id the answer carries.
struct SubscribeSlot<E> {
    cell: Arc<TypedSlot<(Id, Arc<Inbox>), E>>,
    table: Arc<ClientTable>,
    capacity: usize,
    unsubscribe: Arc<str>,
}

impl<E: RpcError + Send + 'static> Slot for SubscribeSlot<E> {
    fn complete(&self, outcome: Outcome<'_>) {
        let answer = match outcome {
            Outcome::Result(raw) => match serde_json::from_str::<Id>(raw.get()) {
                Ok(id) => {
                    let inbox = Arc::new(Inbox {
                        state: Mutex::new(InboxState::default()),
                        capacity: self.capacity.max(1),
                        unsubscribe: self.unsubscribe.clone(),
                    });
                    self.table.lock().insert(id.clone(), inbox.clone());
                    Ok((id, inbox))
                }
                Err(e) => Err(CallError::InvalidResult(e)),
            },
            Outcome::Error(error) => Err(CallError::from_answer(error)),
            Outcome::Invalid(error) => Err(CallError::InvalidResponse(error)),
            Outcome::Closed(reason) => Err(CallError::Closed(reason)),
            Outcome::Cancelled => Err(CallError::Cancelled),
        };
        self.cell.resolve(answer);
    }

    fn abandon(&self) {
        self.cell.give_up();
    }
}

/// Options for one [`Peer::subscribe_with`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::peer::SubscribeOptions;
///
/// let options = SubscribeOptions::default().buffer(64).timeout(Duration::from_secs(5));
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct SubscribeOptions {
    buffer: usize,
    timeout: Option<Option<Duration>>,
}

impl Default for SubscribeOptions {
    fn default() -> Self {
        SubscribeOptions {
            buffer: DEFAULT_SUBSCRIPTION_BUFFER,
            timeout: None,
        }
    }
}

impl SubscribeOptions {
    /// Items held unread before the subscription ends as
    /// [`SubscriptionError::Lagged`] (default
    /// [`DEFAULT_SUBSCRIPTION_BUFFER`]).
    pub fn buffer(mut self, items: usize) -> Self {
        self.buffer = items.max(1);
        self
    }

    /// How long to wait for the subscribe call's answer, overriding the
    /// config's request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }
}

/// Why a [`Subscription`] yields an error. After any of them but
/// [`InvalidItem`](SubscriptionError::InvalidItem) and
/// [`Reconnected`](SubscriptionError::Reconnected) the stream ends.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SubscriptionError {
    /// The other side ended the subscription with this error.
    Ended(ErrorObject),
    /// An item did not decode into the subscription's type; the stream
    /// goes on.
    InvalidItem(Arc<serde_json::Error>),
    /// Items came faster than they were read: this many were held unread
    /// when one more came. The subscription was dropped (and the other
    /// side asked to unsubscribe); nothing after that item is seen.
    Lagged(usize),
    /// The connection closed.
    Closed(CloseReason),
    /// The connection was lost and a
    /// [`ReconnectingSubscription`](crate::reconnect::ReconnectingSubscription)
    /// opened the subscription again on the next one: items the other side
    /// sent in between are missing. The stream goes on.
    Reconnected,
}

impl fmt::Display for SubscriptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubscriptionError::Ended(e) => write!(f, "the other side ended the subscription: {e}"),
            SubscriptionError::InvalidItem(e) => write!(f, "an item did not decode: {e}"),
            SubscriptionError::Lagged(n) => write!(
                f,
                "items came faster than they were read ({n} unread); the subscription was dropped"
            ),
            SubscriptionError::Closed(reason) => write!(f, "the connection closed: {reason}"),
            SubscriptionError::Reconnected => f.write_str(
                "the connection was lost and the subscription opened again: items may be missing",
            ),
        }
    }
}

impl std::error::Error for SubscriptionError {}

/// A subscription this side opened: a stream of its items, typed.
///
/// Read it with [`next`](Subscription::next) or as a
/// [`futures_core::Stream`]. It ends (`None`) when the other side finishes
/// the subscription or this side [unsubscribes](Subscription::unsubscribe);
/// before ending for any other reason it yields one
/// [`SubscriptionError`]. Dropping it unsubscribes.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, Peer, Router, Transport};
/// use jsonrpc_runtime::router::PendingSubscription;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new().subscription(
///     "subscribe_count", "count", "unsubscribe_count",
///     |(to,): (u64,), pending: PendingSubscription<u64>, _: Context| async move {
///         let sink = pending.accept().await?;
///         for n in 1..=to {
///             sink.send(&n).await?;
///         }
///         Ok::<_, jsonrpc_runtime::router::SubscriptionClosed>(())
///     },
/// );
/// let (a, b) = Transport::pair(16);
/// let _server = Peer::builder().router(router).spawn(b);
/// let client = Peer::spawn(a);
///
/// let mut counts = client.subscribe::<u64>("subscribe_count", [3], "unsubscribe_count").await?;
/// let mut seen = Vec::new();
/// while let Some(n) = counts.next().await {
///     seen.push(n?);
/// }
/// assert_eq!(seen, [1, 2, 3]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct Subscription<T> {
    peer: Peer,
    id: Id,
    inbox: Arc<Inbox>,
    _item: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Subscription<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned> Subscription<T> {
    /// The next item; `None` once the subscription has ended.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: an item is taken only when this completes.
    pub async fn next(&mut self) -> Option<Result<T, SubscriptionError>> {
        std::future::poll_fn(|cx| self.poll_item(cx)).await
    }

    fn poll_item(&self, cx: &mut TaskContext<'_>) -> Poll<Option<Result<T, SubscriptionError>>> {
        let item = match self.inbox.poll_item(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        Poll::Ready(match item {
            None => None,
            Some(Ok(raw)) => Some(
                serde_json::from_str(raw.get())
                    .map_err(|e| SubscriptionError::InvalidItem(Arc::new(e))),
            ),
            Some(Err(end)) => match end {
                End::Finished | End::Unsubscribed => None,
                End::Failed(e) => Some(Err(SubscriptionError::Ended(e))),
                End::Lagged(n) => Some(Err(SubscriptionError::Lagged(n))),
                End::Closed(reason) => Some(Err(SubscriptionError::Closed(reason))),
            },
        })
    }
}

impl<T> Subscription<T> {
    /// The id the other side gave the subscription.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// Ends the subscription: asks the other side to unsubscribe and waits
    /// for its answer, true when it still had the subscription.
    ///
    /// # Errors
    ///
    /// As [`Peer::call`].
    pub async fn unsubscribe(self) -> Result<bool, CallError> {
        self.stop();
        let method = self.inbox.unsubscribe.clone();
        let answer = self.peer.call(&method, [&self.id]).await;
        self.inbox.end(End::Unsubscribed);
        answer
    }

    /// Takes the subscription off the table; true if it was still on it.
    fn stop(&self) -> bool {
        let removed = self.peer.shared.subscribed.lock().remove(&self.id);
        removed.is_some()
    }
}

impl<T: DeserializeOwned> futures_core::Stream for Subscription<T> {
    type Item = Result<T, SubscriptionError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        self.poll_item(cx)
    }
}

impl<T> Drop for Subscription<T> {
    fn drop(&mut self) {
        if self.stop() && self.inbox.end(End::Unsubscribed) {
            unsubscribe_now(&self.peer.shared, &self.id, &self.inbox.unsubscribe);
        }
    }
}

impl Peer {
    /// Subscribes: calls `method` with `params`, whose answer is the
    /// subscription's id, and returns the stream of the items the other
    /// side then sends as notifications
    /// `{"subscription": <id>, "result": <item>}` (the format of
    /// jsonrpsee and Ethereum-style nodes). Dropping the stream, or
    /// [`Subscription::unsubscribe`], calls `unsubscribe` with `[<id>]`.
    ///
    /// # Examples
    ///
    /// See [`Subscription`].
    ///
    /// # Errors
    ///
    /// As [`Peer::call`]: the subscribe call's error answer, the
    /// connection closing, the timeout, or an answer that is not an id.
    pub async fn subscribe<T>(
        &self,
        method: &str,
        params: impl Serialize,
        unsubscribe: &str,
    ) -> Result<Subscription<T>, CallError> {
        self.subscribe_with(method, params, unsubscribe, SubscribeOptions::default())
            .await
    }

    /// Subscribes as [`subscribe`](Peer::subscribe) does, with options,
    /// decoding error answers whose code is one of `E`'s as
    /// [`CallError::Domain`].
    ///
    /// # Errors
    ///
    /// As [`subscribe`](Peer::subscribe).
    pub async fn subscribe_with<T, E>(
        &self,
        method: &str,
        params: impl Serialize,
        unsubscribe: &str,
        options: SubscribeOptions,
    ) -> Result<Subscription<T>, CallError<E>>
    where
        E: RpcError + Send + 'static,
    {
        let shared = &self.shared;
        let id = shared.ids.next();
        let body = shared
            .request_frame(&id, method, &params, None)
            .map_err(CallError::InvalidParams)?;
        drop(params);
        let (cell, mut rx): (_, Receiver<(Id, Arc<Inbox>), E>) = TypedSlot::cell();
        let slot = SubscribeSlot {
            cell,
            table: shared.subscribed.clone(),
            capacity: options.buffer,
            unsubscribe: Arc::from(unsubscribe),
        };
        shared.subscribed.used.store(true, Ordering::Release);
        let span = crate::trace::call_span(shared.connection, method, &id);
        match shared
            .pending
            .register(id.clone(), SlotHandle::new(Arc::new(slot)), span)
        {
            Ok(_) => {}
            Err(super::pending::RegisterError::Closed(reason)) => {
                return Err(CallError::Closed(reason))
            }
            Err(super::pending::RegisterError::Duplicate) => {
                return Err(CallError::DuplicateId(id))
            }
        }
        // Forgets the call should this future be dropped before the answer.
        let mut guard = ForgetOnDrop {
            shared,
            id: Some(&id),
        };
        if let Err(e) = shared.send(body).await {
            guard.id = None;
            shared.pending.remove(&id);
            return Err(CallError::Closed(match e {
                super::SendError::Closed(reason) => reason,
                _ => shared.reason_or_local(),
            }));
        }
        let timeout = options.timeout.unwrap_or_else(|| self.default_timeout());
        let mut deadline = timeout.map(crate::rt::sleep).map(Box::pin);
        let answer = std::future::poll_fn(|cx| {
            poll_answer(shared, &id, &mut rx, cx, |cx| match deadline.as_mut() {
                Some(sleep) => sleep.as_mut().poll(cx).is_ready(),
                None => false,
            })
        })
        .await;
        guard.id = None;
        let (sub, inbox) = answer?;
        Ok(Subscription {
            peer: self.clone(),
            id: sub,
            inbox,
            _item: PhantomData,
        })
    }
}

/// Gives up on a subscribe call whose future is dropped while it waits.
struct ForgetOnDrop<'a> {
    shared: &'a Shared,
    id: Option<&'a Id>,
}

impl Drop for ForgetOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            forget_call(self.shared, id);
        }
    }
}
