//! The admission steps, one function each, in the order of the table in the
//! module docs of `dispatch`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use crate::rt::JoinHandle;
use bytes::Bytes;
use tokio::sync::mpsc;

use super::job::{notification_worker, send_answer, Connection, NotificationJob};
use crate::codec::{Frame, FrameRefusal};
use crate::context::{CancelToken, Context, ProgressSink};
use crate::id::Id;
use crate::message::head::Head;
use crate::message::{self, BatchAnswers, Classified, ClassifiedFrame, RawExtras, RawJson};
use crate::message::{ErrorCode, ErrorObject};
use crate::peer::{CloseReason, InFlightSlot, Outcome};
use crate::policy::{overloaded, Decision, GateInput, SharedPermit};
use crate::router::{Answer, Ending, Job, Pace, RequestTask, Route, Router, Runner, Ticket};

/// Requests with params this large (in bytes) never take their first step
/// on the reader's task.
pub(crate) const INLINE_PARAMS_MAX: usize = 64 * 1024;

/// Reads frames and walks each message through the admission steps.
pub(super) struct Reader {
    connection: Arc<Connection>,
    runner: Arc<dyn Runner>,
    router: Router,
    notifications: mpsc::UnboundedSender<NotificationJob>,
    /// Notifications queued so far; a request waits until this many are done.
    notification_seq: u64,
    /// Set once a close was asked for: new requests are refused.
    pub(super) closing: bool,
    /// Where the transport leaves each frame's caller, if it has several.
    callers: Option<crate::connection::CallerSlot>,
    /// The caller of the frame being read, from `callers`.
    caller: Option<Arc<crate::connection::ConnectionInfo>>,
}

/// Where the reader's own answers go: the writer, or a batch's array.
type Batch<'a> = Option<&'a Arc<BatchAnswers>>;

impl Reader {
    /// A reader for `connection`, with its notification worker.
    pub(super) fn new(
        connection: Arc<Connection>,
        router: Router,
        callers: Option<crate::connection::CallerSlot>,
    ) -> (Self, JoinHandle<()>) {
        let (notifications, jobs) = mpsc::unbounded_channel();
        let worker = crate::rt::spawn(notification_worker(connection.clone(), jobs));
        let reader = Reader {
            runner: connection.clone(),
            connection,
            router,
            notifications,
            notification_seq: 0,
            closing: false,
            callers,
            caller: None,
        };
        (reader, worker)
    }

    /// Sends an answer (or a batch's array) the reader built itself.
    fn send(&self, body: Bytes) {
        send_answer(&self.connection.shared, body);
    }

    fn refuse(&self, batch: Batch<'_>, id: &Id, error: &ErrorObject) {
        crate::trace::refused(self.connection.shared.connection, id, error);
        let body = message::error_response(self.connection.shared.dialect, id, error);
        match batch {
            Some(batch) => batch.add(id, body),
            None => self.send(body),
        }
    }

