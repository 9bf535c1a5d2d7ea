//! Progress reports for outbound calls, and the calls that receive them.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

use super::call::{forget_call, poll_answer};
use super::pending::Receiver;
use super::Shared;
use super::{CallError, SendError};
use crate::id::Id;

/// Who waits for the progress of which token.
#[derive(Default)]
pub(crate) struct ProgressSubscriptions {
    by_token: HashMap<Id, Subscription>,
    token_of_call: HashMap<Id, Id>,
}

struct Subscription {
    reports: Arc<Reports>,
    activity: Arc<Notify>,
    /// The last value of the policy's increasing member, if it has one.
    last: Option<f64>,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.reports.end();
    }
}

/// The reports of one call not read yet: at most
/// [`ProgressCall::MAX_UNREAD`]; past that the oldest is dropped.
#[derive(Debug, Default)]
pub(crate) struct Reports {
    state: Mutex<ReportState>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct ReportState {
    queue: VecDeque<Value>,
    ended: bool,
}

impl Reports {
    fn lock(&self) -> std::sync::MutexGuard<'_, ReportState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, value: Value) {
        let mut state = self.lock();
        if state.queue.len() >= ProgressCall::<(), ()>::MAX_UNREAD {
            state.queue.pop_front();
        }
        state.queue.push_back(value);
        drop(state);
        self.ready.notify_one();
    }

    /// No report comes after this one.
    pub(crate) fn end(&self) {
        self.lock().ended = true;
        self.ready.notify_one();
    }

    async fn next(&self) -> Option<Value> {
        loop {
            let ready = self.ready.notified();
            {
                let mut state = self.lock();
                if let Some(value) = state.queue.pop_front() {
                    return Some(value);
                }
                if state.ended {
                    return None;
                }
            }
            ready.await;
        }
    }
}

impl ProgressSubscriptions {
    /// Registers `call`'s progress stream under `token` (no token: a stream
    /// that only ends).
    pub(crate) fn subscribe(&mut self, token: Option<Id>, call: Id) -> (Arc<Reports>, Arc<Notify>) {
        let reports = Arc::new(Reports::default());
        let activity = Arc::new(Notify::new());
        match token {
            Some(token) => {
                self.by_token.insert(
                    token.clone(),
                    Subscription {
                        reports: reports.clone(),
                        activity: activity.clone(),
                        last: None,
                    },
                );
                self.token_of_call.insert(call, token);
            }
            None => reports.end(),
        }
        (reports, activity)
    }

    /// Hands a report to whoever waits for `token`; false if nobody does.
    /// Under a policy whose `increasing` member must grow, a report that
    /// does not make it grow is dropped (and logged).
    pub(crate) fn deliver(&mut self, token: &Id, value: Value, increasing: Option<&str>) -> bool {
        let Some(sub) = self.by_token.get_mut(token) else {
            return false;
        };
        if let Some(member) = increasing {
            let now = value.get(member).and_then(Value::as_f64);
            match (now, sub.last) {
                (Some(now), Some(last)) if now <= last => {
                    tracing::debug!(%token, member, now, last, "dropping a progress report that does not increase");
                    return true;
                }
                (None, _) => {
                    tracing::debug!(%token, member, "dropping a progress report without its increasing member");
                    return true;
                }
                (Some(now), _) => sub.last = Some(now),
            }
        }
        sub.reports.push(value);
        sub.activity.notify_one();
        true
    }

    /// Ends `call`'s progress stream: its answer is in, so no report may
    /// follow.
    pub(crate) fn end_call(&mut self, call: &Id) {
        // Most calls ask for no progress: no hashing for them.
        if self.token_of_call.is_empty() {
            return;
        }
        if let Some(token) = self.token_of_call.remove(call) {
            self.by_token.remove(&token);
        }
    }

    /// Registers a stream for a token the other side made; false if someone
    /// already waits for it.
    fn subscribe_token(&mut self, token: &Id) -> Option<Arc<Reports>> {
        if self.by_token.contains_key(token) {
            return None;
        }
        let reports = Arc::new(Reports::default());
        let subscription = Subscription {
            reports: reports.clone(),
            activity: Arc::new(Notify::new()),
            last: None,
        };
        self.by_token.insert(token.clone(), subscription);
        Some(reports)
    }

    fn unsubscribe_token(&mut self, token: &Id) {
        self.by_token.remove(token);
    }

