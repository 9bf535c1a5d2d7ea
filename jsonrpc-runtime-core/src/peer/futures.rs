//! Calls users can steer: [`Call`], a request not sent yet that is
//! configured and then awaited (through [`IntoFuture`]) or started, and
//! [`PendingCall`], a started request with its id that can be cancelled.
//!
//! Neither boxes the call: awaiting a [`Call`] runs [`CallFuture`], a
//! hand-written state machine that allocates what a call always needs (the
//! frame and the waiting slot) and boxes only the rare waits: for room in
//! the outbound budget when it is spent, for a timer when a timeout is set,
//! and for the in-flight permit a handler lent while it waited.

use std::convert::Infallible;
use std::fmt;
use std::future::{Future, IntoFuture};
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context as TaskContext, Poll};
use std::time::Duration;

use crate::rt::Sleep;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::call::{forget_call, poll_answer};
use super::pending::Receiver;
use super::{CallError, CallOptions, Peer, SendError, Shared};
use crate::id::Id;
use crate::message::Extras;
use crate::message::RpcError;

type Answer<R, E> = Result<R, CallError<E>>;
type Wait<'p> = Pin<Box<dyn Future<Output = ()> + Send + 'p>>;

/// A request not sent yet: set a timeout or extras, then `.await` it for the
/// result, or [`start`](Call::start) it to get its id and a way to cancel it.
///
/// Returned by [`Peer::call`] and by every request method of a client that
/// `#[rpc]` generates. `R` is the result type, `E` the domain error type
/// (error answers whose code is one of `E`'s come back as
/// [`CallError::Domain`]), `P` the params.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new()
///     .request("add", |(a, b): (i64, i64), _ctx: Context| async move { Ok::<_, ErrorObject>(a + b) });
/// let (a, b) = Transport::pair(8);
/// let _server = Peer::builder().router(router).spawn(b);
/// let client = Peer::spawn(a);
///
/// // Awaited directly.
/// let sum: i64 = client.call("add", [2, 3]).await.unwrap();
/// // Configured first.
/// let sum: i64 = client.call("add", [sum, 1]).timeout(Duration::from_secs(5)).await.unwrap();
/// // Started: the request is sent at once; its id can cancel it.
/// let call = client.call::<i64>("add", [sum, 1]).start();
/// println!("sent request {}", call.id());
/// assert_eq!(call.await.unwrap(), 7);
/// # });
/// ```
#[must_use = "a call does nothing until it is awaited or started"]
pub struct Call<'p, R, E = Infallible, P = ()> {
    peer: &'p Peer,
    method: &'p str,
    params: P,
    options: CallOptions,
    /// Whether the config's outbound layers apply (not for the call their
    /// innermost service sends).
    layered: bool,
    _types: PhantomData<fn() -> (R, E)>,
}

impl<R, E, P> fmt::Debug for Call<'_, R, E, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("method", &self.method)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl<'p, R, E, P> Call<'p, R, E, P> {
    pub(crate) fn new(peer: &'p Peer, method: &'p str, params: P) -> Self {
        Call {
            peer,
            method,
            params,
            options: CallOptions::default(),
            layered: true,
            _types: PhantomData,
        }
    }

    /// Sends the call directly, past the config's outbound layers.
    #[cfg(feature = "tower")]
    pub(crate) fn past_layers(mut self) -> Self {
        self.layered = false;
        self
    }

    /// Fails the call with [`CallError::TimedOut`] if no answer came within
    /// `timeout`, overriding the config's request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options = self.options.timeout(timeout);
        self
    }

    /// Waits for the answer as long as it takes, overriding the config's
    /// request timeout.
    pub fn no_timeout(mut self) -> Self {
        self.options = self.options.no_timeout();
        self
    }

    /// Top-level members to add to the request envelope (a session id, a
    /// trace token), instead of the config's
    /// [`extras`](crate::Config::extras).
    pub fn extras(mut self, extras: Extras) -> Self {
        self.options = self.options.extras(extras);
        self
    }

    /// Replaces every option at once.
    pub fn options(mut self, options: CallOptions) -> Self {
        self.options = options;
        self
    }

    /// Decodes error answers whose code is one of `E2`'s as
    /// [`CallError::Domain`] (a plain [`Peer::call`] has no domain errors).
    pub fn errors<E2>(self) -> Call<'p, R, E2, P> {
        Call {
            peer: self.peer,
            method: self.method,
            params: self.params,
            options: self.options,
            layered: self.layered,
            _types: PhantomData,
        }
    }
}

