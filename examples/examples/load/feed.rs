//! What the subscription mode counts: the items, their rate, the gaps in an
//! integer sequence, and the [`SubscriptionSummary`] printed at the end.

use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::time::Instant;

use crate::options::Until;
use crate::tally::excerpt;
use crate::Report;

/// The items of one subscription.
#[derive(Debug, Default)]
pub(crate) struct Feed {
    /// Items counted: up to the one that made enough.
    pub(crate) items: u64,
    /// Items that came after enough were counted, before the unsubscribe
    /// was answered.
    pub(crate) late: u64,
    /// Items that are not integers.
    non_integer: u64,
    /// Integer items that were not the previous integer item + 1.
    gaps: u64,
    /// The integers skipped by gaps that went forward.
    missing: u64,
    /// The first and the last integer item.
    first_integer: Option<i128>,
    last_integer: Option<i128>,
    /// When the first and the last item came.
    first_at: Option<Instant>,
    last_at: Option<Instant>,
    /// Messages that are neither the answers nor the items expected.
    unexpected: u64,
    first_unexpected: Option<String>,
}

impl Feed {
    /// Counts an item that came at `now`.
    pub(crate) fn item(&mut self, item: &RawValue, now: Instant) {
        self.items += 1;
        self.first_at.get_or_insert(now);
        self.last_at = Some(now);
        let Ok(n) = item.get().trim().parse::<i128>() else {
            self.non_integer += 1;
            return;
        };
        if let Some(previous) = self.last_integer {
            if previous.checked_add(1) != Some(n) {
                self.gaps += 1;
                if n > previous {
                    // n - previous - 1, which may not fit.
                    let skipped = n
                        .checked_sub(previous)
                        .and_then(|d| u64::try_from(d - 1).ok())
                        .unwrap_or(u64::MAX);
                    self.missing = self.missing.saturating_add(skipped);
                }
            }
        }
        self.first_integer.get_or_insert(n);
        self.last_integer = Some(n);
    }

    pub(crate) fn unexpect(&mut self, what: String) {
        self.unexpected += 1;
        if self.first_unexpected.is_none() {
            self.first_unexpected = Some(excerpt(what));
        }
    }

    /// Seconds from the first item to the last.
    fn seconds(&self) -> f64 {
        match (self.first_at, self.last_at) {
            (Some(first), Some(last)) => (last - first).as_secs_f64(),
            _ => 0.0,
        }
    }

    /// Items per second from the first item to the last: the intervals
    /// between them over the time they took.
    fn items_per_second(&self) -> f64 {
        let seconds = self.seconds();
        if self.items < 2 || seconds <= 0.0 {
            0.0
        } else {
            (self.items - 1) as f64 / seconds
        }
    }
}

/// Why a subscription run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SubscriptionEnd {
    /// The items asked for came (or the time passed) and the unsubscribe
    /// request went out.
    Complete,
    /// The subscribe request was answered with an error.
    SubscribeFailed,
    /// The subscribe request was not answered within the drain timeout.
    SubscribeUnanswered,
    /// The server ended the subscription (a notification with `error`).
    EndedByServer,
    /// The server closed the connection (or the transport failed).
    ServerClosed,
    /// No item came within the drain timeout.
    Stalled,
}

/// What became of the unsubscribe request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Unsubscribed {
    NotSent,
    /// Its answer's result (`true`, or `false` when the server had already
    /// ended the subscription).
    Answered(Value),
    /// Its error answer.
    Failed(String),
    /// No answer within the drain timeout, or before the server closed.
    Unanswered,
}

/// The subscription run's outcome, as printed.
#[derive(Debug)]
pub(crate) struct SubscriptionSummary {
    pub(crate) target: String,
    pub(crate) kind: &'static str,
    pub(crate) subscribe: String,
    pub(crate) unsubscribe: String,
    pub(crate) until: Until,
    /// The subscription id: the subscribe answer's result.
    pub(crate) subscription: Option<Value>,
    pub(crate) feed: Feed,
    pub(crate) end: SubscriptionEnd,
    pub(crate) subscribe_error: Option<String>,
    /// The `error` of the notification that ended the subscription, if the
    /// server ended it (`null` when it just finished).
    pub(crate) server_end: Option<Value>,
    pub(crate) unsubscribed: Unsubscribed,
    /// Transport failures and an unclean child exit, in order.
    pub(crate) problems: Vec<String>,
}

impl SubscriptionSummary {
    /// Whether the items asked for came.
    fn delivered(&self) -> bool {
        match self.until {
            Until::Items(n) => self.feed.items == n,
            Until::Elapsed(_) => self.feed.items > 0,
        }
    }

