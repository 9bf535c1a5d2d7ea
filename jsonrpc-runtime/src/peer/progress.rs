//! Progress reports for outbound calls, and the calls that receive them.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, Notify};

use super::{forget_call, Shared};
use crate::error::{CallError, CloseReason, SendError};
use crate::id::Id;

/// Who waits for the progress of which token.
#[derive(Default)]
pub(crate) struct ProgressSubscriptions {
    by_token: HashMap<Id, Subscription>,
    token_of_call: HashMap<Id, Id>,
}

struct Subscription {
    tx: mpsc::UnboundedSender<Value>,
    activity: Arc<Notify>,
}

impl ProgressSubscriptions {
    /// Registers `call`'s progress stream under `token` (no token: a stream
    /// that only ends).
    pub(crate) fn subscribe(
        &mut self,
        token: Option<Id>,
        call: Id,
    ) -> (mpsc::UnboundedReceiver<Value>, Arc<Notify>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let activity = Arc::new(Notify::new());
        if let Some(token) = token {
            self.by_token.insert(
                token.clone(),
                Subscription {
                    tx,
                    activity: activity.clone(),
                },
            );
            self.token_of_call.insert(call, token);
        }
        (rx, activity)
    }

    /// Hands a report to whoever waits for `token`; false if nobody does.
    pub(crate) fn deliver(&self, token: &Id, value: Value) -> bool {
        match self.by_token.get(token) {
            Some(sub) => {
                let _ = sub.tx.send(value);
                sub.activity.notify_one();
                true
            }
            None => false,
        }
    }

    /// Ends `call`'s progress stream: its answer is in, so no report may
    /// follow.
    pub(crate) fn end_call(&mut self, call: &Id) {
        if let Some(token) = self.token_of_call.remove(call) {
            self.by_token.remove(&token);
        }
    }
}

/// An outbound call with a progress token: progress values first, then the
/// result. See [`Peer::call_with_progress`](crate::Peer::call_with_progress).
///
/// Progress reports that arrive before the answer are all delivered by
/// [`next_progress`](ProgressCall::next_progress), which returns `None` once
/// the answer is in. Each report is decoded as `P` (by default any JSON
/// value; the client `#[rpc]` generates for a method declared with
/// `progress = T` uses `T`). Dropping the call before its answer cancels it
/// as the cancellation policy says.
pub struct ProgressCall<R, E, P = Value> {
    shared: Arc<Shared>,
    id: Id,
    token: Option<Id>,
    answer: Option<oneshot::Receiver<Result<R, CallError<E>>>>,
    progress: mpsc::UnboundedReceiver<Value>,
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

impl<R, E, P: serde::de::DeserializeOwned> ProgressCall<R, E, P> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        shared: Arc<Shared>,
        id: Id,
        token: Option<Id>,
        answer: oneshot::Receiver<Result<R, CallError<E>>>,
        progress: mpsc::UnboundedReceiver<Value>,
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
        self.progress.recv().await.map(serde_json::from_value)
    }

    /// Cancels the call (see [`Peer::cancel`](crate::Peer::cancel)).
    ///
    /// # Errors
    ///
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
        let outcome = match self.timeout {
            None => (&mut answer).await,
            Some(limit) => loop {
                tokio::select! {
                    outcome = &mut answer => break outcome,
                    _ = self.activity.notified(), if self.progress_resets_timeout => continue,
                    _ = tokio::time::sleep(limit) => {
                        forget_call(&self.shared, &self.id);
                        return Err(CallError::TimedOut);
                    }
                }
            },
        };
        outcome.unwrap_or_else(|_| {
            Err(CallError::Closed(
                self.shared
                    .reason
                    .get()
                    .cloned()
                    .unwrap_or(CloseReason::Local),
            ))
        })
    }
}

impl<R, E, P> Drop for ProgressCall<R, E, P> {
    fn drop(&mut self) {
        if self.answer.is_some() {
            forget_call(&self.shared, &self.id);
        }
    }
}

/// The handler side: where `Context::progress` sends reports for one
/// inbound request.
#[derive(Debug)]
pub(crate) struct ProgressSink {
    pub(crate) work: Option<Id>,
    pub(crate) partial: Option<Id>,
    state: std::sync::Mutex<SinkState>,
}

#[derive(Debug, Default)]
struct SinkState {
    /// Set just before the answer is queued: later reports are dropped, so
    /// none can follow the answer.
    finished: bool,
    last: Option<f64>,
}

impl ProgressSink {
    pub(crate) fn new(work: Option<Id>, partial: Option<Id>) -> Self {
        ProgressSink {
            work,
            partial,
            state: std::sync::Mutex::new(SinkState::default()),
        }
    }

    /// Sends one report on `token` (the work-done or the partial-result one).
    pub(crate) fn send(
        &self,
        shared: &Shared,
        partial: bool,
        value: Value,
    ) -> Result<(), SendError> {
        let token = if partial { &self.partial } else { &self.work };
        let (Some(policy), Some(token)) = (&shared.config.progress, token) else {
            return Ok(());
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.finished {
            return Ok(());
        }
        if let (Some(member), false) = (&policy.increasing, partial) {
            let Some(now) = value.get(&**member).and_then(Value::as_f64) else {
                return Err(SendError::InvalidParams(serde::ser::Error::custom(
                    format!("a progress value needs a numeric `{member}` member"),
                )));
            };
            if state.last.is_some_and(|last| now <= last) {
                return Err(SendError::InvalidParams(serde::ser::Error::custom(
                    format!(
                        "progress must increase: `{member}` went from {} to {now}",
                        state.last.unwrap_or_default()
                    ),
                )));
            }
            state.last = Some(now);
        }
        let params = policy
            .params(token, value)
            .map_err(|e| SendError::InvalidParams(serde::ser::Error::custom(e.message)))?;
        let body = crate::message::call_body(
            shared.dialect,
            None,
            &policy.method,
            Some(&params),
            &crate::message::Extras::new(),
        )
        .map_err(SendError::InvalidParams)?;
        // Queued under the lock, so `finish` orders the answer after it.
        shared.send_frame(body)
    }

    pub(crate) fn finish(&self) {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .finished = true;
    }
}
