//! Running admitted work: request tasks (their turn, the in-flight cap,
//! their one answer) and the notification worker.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch, Semaphore};
use tokio_util::sync::CancellationToken;

use crate::id::Id;
use crate::message;
use crate::message::{ErrorCode, ErrorObject};
use crate::peer::{InFlightSlot, Shared};
use crate::policy::{Gate, LifecycleGate};
use crate::router::{
    catch_panic, panic_answer, Admission, Answer, BoxFuture, Ending, Held, Job, Pace, Runner, Timed,
};

/// The pipeline's state for one connection, shared by the reader and the
/// request tasks.
pub(super) struct Connection {
    pub(super) shared: Arc<Shared>,
    /// The user's gate, built for this connection.
    pub(super) gate: Option<Box<dyn Gate>>,
    /// The session lifecycle, if the config has one.
    pub(super) lifecycle: Option<LifecycleGate>,
    pub(super) in_flight: Option<Arc<Semaphore>>,
    /// Inbound requests the other side can cancel, by id.
    cancellable: Mutex<HashMap<Id, CancellationToken>>,
    /// How many notifications have been handled, for request ordering.
    pub(super) notifications_done: watch::Sender<u64>,
    /// Notifications handed to the worker and not finished yet: while there
    /// are none, every notification read so far is done.
    pub(super) notifications_waiting: std::sync::atomic::AtomicUsize,
    /// Requests take their first step on the reader's task (see
    /// `RequestTask::inline`): on a current-thread runtime.
    pub(super) inline: bool,
    /// Requests take their first step on the reader's task while their
    /// route's are quick (see `Pace`): on a multi-thread runtime.
    pub(super) paced: bool,
    /// Bytes of params held by requests admitted and not yet answered.
    pub(super) parked_bytes: std::sync::atomic::AtomicUsize,
}

impl Connection {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        let config = &shared.config;
        Connection {
            gate: config.gate.as_ref().map(|make| make()),
            lifecycle: config.lifecycle.clone().map(LifecycleGate::new),
            in_flight: config.max_in_flight.map(|n| Arc::new(Semaphore::new(n))),
            cancellable: Mutex::new(HashMap::new()),
            notifications_done: watch::Sender::new(0),
            notifications_waiting: std::sync::atomic::AtomicUsize::new(0),
            inline: crate::rt::runs_on_one_thread(),
            paced: crate::rt::runs_on_many_threads(),
            parked_bytes: std::sync::atomic::AtomicUsize::new(0),
            shared,
        }
    }

    pub(super) fn cancellable(&self) -> std::sync::MutexGuard<'_, HashMap<Id, CancellationToken>> {
        self.cancellable.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells the gates how a request they let through was answered.
    pub(super) fn answered(&self, method: &str, success: bool) {
        if let Some(gate) = &self.gate {
            gate.answered(method, success);
        }
        if let Some(lifecycle) = &self.lifecycle {
            lifecycle.answered(method, success);
        }
    }

    /// The one answer a finished request gets, or none.
    fn decide(&self, task: &Job, ending: Ending) -> Option<Answer> {
        // The common case: an answer to a request nobody can cancel.
        let ending = match ending {
            Ending::Answered(answer) if !task.ticket.cancellable => return Some(answer),
            other => other,
        };
        let shared = &self.shared;
        let dialect = shared.dialect;
        let error = |error: &ErrorObject| Answer {
            body: message::error_response(dialect, &task.id, error),
            success: false,
        };
        let closing = shared.abort_handlers.is_cancelled();
        let policy = shared.config.cancellation.as_ref();
        let cancelled_by_peer = task.ticket.cancellable && task.cancel.is_cancelled() && !closing;
        if let (true, Some(policy)) = (cancelled_by_peer, policy) {
            return match ending {
                // The policy let the handler run on, and the protocol allows
                // an answer after a cancellation: the handler's own goes out.
                Ending::Answered(answer) if !policy.abort_handler && policy.answer.is_some() => {
                    Some(answer)
                }
                _ => policy.answer.as_ref().map(error),
            };
        }
        match ending {
            Ending::Answered(answer) => Some(answer),
            Ending::Panicked(panic) => Some(error(&panic_answer(&task.method, &panic))),
            Ending::Stopped => Some(error(&ErrorObject::new(
                ErrorCode::SERVER_CLOSING,
                "the connection closed before the request finished",
            ))),
        }
    }
}

/// Held while a request runs within the in-flight cap; gives the permit
/// back when the request ends.
struct SlotGuard(Arc<InFlightSlot>);

impl Drop for SlotGuard {
    fn drop(&mut self) {
        self.0.finish();
    }
}

impl Runner for Connection {
    fn aborted(&self) -> bool {
        self.shared.handlers_aborted()
    }