    /// The connection is over: every stream ends.
    pub(crate) fn end_all(&mut self) {
        self.by_token.clear();
        self.token_of_call.clear();
    }
}

/// Progress reports on a token the other side created (LSP's
/// `window/workDoneProgress/create` from a server, say), as the connection's
/// [`ProgressPolicy`](crate::policy::ProgressPolicy) spells them. Made by
/// [`Peer::subscribe_progress`](crate::Peer::subscribe_progress); dropping it
/// (or [`unsubscribe`](Self::unsubscribe)) stops the delivery, and later
/// reports on the token are handled as unknown notifications.
pub struct ProgressSubscription<P = Value> {
    shared: Arc<Shared>,
    token: Id,
    reports: Arc<Reports>,
    _values: std::marker::PhantomData<fn() -> P>,
}

impl<P> fmt::Debug for ProgressSubscription<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressSubscription")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl<P: serde::de::DeserializeOwned> ProgressSubscription<P> {
    /// The token.
    pub fn token(&self) -> &Id {
        &self.token
    }

    /// The next report, decoded as `P`, in the order sent; `None` once the
    /// connection has ended. At most [`ProgressCall::MAX_UNREAD`] wait
    /// unread; past that the oldest is dropped.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a report is only taken when it is returned.
    pub async fn next(&mut self) -> Option<Result<P, serde_json::Error>> {
        self.reports.next().await.map(serde_json::from_value)
    }

    /// Stops the delivery now.
    pub fn unsubscribe(self) {}
}

impl<P> Drop for ProgressSubscription<P> {
    fn drop(&mut self) {
        self.shared
            .progress_subscriptions()
            .unsubscribe_token(&self.token);
    }
}

impl super::Peer {
    /// Receives the progress reports the other side sends on `token`, a
    /// token it created itself (LSP's `window/workDoneProgress/create`
    /// request, which a client answers and then sees `$/progress` on), typed
    /// as `P`.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::policy::ProgressPolicy;
    /// use jsonrpc_runtime::{Config, Id, Peer, Transport};
    /// use serde_json::{json, Value};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let config = Config::default().progress(ProgressPolicy::lsp());
    /// let (a, b) = Transport::pair(8);
    /// let server = Peer::builder().config(config.clone()).spawn(b);
    /// let client = Peer::builder().config(config).spawn(a);
    ///
    /// let mut reports = client.subscribe_progress::<Value>(Id::from("indexing")).unwrap();
    /// let report = json!({"token": "indexing", "value": {"kind": "begin", "title": "Indexing"}});
    /// server.notify("$/progress", report).await.unwrap();
    /// assert_eq!(reports.next().await.unwrap().unwrap()["kind"], "begin");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] when the connection is closed, and
    /// [`SendError::InvalidParams`] when the token is already subscribed to
    /// (by another subscription or a call of this side's).
    pub fn subscribe_progress<P>(&self, token: Id) -> Result<ProgressSubscription<P>, SendError> {
        let shared = self.shared();
        if shared.done.is_cancelled() {
            return Err(SendError::Closed(shared.reason_or_local()));
        }
        let Some(reports) = shared.progress_subscriptions().subscribe_token(&token) else {
            return Err(SendError::InvalidParams(serde::ser::Error::custom(
                format!("progress on the token {token} is already received elsewhere"),
            )));
        };
        Ok(ProgressSubscription {
            shared: shared.clone(),
            token,
            reports,
            _values: std::marker::PhantomData,
        })
    }
}

/// An outbound call with a progress token: progress values first, then the
/// result. See [`Peer::call_with_progress`](crate::Peer::call_with_progress).
///
/// Progress reports that arrive before the answer are all delivered by
/// [`next_progress`](ProgressCall::next_progress), which returns `None` once
/// the answer is in. Each report is decoded as `P` (by default any JSON
/// value; the client `#[rpc]` generates for a method declared with
/// `progress = T` uses `T`). Reports are kept until read, at most
/// [`MAX_UNREAD`](Self::MAX_UNREAD) of them: when the caller falls further
/// behind, the oldest unread report is dropped (progress is a state, so the
/// newest reports matter). Dropping the call before its answer cancels it as
/// the cancellation policy says.
pub struct ProgressCall<R, E, P = Value> {
    shared: Arc<Shared>,
    id: Id,
    token: Option<Id>,
    answer: Option<Receiver<R, E>>,
    progress: Arc<Reports>,
    activity: Arc<Notify>,
    timeout: Option<Duration>,
    progress_resets_timeout: bool,
    _progress: std::marker::PhantomData<fn() -> P>,
}