    pub(super) async fn on_frame(&mut self, frame: Frame) {
        if let Some(callers) = &self.callers {
            self.caller = callers.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        let bytes = match frame {
            Frame::Message(bytes) => bytes,
            Frame::Refused(why) => return self.on_refused(why),
        };
        let text = match std::str::from_utf8(&bytes) {
            Ok(text) => text,
            Err(e) => {
                let error = ErrorObject::parse_error(format!("invalid UTF-8: {e}"));
                return self.refuse(None, &Id::NULL, &error);
            }
        };
        let parse = self.connection.shared.config.parse;
        // A large frame's params are decoded by their route as they are
        // read, instead of validated here and parsed again; they wait in
        // `decoded` for the route.
        let mut decoded = None;
        match message::classify_frame_decoding(text, &parse, &self.router, &mut decoded) {
            // Requests and answers never wait: no future for them.
            ClassifiedFrame::Single(Classified::Request {
                id,
                method,
                params,
                extras,
            }) => self.on_request(id, &method, params, extras, None),
            ClassifiedFrame::Single(Classified::Response { id, outcome, .. }) => {
                self.on_response(&id, outcome)
            }
            ClassifiedFrame::Single(m) => self.on_message(m, None).await,
            ClassifiedFrame::Batch(messages) => {
                let shared = &self.connection.shared;
                let batch = Arc::new(BatchAnswers::new(
                    shared.config.outbound_budget,
                    shared.dialect,
                ));
                for m in messages {
                    self.on_message(m, Some(&batch)).await;
                    // Other connections on this thread get their turn during
                    // a long batch; what is queued must not wait for it.
                    self.connection.shared.outbox.release();
                    tokio::task::consume_budget().await;
                }
                if let Some(array) = batch.release(None) {
                    self.send(array);
                }
            }
        }
    }

    async fn on_message(&mut self, message: Classified<'_>, batch: Batch<'_>) {
        match message {
            Classified::Request {
                id,
                method,
                params,
                extras,
            } => self.on_request(id, &method, params, extras, batch),
            Classified::Notification {
                method,
                params,
                extras,
            } => self.on_notification(&method, params, extras, batch).await,
            Classified::Response { id, outcome, .. } => self.on_response(&id, outcome),
            Classified::BadResponse { id, error } => {
                self.complete(&id, Outcome::Invalid(error.clone()));
                self.refuse(batch, &Id::NULL, &error);
            }
            Classified::Ignored { id, error } => {
                tracing::debug!(%error, "ignoring a malformed response");
                if let Some(id) = id {
                    self.complete(&id, Outcome::Invalid(error));
                }
            }
            Classified::Refused(refusal) => self.refuse(batch, &refusal.id, &refusal.error),
        }
    }

    /// A frame the framer refused. One over the cap is told by its head: a
    /// request is answered with its own id (so its caller learns at once);
    /// an answer fails the call it was for (answers are never answered);
    /// anything else is answered with id `null`.
    fn on_refused(&self, why: FrameRefusal) {
        let head = match &why {
            FrameRefusal::TooLong { head, .. } => message::head::peek(head),
            _ => None,
        };
        match head {
            Some(Head::Request(id)) => self.refuse(None, &id, &ErrorObject::invalid_request(why)),
            Some(Head::Answer(id)) => {
                let error = ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("the answer could not be read: {why} of this side"),
                );
                tracing::warn!(%id, %error, "an answer to a call was refused");
                self.complete(&id, Outcome::Invalid(error));
            }
            None => self.refuse(None, &Id::NULL, &ErrorObject::invalid_request(why)),
        }
    }

    /// A well-formed answer to one of this side's calls.
    fn on_response(&self, id: &Id, outcome: Result<RawJson<'_>, ErrorObject>) {
        let outcome = match outcome {
            Ok(result) => Outcome::Result(result),
            Err(error) => Outcome::Error(error),
        };
        self.complete(id, outcome);
    }

    /// An answer to one of this side's calls.
    fn complete(&self, id: &Id, outcome: Outcome<'_>) {
        let shared = &self.connection.shared;
        match shared.pending.take(id) {
            Some(waiting) => {
                let code = match &outcome {
                    Outcome::Error(error) | Outcome::Invalid(error) => Some(error.code.0),
                    _ => None,
                };
                waiting.span.answered(code);
                // Every report came before the answer; the stream ends here.
                shared.end_call_progress(id);
                waiting.slot.complete(outcome)
            }
            None => match outcome {
                // A batch refused as a whole fails its calls.
                Outcome::Error(error)
                    if id.is_null() && shared.sent_batches.refused(shared, &error) =>
                {
                    tracing::debug!(%error, "the other side refused a batch we sent")
                }
                Outcome::Error(error) if id.is_null() => {
                    tracing::warn!(%error, "the other side could not read a message we sent")
                }
                _ => tracing::debug!(%id, "dropping a response for an id nobody waits for"),
            },
        }
    }

    // ---- requests ---------------------------------------------------------