impl<'p, R, E, P> Call<'p, R, E, P> {
    /// The call's parts, for a batch: its peer, method, params and options.
    pub(super) fn into_parts(self) -> (&'p Peer, &'p str, P, CallOptions) {
        (self.peer, self.method, self.params, self.options)
    }
}

impl<'p, R, E, P> Call<'p, R, E, P>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
    P: Serialize,
{
    /// Sends the request now, without waiting for room in the outbound
    /// budget, and returns the [`PendingCall`]: its [`id`](PendingCall::id),
    /// a way to [`cancel`](PendingCall::cancel) it, and the result when
    /// awaited. A timeout counts from here.
    ///
    /// A failure to send (params that do not encode, a closed connection)
    /// is kept for the await, so the handle always has an id.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::policy::CancellationPolicy;
    /// use jsonrpc_runtime::{CallError, Config, Context, ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let config = Config::default().cancellation(CancellationPolicy::mcp());
    /// let router = Router::new().request("sleep", |(): (), ctx: Context| async move {
    ///     ctx.cancellation().cancelled().await;
    ///     Ok::<_, ErrorObject>(())
    /// });
    /// let (a, b) = Transport::pair(8);
    /// let _server = Peer::builder().config(config.clone()).router(router).spawn(b);
    /// let client = Peer::builder().config(config).spawn(a);
    ///
    /// let call = client.call::<()>("sleep", ()).start();
    /// call.cancel().unwrap();
    /// assert!(matches!(call.await, Err(CallError::Cancelled)));
    /// # });
    /// ```
    pub fn start(self) -> PendingCall<R, E> {
        let shared = self.peer.shared.clone();
        let id = shared.ids.next();
        let timeout = self
            .options
            .timeout
            .unwrap_or_else(|| self.peer.default_timeout());
        let state = match shared.send_call::<R, E>(&id, self.method, &self.params, &self.options) {
            Ok(rx) => Started::Waiting(rx),
            Err(error) => Started::Failed(error),
        };
        drop(self.params);
        PendingCall {
            shared,
            id,
            state,
            sleep: timeout.map(|limit| Box::pin(crate::rt::sleep(limit))),
        }
    }
}

impl<'p, R, E, P> IntoFuture for Call<'p, R, E, P>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
    P: Serialize,
{
    type Output = Result<R, CallError<E>>;
    type IntoFuture = CallFuture<'p, R, E>;

    /// Encodes the request; the future waits for room in the outbound
    /// budget, sends it and waits for the answer.
    fn into_future(self) -> CallFuture<'p, R, E> {
        let shared = &*self.peer.shared;
        #[cfg(feature = "tower")]
        if let Some(stack) = shared.outbound.as_ref().filter(|_| self.layered) {
            return self.through(stack.clone());
        }
        let id = shared.ids.next();
        let body =
            shared.request_frame(&id, self.method, &self.params, self.options.extras.as_ref());
        drop(self.params);
        let timeout = self
            .options
            .timeout
            .unwrap_or_else(|| self.peer.default_timeout());
        let state = match body {
            Ok(body) => State::Room {
                id,
                method: self.method,
                body,
                wait: None,
            },
            Err(e) => State::Failed(Some(CallError::InvalidParams(e))),
        };
        CallFuture {
            peer: self.peer,
            timeout,
            state,
        }
    }
}

