//! The seam between a route and the layer that runs it.
//!
//! A route decodes its params and starts its handler; what happens around
//! the handler (waiting its turn, the in-flight cap, cancellation, what
//! answer goes out, where it goes) belongs to the inbound pipeline, which
//! sits above the router. The pipeline implements [`Runner`] and hands each
//! request to its route as a [`RequestTask`]; the route spawns the handler's
//! own future inside [`RequestTask::spawn`], so nothing is boxed on the way.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use crate::context::{CancelToken, ProgressSink};
use crate::id::Id;
use crate::message::BatchAnswers;
use crate::policy::SharedPermit;
use crate::router::{Pace, Timed};
use crate::trace::RequestSpan;

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Something held while a handler runs, released when it ends (an
/// in-flight permit).
pub(crate) type Held = Option<Box<dyn Send>>;

/// A finished handler's answer, ready for the wire.
#[derive(Debug)]
pub(crate) struct Answer {
    /// The response envelope; empty for a notification.
    pub(crate) body: bytes::Bytes,
    /// Whether the answer is a success (the lifecycle wants to know).
    pub(crate) success: bool,
}

/// How a request's handler ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// It returned this answer.
    Answered(Answer),
    /// It panicked with this message.
    Panicked(String),
    /// It was stopped (cancelled, or the connection closed) before it
    /// returned, or before it started.
    Stopped,
}

/// Whether a request may start at once.
pub(crate) enum Admission {
    /// Now, holding this.
    Now(Held),
    /// When this completes.
    Wait(BoxFuture<Held>),
}

/// What runs requests: the inbound pipeline.
pub(crate) trait Runner: Send + Sync + 'static {
    /// Decides whether the request may start at once.
    fn admit(&self, job: &Job) -> Admission;

    /// Whether every handler of the connection is being stopped. Before its
    /// first step, that is the only way a request can have been stopped:
    /// the other side cannot cancel a request before it is admitted.
    fn aborted(&self) -> bool;

    /// Ends the request: decides its one answer and sends it on. Returns a
    /// future when sending must wait (for room in the outbound budget).
    fn finish(&self, job: Job, ending: Ending) -> Option<BoxFuture<()>>;
}

/// One inbound request, handed to its route to be started.
pub(crate) struct RequestTask {
    pub(crate) runner: Arc<dyn Runner>,
    pub(crate) job: Job,
    /// Take the first step on the caller's task, and spawn a task only if
    /// the request cannot finish at once: on a current-thread runtime, where
    /// a task of its own buys no parallelism, and on a multi-thread runtime
    /// while the route's first steps are quick (see [`Pace`]).
    pub(crate) inline: bool,
    /// The route's pace, which times the first step, on the caller's task or
    /// on the request's own: on a multi-thread runtime.
    pub(crate) pace: Option<Arc<Pace>>,
}

/// What the runner knows about one request.
pub(crate) struct Job {
    pub(crate) id: Id,
    pub(crate) method: Arc<str>,
    /// Fired when the other side cancels the request or the connection
    /// closes; what the handler sees through its context.
    pub(crate) cancel: CancelToken,
    /// Fired when the handler must stop, when that is not `cancel` (a
    /// policy that lets handlers run on after a cancellation makes it the
    /// connection's).
    pub(crate) stop: Option<CancelToken>,
    /// Data the runner keeps with the task until it finishes.
    pub(crate) ticket: Ticket,
    /// The span the handler runs in (disabled unless a subscriber wants it).
    pub(crate) trace: RequestSpan,
}

/// The runner's own data about one task, carried through the route.
#[derive(Default)]
pub(crate) struct Ticket {
    /// Registered among the requests the other side can cancel.
    pub(crate) cancellable: bool,
    /// The request's progress reporting, finished before its answer.
    pub(crate) progress: Option<Arc<ProgressSink>>,
    /// The batch the answer belongs in.
    pub(crate) batch: Option<Arc<BatchAnswers>>,
    /// The runner's ordering mark: the request starts after this many
    /// notifications have been handled.
    pub(crate) after: u64,
    /// The request's place under the in-flight cap, if there is one.
    pub(crate) in_flight: Option<Arc<crate::peer::InFlightSlot>>,
    /// Bytes of params the request holds, counted in its connection's cap
    /// until it is answered.
    pub(crate) parked_bytes: usize,
    /// Its room in a shared budget, given back when the ticket drops.
    pub(crate) _shared_permit: Option<SharedPermit>,
    /// Told, once the answer is queued, whether it was a success (a
    /// subscription's items may only follow the answer that opened it).
    pub(crate) answered: Option<tokio::sync::oneshot::Sender<bool>>,
}