    fn end(&self) -> &'static str {
        match self.end {
            SubscriptionEnd::Complete => "complete",
            SubscriptionEnd::SubscribeFailed => "subscribe failed",
            SubscriptionEnd::SubscribeUnanswered => "subscribe unanswered",
            SubscriptionEnd::EndedByServer => "server ended the subscription",
            SubscriptionEnd::ServerClosed => "server closed",
            SubscriptionEnd::Stalled => "stalled",
        }
    }

    fn unsubscribe_text(&self) -> String {
        match &self.unsubscribed {
            Unsubscribed::NotSent => "not sent".to_owned(),
            Unsubscribed::Answered(result) => format!("answered {result}"),
            Unsubscribed::Failed(error) => format!("failed: {error}"),
            Unsubscribed::Unanswered => "no answer".to_owned(),
        }
    }

    fn until_text(&self) -> String {
        match self.until {
            Until::Items(n) => format!("until {n} items"),
            Until::Elapsed(d) => format!("for {} s", d.as_secs_f64()),
        }
    }
}

/// An integer item as JSON: a number when it fits, else its digits.
fn integer_json(n: i128) -> Value {
    if let Ok(n) = i64::try_from(n) {
        Value::from(n)
    } else if let Ok(n) = u64::try_from(n) {
        Value::from(n)
    } else {
        Value::from(n.to_string())
    }
}

impl Report for SubscriptionSummary {
    fn ok(&self) -> bool {
        self.end == SubscriptionEnd::Complete
            && self.delivered()
            && matches!(self.unsubscribed, Unsubscribed::Answered(_))
            && self.feed.gaps == 0
            && self.feed.unexpected == 0
    }

    fn to_json(&self) -> Value {
        let (items_asked, seconds_asked) = match self.until {
            Until::Items(n) => (Some(n), None),
            Until::Elapsed(d) => (None, Some(d.as_secs_f64())),
        };
        let feed = &self.feed;
        let (answer, unsubscribe_error) = match &self.unsubscribed {
            Unsubscribed::Answered(result) => (result.clone(), None),
            Unsubscribed::Failed(error) => (Value::Null, Some(error.clone())),
            Unsubscribed::NotSent | Unsubscribed::Unanswered => (Value::Null, None),
        };
        json!({
            "transport": self.kind,
            "target": self.target,
            "subscribe": self.subscribe,
            "unsubscribe": self.unsubscribe,
            "items_asked": items_asked,
            "seconds_asked": seconds_asked,
            "subscription": self.subscription,
            "items": feed.items,
            "late_items": feed.late,
            "non_integer_items": feed.non_integer,
            "gaps": feed.gaps,
            "missing": feed.missing,
            "first_item": feed.first_integer.map(integer_json),
            "last_item": feed.last_integer.map(integer_json),
            "seconds": feed.seconds(),
            "items_per_second": (feed.items_per_second() * 100.0).round() / 100.0,
            "unexpected": feed.unexpected,
            "first_unexpected": feed.first_unexpected,
            "subscribe_error": self.subscribe_error,
            "server_ended": self.server_end.is_some(),
            "server_error": self.server_end,
            "unsubscribed": self.unsubscribed != Unsubscribed::NotSent
                && self.unsubscribed != Unsubscribed::Unanswered,
            "unsubscribe_answer": answer,
            "unsubscribe_error": unsubscribe_error,
            "end": self.end(),
            "problems": self.problems,
            "ok": self.ok(),
        })
    }

    fn to_text(&self) -> String {
        let feed = &self.feed;
        let mut lines = Vec::new();
        if let Some(id) = &self.subscription {
            lines.push(("subscription", id.to_string()));
        }
        lines.push((
            "items/s",
            format!(
                "{:.0} ({} items in {:.2} s)",
                feed.items_per_second(),
                feed.items,
                feed.seconds()
            ),
        ));
        if let (Some(first), Some(last)) = (feed.first_integer, feed.last_integer) {
            lines.push(("integers", format!("{first} to {last}")));
        }
        lines.push((
            "gaps",
            format!("{} ({} items missing)", feed.gaps, feed.missing),
        ));
        let counts = [
            ("non-integer items", feed.non_integer),
            ("late items", feed.late),
            ("unexpected", feed.unexpected),
        ];
        for (label, n) in counts {
            if n > 0 {
                lines.push((label, n.to_string()));
            }
        }
        lines.push(("unsubscribe", self.unsubscribe_text()));
        lines.push(("end", self.end().to_owned()));
        if let Some(error) = &self.server_end {
            lines.push(("server ended it", format!("with error {error}")));
        }
        if let Some(error) = &self.subscribe_error {
            lines.push(("subscribe error", error.clone()));
        }
        if let Some(what) = &feed.first_unexpected {
            lines.push(("first unexpected", what.clone()));
        }
        for problem in &self.problems {
            lines.push(("problem", problem.clone()));
        }
        let head = format!(
            "load: subscription `{}` / `{}` on {}, {}",
            self.subscribe,
            self.unsubscribe,
            self.target,
            self.until_text()
        );
        crate::render(&head, &lines)
    }
}
