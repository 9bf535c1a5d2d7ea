//! The subscription mode: one subscribe request (id 1), whose answer is
//! the subscription id; the items of that subscription counted as they
//! come; then one unsubscribe request (id 2) with params `[id]`, and its
//! answer awaited.
//!
//! An item is a notification whose params are `{"subscription": <id>,
//! "result": <item>}`, the format of jsonrpsee and Ethereum-style nodes;
//! one with `error` in place of `result` is the server ending the
//! subscription. The drain timeout bounds each wait: for the subscribe
//! answer, for each next item, and for the unsubscribe answer.

use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt as _, StreamExt as _};
use indicatif::ProgressBar;
use jsonrpc_runtime::codec::Frame;
use jsonrpc_runtime::message::{Dialect, Message, ParseOptions, Parsed, Request, Response};
use jsonrpc_runtime::{Id, Transport};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::time::Instant;

use crate::feed::{Feed, SubscriptionEnd, SubscriptionSummary, Unsubscribed};
use crate::options::{Subscribe, Until};
use crate::progress::{self, PROGRESS_STEP};
use crate::target::{stop_child, Connection, Link};

/// The id of the subscribe request.
const SUBSCRIBE_ID: u64 = 1;
/// The id of the unsubscribe request.
const UNSUBSCRIBE_ID: u64 = 2;

/// The params of a subscription's notification.
#[derive(Deserialize)]
struct ItemParams {
    subscription: Value,
    #[serde(default, deserialize_with = "present")]
    result: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Box<RawValue>>,
}

/// A member that is there, even as `null` (which `Option` alone would
/// read as absent).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<RawValue>>, D::Error> {
    Box::<RawValue>::deserialize(d).map(Some)
}

/// A frame, as this mode reads it.
enum Inbound {
    Answer(Response),
    Item {
        subscription: Value,
        item: Box<RawValue>,
    },
    /// The server ends a subscription: its `error`.
    Closing {
        subscription: Value,
        error: Box<RawValue>,
    },
    Other,
}

fn classify(bytes: &[u8]) -> Inbound {
    let notification = match Message::parse_bytes(bytes, &ParseOptions::default()) {
        Parsed::Single(Message::Response(response)) => return Inbound::Answer(response),
        Parsed::Single(Message::Notification(notification)) => notification,
        _ => return Inbound::Other,
    };
    let params = notification
        .params
        .and_then(|params| serde_json::from_str::<ItemParams>(params.get()).ok());
    match params {
        Some(ItemParams {
            subscription,
            result: Some(item),
            error: None,
        }) => Inbound::Item { subscription, item },
        Some(ItemParams {
            subscription,
            result: None,
            error: Some(error),
        }) => Inbound::Closing {
            subscription,
            error,
        },
        _ => Inbound::Other,
    }
}

/// Where a run is; each stage has its deadline.
#[derive(Debug, Clone, Copy)]
enum Stage {
    /// The subscribe request went out at `sent`.
    Subscribing { sent: Instant },
    /// Items are counted: the subscription opened at `opened`, and the
    /// last item (or the opening) came at `last`.
    Receiving { opened: Instant, last: Instant },
    /// The unsubscribe request went out at `sent`.
    Unsubscribing { sent: Instant },
}

/// The run's state.
struct Session {
    sub: Subscribe,
    drain: Duration,
    sink: SplitSink<Transport, Bytes>,
    stage: Stage,
    feed: Feed,
    /// The subscription id, as JSON and as sent back in `[id]`.
    subscription: Option<(Value, Box<RawValue>)>,
    subscribe_error: Option<String>,
    server_end: Option<Value>,
    unsubscribed: Unsubscribed,
    problems: Vec<String>,
    bar: ProgressBar,
}

impl Session {
    /// When the current wait runs out.
    fn deadline(&self) -> Instant {
        match self.stage {
            Stage::Subscribing { sent } | Stage::Unsubscribing { sent } => sent + self.drain,
            Stage::Receiving { opened, last } => match self.sub.until {
                Until::Elapsed(d) => (last + self.drain).min(opened + d),
                Until::Items(_) => last + self.drain,
            },
        }
    }

    fn is_ours(&self, subscription: &Value) -> bool {
        matches!(&self.subscription, Some((id, _)) if id == subscription)
    }

