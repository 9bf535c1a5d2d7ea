//! What the calls mode counts: when each id was sent, how many answers each
//! id got and how long the first took, and the [`Summary`] printed at the
//! end.

use std::sync::atomic::{AtomicU64, Ordering};

use hdrhistogram::Histogram;
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::message::{Message, ParseOptions, Parsed};
use jsonrpc_runtime::transport::HttpFailure;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::Report;

/// When each request was sent, shared by the writer and the reader.
pub(crate) struct SendLog {
    start: Instant,
    /// Per id (index `id - 1`): nanoseconds from `start` to its sending,
    /// plus one; 0 while unsent.
    sent_at: Vec<AtomicU64>,
}

impl SendLog {
    pub(crate) fn new(calls: u64) -> SendLog {
        SendLog {
            start: Instant::now(),
            sent_at: (0..calls).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    pub(crate) fn nanos(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX - 1)
    }

    /// Notes that `id` is being sent now.
    pub(crate) fn sending(&self, id: u64) {
        self.sent_at[index(id)].store(self.nanos() + 1, Ordering::Relaxed);
    }

    /// Takes back [`sending`](Self::sending): the request did not go out.
    pub(crate) fn unsent(&self, id: u64) {
        self.sent_at[index(id)].store(0, Ordering::Relaxed);
    }
}

fn index(id: u64) -> usize {
    usize::try_from(id - 1).expect("ids are below `calls`, which fits in memory")
}

/// At most this many bytes of an unexpected message are kept to show.
const EXCERPT_LEN: usize = 200;

/// The start of `what`, cut at a character boundary.
pub(crate) fn excerpt(mut what: String) -> String {
    if what.len() > EXCERPT_LEN {
        let mut end = EXCERPT_LEN;
        while !what.is_char_boundary(end) {
            end -= 1;
        }
        what.truncate(end);
        what.push_str("...");
    }
    what
}

/// What the reader has seen.
pub(crate) struct Tally {
    /// Answers per id (index `id - 1`), saturating.
    answers: Vec<u8>,
    /// Ids answered at least once.
    pub(crate) answered: u64,
    /// First answers that were errors.
    errors: u64,
    /// Over HTTP: the error answers the transport made up for requests
    /// whose `POST` failed (no answer from the server); `None` elsewhere.
    made_up: Option<u64>,
    /// Answers beyond the first for an id.
    duplicated: u64,
    /// Messages that answer nothing we sent: unknown or unsent ids, requests
    /// and notifications from the server, frames that are not JSON-RPC.
    unexpected: u64,
    /// The first unexpected message, to show what it was.
    first_unexpected: Option<String>,
    /// The first error answer.
    first_error: Option<String>,
    /// Latency of first answers, in microseconds.
    latency: Histogram<u64>,
    /// When the last first answer came, in nanoseconds from the start.
    last_answer: u64,
}

impl Tally {
    /// A tally of `calls` ids; `http` counts the answers the HTTP
    /// transport makes up.
    pub(crate) fn new(calls: u64, http: bool) -> Tally {
        Tally {
            answers: vec![0; index(calls) + 1],
            answered: 0,
            errors: 0,
            made_up: http.then_some(0),
            duplicated: 0,
            unexpected: 0,
            first_unexpected: None,
            first_error: None,
            latency: Histogram::new_with_bounds(1, 3_600_000_000, 3)
                .expect("valid histogram bounds"),
            last_answer: 0,
        }
    }

    /// Counts one frame; true when it was the first answer for its id.
    pub(crate) fn frame(&mut self, frame: Frame, log: &SendLog) -> bool {
        let bytes = match frame {
            Frame::Message(bytes) => bytes,
            other => {
                self.unexpect(format!("{other:?}"));
                return false;
            }
        };
        let response = match Message::parse_bytes(&bytes, &ParseOptions::default()) {
            Parsed::Single(Message::Response(response)) => response,
            _ => {
                self.unexpect(String::from_utf8_lossy(&bytes).into_owned());
                return false;
            }
        };
        let sent_at = response
            .id
            .as_u64()
            .filter(|id| (1..=self.answers.len() as u64).contains(id))
            .map(|id| (index(id), log.sent_at[index(id)].load(Ordering::Relaxed)))
            .filter(|&(_, sent_at)| sent_at != 0);
        let Some((slot, sent_at)) = sent_at else {
            self.unexpect(String::from_utf8_lossy(&bytes).into_owned());
            return false;
        };
        let count = &mut self.answers[slot];
        *count = count.saturating_add(1);
        if *count > 1 {
            self.duplicated += 1;
            return false;
        }
        let now = log.nanos();
        self.answered += 1;
        self.last_answer = now;
        let micros = now.saturating_sub(sent_at - 1) / 1000;
        self.latency.saturating_record(micros.max(1));
        if let Err(error) = &response.outcome {
            self.errors += 1;
            if let Some(made_up) = &mut self.made_up {
                if HttpFailure::from_error(error).is_some() {
                    *made_up += 1;
                }
            }
            if self.first_error.is_none() {
                self.first_error = Some(format!(
                    "id {}: {} {}",
                    response.id, error.code.0, error.message
                ));
            }
        }
        true
    }

