//! The reader task: decodes frames, routes them, and runs the connection's
//! shutdown.

use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_core::Stream;
use futures_util::StreamExt as _;
use serde_json::value::RawValue;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::pending::Outcome;
use super::{ProgressSink, Shared, STAGE_NEW, STAGE_READY, STAGE_SHUT_DOWN};
use crate::codec::Frame;
use crate::config::{Decision, GateInput};
use crate::error::{CloseReason, ErrorCode, ErrorObject, TransportError};
use crate::id::Id;
use crate::message::{self, Classified, ClassifiedFrame, RawExtras};
use crate::router::{catch_panic, Answer, BoxFuture, Context, RouteKind, Router};

type BoxStream = Pin<Box<dyn Stream<Item = Result<Frame, TransportError>> + Send>>;

/// How long the writer gets to write what is queued once the connection is
/// done, before it is stopped.
const FINAL_FLUSH_LIMIT: Duration = Duration::from_secs(10);

/// Why the read loop stopped.
enum End {
    /// The other side ended its stream.
    Eof,
    /// The stream failed.
    Failed(TransportError),
    /// This side asked to close.
    Local,
}

struct NotificationJob {
    seq: u64,
    method: Arc<str>,
    fut: BoxFuture<Answer>,
}

struct Reader {
    shared: Arc<Shared>,
    router: Router,
    notifications: mpsc::UnboundedSender<NotificationJob>,
    /// Notifications queued so far; a request waits until this many are done.
    notification_seq: u64,
    /// Set once a close was asked for: new requests are refused.
    closing: bool,
}

pub(crate) async fn run(
    shared: Arc<Shared>,
    router: Router,
    mut inbound: BoxStream,
    writer: JoinHandle<()>,
) {
    let (notifications, jobs) = mpsc::unbounded_channel();
    let worker = tokio::spawn(notification_worker(shared.clone(), jobs));
    let mut reader = Reader {
        shared: shared.clone(),
        router,
        notifications,
        notification_seq: 0,
        closing: false,
    };

    let mut end = loop {
        tokio::select! {
            biased;
            _ = shared.close_requested.cancelled() => break End::Local,
            item = inbound.next() => match item {
                Some(Ok(frame)) => reader.on_frame(frame).await,
                Some(Err(e)) => break End::Failed(e),
                None => break End::Eof,
            },
        }
    };

    if matches!(end, End::Local) {
        // Graceful close: keep reading answers while running work and
        // waiting calls have time left.
        reader.closing = true;
        while !reader.is_idle() {
            let deadline = shared.close_deadline();
            tokio::select! {
                biased;
                _ = tokio::time::sleep_until(deadline) => break,
                _ = shared.idle.notified() => {}
                item = inbound.next() => match item {
                    Some(Ok(frame)) => reader.on_frame(frame).await,
                    Some(Err(e)) => { end = End::Failed(e); break }
                    None => { end = End::Eof; break }
                },
            }
        }
    }
    drop(inbound);

    let reason = shared.set_reason(match end {
        End::Eof => CloseReason::RemoteClosed,
        End::Failed(e) => CloseReason::Transport(Arc::new(e)),
        End::Local => CloseReason::Local,
    });
    // Nothing more will be read: no waiting call can be answered.
    shared.pending.close(&reason);

    // Answers already owed are still written: let running handlers finish,
    // unless (or until) this side asks to close.
    if !matches!(reason, CloseReason::Local) {
        while shared.active.load(Ordering::Acquire) > 0 {
            tokio::select! {
                biased;
                _ = shared.close_requested.cancelled(), if !shared.close_requested.is_cancelled() => {}
                _ = tokio::time::sleep_until(shared.close_deadline()), if shared.close_requested.is_cancelled() => break,
                _ = shared.idle.notified() => {}
            }
        }
    }
    shared.abort_handlers.cancel();
    drop(reader);
    let _ = worker.await;
    while shared.active.load(Ordering::Acquire) > 0 {
        shared.idle.notified().await;
    }

    let _ = shared.outbound.send(super::Outbound::Close);
    let abort = writer.abort_handle();
    if tokio::time::timeout(FINAL_FLUSH_LIMIT, writer)
        .await
        .is_err()
    {
        tracing::warn!("the transport did not take the last frames in time; dropping them");
        abort.abort();
    }
    shared.done.cancel();
}