    /// Handles a frame; the end, when it ends the run.
    async fn frame(&mut self, frame: Frame) -> Option<SubscriptionEnd> {
        let bytes = match frame {
            Frame::Message(bytes) => bytes,
            other => {
                self.feed.unexpect(format!("{other:?}"));
                return None;
            }
        };
        let inbound = classify(&bytes);
        match (inbound, self.stage) {
            (Inbound::Answer(answer), Stage::Subscribing { .. })
                if answer.id.as_u64() == Some(SUBSCRIBE_ID) =>
            {
                self.opened(answer)
            }
            (Inbound::Answer(answer), Stage::Unsubscribing { .. })
                if answer.id.as_u64() == Some(UNSUBSCRIBE_ID) =>
            {
                self.unsubscribed = match answer.outcome {
                    Ok(result) => Unsubscribed::Answered(
                        serde_json::from_str(result.get()).unwrap_or(Value::Null),
                    ),
                    Err(error) => Unsubscribed::Failed(error.to_string()),
                };
                Some(SubscriptionEnd::Complete)
            }
            (Inbound::Item { subscription, item }, stage) if self.is_ours(&subscription) => {
                match stage {
                    Stage::Receiving { opened, .. } => self.item(&item, opened).await,
                    _ => {
                        self.feed.late += 1;
                        None
                    }
                }
            }
            (
                Inbound::Closing {
                    subscription,
                    error,
                },
                stage,
            ) if self.is_ours(&subscription) => {
                self.server_end = Some(serde_json::from_str(error.get()).unwrap_or(Value::Null));
                match stage {
                    Stage::Receiving { .. } => Some(SubscriptionEnd::EndedByServer),
                    _ => None,
                }
            }
            _ => {
                self.feed
                    .unexpect(String::from_utf8_lossy(&bytes).into_owned());
                None
            }
        }
    }

    /// The subscribe answer: the subscription is open, or refused.
    fn opened(&mut self, answer: Response) -> Option<SubscriptionEnd> {
        match answer.outcome {
            Ok(id) => {
                let value = serde_json::from_str(id.get()).unwrap_or(Value::Null);
                self.subscription = Some((value, id));
                let now = Instant::now();
                self.stage = Stage::Receiving {
                    opened: now,
                    last: now,
                };
                None
            }
            Err(error) => {
                self.subscribe_error = Some(error.to_string());
                Some(SubscriptionEnd::SubscribeFailed)
            }
        }
    }

    /// Counts an item; the one that makes enough sends the unsubscribe.
    async fn item(&mut self, item: &RawValue, opened: Instant) -> Option<SubscriptionEnd> {
        let now = Instant::now();
        self.feed.item(item, now);
        self.stage = Stage::Receiving { opened, last: now };
        let items = self.feed.items;
        if items % PROGRESS_STEP == 0 {
            self.bar.set_position(items);
        }
        match self.sub.until {
            Until::Items(n) if items >= n => {
                self.bar.set_position(items);
                self.unsubscribe().await
            }
            _ => None,
        }
    }

    /// The deadline passed: the end, or the next stage.
    async fn timed_out(&mut self) -> Option<SubscriptionEnd> {
        match self.stage {
            Stage::Subscribing { .. } => Some(SubscriptionEnd::SubscribeUnanswered),
            Stage::Receiving { opened, .. } => match self.sub.until {
                Until::Elapsed(d) if Instant::now() >= opened + d => self.unsubscribe().await,
                _ => Some(SubscriptionEnd::Stalled),
            },
            Stage::Unsubscribing { .. } => {
                self.unsubscribed = Unsubscribed::Unanswered;
                Some(SubscriptionEnd::Complete)
            }
        }
    }

    /// The server closed the connection: an unsubscribe still due is
    /// unanswered.
    fn closed(&mut self) -> SubscriptionEnd {
        if let Stage::Unsubscribing { .. } = self.stage {
            self.unsubscribed = Unsubscribed::Unanswered;
        }
        SubscriptionEnd::ServerClosed
    }