#[cfg(feature = "tower")]
impl<'p, R, E, P> Call<'p, R, E, P>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
    P: Serialize,
{
    /// The call as an [`OutboundCall`](super::OutboundCall) through the
    /// connection's outbound layers.
    fn through(self, stack: super::OutboundService) -> CallFuture<'p, R, E> {
        use tower::ServiceExt as _;
        let state = match serde_json::value::to_raw_value(&self.params) {
            Ok(params) => {
                let call = super::OutboundCall {
                    method: Arc::from(self.method),
                    params: (params.get() != "null").then_some(params),
                    options: self.options,
                    peer: self.peer.clone(),
                };
                State::Layered(Box::pin(stack.oneshot(call)))
            }
            Err(e) => State::Failed(Some(CallError::InvalidParams(e))),
        };
        CallFuture {
            peer: self.peer,
            timeout: None,
            state,
        }
    }
}

impl Shared {
    /// Registers a call under `id` and queues its frame at once.
    fn send_call<R, E>(
        &self,
        id: &Id,
        method: &str,
        params: &impl Serialize,
        options: &CallOptions,
    ) -> Result<Receiver<R, E>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
    {
        let body = self
            .request_frame(id, method, params, options.extras.as_ref())
            .map_err(CallError::InvalidParams)?;
        let (rx, _) = self.register::<R, E>(id, method)?;
        if self.send_now(body).is_err() {
            self.pending.remove(id);
            return Err(CallError::Closed(self.reason_or_local()));
        }
        Ok(rx)
    }
}

/// The future of an awaited [`Call`].
///
/// It is `Unpin` and sends its request when first polled: many calls can
/// be in flight at once, awaited where they lie, with no task or
/// allocation of their own (`join_all` gives each future a task past 30).
///
/// # Examples
///
/// ```
/// # use jsonrpc_runtime_core::{Context, ErrorObject, Peer, Router, Transport};
/// # use std::future::IntoFuture as _;
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let (client, server) = Transport::pair(64);
/// # let router = Router::new().request("double", |(n,): (i64,), _: Context| async move {
/// #     Ok::<_, ErrorObject>(n * 2)
/// # });
/// # let _server = Peer::builder().router(router).spawn(server);
/// # let client = Peer::spawn(client);
/// use futures_util::future::{maybe_done, MaybeDone};
/// use std::{pin::Pin, task::Poll};
///
/// let mut calls: [MaybeDone<_>; 8] = std::array::from_fn(|n| {
///     maybe_done(client.call::<i64>("double", (n as i64,)).into_future())
/// });
/// // Each call polled once: all eight are sent before any answer is awaited.
/// std::future::poll_fn(|cx| {
///     for call in &mut calls {
///         let _ = Pin::new(call).poll(cx);
///     }
///     Poll::Ready(())
/// })
/// .await;
/// let mut sum = 0;
/// for call in &mut calls {
///     (&mut *call).await;
///     sum += Pin::new(call).take_output().unwrap().unwrap();
/// }
/// assert_eq!(sum, 56);
/// # }
/// ```
///
/// # Cancel safety
///
/// Dropping it (or its timeout firing) gives up on the call: its table
/// entry is removed and a late answer is dropped. Under a
/// [`CancellationPolicy`](crate::policy::CancellationPolicy) the other side
/// is told; without one it is not, and its handler runs to the end.
#[must_use = "futures do nothing unless polled"]
pub struct CallFuture<'p, R, E> {
    peer: &'p Peer,
    timeout: Option<Duration>,
    state: State<'p, R, E>,
}

enum State<'p, R, E> {
    /// The params did not encode.
    Failed(Option<CallError<E>>),
    /// Encoded; waiting for room in the outbound budget (boxed only when
    /// there is none).
    Room {
        id: Id,
        method: &'p str,
        body: bytes::Bytes,
        wait: Option<Wait<'p>>,
    },
    /// Sent; waiting for the answer.
    Waiting {
        id: Id,
        rx: Receiver<R, E>,
        sleep: Option<Pin<Box<Sleep>>>,
        lent: bool,
    },
    /// Answered; taking back the in-flight permit lent while waiting.
    Reclaim {
        answer: Option<Answer<R, E>>,
        wait: Wait<'p>,
    },
    /// Through the connection's outbound layers.
    #[cfg(feature = "tower")]
    Layered(Pin<Box<dyn Future<Output = super::OutboundResult> + Send>>),
    Done,
}

