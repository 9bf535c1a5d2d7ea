//! Outbound calls waiting for their answer.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};

use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;

use crate::id::Id;
use crate::message::RawJson;
use crate::message::{ErrorObject, RpcError};
use crate::peer::{CallError, CloseReason};
use crate::trace::CallSpan;

/// How a call ended, as seen by the reader.
pub(crate) enum Outcome<'a> {
    Result(RawJson<'a>),
    Error(ErrorObject),
    Invalid(ErrorObject),
    Closed(CloseReason),
    Cancelled,
}

/// A waiting call: decodes its answer into the caller's types when it
/// arrives, on the reader's side, straight from the frame.
pub(crate) trait Slot: Send + Sync {
    fn complete(&self, outcome: Outcome<'_>);
    /// Nobody will complete the slot: the caller learns the call is over.
    fn abandon(&self);
}

/// The cell one call's answer goes through: one allocation shared by the
/// table (as a [`SlotHandle`]) and the caller (as a [`Receiver`]), instead of
/// a boxed slot plus a channel.
pub(crate) struct TypedSlot<R, E> {
    state: Mutex<CellState<Result<R, CallError<E>>>>,
}

enum CellState<T> {
    /// No answer yet; the caller's waker, once it has polled.
    Waiting(Option<Waker>),
    Ready(T),
    /// Taken by the caller, or abandoned.
    Over,
}

impl<R, E> TypedSlot<R, E>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    /// A slot for the table and the receiver its caller awaits.
    pub(crate) fn pair() -> (SlotHandle, Receiver<R, E>) {
        let slot = Arc::new(TypedSlot {
            state: Mutex::new(CellState::Waiting(None)),
        });
        (SlotHandle(Some(slot.clone())), Receiver(slot))
    }
}

impl<R, E> TypedSlot<R, E> {
    /// A cell whose answer another slot settles (one that does more than
    /// decode, such as a subscription's), and the receiver its caller
    /// awaits.
    pub(crate) fn cell() -> (Arc<Self>, Receiver<R, E>) {
        let slot = Arc::new(TypedSlot {
            state: Mutex::new(CellState::Waiting(None)),
        });
        (slot.clone(), Receiver(slot))
    }

    /// Hands the caller its answer.
    pub(crate) fn resolve(&self, answer: Result<R, CallError<E>>) {
        self.settle(CellState::Ready(answer));
    }

    /// Tells the caller nobody will answer.
    pub(crate) fn give_up(&self) {
        self.settle(CellState::Over);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CellState<Result<R, CallError<E>>>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn settle(&self, next: CellState<Result<R, CallError<E>>>) {
        let waker = {
            let mut state = self.lock();
            match &mut *state {
                CellState::Waiting(waker) => {
                    let waker = waker.take();
                    *state = next;
                    waker
                }
                _ => None,
            }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<R, E> Slot for TypedSlot<R, E>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    fn complete(&self, outcome: Outcome<'_>) {
        let answer = match outcome {
            Outcome::Result(raw) => {
                serde_json::from_str(raw.get()).map_err(CallError::InvalidResult)
            }
            Outcome::Error(error) => Err(CallError::from_answer(error)),
            Outcome::Invalid(error) => Err(CallError::InvalidResponse(error)),
            Outcome::Closed(reason) => Err(CallError::Closed(reason)),
            Outcome::Cancelled => Err(CallError::Cancelled),
        };
        self.settle(CellState::Ready(answer));
    }

    fn abandon(&self) {
        self.settle(CellState::Over);
    }
}

/// The table's hold on a slot: completing it consumes it; dropping it
/// without completing tells the caller the call is over (as a dropped
/// channel sender would).
pub(crate) struct SlotHandle(Option<Arc<dyn Slot>>);

impl SlotHandle {
    pub(crate) fn new(slot: Arc<dyn Slot>) -> Self {
        SlotHandle(Some(slot))
    }

    pub(crate) fn complete(mut self, outcome: Outcome<'_>) {
        if let Some(slot) = self.0.take() {
            slot.complete(outcome);
        }
    }
}

impl Drop for SlotHandle {
    fn drop(&mut self) {
        if let Some(slot) = self.0.take() {
            slot.abandon();
        }
    }
}

/// Nobody will answer: the slot was dropped without an answer.
#[derive(Debug)]
pub(crate) struct Abandoned;

/// The caller's side of a slot: resolves to the decoded answer.
pub(crate) struct Receiver<R, E>(Arc<TypedSlot<R, E>>);

impl<R, E> Future for Receiver<R, E> {
    type Output = Result<Result<R, CallError<E>>, Abandoned>;

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<Self::Output> {
        let mut state = self.0.lock();
        match std::mem::replace(&mut *state, CellState::Over) {
            CellState::Ready(answer) => Poll::Ready(Ok(answer)),
            CellState::Over => Poll::Ready(Err(Abandoned)),
            CellState::Waiting(waker) => {
                let waker = match waker {
                    Some(w) if w.will_wake(cx.waker()) => w,
                    _ => cx.waker().clone(),
                };
                *state = CellState::Waiting(Some(waker));
                Poll::Pending
            }
        }
    }
}

/// The table of waiting calls. Once closed, it takes no new entries, so no
/// call can register after the connection failed its waiters.
#[derive(Default)]
pub(crate) struct PendingTable {
    inner: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    /// Keyed by ids this side made, so a fast hash: the other side only
    /// looks ids up, it cannot fill the table with keys of its choosing.
    slots: FxHashMap<Id, Waiting>,
    closed: Option<CloseReason>,
}

/// One waiting call: where its answer goes, and its span.
pub(crate) struct Waiting {
    pub(crate) slot: SlotHandle,
    pub(crate) span: CallSpan,
}

pub(crate) enum RegisterError {
    Closed(CloseReason),
    Duplicate,
}

impl PendingTable {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding this lock cannot leave the map inconsistent
        // (every operation is a single insert or remove), so poisoning is
        // ignored.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a call; true if it is the only one waiting.
    pub(crate) fn register(
        &self,
        id: Id,
        slot: SlotHandle,
        span: CallSpan,
    ) -> Result<bool, RegisterError> {
        let mut table = self.lock();
        if let Some(reason) = &table.closed {
            return Err(RegisterError::Closed(reason.clone()));
        }
        match table.slots.entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => Err(RegisterError::Duplicate),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Waiting { slot, span });
                Ok(table.slots.len() == 1)
            }
        }
    }

    pub(crate) fn take(&self, id: &Id) -> Option<Waiting> {
        self.lock().slots.remove(id)
    }

    /// Drops the entry of a call that could not be sent.
    pub(crate) fn remove(&self, id: &Id) {
        let waiting = self.lock().slots.remove(id);
        if let Some(waiting) = waiting {
            waiting.span.ended("not sent");
        }
    }

    pub(crate) fn contains(&self, id: &Id) -> bool {
        self.lock().slots.contains_key(id)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().slots.is_empty()
    }

    /// Fails every waiting call and refuses new ones.
    pub(crate) fn close(&self, reason: &CloseReason) {
        let slots: Vec<_> = {
            let mut table = self.lock();
            table.closed.get_or_insert_with(|| reason.clone());
            table.slots.drain().map(|(_, waiting)| waiting).collect()
        };
        for Waiting { slot, span } in slots {
            span.ended("connection closed");
            slot.complete(Outcome::Closed(reason.clone()));
        }
    }
}