    fn unexpect(&mut self, what: String) {
        self.unexpected += 1;
        if self.first_unexpected.is_none() {
            self.first_unexpected = Some(excerpt(what));
        }
    }
}

/// Why reading stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Every request was answered, and the server closed after we did.
    Complete,
    /// Every request was answered, but the server did not close the
    /// connection within the drain timeout after we closed our side.
    CompleteServerStayedOpen,
    /// The server closed (or the transport failed) with requests unanswered.
    ServerClosed,
    /// The drain timeout passed with requests unanswered.
    TimedOut,
}

/// The run's outcome, as printed.
pub(crate) struct Summary {
    pub(crate) target: String,
    pub(crate) kind: &'static str,
    pub(crate) method: String,
    pub(crate) calls: u64,
    pub(crate) in_flight: usize,
    pub(crate) sent: u64,
    pub(crate) end: End,
    pub(crate) tally: Tally,
    /// Transport failures and an unclean child exit, in order.
    pub(crate) problems: Vec<String>,
}

impl Summary {
    fn lost(&self) -> u64 {
        self.sent - self.tally.answered
    }

    fn unsent(&self) -> u64 {
        self.calls - self.sent
    }

    fn seconds(&self) -> f64 {
        self.tally.last_answer as f64 / 1e9
    }

    fn calls_per_second(&self) -> f64 {
        if self.tally.last_answer == 0 {
            0.0
        } else {
            self.tally.answered as f64 / self.seconds()
        }
    }

    /// Latency percentiles in microseconds: p50, p90, p99, p99.9, max.
    fn percentiles(&self) -> [(&'static str, u64); 5] {
        let h = &self.tally.latency;
        [
            ("p50", h.value_at_quantile(0.5)),
            ("p90", h.value_at_quantile(0.9)),
            ("p99", h.value_at_quantile(0.99)),
            ("p99_9", h.value_at_quantile(0.999)),
            ("max", h.max()),
        ]
    }

    fn end(&self) -> &'static str {
        match self.end {
            End::Complete => "complete",
            End::CompleteServerStayedOpen => "complete, server stayed open",
            End::ServerClosed => "server closed",
            End::TimedOut => "timed out",
        }
    }
}

impl Report for Summary {
    fn ok(&self) -> bool {
        self.lost() == 0
            && self.unsent() == 0
            && self.tally.duplicated == 0
            && self.tally.unexpected == 0
            && self.tally.made_up.unwrap_or(0) == 0
    }

    fn to_json(&self) -> Value {
        let latency: serde_json::Map<String, Value> = self
            .percentiles()
            .iter()
            .map(|&(name, micros)| (name.to_owned(), json!(micros)))
            .collect();
        let mut summary = json!({
            "transport": self.kind,
            "target": self.target,
            "method": self.method,
            "calls": self.calls,
            "in_flight": self.in_flight,
            "sent": self.sent,
            "answered": self.tally.answered,
            "error_answers": self.tally.errors,
            "lost": self.lost(),
            "unsent": self.unsent(),
            "duplicated": self.tally.duplicated,
            "unexpected": self.tally.unexpected,
            "seconds": self.seconds(),
            "calls_per_second": self.calls_per_second().round(),
            "latency_us": latency,
            "end": self.end(),
            "first_error_answer": self.tally.first_error,
            "first_unexpected": self.tally.first_unexpected,
            "problems": self.problems,
            "ok": self.ok(),
        });
        if let Some(made_up) = self.tally.made_up {
            summary["http_failures"] = json!(made_up);
        }
        summary
    }

    fn to_text(&self) -> String {
        let latency: Vec<String> = self
            .percentiles()
            .iter()
            .map(|(name, micros)| format!("{} {micros}", name.replace('_', ".")))
            .collect();
        let mut lines = vec![
            (
                "calls/s",
                format!(
                    "{:.0} ({} answered in {:.2} s)",
                    self.calls_per_second(),
                    self.tally.answered,
                    self.seconds()
                ),
            ),
            ("latency (µs)", latency.join("  ")),
            ("error answers", self.tally.errors.to_string()),
            ("lost", self.lost().to_string()),
            ("duplicated", self.tally.duplicated.to_string()),
        ];
        if self.unsent() > 0 {
            lines.push(("unsent", self.unsent().to_string()));
        }
        if self.tally.unexpected > 0 {
            lines.push(("unexpected", self.tally.unexpected.to_string()));
        }
        if let Some(made_up) = self.tally.made_up.filter(|&n| n > 0) {
            lines.push(("http failures", made_up.to_string()));
        }
        lines.push(("end", self.end().to_owned()));
        if let Some(error) = &self.tally.first_error {
            lines.push(("first error", error.clone()));
        }
        if let Some(what) = &self.tally.first_unexpected {
            lines.push(("first unexpected", what.clone()));
        }
        for problem in &self.problems {
            lines.push(("problem", problem.clone()));
        }
        let head = format!(
            "load: {} calls of `{}` to {}, {} in flight",
            self.calls, self.method, self.target, self.in_flight
        );
        crate::render(&head, &lines)
    }
}