impl<R, E> fmt::Debug for CallFuture<'_, R, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = match &self.state {
            State::Room { id, .. } | State::Waiting { id, .. } => Some(id),
            _ => None,
        };
        f.debug_struct("CallFuture")
            .field("id", &id)
            .finish_non_exhaustive()
    }
}

// Nothing is ever pinned in place: the timer and the waits are boxed, and
// answers are moved out by value.
impl<R, E> Unpin for CallFuture<'_, R, E> {}

impl<'p, R, E> CallFuture<'p, R, E>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    /// From `Room` (with room) to `Waiting`: the call registered for its
    /// answer, then sent.
    #[inline]
    fn send(&mut self, cx: &mut TaskContext<'_>) -> Result<(), CallError<E>> {
        let peer = self.peer;
        let shared = &*peer.shared;
        let State::Room {
            id, method, body, ..
        } = std::mem::replace(&mut self.state, State::Done)
        else {
            unreachable!("called in the `Room` state");
        };
        let (rx, alone) = shared.register::<R, E>(&id, method)?;
        // The only call waiting (one call at a time, or the first of a
        // burst) goes out from here when the writer is idle: a task wake-up
        // less. The others wait for the writer, which writes them together.
        let sent = if alone {
            shared.send_inline(body, cx)
        } else {
            shared.send_now(body)
        };
        if sent.is_err() {
            shared.pending.remove(&id);
            return Err(CallError::Closed(shared.reason_or_local()));
        }
        // While the answer is awaited, the handler this call is made from
        // (if any) leaves the in-flight cap to others.
        let lent = peer.in_flight.as_ref().is_some_and(|slot| slot.lend());
        let sleep = self.timeout.map(|limit| Box::pin(crate::rt::sleep(limit)));
        self.state = State::Waiting {
            id,
            rx,
            sleep,
            lent,
        };
        Ok(())
    }
}

impl<R, E> Future for CallFuture<'_, R, E>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    type Output = Answer<R, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let peer = this.peer;
        let shared = &*peer.shared;
        loop {
            match &mut this.state {
                State::Failed(error) => {
                    let error = error.take().unwrap_or(CallError::Cancelled);
                    this.state = State::Done;
                    return Poll::Ready(Err(error));
                }
                State::Room { wait, .. } => {
                    if wait.is_none() && !shared.outbox.has_room() {
                        *wait = Some(Box::pin(shared.room()));
                    }
                    if let Some(w) = wait {
                        ready!(w.as_mut().poll(cx));
                    }
                    if let Err(e) = this.send(cx) {
                        return Poll::Ready(Err(e));
                    }
                }
                State::Waiting {
                    id,
                    rx,
                    sleep,
                    lent,
                } => {
                    let answer = ready!(poll_answer(shared, id, rx, cx, |cx| expired(sleep, cx)));
                    if *lent {
                        let slot = peer.in_flight.as_ref();
                        this.state = State::Reclaim {
                            answer: Some(answer),
                            wait: Box::pin(async move {
                                if let Some(slot) = slot {
                                    slot.reclaim().await;
                                }
                            }),
                        };
                    } else {
                        this.state = State::Done;
                        return Poll::Ready(answer);
                    }
                }
                State::Reclaim { answer, wait } => {
                    ready!(wait.as_mut().poll(cx));
                    let answer = answer.take().unwrap_or(Err(CallError::Cancelled));
                    this.state = State::Done;
                    return Poll::Ready(answer);
                }
                #[cfg(feature = "tower")]
                State::Layered(outcome) => {
                    let outcome = ready!(outcome.as_mut().poll(cx));
                    this.state = State::Done;
                    return Poll::Ready(super::typed_outbound(outcome));
                }
                State::Done => panic!("`CallFuture` polled after completion"),
            }
        }
    }
}

impl<R, E> Drop for CallFuture<'_, R, E> {
    fn drop(&mut self) {
        if let State::Waiting { id, .. } = &self.state {
            forget_call(&self.peer.shared, id);
        }
    }
}

