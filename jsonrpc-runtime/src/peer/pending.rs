//! Outbound calls waiting for their answer.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::error::{CallError, CloseReason, ErrorObject, RpcError};
use crate::id::Id;

/// How a call ended, as seen by the reader.
pub(crate) enum Outcome<'a> {
    Result(&'a RawValue),
    Error(ErrorObject),
    Invalid(ErrorObject),
    Closed(CloseReason),
    Cancelled,
}

/// A waiting call: decodes its answer into the caller's types when it
/// arrives, on the reader's side, straight from the frame.
pub(crate) trait Slot: Send {
    fn complete(self: Box<Self>, outcome: Outcome<'_>);
}

pub(crate) struct TypedSlot<R, E> {
    tx: oneshot::Sender<Result<R, CallError<E>>>,
    _marker: PhantomData<fn() -> (R, E)>,
}

impl<R, E> TypedSlot<R, E> {
    pub(crate) fn new(tx: oneshot::Sender<Result<R, CallError<E>>>) -> Self {
        TypedSlot {
            tx,
            _marker: PhantomData,
        }
    }
}

impl<R, E> Slot for TypedSlot<R, E>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    fn complete(self: Box<Self>, outcome: Outcome<'_>) {
        let answer = match outcome {
            Outcome::Result(raw) => {
                serde_json::from_str(raw.get()).map_err(CallError::InvalidResult)
            }
            Outcome::Error(error) => Err(match E::from_error_object(&error) {
                Some(domain) => CallError::Domain(domain),
                None => CallError::Rpc(error),
            }),
            Outcome::Invalid(error) => Err(CallError::InvalidResponse(error)),
            Outcome::Closed(reason) => Err(CallError::Closed(reason)),
            Outcome::Cancelled => Err(CallError::Cancelled),
        };
        // The caller may have gone away; then nobody wants the answer.
        let _ = self.tx.send(answer);
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
    slots: HashMap<Id, Box<dyn Slot>>,
    closed: Option<CloseReason>,
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

    pub(crate) fn register(&self, id: Id, slot: Box<dyn Slot>) -> Result<(), RegisterError> {
        let mut table = self.lock();
        if let Some(reason) = &table.closed {
            return Err(RegisterError::Closed(reason.clone()));
        }
        match table.slots.entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => Err(RegisterError::Duplicate),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(slot);
                Ok(())
            }
        }
    }

    pub(crate) fn take(&self, id: &Id) -> Option<Box<dyn Slot>> {
        self.lock().slots.remove(id)
    }

    pub(crate) fn remove(&self, id: &Id) {
        let slot = self.lock().slots.remove(id);
        drop(slot);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().slots.is_empty()
    }

    /// Fails every waiting call and refuses new ones.
    pub(crate) fn close(&self, reason: &CloseReason) {
        let slots: Vec<_> = {
            let mut table = self.lock();
            table.closed.get_or_insert_with(|| reason.clone());
            table.slots.drain().map(|(_, slot)| slot).collect()
        };
        for slot in slots {
            slot.complete(Outcome::Closed(reason.clone()));
        }
    }
}