impl<R, E, P> fmt::Debug for ProgressCall<R, E, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressCall")
            .field("id", &self.id)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl<R, E, P> ProgressCall<R, E, P> {
    /// How many progress reports wait unread before the oldest is dropped.
    pub const MAX_UNREAD: usize = 256;
}

impl<R, E, P: serde::de::DeserializeOwned> ProgressCall<R, E, P> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        shared: Arc<Shared>,
        id: Id,
        token: Option<Id>,
        answer: Receiver<R, E>,
        progress: Arc<Reports>,
        activity: Arc<Notify>,
        timeout: Option<Duration>,
        progress_resets_timeout: bool,
    ) -> Self {
        ProgressCall {
            shared,
            id,
            token,
            answer: Some(answer),
            progress,
            activity,
            timeout,
            progress_resets_timeout,
            _progress: std::marker::PhantomData,
        }
    }

    /// The request's id.
    pub fn id(&self) -> &Id {
        &self.id
    }

    /// The progress token sent with the request, if a policy put one there.
    pub fn token(&self) -> Option<&Id> {
        self.token.as_ref()
    }

    /// The next progress value, in the order sent; `None` once the answer
    /// has arrived and every earlier report was read. A report that does not
    /// decode as `P` is returned as the decoding error (with `P` the default
    /// `serde_json::Value`, that never happens).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a value is only taken when it is returned.
    pub async fn next_progress(&mut self) -> Option<Result<P, serde_json::Error>> {
        self.progress.next().await.map(serde_json::from_value)
    }

    /// Cancels the call (see [`Peer::cancel`](crate::Peer::cancel)).
    ///
    /// # Errors
    ///
    /// As [`Peer::cancel`](crate::Peer::cancel):
    /// [`SendError::NoCancellationPolicy`] without a cancellation policy,
    /// [`SendError::Closed`] when the connection is closed.
    pub fn cancel(&self, reason: Option<&str>) -> Result<(), SendError> {
        self.shared.cancel_call(&self.id, reason)
    }

    /// Waits for the answer. Progress values not read yet are dropped.
    ///
    /// # Errors
    ///
    /// As [`Peer::call`](crate::Peer::call).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future cancels the call.
    pub async fn result(mut self) -> Result<R, CallError<E>> {
        let Some(mut answer) = self.answer.take() else {
            return Err(CallError::Cancelled);
        };
        let (shared, id) = (&*self.shared, &self.id);
        let Some(limit) = self.timeout else {
            return std::future::poll_fn(|cx| poll_answer(shared, id, &mut answer, cx, |_| false))
                .await;
        };
        let mut sleep = Box::pin(crate::rt::sleep(limit));
        loop {
            // A progress report starts the time over, when the config says so.
            let activity = self.activity.notified();
            tokio::select! {
                answer = std::future::poll_fn(|cx| {
                    poll_answer(shared, id, &mut answer, cx, |cx| sleep.as_mut().poll(cx).is_ready())
                }) => return answer,
                _ = activity, if self.progress_resets_timeout => {
                    sleep.as_mut().reset(crate::rt::Instant::now() + limit);
                }
            }
        }
    }
}

impl<R, E, P> Drop for ProgressCall<R, E, P> {
    fn drop(&mut self) {
        if self.answer.is_some() {
            forget_call(&self.shared, &self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn unread_reports_keep_the_newest_and_end_after_the_last() {
        let mut subscriptions = ProgressSubscriptions::default();
        let token = Id::from("t");
        let (reports, _activity) = subscriptions.subscribe(Some(token.clone()), Id::from(1));
        let total = ProgressCall::<(), ()>::MAX_UNREAD + 10;
        for n in 0..total {
            assert!(subscriptions.deliver(&token, Value::from(n), None));
        }
        subscriptions.end_call(&Id::from(1));
        let mut seen = Vec::new();
        while let Some(value) = reports.next().await {
            seen.push(value.as_u64().unwrap() as usize);
        }
        let expected: Vec<usize> = (10..total).collect();
        assert_eq!(
            seen, expected,
            "the oldest ten were dropped, in order otherwise"
        );
        assert!(
            !subscriptions.deliver(&token, Value::from(0), None),
            "nobody waits any more"
        );
    }
}