/// A request already sent: its [`id`](PendingCall::id), a way to
/// [`cancel`](PendingCall::cancel) it, and its result when awaited. Made by
/// [`Call::start`].
///
/// Unlike an awaited [`Call`], a pending call owns its connection handle, so
/// it can be moved into another task, and a handler that starts one keeps
/// its in-flight permit while it waits.
///
/// # Cancel safety
///
/// Dropping it before its answer gives up on the call, as dropping an
/// awaited call does (see [`CallFuture`]).
#[must_use = "dropping a pending call gives up on it"]
pub struct PendingCall<R, E = Infallible> {
    shared: Arc<Shared>,
    id: Id,
    state: Started<R, E>,
    sleep: Option<Pin<Box<Sleep>>>,
}

enum Started<R, E> {
    Failed(CallError<E>),
    Waiting(Receiver<R, E>),
    Done,
}

impl<R, E> PendingCall<R, E> {
    /// A call registered under `id` (its frame sent, or to be sent, by the
    /// caller), or one that failed before it could be.
    pub(super) fn registered(
        shared: Arc<Shared>,
        id: Id,
        rx: Result<Receiver<R, E>, CallError<E>>,
        timeout: Option<Duration>,
    ) -> Self {
        PendingCall {
            shared,
            id,
            state: match rx {
                Ok(rx) => Started::Waiting(rx),
                Err(error) => Started::Failed(error),
            },
            sleep: timeout.map(|limit| Box::pin(crate::rt::sleep(limit))),
        }
    }
}

impl<R, E> fmt::Debug for PendingCall<R, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PendingCall")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<R, E> PendingCall<R, E> {
    /// The request's id.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// Cancels the call as the config's
    /// [`CancellationPolicy`](crate::policy::CancellationPolicy) says (see
    /// [`Peer::cancel`]): when the policy expects no answer (MCP) the call
    /// ends at once with [`CallError::Cancelled`]; when it does (LSP) the
    /// call ends with the other side's answer.
    ///
    /// # Errors
    ///
    /// [`SendError::NoCancellationPolicy`] without a cancellation policy
    /// (nothing is sent and the call keeps waiting; drop it to stop
    /// waiting), [`SendError::Closed`] when the connection is closed.
    pub fn cancel(&self) -> Result<(), SendError> {
        self.shared.cancel_call(&self.id, None)
    }

    /// Cancels the call, giving the other side a reason where the policy
    /// carries one (MCP's `reason`).
    ///
    /// # Errors
    ///
    /// As [`cancel`](PendingCall::cancel).
    pub fn cancel_because(&self, reason: &str) -> Result<(), SendError> {
        self.shared.cancel_call(&self.id, Some(reason))
    }
}

// As for `CallFuture`: nothing is pinned in place.
impl<R, E> Unpin for PendingCall<R, E> {}

impl<R, E> Future for PendingCall<R, E>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    type Output = Answer<R, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let answer = match &mut this.state {
            Started::Failed(_) => match std::mem::replace(&mut this.state, Started::Done) {
                Started::Failed(error) => Err(error),
                _ => unreachable!("matched above"),
            },
            Started::Waiting(rx) => {
                let sleep = &mut this.sleep;
                ready!(poll_answer(&this.shared, &this.id, rx, cx, |cx| expired(
                    sleep, cx
                )))
            }
            Started::Done => panic!("`PendingCall` polled after completion"),
        };
        this.state = Started::Done;
        Poll::Ready(answer)
    }
}

impl<R, E> Drop for PendingCall<R, E> {
    fn drop(&mut self) {
        if let Started::Waiting(_) = self.state {
            forget_call(&self.shared, &self.id);
        }
    }
}

/// Whether a call's timer (if it has one) has fired.
fn expired(sleep: &mut Option<Pin<Box<Sleep>>>, cx: &mut TaskContext<'_>) -> bool {
    sleep
        .as_mut()
        .is_some_and(|sleep| sleep.as_mut().poll(cx).is_ready())
}