    fn admit(&self, task: &Job) -> Admission {
        let after = task.ticket.after;
        let slot = task.ticket.in_flight.clone();
        // `after` is 0 until a notification has been queued: no lock then.
        let in_turn = after == 0
            || self.notifications_waiting.load(Ordering::Acquire) == 0
            || *self.notifications_done.borrow() >= after;
        if in_turn && slot.is_none() {
            return Admission::Now(None);
        }
        let mut done = self.notifications_done.subscribe();
        let cancel = task.cancel.clone();
        Admission::Wait(Box::pin(async move {
            // Notifications that arrived before this request come first.
            if !in_turn {
                tokio::select! {
                    _ = done.wait_for(|n| *n >= after) => {}
                    _ = cancel.cancelled() => {}
                }
            }
            let slot = slot?;
            slot.acquire(&cancel).await;
            Some(Box::new(SlotGuard(slot)) as Box<dyn Send>)
        }) as BoxFuture<Held>)
    }

    fn finish(&self, mut task: Job, ending: Ending) -> Option<BoxFuture<()>> {
        let answered = task.ticket.answered.take();
        let (body, success) = self.settle(task, ending);
        let body = body?;
        if self.shared.outbox.has_room() {
            deliver(&self.shared, body);
            tell(answered, success);
            return None;
        }
        // The other side is behind: wait for room, unless reading has
        // stopped (then the answer is queued for the final flush at once).
        let shared = self.shared.clone();
        Some(Box::pin(async move {
            shared.room().await;
            deliver(&shared, body);
            tell(answered, success);
        }))
    }
}

impl Connection {
    /// Ends a request whose answer the reader made itself (its params did
    /// not decode): the same bookkeeping as [`Runner::finish`], the answer
    /// sent at once (the reader waits for room before it reads on).
    pub(super) fn finish_now(&self, mut task: Job, ending: Ending) {
        let answered = task.ticket.answered.take();
        if let (Some(body), success) = self.settle(task, ending) {
            deliver(&self.shared, body);
            tell(answered, success);
        }
    }

    /// Everything a request's end does but send: its bytes and its id given
    /// back, its progress ended, its answer decided, traced and told to the
    /// gates, and its batch told. Returns what to send (the batch's array
    /// when this answer completes it); with nothing to send, the request is
    /// done here. Also says whether the request's own answer is a success.
    fn settle(&self, task: Job, ending: Ending) -> (Option<bytes::Bytes>, bool) {
        let shared = &self.shared;
        self.parked_bytes
            .fetch_sub(task.ticket.parked_bytes, Ordering::AcqRel);
        if task.ticket.cancellable {
            self.cancellable().remove(&task.id);
        }
        // No report may follow the answer.
        if let Some(progress) = &task.ticket.progress {
            progress.finish();
        }
        let answer = self.decide(&task, ending);
        let success = answer.as_ref().is_some_and(|a| a.success);
        task.trace
            .answered(answer.as_ref().map(|a| &a.body[..]), success);
        self.answered(&task.method, success);
        let body = answer.map(|a| a.body);
        let body = match &task.ticket.batch {
            Some(batch) => batch.release(body.map(|body| (&task.id, body))),
            None => body,
        };
        if body.is_none() {
            shared.work_done();
        }
        (body, success)
    }
}

/// Tells whoever waits for a request's answer to be queued (see
/// `Ticket::answered`) that it is.
fn tell(answered: Option<tokio::sync::oneshot::Sender<bool>>, success: bool) {
    if let Some(answered) = answered {
        let _ = answered.send(success);
    }
}

/// Queues an answer; one for a connection already closed is dropped.
pub(super) fn send_answer(shared: &Shared, body: bytes::Bytes) {
    if shared.send_now(body).is_err() {
        tracing::debug!("dropping an answer: the connection is closed");
    }
}

/// Sends a finished request's answer; the request is then done.
fn deliver(shared: &Shared, body: bytes::Bytes) {
    send_answer(shared, body);
    shared.work_done();
}

/// A notification admitted and waiting for the worker.
pub(super) struct NotificationJob {
    pub(super) seq: u64,
    pub(super) method: Arc<str>,
    pub(super) fut: BoxFuture<Answer>,
    /// The route's pace, while its first steps are timed on the worker.
    pub(super) pace: Option<Arc<Pace>>,
}

/// Runs notifications one at a time, in arrival order.
pub(super) async fn notification_worker(
    connection: Arc<Connection>,
    mut jobs: mpsc::UnboundedReceiver<NotificationJob>,
) {
    let shared = &connection.shared;
    while let Some(job) = jobs.recv().await {
        if !shared.abort_handlers.is_cancelled() {
            tokio::select! {
                biased;
                out = catch_panic(Timed { fut: job.fut, pace: job.pace }) => {
                    if let Err(panic) = out {
                        tracing::error!(method = %job.method, %panic, "a notification handler panicked");
                    }
                }
                _ = shared.abort_handlers.cancelled() => {}
            }
        }
        connection.notifications_done.send_replace(job.seq);
        connection
            .notifications_waiting
            .fetch_sub(1, Ordering::AcqRel);
        shared.work_done();
    }
}