    /// Sends the unsubscribe request, `[id]`.
    async fn unsubscribe(&mut self) -> Option<SubscriptionEnd> {
        let (_, id) = self.subscription.as_ref()?;
        let params = RawValue::from_string(format!("[{}]", id.get())).ok();
        let body = request(UNSUBSCRIBE_ID, &self.sub.unsubscribe, params);
        if let Err(e) = self.sink.send(body).await {
            self.problems
                .push(format!("sending the unsubscribe request failed: {e}"));
            return Some(SubscriptionEnd::Complete);
        }
        self.stage = Stage::Unsubscribing {
            sent: Instant::now(),
        };
        None
    }
}

fn request(id: u64, method: &str, params: Option<Box<RawValue>>) -> Bytes {
    let request = Message::Request(Request {
        id: Id::from(id),
        method: method.to_owned(),
        params,
        extras: Default::default(),
    });
    Bytes::from(request.to_json(Dialect::Strict))
}

/// Opens the subscription, counts its items until enough came (or the
/// time passed), and unsubscribes.
pub(crate) async fn run(
    link: &Link,
    sub: Subscribe,
    drain: Duration,
) -> Result<SubscriptionSummary, String> {
    let Connection { transport, child } = link.connect().await?;
    let (sink, mut stream) = transport.split();
    let bar = progress::items(match sub.until {
        Until::Items(n) => Some(n),
        Until::Elapsed(_) => None,
    });
    let mut session = Session {
        sub,
        drain,
        sink,
        stage: Stage::Subscribing {
            sent: Instant::now(),
        },
        feed: Feed::default(),
        subscription: None,
        subscribe_error: None,
        server_end: None,
        unsubscribed: Unsubscribed::NotSent,
        problems: Vec::new(),
        bar,
    };
    let body = request(
        SUBSCRIBE_ID,
        &session.sub.subscribe,
        session.sub.params.clone(),
    );
    let end = match session.sink.send(body).await {
        Ok(()) => read(&mut session, &mut stream).await,
        Err(e) => {
            session
                .problems
                .push(format!("sending the subscribe request failed: {e}"));
            SubscriptionEnd::ServerClosed
        }
    };
    session.bar.finish_and_clear();
    let waited = drain.as_secs_f64();
    match end {
        SubscriptionEnd::SubscribeUnanswered => session.problems.push(format!(
            "no answer to the subscribe request within {waited} s"
        )),
        SubscriptionEnd::Stalled => session.problems.push(format!(
            "no item within {waited} s of the last (or of the subscription's opening)"
        )),
        _ => {}
    }
    if tokio::time::timeout(drain, session.sink.close())
        .await
        .is_err()
    {
        session
            .problems
            .push("closing our side timed out".to_owned());
    }
    drop(stream);
    let Session {
        sub,
        sink,
        feed,
        subscription,
        subscribe_error,
        server_end,
        unsubscribed,
        mut problems,
        ..
    } = session;
    drop(sink);
    stop_child(child, &mut problems).await;
    Ok(SubscriptionSummary {
        target: link.target.label(),
        kind: link.target.kind(),
        subscribe: sub.subscribe,
        unsubscribe: sub.unsubscribe,
        until: sub.until,
        subscription: subscription.map(|(value, _)| value),
        feed,
        end,
        subscribe_error,
        server_end,
        unsubscribed,
        problems,
    })
}

/// Reads frames until the run ends.
async fn read(session: &mut Session, stream: &mut SplitStream<Transport>) -> SubscriptionEnd {
    // Checked lazily, as in the calls mode: when it fires, the real
    // deadline is worked out and the timer set again if that is later.
    let timer = tokio::time::sleep_until(session.deadline());
    tokio::pin!(timer);
    loop {
        let due = session.deadline();
        if due < timer.deadline() {
            timer.as_mut().reset(due);
        }
        tokio::select! {
            biased;
            item = stream.next() => match item {
                Some(Ok(frame)) => {
                    if let Some(end) = session.frame(frame).await {
                        return end;
                    }
                }
                Some(Err(e)) => {
                    session.problems.push(e.to_string());
                    return session.closed();
                }
                None => return session.closed(),
            },
            () = &mut timer => {
                let due = session.deadline();
                if Instant::now() < due {
                    timer.as_mut().reset(due);
                } else if let Some(end) = session.timed_out().await {
                    return end;
                }
            }
        }
    }
}