impl RequestTask {
    /// Runs the request around `fut`, the handler's future: on a task of its
    /// own, or first on the caller's task when [`inline`](Self::inline) is
    /// set, then on a task of its own only if it is not done at once.
    pub(crate) fn spawn<F>(self, fut: F)
    where
        F: Future<Output = Answer> + Send + 'static,
    {
        if !self.inline || self.job.trace.span().is_some() {
            // A route earning the reader has its first steps timed on tasks.
            match self.pace.clone().filter(|pace| !pace.on_reader()) {
                Some(pace) => self.spawn_task(Timed {
                    fut: Box::pin(fut),
                    pace: Some(pace),
                }),
                None => self.spawn_task(fut),
            }
            return;
        }
        // The first step, here: admitted at once, the handler polled once
        // (no waker: if it is pending, its task polls it again at once and
        // every resource it waits on registers the task's). A handler done
        // at once never meets the wait for its cancellation, nor a task.
        let held = match self.runner.admit(&self.job) {
            Admission::Now(held) => held,
            wait @ Admission::Wait(_) => {
                crate::rt::spawn(self.run(wait, fut));
                return;
            }
        };
        if self.runner.aborted() {
            drop(held);
            self.finish(Ending::Stopped);
            return;
        }
        let mut handler = Box::pin(fut);
        match Pace::first_step(self.pace.as_deref(), handler.as_mut()) {
            Poll::Ready(out) => {
                drop(held);
                self.finish(match out {
                    Ok(answer) => Ending::Answered(answer),
                    Err(panic) => Ending::Panicked(panic),
                });
            }
            Poll::Pending => {
                crate::rt::spawn(self.run(Admission::Now(held), handler));
            }
        }
    }

    /// Runs the request on a task of its own from the start.
    fn spawn_task<F>(self, fut: F)
    where
        F: Future<Output = Answer> + Send + 'static,
    {
        let admission = self.runner.admit(&self.job);
        // The handler runs in its request's span only when a subscriber
        // wants the span: otherwise it is polled as it is (and its task
        // holds no span).
        match self.job.trace.span().cloned() {
            None => crate::rt::spawn(self.run(admission, fut)),
            Some(span) => {
                crate::rt::spawn(self.run(admission, tracing::Instrument::instrument(fut, span)))
            }
        };
    }

    /// Ends the request with `ending`, sending its answer from a task of its
    /// own should that have to wait.
    fn finish(self, ending: Ending) {
        let RequestTask { runner, job, .. } = self;
        if let Some(send) = runner.finish(job, ending) {
            crate::rt::spawn(send);
        }
    }

    /// The request's life on its task: its turn, the handler (or its
    /// cancellation), the answer.
    ///
    /// A plain function around an `async` block, so the future holds the
    /// request's parts once: an `async fn` keeps its arguments and the locals
    /// they are moved into side by side, ~200 bytes more per parked request.
    fn run<F: Future<Output = Answer>>(
        self,
        admission: Admission,
        fut: F,
    ) -> impl Future<Output = ()> {
        let RequestTask { runner, job, .. } = self;
        async move {
            let held = match admission {
                Admission::Now(held) => held,
                Admission::Wait(wait) => wait.await,
            };
            let stop = job.stop.as_ref().unwrap_or(&job.cancel);
            let ending = if stop.is_cancelled() {
                Ending::Stopped
            } else {
                tokio::select! {
                    biased;
                    out = super::panic::catch_panic(fut) => match out {
                        Ok(answer) => Ending::Answered(answer),
                        Err(panic) => Ending::Panicked(panic),
                    },
                    _ = stop.cancelled() => Ending::Stopped,
                }
            };
            drop(held);
            if let Some(send) = runner.finish(job, ending) {
                send.await;
            }
        }
    }
}
