//! The calls mode: requests 1, 2, 3, ... sent by a writer task, at most
//! `--in-flight` unanswered, while the reader counts each id's answers and
//! works out when to stop (see the module docs of `main.rs`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::SplitSink;
use futures_util::{SinkExt as _, StreamExt as _};
use indicatif::ProgressBar;
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::message::{Dialect, Message, Request};
use jsonrpc_runtime::transport::{ChildHandle, TransportError};
use jsonrpc_runtime::{Id, Transport};
use tokio::sync::{Semaphore, TryAcquireError};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::options::Calls;
use crate::progress::{self, PROGRESS_STEP};
use crate::tally::{End, SendLog, Summary, Tally};
use crate::target::{clean_exit, stop_child, Connection, Link, Target};

/// What the writer and the reader share.
struct Shared {
    log: SendLog,
    /// One permit per request that may still be sent before an answer comes.
    in_flight: Semaphore,
    /// The highest id handed to the transport.
    sent: AtomicU64,
}

/// Sends requests 1..=`calls`, waiting for a free in-flight permit before
/// each, and flushing whenever it has to wait: a burst goes out in few
/// writes, and nothing sits in the buffer while the server is idle. Returns
/// the sink, to be closed once every answer is in.
async fn write_requests(
    mut sink: SplitSink<Transport, Bytes>,
    calls: Arc<Calls>,
    shared: Arc<Shared>,
) -> WriterOutcome {
    for id in 1..=calls.calls {
        let permit = match shared.in_flight.try_acquire() {
            Ok(permit) => permit,
            Err(TryAcquireError::NoPermits) => {
                sink.flush().await?;
                shared
                    .in_flight
                    .acquire()
                    .await
                    .expect("the semaphore is never closed")
            }
            Err(TryAcquireError::Closed) => unreachable!("the semaphore is never closed"),
        };
        permit.forget();
        let body = request_body(id, &calls);
        shared.log.sending(id);
        if let Err(e) = sink.feed(body).await {
            shared.log.unsent(id);
            return Err(e);
        }
        shared.sent.store(id, Ordering::Relaxed);
    }
    sink.flush().await?;
    Ok(sink)
}

fn request_body(id: u64, calls: &Calls) -> Bytes {
    let request = Message::Request(Request {
        id: Id::from(id),
        method: calls.method.clone(),
        params: Some(calls.params.clone()),
        extras: Default::default(),
    });
    Bytes::from(request.to_json(Dialect::Strict))
}

type Writer = JoinHandle<WriterOutcome>;

type WriterOutcome = Result<SplitSink<Transport, Bytes>, TransportError>;

/// The writer's end, once: pending for ever when it was already taken.
async fn join(writer: &mut Option<Writer>) -> Result<WriterOutcome, tokio::task::JoinError> {
    match writer {
        Some(handle) => handle.await,
        None => std::future::pending().await,
    }
}

/// Where a run is, for the drain timeout.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Requests are still being sent.
    Sending { last_answer: Instant },
    /// Every request is sent; answers are still due.
    Sent { at: Instant },
    /// Every request is answered and our side is closed.
    Closed { at: Instant },
}

impl Phase {
    /// When the drain timeout started.
    fn since(self) -> Instant {
        match self {
            Phase::Sending { last_answer } => last_answer,
            Phase::Sent { at } | Phase::Closed { at } => at,
        }
    }
}

/// The reader's state while a run goes on.
struct Run {
    calls: Arc<Calls>,
    shared: Arc<Shared>,
    drain: Duration,
    tally: Tally,
    /// Transport failures, in order.
    problems: Vec<String>,
    bar: ProgressBar,
    /// The writer, until it is done.
    writer: Option<Writer>,
    /// The sink, once the writer is done with it.
    sink: Option<SplitSink<Transport, Bytes>>,
    /// The clock the drain timeout runs from: the last answer while
    /// requests are still being sent, then the end of sending, then the
    /// closing of our side.
    phase: Phase,
}

impl Run {
    /// Counts a frame; true when it answered the last unanswered request,
    /// and our side is now closed.
    async fn frame(&mut self, frame: Frame) -> Result<bool, String> {
        if !self.tally.frame(frame, &self.shared.log) {
            return Ok(false);
        }
        self.shared.in_flight.add_permits(1);
        if let Phase::Sending { last_answer } = &mut self.phase {
            *last_answer = Instant::now();
        }
        let answered = self.tally.answered;
        if answered % PROGRESS_STEP == 0 {
            self.bar.set_position(answered);
        }
        if answered < self.calls.calls {
            return Ok(false);
        }
        self.bar.set_position(answered);
        // Every request is answered: close our side, then read on until
        // the server closes, to catch late duplicates.
        if let Some(handle) = self.writer.take() {
            self.writer_done(handle.await)?;
        }
        if let Some(sink) = &mut self.sink {
            if tokio::time::timeout(self.drain, sink.close())
                .await
                .is_err()
            {
                self.problems.push("closing our side timed out".to_owned());
            }
        }
        self.phase = Phase::Closed { at: Instant::now() };
        Ok(true)
    }