    fn on_request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<RawJson<'_>>,
        extras: RawExtras<'_>,
        batch: Batch<'_>,
    ) {
        if let Some(error) = self.closing_request() {
            return self.refuse(batch, &id, &error);
        }
        match self.user_gate(method, Some(&id)) {
            None | Some(Decision::Allow) => {}
            Some(Decision::Reject(error)) => return self.refuse(batch, &id, &error),
            Some(_) => return,
        }
        if let Some(error) = self.lifecycle_request(method, &id, params) {
            return self.refuse(batch, &id, &error);
        }
        let route = match self.router.request_route(method) {
            Ok(route) => route,
            Err(error) => return self.refuse(batch, &id, &error),
        };
        if let Some(error) = self.capacity() {
            return self.refuse(batch, &id, &error);
        }
        self.run_request(id, route, params, extras, batch);
    }

    /// Step 2: a closing connection takes no new requests.
    fn closing_request(&self) -> Option<ErrorObject> {
        self.closing
            .then(|| ErrorObject::new(ErrorCode::SERVER_CLOSING, "the connection is closing"))
    }

    /// Step 3: the user's gate, if there is one.
    fn user_gate(&self, method: &str, id: Option<&Id>) -> Option<Decision> {
        let gate = self.connection.gate.as_ref()?;
        Some(gate.check(GateInput {
            method,
            id,
            connection: &self.connection.shared.info,
        }))
    }

    /// Step 4: the session lifecycle.
    fn lifecycle_request(
        &self,
        method: &str,
        id: &Id,
        params: Option<RawJson<'_>>,
    ) -> Option<ErrorObject> {
        let lifecycle = self.connection.lifecycle.as_ref()?;
        match crate::policy::Gate::check(
            lifecycle,
            GateInput {
                method,
                id: Some(id),
                connection: &self.connection.shared.info,
            },
        ) {
            Decision::Reject(_) if lifecycle.lets_through(params.map(RawJson::get)) => None,
            Decision::Reject(error) => Some(error),
            _ => None,
        }
    }

    /// Step 6: room for one more request.
    fn capacity(&self) -> Option<ErrorObject> {
        let shared = &self.connection.shared;
        (shared.active_work() >= shared.config.max_queued)
            .then(|| overloaded(format_args!("too many requests waiting")))
    }

    /// Step 6, for bytes: room for a request holding `bytes` of params, on
    /// this connection and in the shared budget. Counted until the request
    /// is answered (`Connection::finish` gives the connection's back; the
    /// shared permit gives its own back when it drops).
    fn park(&self, bytes: usize) -> Result<Option<SharedPermit>, ErrorObject> {
        let connection = &self.connection;
        let config = &connection.shared.config;
        let parked = connection.parked_bytes.load(Ordering::Acquire);
        if parked > 0 && parked.saturating_add(bytes) > config.max_parked_bytes {
            return Err(overloaded(format_args!(
                "requests waiting on this connection hold {parked} bytes of params (limit {})",
                config.max_parked_bytes
            )));
        }
        let permit = match &config.shared_budget {
            Some(budget) => Some(budget.take(bytes)?),
            None => None,
        };
        connection.parked_bytes.fetch_add(bytes, Ordering::AcqRel);
        Ok(permit)
    }

    /// Step 7: the request's own task.
    fn run_request(
        &self,
        id: Id,
        route: &Route,
        params: Option<RawJson<'_>>,
        extras: RawExtras<'_>,
        batch: Batch<'_>,
    ) {
        let connection = &self.connection;
        let shared = &connection.shared;
        let cancellation = shared.config.cancellation.as_ref();
        let cancellable = cancellation.is_some_and(|p| !p.is_protected(&route.name));
        if cancellable && connection.cancellable().contains_key(&id) {
            let error =
                ErrorObject::invalid_request(format!("a request with id {id} is already running"));
            return self.refuse(batch, &id, &error);
        }
        let parked_bytes = params.map_or(0, |p| p.get().len());
        let shared_permit = match self.park(parked_bytes) {
            Ok(permit) => permit,
            Err(error) => return self.refuse(batch, &id, &error),
        };
        let progress = shared.config.progress.as_ref().and_then(|policy| {
            let (work, partial) = policy.tokens(params);
            (work.is_some() || partial.is_some())
                .then(|| Arc::new(ProgressSink::new(work, partial)))
        });
        // A request needs its own token only when the other side can cancel
        // it; otherwise the connection's token is shared (no allocation).
        let cancel = if cancellable {
            CancelToken::Own(shared.abort_handlers.child_token())
        } else {
            CancelToken::Shared(shared.abort_shared.clone())
        };
        // A policy may let a cancelled handler run on and answer itself;
        // closing the connection always stops it.
        let stop = match cancellation {
            Some(policy) if !policy.abort_handler => {
                Some(CancelToken::Shared(shared.abort_shared.clone()))
            }
            _ => None,
        };
        let slot = connection
            .in_flight
            .as_ref()
            .map(|semaphore| Arc::new(InFlightSlot::new(semaphore.clone())));
        let ctx = Context {
            id: Some(id.clone()),
            method: route.name.clone(),
            extras: (!extras.is_empty()).then(|| Arc::new(extras.to_owned_extras())),
            cancel: cancel.clone(),
            peer: shared.handle(slot.clone()),
            progress: progress.clone(),
            connection: None,
            caller: self.caller.clone(),
        };
        if cancellable {
            connection
                .cancellable()
                .insert(id.clone(), (*cancel).clone());
        }
        shared.work_started();
        if let Some(batch) = batch {
            batch.hold();
        }
        let trace = crate::trace::request_span(shared.connection, &route.name, &id);
        // A large request runs on its own task, after the reader has let go
        // of its frame: answering inline would hold the frame, the decoded
        // params and the answer at once.
        let small = parked_bytes < INLINE_PARAMS_MAX;
        let task = RequestTask {
            runner: self.runner.clone(),
            inline: small && (connection.inline || connection.paced && route.pace.on_reader()),
            pace: connection.paced.then(|| route.pace.clone()),
            job: Job {
                trace,
                id,
                method: route.name.clone(),
                cancel,
                stop,
                ticket: Ticket {
                    cancellable,
                    progress,
                    batch: batch.cloned(),
                    after: self.notification_seq,
                    in_flight: slot,
                    parked_bytes,
                    _shared_permit: shared_permit,
                    answered: None,
                },
            },
        };
        // The route decodes the params and spawns the handler's own future
        // (no boxing); a decoding error comes back with the task unused.
        if let Err((error, task)) = route.handler.spawn(params, ctx, shared.dialect, task) {
            let answer = Answer {
                body: message::error_response(shared.dialect, &task.job.id, &error),
                success: false,
            };
            connection.finish_now(task.job, Ending::Answered(answer));
        }
    }

    // ---- notifications ----------------------------------------------------

    async fn on_notification(
        &mut self,
        method: &str,
        params: Option<RawJson<'_>>,
        extras: RawExtras<'_>,
        batch: Batch<'_>,
    ) {
        if self.protocol_notification(method, params)
            || self.closing_notification(method)
            || !self.gate_notification(method)
            || !self.lifecycle_notification(method)
        {
            return;
        }
        let Some(route) = self.route_notification(method, batch) else {
            return;
        };
        let shared = self.connection.shared.clone();
        let ctx = Context {
            id: None,
            method: route.name.clone(),
            extras: (!extras.is_empty()).then(|| Arc::new(extras.to_owned_extras())),
            cancel: CancelToken::Shared(shared.abort_shared.clone()),
            peer: shared.handle(None),
            progress: None,
            connection: None,
            caller: self.caller.clone(),
        };
        let mut fut = match route.handler.start(params, ctx, shared.dialect) {
            Ok(fut) => fut,
            Err(error) => return tracing::warn!(method, %error, "dropping a notification"),
        };
        // Step 7, inline: with nothing waiting for the worker, the
        // notification's first step runs here, and most finish in it (on a
        // multi-thread runtime, while the route's first steps are quick).
        let connection = &self.connection;
        let paced = connection.paced && route.pace.on_reader();
        if (connection.inline || paced)
            && connection.notifications_waiting.load(Ordering::Acquire) == 0
        {
            let pace = paced.then_some(&*route.pace);
            if let Poll::Ready(out) = Pace::first_step(pace, fut.as_mut()) {
                if let Err(panic) = out {
                    tracing::error!(method, %panic, "a notification handler panicked");
                }
                // Requests check `notifications_waiting` first: no need to
                // publish this one's number.
                self.notification_seq += 1;
                return;
            }
        }
        // Step 6: a flood of notifications waits here rather than queueing
        // without bound. Responses stay unread meanwhile, which can only
        // matter to a handler that both waits on a call and sits behind
        // `max_queued` other messages.
        if shared.active_work() >= shared.config.max_queued {
            // The running work may wait on what this reader has queued.
            shared.outbox.release();
            let _waiting = shared.waiting_for_idle();
            while shared.active_work() >= shared.config.max_queued {
                if shared.close_was_requested() {
                    return tracing::debug!(
                        method,
                        "dropping a notification: the connection is closing"
                    );
                }
                shared.idle.notified().await;
            }
        }
        shared.work_started();
        self.notification_seq += 1;
        let job = NotificationJob {
            seq: self.notification_seq,
            method: route.name,
            fut,
            // A route earning the reader has its first steps timed here.
            pace: (connection.paced && !paced).then_some(route.pace),
        };
        let waiting = &self.connection.notifications_waiting;
        waiting.fetch_add(1, Ordering::AcqRel);
        if self.notifications.send(job).is_err() {
            waiting.fetch_sub(1, Ordering::AcqRel);
            shared.work_done();
        }
    }

    /// Step 1: cancellation, progress and subscription notifications; true
    /// if it was one.
    fn protocol_notification(&self, method: &str, params: Option<RawJson<'_>>) -> bool {
        let shared = &self.connection.shared;
        let config = &shared.config;
        if let Some(policy) = config.cancellation.as_ref().filter(|p| p.method == method) {
            let target = policy.target(params);
            if let Some(token) =
                target.and_then(|id| self.connection.cancellable().get(&id).cloned())
            {
                token.cancel();
            }
            return true;
        }
        if shared.subscribed.deliver(shared, params) {
            return true;
        }
        if let Some(policy) = config.progress.as_ref().filter(|p| p.method == method) {
            if let Some((token, value)) = policy.parse(params) {
                let increasing = policy.increasing.as_deref();
                if shared
                    .progress_subscriptions()
                    .deliver(&token, value, increasing)
                {
                    return true;
                }
            }
        }
        false
    }

    /// Step 2: true if the notification is dropped because of a close.
    fn closing_notification(&self, method: &str) -> bool {
        if self.closing {
            tracing::debug!(method, "dropping a notification: the connection is closing");
        }
        self.closing
    }

    /// Step 3: true if the user's gate lets the notification through.
    fn gate_notification(&self, method: &str) -> bool {
        match self.user_gate(method, None) {
            None | Some(Decision::Allow) => true,
            Some(_) => {
                tracing::debug!(method, "the gate dropped a notification");
                false
            }
        }
    }

    /// Step 4: true if the lifecycle lets the notification through; the exit
    /// notification starts the close.
    fn lifecycle_notification(&self, method: &str) -> bool {
        let Some(lifecycle) = &self.connection.lifecycle else {
            return true;
        };
        let input = GateInput {
            method,
            id: None,
            connection: &self.connection.shared.info,
        };
        if !matches!(
            crate::policy::Gate::check(lifecycle, input),
            Decision::Allow
        ) {
            tracing::debug!(method, "dropping a notification sent before the handshake");
            return false;
        }
        if let Some(code) = lifecycle.exit_code(method) {
            let shared = &self.connection.shared;
            shared.set_reason(CloseReason::Exit { code });
            // The grace lets the exit route (if any) and owed answers finish.
            shared.request_close(Duration::from_secs(1));
        }
        true
    }

    /// Step 5: the notification's route, if it has one.
    fn route_notification(&self, method: &str, batch: Batch<'_>) -> Option<Route> {
        let route = self.router.get(method).cloned();
        if route.is_none() {
            let shared = &self.connection.shared;
            if shared.config.unknown_method.refuses_notification(method) {
                self.refuse(batch, &Id::NULL, &ErrorObject::method_not_found(method));
            } else {
                tracing::debug!(method, "ignoring a notification with no route");
            }
        }
        route
    }
}