impl Reader {
    fn is_idle(&self) -> bool {
        self.shared.active.load(Ordering::Acquire) == 0 && self.shared.pending.is_empty()
    }

    async fn on_frame(&mut self, frame: Frame) {
        let bytes = match frame {
            Frame::Message(bytes) => bytes,
            Frame::Refused(why) => {
                let error = ErrorObject::invalid_request(why);
                return Target::Writer.send_now(&self.shared, &Id::NULL, &error);
            }
        };
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => text,
            Err(e) => {
                let error = ErrorObject::parse_error(format!("invalid UTF-8: {e}"));
                return Target::Writer.send_now(&self.shared, &Id::NULL, &error);
            }
        };
        match message::classify_frame(text, &self.shared.config.parse) {
            ClassifiedFrame::Single(m) => self.on_message(m, &Target::Writer).await,
            ClassifiedFrame::Batch(messages) => {
                let batch = Target::Batch(Arc::new(Batch::default()));
                for m in messages {
                    self.on_message(m, &batch).await;
                }
                batch.release(&self.shared, Vec::new());
            }
        }
    }

    async fn on_message(&mut self, message: Classified<'_>, target: &Target) {
        match message {
            Classified::Request {
                id,
                method,
                params,
                extras,
            } => self.on_request(id, &method, params, extras, target),
            Classified::Notification {
                method,
                params,
                extras,
            } => self.on_notification(&method, params, extras, target).await,
            Classified::Response { id, outcome, .. } => {
                let outcome = match outcome {
                    Ok(result) => Outcome::Result(result),
                    Err(error) => Outcome::Error(error),
                };
                self.complete(&id, outcome);
            }
            Classified::BadResponse { id, error } => {
                self.complete(&id, Outcome::Invalid(error.clone()));
                target.send_now(&self.shared, &Id::NULL, &error);
            }
            Classified::Refused(refusal) => {
                target.send_now(&self.shared, &refusal.id, &refusal.error)
            }
        }
    }

    fn complete(&self, id: &Id, outcome: Outcome<'_>) {
        match self.shared.pending.take(id) {
            Some(slot) => {
                // Every report came before the answer; the stream ends here.
                self.shared.progress_subscriptions().end_call(id);
                slot.complete(outcome)
            }
            None => match outcome {
                Outcome::Error(error) if id.is_null() => {
                    tracing::warn!(%error, "the other side could not read a message we sent")
                }
                _ => tracing::debug!(%id, "dropping a response for an id nobody waits for"),
            },
        }
    }

    /// The lifecycle's refusal of a request for `method` at this stage.
    fn lifecycle_refusal(&self, method: &str) -> Option<ErrorObject> {
        let lc = self.shared.config.lifecycle.as_ref()?;
        match self.shared.stage.load(Ordering::Acquire) {
            STAGE_NEW
                if *lc.initialize != *method && !lc.allowed_before.iter().any(|m| m == method) =>
            {
                Some(lc.not_initialized.clone())
            }
            STAGE_READY if lc.initialize_once && *lc.initialize == *method => {
                Some(ErrorObject::invalid_request(format!(
                    "`{method}` may only be sent once per session"
                )))
            }
            STAGE_SHUT_DOWN if !lc.allowed_before.iter().any(|m| m == method) => {
                Some(lc.after_shutdown.clone())
            }
            _ => None,
        }
    }

    fn gate(&self, method: &str, id: Option<&Id>) -> Decision {
        match &self.shared.gate {
            Some(gate) => gate.check(GateInput { method, id }),
            None => Decision::Allow,
        }
    }

    fn context(
        &self,
        id: Option<Id>,
        method: Arc<str>,
        extras: &RawExtras<'_>,
        progress: Option<Arc<ProgressSink>>,
    ) -> Context {
        Context {
            id,
            method,
            extras: (!extras.is_empty()).then(|| Arc::new(extras.to_owned_extras())),
            // A request needs its own token only when the other side can
            // cancel it; otherwise the connection's token is shared (no
            // allocation), and handlers only ever see it read-only.
            cancel: if self.shared.config.cancellation.is_some() {
                self.shared.abort_handlers.child_token()
            } else {
                self.shared.abort_handlers.clone()
            },
            peer: self.shared.handle(),
            progress,
        }
    }

    fn on_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<&RawValue>,
        extras: RawExtras<'_>,
        target: &Target,
    ) {
        let shared = &self.shared;
        if self.closing {
            let error = ErrorObject::new(ErrorCode::SERVER_CLOSING, "the connection is closing");
            return target.send_now(shared, &id, &error);
        }
        match self.gate(method, Some(&id)) {
            Decision::Allow => {}
            Decision::Reject(error) => return target.send_now(shared, &id, &error),
            Decision::Drop => return,
        }
        let routed = self.router.get(method);
        if routed.is_none() && shared.config.ping.as_deref() == Some(method) {
            let body = message::result_body(shared.dialect, &id, &serde_json::json!({}))
                .unwrap_or_default();
            return target.send_body(shared, body);
        }
        if let Some(error) = self.lifecycle_refusal(method) {
            return target.send_now(shared, &id, &error);
        }
        let route = match routed {
            Some(route) if route.kind == RouteKind::Request => route.clone(),
            Some(_) => {
                let error = ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "Method not found: `{method}` is a notification; send it without an id"
                    ),
                );
                return target.send_now(shared, &id, &error);
            }
            None => return target.send_now(shared, &id, &ErrorObject::method_not_found(method)),
        };
        if shared.active.load(Ordering::Acquire) >= shared.config.max_queued {
            let error = ErrorObject::new(
                ErrorCode::SERVER_OVERLOADED,
                "server overloaded: too many requests waiting; retry later",
            );
            return target.send_now(shared, &id, &error);
        }
        let progress = shared.config.progress.as_ref().and_then(|policy| {
            let (work, partial) = policy.tokens(params);
            (work.is_some() || partial.is_some())
                .then(|| Arc::new(ProgressSink::new(work, partial)))
        });
        let cancellable = shared
            .config
            .cancellation
            .as_ref()
            .is_some_and(|p| !p.is_protected(method));
        if cancellable && shared.cancellable().contains_key(&id) {
            let error =
                ErrorObject::invalid_request(format!("a request with id {id} is already running"));
            return target.send_now(shared, &id, &error);
        }
        let ctx = self.context(
            Some(id.clone()),
            route.name.clone(),
            &extras,
            progress.clone(),
        );
        let job = RequestJob {
            shared: shared.clone(),
            id,
            method: route.name.clone(),
            barrier: self.notification_seq,
            cancel: ctx.cancel.clone(),
            cancellable,
            progress,
            target: target.clone(),
        };
        // The route decodes the params and spawns the handler's own future
        // (no boxing); a decoding error comes back with the job unused.
        if let Err((error, job)) = route.handler.spawn(params, ctx, shared.dialect, job) {
            if let Some(gate) = &shared.gate {
                gate.answered(&route.name, false);
            }
            target.send_now(shared, job.id(), &error);
        }
    }

    async fn on_notification(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
        extras: RawExtras<'_>,
        target: &Target,
    ) {
        let shared = self.shared.clone();
        if let Some(policy) = shared
            .config
            .cancellation
            .as_ref()
            .filter(|p| p.method == method)
        {
            if let Some(token) = policy
                .target(params)
                .and_then(|id| shared.cancellable().get(&id).cloned())
            {
                token.cancel();
            }
            return;
        }
        if let Some(policy) = shared
            .config
            .progress
            .as_ref()
            .filter(|p| p.method == method)
        {
            if let Some((token, value)) = policy.parse(params) {
                if shared.progress_subscriptions().deliver(&token, value) {
                    return;
                }
            }
        }
        if self.closing {
            return tracing::debug!(method, "dropping a notification: the connection is closing");
        }
        match self.gate(method, None) {
            Decision::Allow => {}
            Decision::Reject(_) | Decision::Drop => {
                return tracing::debug!(method, "the gate dropped a notification");
            }
        }
        let exit = shared
            .config
            .lifecycle
            .as_ref()
            .is_some_and(|lc| lc.exit.as_deref() == Some(method));
        if exit {
            let code = if shared.stage.load(Ordering::Acquire) == STAGE_SHUT_DOWN {
                0
            } else {
                1
            };
            shared.set_reason(CloseReason::Exit { code });
            // The grace lets the exit route (if any) and owed answers finish.
            shared.request_close(Duration::from_secs(1));
        } else if let Some(lc) = &shared.config.lifecycle {
            if shared.stage.load(Ordering::Acquire) == STAGE_NEW
                && !lc.allowed_before.iter().any(|m| m == method)
            {
                return tracing::debug!(
                    method,
                    "dropping a notification sent before the handshake"
                );
            }
        }
        let Some(route) = self.router.get(method).cloned() else {
            if shared.config.unknown_method.refuses_notification(method) {
                target.send_now(&shared, &Id::NULL, &ErrorObject::method_not_found(method));
            } else {
                tracing::debug!(method, "ignoring a notification with no route");
            }
            return;
        };
        let ctx = self.context(None, route.name.clone(), &extras, None);
        let fut = match route.handler.start(params, ctx, shared.dialect) {
            Ok(fut) => fut,
            Err(error) => return tracing::warn!(method, %error, "dropping a notification"),
        };
        // Backpressure: a flood of notifications waits here rather than
        // queueing without bound. Responses stay unread meanwhile, which can
        // only matter to a handler that both waits on a call and sits behind
        // `max_queued` other messages.
        while shared.active.load(Ordering::Acquire) >= shared.config.max_queued {
            if shared.close_requested.is_cancelled() {
                return tracing::debug!(
                    method,
                    "dropping a notification: the connection is closing"
                );
            }
            shared.idle.notified().await;
        }
        shared.active.fetch_add(1, Ordering::AcqRel);
        self.notification_seq += 1;
        let job = NotificationJob {
            seq: self.notification_seq,
            method: route.name,
            fut,
        };
        if self.notifications.send(job).is_err() {
            shared.active.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Where an answer goes: straight to the writer, or into a batch's array.
#[derive(Clone)]
enum Target {
    Writer,
    Batch(Arc<Batch>),
}

/// The answers of one batch, written as one array when the last is in.
#[derive(Default)]
struct Batch {
    state: Mutex<BatchState>,
}

struct BatchState {
    answers: Vec<Vec<u8>>,
    /// Answers still to come, plus one for the reader until it has walked
    /// the whole batch.
    holds: usize,
}

impl Default for BatchState {
    fn default() -> Self {
        BatchState {
            answers: Vec::new(),
            holds: 1,
        }
    }
}

impl Target {
    /// Sends an error answer the reader produced itself.
    fn send_now(&self, shared: &Shared, id: &Id, error: &ErrorObject) {
        let body = message::error_response(shared.dialect, id, error);
        match self {
            Target::Writer => send(shared, body),
            Target::Batch(batch) => batch.lock().answers.push(body),
        }
    }

    /// Sends an answer the reader built itself.
    fn send_body(&self, shared: &Shared, body: Vec<u8>) {
        match self {
            Target::Writer => send(shared, body),
            Target::Batch(batch) => batch.lock().answers.push(body),
        }
    }

    /// One more answer will come from a task.
    fn hold(&self) {
        if let Target::Batch(batch) = self {
            batch.lock().holds += 1;
        }
    }

    /// A task's answer (or the reader's end of the batch, with an empty
    /// body).
    fn release(&self, shared: &Shared, body: Vec<u8>) {
        match self {
            Target::Writer => send(shared, body),
            Target::Batch(batch) => {
                let done = {
                    let mut state = batch.lock();
                    if !body.is_empty() {
                        state.answers.push(body);
                    }
                    state.holds -= 1;
                    (state.holds == 0).then(|| std::mem::take(&mut state.answers))
                };
                if let Some(answers) = done.filter(|a| !a.is_empty()) {
                    let len = answers.iter().map(|a| a.len() + 1).sum::<usize>() + 1;
                    let mut array = Vec::with_capacity(len);
                    array.push(b'[');
                    for (i, answer) in answers.iter().enumerate() {
                        if i > 0 {
                            array.push(b',');
                        }
                        array.extend_from_slice(answer);
                    }
                    array.push(b']');
                    send(shared, array);
                }
            }
        }
    }
}

impl Batch {
    fn lock(&self) -> std::sync::MutexGuard<'_, BatchState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn send(shared: &Shared, body: Vec<u8>) {
    if !body.is_empty() && shared.send_frame(body).is_err() {
        tracing::debug!("dropping an answer: the connection is closed");
    }
}

/// One inbound request's task, until its route starts it.
pub(crate) struct RequestJob {
    shared: Arc<Shared>,
    id: Id,
    method: Arc<str>,
    barrier: u64,
    cancel: CancellationToken,
    /// Registered in `Shared::cancellable` under `id`.
    cancellable: bool,
    progress: Option<Arc<ProgressSink>>,
    target: Target,
}

impl RequestJob {
    /// Counts the request as running and spawns its task around `fut`.
    pub(crate) fn spawn<F>(self, fut: F)
    where
        F: std::future::Future<Output = Answer> + Send + 'static,
    {
        let shared = &self.shared;
        if self.cancellable {
            shared
                .cancellable()
                .insert(self.id.clone(), self.cancel.clone());
        }
        shared.active.fetch_add(1, Ordering::AcqRel);
        self.target.hold();
        tokio::spawn(self.run(fut));
    }

    /// The request's id (for an answer when the route could not start it).
    pub(crate) fn id(&self) -> &Id {
        &self.id
    }

    async fn run<F: std::future::Future<Output = Answer>>(self, fut: F) {
        let shared = &self.shared;
        // Notifications that arrived before this request come first.
        if *shared.notifications_done.borrow() < self.barrier {
            let mut done = shared.notifications_done.subscribe();
            tokio::select! {
                _ = done.wait_for(|n| *n >= self.barrier) => {}
                _ = self.cancel.cancelled() => {}
            }
        }
        let permit = match &shared.in_flight {
            Some(limit) if !self.cancel.is_cancelled() => tokio::select! {
                permit = limit.clone().acquire_owned() => permit.ok(),
                _ = self.cancel.cancelled() => None,
            },
            _ => None,
        };
        // A policy may let a cancelled handler run on and answer itself;
        // closing the connection always stops it.
        let stop = match &shared.config.cancellation {
            Some(policy) if !policy.abort_handler => shared.abort_handlers.clone(),
            _ => self.cancel.clone(),
        };
        let answer = if self.cancel.is_cancelled() {
            self.cancelled_answer()
        } else {
            tokio::select! {
                biased;
                out = catch_panic(fut) => match out {
                    Ok(answer) => answer,
                    Err(panic) => {
                        tracing::error!(method = %self.method, %panic, "a request handler panicked");
                        let error = ErrorObject::internal_error("the handler panicked");
                        Answer { body: message::error_response(shared.dialect, &self.id, &error), success: false }
                    }
                },
                _ = stop.cancelled() => self.cancelled_answer(),
            }
        };
        drop(permit);
        if self.cancellable {
            shared.cancellable().remove(&self.id);
        }
        if let Some(progress) = &self.progress {
            progress.finish();
        }
        if let Some(gate) = &shared.gate {
            gate.answered(&self.method, answer.success);
        }
        if let (Some(lc), true) = (&shared.config.lifecycle, answer.success) {
            if *lc.initialize == *self.method {
                let _ = shared.stage.compare_exchange(
                    STAGE_NEW,
                    STAGE_READY,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            } else if lc.shutdown.as_deref() == Some(&*self.method) {
                shared.stage.store(STAGE_SHUT_DOWN, Ordering::Release);
            }
        }
        self.target.release(shared, answer.body);
        shared.active.fetch_sub(1, Ordering::AcqRel);
        shared.idle.notify_one();
    }

    /// The answer for a request stopped before it finished: the connection
    /// is closing, or the other side cancelled it (the policy says whether
    /// and how that is answered; no answer is an empty body).
    fn cancelled_answer(&self) -> Answer {
        let dialect = self.shared.dialect;
        if self.shared.abort_handlers.is_cancelled() {
            let error = ErrorObject::new(
                ErrorCode::SERVER_CLOSING,
                "the connection closed before the request finished",
            );
            return Answer {
                body: message::error_response(dialect, &self.id, &error),
                success: false,
            };
        }
        match self
            .shared
            .config
            .cancellation
            .as_ref()
            .and_then(|p| p.answer.as_ref())
        {
            Some(error) => Answer {
                body: message::error_response(dialect, &self.id, error),
                success: false,
            },
            None => Answer {
                body: Vec::new(),
                success: false,
            },
        }
    }
}

/// Runs notifications one at a time, in arrival order.
async fn notification_worker(
    shared: Arc<Shared>,
    mut jobs: mpsc::UnboundedReceiver<NotificationJob>,
) {
    while let Some(job) = jobs.recv().await {
        if !shared.abort_handlers.is_cancelled() {
            tokio::select! {
                biased;
                out = catch_panic(job.fut) => {
                    if let Err(panic) = out {
                        tracing::error!(method = %job.method, %panic, "a notification handler panicked");
                    }
                }
                _ = shared.abort_handlers.cancelled() => {}
            }
        }
        shared.notifications_done.send_replace(job.seq);
        shared.active.fetch_sub(1, Ordering::AcqRel);
        shared.idle.notify_one();
    }
}