    /// Takes the sink the writer hands back; a send failure is a problem
    /// to report.
    fn writer_done(
        &mut self,
        done: Result<WriterOutcome, tokio::task::JoinError>,
    ) -> Result<(), String> {
        match done {
            Ok(Ok(sink)) => self.sink = Some(sink),
            Ok(Err(e)) => self.problems.push(format!(
                "sending failed after {} requests: {e}",
                self.shared.sent.load(Ordering::Relaxed)
            )),
            Err(e) => return Err(format!("the writer failed: {e}")),
        }
        Ok(())
    }

    /// The end when the transport fails or ends.
    fn stream_ended(&mut self, error: Option<TransportError>) -> End {
        let closed = matches!(self.phase, Phase::Closed { .. });
        if let Some(e) = error {
            if !(closed && clean_exit(&e)) {
                self.problems.push(e.to_string());
            }
        }
        if closed {
            End::Complete
        } else {
            End::ServerClosed
        }
    }
}

/// Reads answers until every request is answered and the server has closed,
/// the server closes early, or the drain timeout passes.
pub(crate) async fn run(link: &Link, calls: Calls, drain: Duration) -> Result<Summary, String> {
    let calls = Arc::new(calls);
    let Connection { transport, child } = link.connect().await?;
    let (sink, mut stream) = transport.split();
    let shared = Arc::new(Shared {
        log: SendLog::new(calls.calls),
        in_flight: Semaphore::new(calls.in_flight),
        sent: AtomicU64::new(0),
    });
    let writer = tokio::spawn(write_requests(sink, calls.clone(), shared.clone()));
    let mut run = Run {
        tally: Tally::new(calls.calls, matches!(link.target, Target::Http(_))),
        bar: progress::calls(calls.calls),
        calls,
        shared,
        drain,
        problems: Vec::new(),
        writer: Some(writer),
        sink: None,
        phase: Phase::Sending {
            last_answer: Instant::now(),
        },
    };
    let server_closes = link.target.server_closes();
    // Checked lazily: when it fires, the real deadline is worked out and
    // the timer set again if that is later.
    let timer = tokio::time::sleep(drain);
    tokio::pin!(timer);
    let end = loop {
        tokio::select! {
            biased;
            item = stream.next() => match item {
                Some(Ok(frame)) => {
                    if run.frame(frame).await? {
                        if !server_closes {
                            break End::Complete;
                        }
                        timer.as_mut().reset(Instant::now() + drain);
                    }
                }
                Some(Err(e)) => break run.stream_ended(Some(e)),
                None => break run.stream_ended(None),
            },
            done = join(&mut run.writer), if run.writer.is_some() => {
                run.writer = None;
                run.writer_done(done)?;
                run.phase = Phase::Sent { at: Instant::now() };
                timer.as_mut().reset(Instant::now() + drain);
            }
            () = &mut timer => {
                let deadline = run.phase.since() + drain;
                if Instant::now() >= deadline {
                    break match run.phase {
                        Phase::Closed { .. } => End::CompleteServerStayedOpen,
                        _ => End::TimedOut,
                    };
                }
                timer.as_mut().reset(deadline);
            }
        }
    };
    drop(stream);
    Ok(finish(run, end, child, link).await)
}

/// Stops what is still running and sums the run up.
async fn finish(mut run: Run, end: End, child: Option<ChildHandle>, link: &Link) -> Summary {
    run.bar.finish_and_clear();
    // Still sending when the server went away or stopped answering: the
    // writer may wait for permits, or on a full socket, for ever.
    if let Some(handle) = run.writer.take() {
        handle.abort();
        let _ = handle.await;
    }
    drop(run.sink.take());
    let sent = run.shared.sent.load(Ordering::Relaxed);
    if end == End::TimedOut {
        run.problems.push(format!(
            "{} requests unanswered {} s after the last request was sent or answered",
            sent - run.tally.answered,
            run.drain.as_secs_f64()
        ));
    }
    stop_child(child, &mut run.problems).await;
    Summary {
        target: link.target.label(),
        kind: link.target.kind(),
        method: run.calls.method.clone(),
        calls: run.calls.calls,
        in_flight: run.calls.in_flight,
        sent,
        end,
        tally: run.tally,
        problems: run.problems,
    }
}
