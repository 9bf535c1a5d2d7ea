//! Outbound calls: ids, options, the call methods, and cancellation.

use std::convert::Infallible;
use std::future::Future as _;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use bytes::Bytes;

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::pending::{Receiver, RegisterError, TypedSlot};
use super::{Call, CallError, Outcome, Peer, ProgressCall, SendError, Shared};
use crate::config::{IdKind, IdStrategy};

use crate::id::Id;
use crate::message::Extras;
use crate::message::RpcError;
use crate::policy::ProgressPolicy;

/// Makes outbound request ids as the config's [`IdStrategy`] says.
pub(crate) struct IdSource {
    kind: IdKind,
    next: AtomicU64,
    next_i32: AtomicU32,
}

pub(crate) fn ids_from(strategy: &IdStrategy) -> IdSource {
    IdSource {
        kind: strategy.0.clone(),
        next: AtomicU64::new(1),
        next_i32: AtomicU32::new(1),
    }
}

impl IdSource {
    pub(crate) fn next(&self) -> Id {
        match &self.kind {
            IdKind::Sequential => Id::from(self.next.fetch_add(1, Ordering::Relaxed)),
            IdKind::SequentialI32 => {
                let step = |current: u32| {
                    Some(if current >= i32::MAX as u32 {
                        1
                    } else {
                        current + 1
                    })
                };
                let current = self
                    .next_i32
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, step)
                    .unwrap_or(1);
                Id::from(current)
            }
            IdKind::Custom(generate) => generate(),
        }
    }
}

impl Shared {
    /// A request's frame: the one place this side builds an outbound
    /// request. Its extras are the call's own when it has them, else the
    /// config's for `id`.
    #[inline]
    pub(crate) fn request_frame<P: Serialize + ?Sized>(
        &self,
        id: &Id,
        method: &str,
        params: &P,
        extras: Option<&Extras>,
    ) -> Result<Bytes, serde_json::Error> {
        let extras = self.config.request_extras(id, extras);
        crate::message::call_body(self.dialect, Some(id), method, Some(params), &extras)
    }

    /// A notification's frame (with `id`, a request nothing waits for),
    /// with exactly `extras`: the one place this side builds every other
    /// outbound message.
    #[inline]
    pub(crate) fn message_frame<P: Serialize + ?Sized>(
        &self,
        id: Option<&Id>,
        method: &str,
        params: &P,
        extras: &Extras,
    ) -> Result<Bytes, serde_json::Error> {
        crate::message::call_body(self.dialect, id, method, Some(params), extras)
    }

    /// Registers a call waiting for the answer to `id` (before its frame is
    /// written): its receiver, and whether it is the only call waiting.
    pub(super) fn register<R, E>(
        &self,
        id: &Id,
        method: &str,
    ) -> Result<(Receiver<R, E>, bool), CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
    {
        let (slot, rx) = TypedSlot::<R, E>::pair();
        let span = crate::trace::call_span(self.connection, method, id);
        match self.pending.register(id.clone(), slot, span) {
            Ok(alone) => Ok((rx, alone)),
            Err(RegisterError::Closed(reason)) => Err(CallError::Closed(reason)),
            Err(RegisterError::Duplicate) => Err(CallError::DuplicateId(id.clone())),
        }
    }

    /// Sends the policy's cancellation for an outbound call; without an
    /// answer to wait for, fails the call at once.
    pub(crate) fn cancel_call(&self, id: &Id, reason: Option<&str>) -> Result<(), SendError> {
        let Some(policy) = &self.config.cancellation else {
            return Err(SendError::NoCancellationPolicy);
        };
        let params = policy.params(id, reason);
        let body = self
            .message_frame(None, &policy.method, &params, &Extras::new())
            .map_err(SendError::InvalidParams)?;
        // Not held to the budget: one small frame per call given up on.
        let sent = self.send_now(body);
        if policy.answer.is_none() {
            if let Some(waiting) = self.pending.take(id) {
                waiting.span.ended("cancelled");
                waiting.slot.complete(Outcome::Cancelled);
            }
            self.end_call_progress(id);
        }
        sent
    }
}

/// Options for one outbound call (see [`Peer::call_with`]).
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::peer::CallOptions;
///
/// let mut extras = jsonrpc_runtime::message::Extras::new();
/// extras.insert("sessionId".into(), "abc123".into());
/// let options = CallOptions::default().timeout(Duration::from_secs(5)).extras(extras);
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    pub(super) timeout: Option<Option<Duration>>,
    pub(super) extras: Option<Extras>,
}

impl CallOptions {
    /// Fails the call with [`CallError::TimedOut`] after `timeout`,
    /// overriding the config's request timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(Some(timeout));
        self
    }

    /// Waits for the answer as long as it takes, overriding the config's
    /// request timeout.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Top-level members to add to the request envelope (a session id, a
    /// trace token), instead of the config's
    /// [`extras`](crate::Config::extras).
    pub fn extras(mut self, extras: Extras) -> Self {
        self.extras = Some(extras);
        self
    }
}

/// The waiting core of the three call futures ([`CallFuture`],
/// [`PendingCall`], [`ProgressCall::result`]): the answer once it has come
/// (`Closed` when the connection closed first), or `TimedOut`, the call
/// given up on, once `expired` says its time is up.
///
/// [`CallFuture`]: super::CallFuture
/// [`PendingCall`]: super::PendingCall
/// [`ProgressCall::result`]: super::ProgressCall::result
pub(super) fn poll_answer<R, E>(
    shared: &Shared,
    id: &Id,
    rx: &mut Receiver<R, E>,
    cx: &mut TaskContext<'_>,
    expired: impl FnOnce(&mut TaskContext<'_>) -> bool,
) -> Poll<Result<R, CallError<E>>> {
    if let Poll::Ready(answer) = Pin::new(rx).poll(cx) {
        shared.wake_idle();
        return Poll::Ready(
            answer.unwrap_or_else(|_| Err(CallError::Closed(shared.reason_or_local()))),
        );
    }
    if !expired(cx) {
        return Poll::Pending;
    }
    forget_call(shared, id);
    Poll::Ready(Err(CallError::TimedOut))
}

/// Gives up on a call dropped (or timed out) before its answer: removes its
/// table entry and, under a cancellation policy, tells the other side.
pub(crate) fn forget_call(shared: &Shared, id: &Id) {
    if let Some(waiting) = shared.pending.take(id) {
        waiting
            .span
            .ended("given up (timed out, or the caller stopped waiting)");
        shared.end_call_progress(id);
        if shared.done.is_cancelled() {
            return;
        }
        if shared.config.cancellation.is_none() {
            return tracing::debug!(
                %id,
                "gave up on a call; with no cancellation policy the other side is not told"
            );
        }
        let _ = shared.cancel_call(id, Some("the caller stopped waiting"));
    }
}

impl Peer {
    /// Calls `method` with `params`: returns a [`Call`] to `.await` for the
    /// typed result, after setting a [`timeout`](Call::timeout) or
    /// [`extras`](Call::extras) if need be, or to [`start`](Call::start) for
    /// a [`PendingCall`](crate::peer::PendingCall) with the request's id that can be cancelled.
    ///
    /// `params` must serialize to a JSON object or array, or to `null` (then
    /// no params are sent): `()`, a tuple, a `Vec`, a struct, a map. Any
    /// error answer comes back as [`CallError::Rpc`]; use
    /// [`Call::errors`] to decode domain errors.
    ///
    /// # Examples
    ///
    /// See [`Peer`] and [`Call`].
    ///
    /// # Errors
    ///
    /// Every way a call can fail is a [`CallError`] variant: an error
    /// answer, the connection closing, the timeout, params that do not
    /// encode, a result that does not decode.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future (or a timeout firing) gives up on the call: its
    /// table entry is removed and a late answer is dropped. Under a
    /// [`CancellationPolicy`](crate::policy::CancellationPolicy) the other
    /// side is told; without one it is not, and its handler runs to the end
    /// (see [`cancel`](Peer::cancel)).
    pub fn call<'a, R>(
        &'a self,
        method: &'a str,
        params: impl Serialize + 'a,
    ) -> Call<'a, R, Infallible, impl Serialize + 'a> {
        Call::new(self, method, params)
    }

    /// Calls `method` with per-call options, decoding error answers whose
    /// code is one of `E`'s as [`CallError::Domain`].
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{CallError, ErrorObject, Peer, Router, Transport, peer::CallOptions};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, b) = Transport::pair(8);
    /// let router = Router::new().request("fail", |(): (), _| async {
    ///     Err::<(), _>(ErrorObject::new(-32010, "Negative input"))
    /// });
    /// let _server = Peer::builder().router(router).spawn(b);
    /// let client = Peer::spawn(a);
    /// let err = client.call_with::<(), ErrorObject>("fail", (), CallOptions::default()).await.unwrap_err();
    /// assert!(matches!(err, CallError::Domain(e) if e.code.0 == -32010));
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`call`](Peer::call).
    ///
    /// # Cancel safety
    ///
    /// As [`call`](Peer::call).
    pub async fn call_with<R, E>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
    ) -> Result<R, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
    {
        self.call(method, params)
            .options(options)
            .errors::<E>()
            .await
    }

    /// Cancels an outbound call that is still waiting, as the config's
    /// [`CancellationPolicy`](crate::policy::CancellationPolicy) says: the
    /// cancellation notification is sent, and when the policy expects no
    /// answer (MCP) the call fails at once with [`CallError::Cancelled`];
    /// when it does (LSP) the call ends with the other side's answer.
    ///
    /// Dropping a call's future (or its timeout firing) cancels it the same
    /// way, so `tokio::time::timeout(d, peer.call(..))` tells the other side.
    ///
    /// # Errors
    ///
    /// [`SendError::NoCancellationPolicy`] when the config has no
    /// cancellation policy: nothing can tell the other side, so nothing is
    /// sent and the call keeps waiting (drop its future to stop waiting;
    /// the other side's handler still runs to the end).
    /// [`SendError::Closed`] when the connection is closed.
    pub fn cancel(&self, id: &Id, reason: Option<&str>) -> Result<(), SendError> {
        self.shared.cancel_call(id, reason)
    }

    /// Calls `method` with a fresh progress token attached where the config's
    /// [`ProgressPolicy`] says requests carry it, and
    /// returns at once with a [`ProgressCall`]: read the progress values as
    /// they come, then await the result. Without a policy the progress stream
    /// is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::policy::ProgressPolicy;
    /// use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let config = Config::default().progress(ProgressPolicy::lsp());
    /// let router = Router::new().request("count", |p: serde_json::Value, ctx: Context| async move {
    ///     for step in 1..=3 {
    ///         ctx.progress(step).unwrap();
    ///     }
    ///     Ok::<_, ErrorObject>("done")
    /// });
    /// let (a, b) = Transport::pair(16);
    /// let _server = Peer::builder().config(config.clone()).router(router).spawn(b);
    /// let client = Peer::builder().config(config).spawn(a);
    ///
    /// let mut call = client
    ///     .call_with_progress::<String, ErrorObject, u32>("count", serde_json::json!({}), Default::default())
    ///     .unwrap();
    /// let mut seen = Vec::new();
    /// while let Some(step) = call.next_progress().await {
    ///     seen.push(step.unwrap());
    /// }
    /// assert_eq!(seen, [1, 2, 3]);
    /// assert_eq!(call.result().await.unwrap(), "done");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`CallError::InvalidParams`] when the params do not encode to an
    /// object (a token needs somewhere to go) and [`CallError::Closed`] when
    /// the connection is closed; every later failure comes from
    /// [`ProgressCall::result`].
    pub fn call_with_progress<R, E, P>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
    ) -> Result<ProgressCall<R, E, P>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: DeserializeOwned,
    {
        self.start_progress_call(method, params, options, |p| Some(&p.token_path))
    }

    /// Calls `method` asking for partial results (LSP's
    /// `partialResultToken`), and returns a [`ProgressCall`] whose progress
    /// values are the partial results; the final answer comes from
    /// [`ProgressCall::result`]. Without a policy that has partial results,
    /// this is a plain call with an empty progress stream.
    ///
    /// # Errors
    ///
    /// As [`call_with_progress`](Peer::call_with_progress).
    pub fn call_partial_results<R, E, P>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
    ) -> Result<ProgressCall<R, E, P>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: DeserializeOwned,
    {
        self.start_progress_call(method, params, options, |p| p.partial_path.as_deref())
    }

    fn start_progress_call<R, E, P>(
        &self,
        method: &str,
        params: impl Serialize,
        options: CallOptions,
        token_path: fn(&ProgressPolicy) -> Option<&[std::borrow::Cow<'static, str>]>,
    ) -> Result<ProgressCall<R, E, P>, CallError<E>>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: DeserializeOwned,
    {
        let shared = &self.shared;
        let id = shared.ids.next();
        let mut params = serde_json::to_value(&params).map_err(CallError::InvalidParams)?;
        let token_path = shared.config.progress.as_ref().and_then(token_path);
        let token = match token_path {
            Some(path) => {
                let token = shared.next_progress_token();
                ProgressPolicy::attach(path, &mut params, &token)
                    .map_err(|e| CallError::InvalidParams(serde::ser::Error::custom(e.message)))?;
                Some(token)
            }
            None => None,
        };
        let body = shared
            .request_frame(&id, method, &params, options.extras.as_ref())
            .map_err(CallError::InvalidParams)?;
        let (rx, _) = shared.register::<R, E>(&id, method)?;
        // Before the frame goes out: its answer must find the stream.
        shared.progress_call_made();
        let (progress, activity) = shared
            .progress_subscriptions()
            .subscribe(token.clone(), id.clone());
        if shared.send_now(body).is_err() {
            shared.pending.remove(&id);
            shared.end_call_progress(&id);
            return Err(CallError::Closed(shared.reason_or_local()));
        }
        let timeout = options.timeout.unwrap_or_else(|| self.default_timeout());
        Ok(ProgressCall::new(
            shared.clone(),
            id,
            token,
            rx,
            progress,
            activity,
            timeout,
            shared.config.progress_resets_timeout,
        ))
    }

    /// Sends a notification: fire and forget.
    ///
    /// Waits only while the connection's outbound budget
    /// ([`Config::outbound_budget`](crate::Config::outbound_budget)) is spent,
    /// that is while the other side is not reading: a flood of notifications
    /// slows to the pace the other side reads at instead of growing memory.
    /// Once this returns, the frame is queued and is written even if this
    /// handle is dropped right after.
    ///
    /// # Errors
    ///
    /// [`SendError::InvalidParams`] when `params` do not encode to an object,
    /// an array or `null`; [`SendError::Closed`] when the connection is
    /// closed.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future before it completes sends nothing.
    pub async fn notify(&self, method: &str, params: impl Serialize) -> Result<(), SendError> {
        let extras = &self.shared.config.extras;
        self.notify_with(method, params, extras).await
    }

    /// Sends a notification with extra top-level members.
    ///
    /// # Errors
    ///
    /// As [`notify`](Peer::notify), and [`SendError::InvalidParams`] when
    /// `extras` names a member the envelope owns (`jsonrpc`, `id`, `method`,
    /// `params`, `result`, `error`).
    ///
    /// # Cancel safety
    ///
    /// As [`notify`](Peer::notify).
    pub async fn notify_with(
        &self,
        method: &str,
        params: impl Serialize,
        extras: &Extras,
    ) -> Result<(), SendError> {
        self.send_message(None, method, params, extras).await
    }

    /// Sends a request with an id of the caller's choosing, without waiting
    /// for its answer: no table entry is made, so the answer, when it
    /// comes, is logged and dropped. For forwarding a request whose id
    /// belongs to a third party, or ids dictated by a protocol.
    ///
    /// # Errors
    ///
    /// As [`notify_with`](Peer::notify_with).
    ///
    /// # Cancel safety
    ///
    /// As [`notify`](Peer::notify).
    pub async fn send_unmatched(
        &self,
        id: Id,
        method: &str,
        params: impl Serialize,
        extras: &Extras,
    ) -> Result<(), SendError> {
        self.send_message(Some(&id), method, params, extras).await
    }

    /// Sends a message nothing waits for an answer to, once the outbound
    /// budget has room: a notification, or a request with `id`.
    async fn send_message(
        &self,
        id: Option<&Id>,
        method: &str,
        params: impl Serialize,
        extras: &Extras,
    ) -> Result<(), SendError> {
        let body = self
            .shared
            .message_frame(id, method, &params, extras)
            .map_err(SendError::InvalidParams)?;
        // Not held across the wait for room.
        drop(params);
        self.shared.send(body).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_i32_ids_wrap_to_one_after_i32_max() {
        let ids = ids_from(&IdStrategy::sequential_i32());
        ids.next_i32.store(i32::MAX as u32 - 1, Ordering::Relaxed);
        let seen: Vec<Id> = (0..3).map(|_| ids.next()).collect();
        assert_eq!(
            seen,
            [Id::from(i32::MAX - 1), Id::from(i32::MAX), Id::from(1)]
        );
    }

    #[test]
    fn sequential_ids_start_at_one() {
        let ids = ids_from(&IdStrategy::default());
        assert_eq!(ids.next(), Id::from(1));
        assert_eq!(ids.next(), Id::from(2));
    }
}
