//! Client-side batches: several calls and notifications sent as one
//! JSON-RPC batch, one frame, each call's answer matched by its id
//! whatever order the answers come in.
//!
//! Each call of a batch is registered in the table of waiting calls as it
//! is added, and is then an ordinary [`PendingCall`]: typed, with its own
//! timeout, cancellable. The frame goes out on [`Batch::send`]. A server
//! that refuses the batch as a whole (too long, or batches not accepted)
//! answers with one error whose id is `null`; that error fails every call
//! of the oldest batch none of whose calls has been answered.

use std::fmt;
use std::sync::{Arc, Mutex};

use bytes::{BufMut as _, Bytes, BytesMut};
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Call, CallError, Outcome, Peer, PendingCall, SendError, Shared};
use crate::id::Id;
use crate::message::{ErrorObject, RpcError};

/// Batches sent whose calls may still be waiting: the ids of each.
#[derive(Default)]
pub(crate) struct SentBatches(Mutex<Vec<Vec<Id>>>);

impl SentBatches {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Vec<Id>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a batch sent, forgetting those whose calls are all over.
    fn sent(&self, shared: &Shared, ids: Vec<Id>) {
        let mut batches = self.lock();
        batches.retain(|batch| batch.iter().any(|id| shared.pending.contains(id)));
        batches.push(ids);
    }

    /// An error answer with a `null` id: fails the calls of the oldest
    /// batch that has none answered. True if there was one.
    pub(crate) fn refused(&self, shared: &Shared, error: &ErrorObject) -> bool {
        let batch = {
            let mut batches = self.lock();
            batches.retain(|batch| batch.iter().any(|id| shared.pending.contains(id)));
            let whole = batches
                .iter()
                .position(|batch| batch.iter().all(|id| shared.pending.contains(id)));
            match whole {
                Some(index) => batches.remove(index),
                None => return false,
            }
        };
        for id in batch {
            if let Some(waiting) = shared.pending.take(&id) {
                waiting.span.answered(Some(error.code.0));
                waiting.slot.complete(Outcome::Error(error.clone()));
            }
        }
        true
    }
}

/// Several calls and notifications to send as one JSON-RPC batch.
///
/// Add calls with [`call`](Batch::call) (any [`Call`]: from
/// [`Peer::call`] or from a client `#[rpc]` generated, so each result is
/// typed) and notifications with [`notify`](Batch::notify), then
/// [`send`](Batch::send) the batch and await each call's [`PendingCall`].
/// Dropping a batch unsent fails its calls with [`CallError::Cancelled`].
/// The other side's caps on batches apply
/// ([`Config::max_batch_len`](crate::Config::max_batch_len) here): a batch
/// it refuses as a whole fails every call of it with its error.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new()
///     .request("add", |(a, b): (i64, i64), _: Context| async move { Ok::<_, ErrorObject>(a + b) })
///     .request("name", |(): (), _: Context| async { Ok::<_, ErrorObject>("calculator") })
///     .notification("log", |(_line,): (String,), _: Context| async {});
/// let (a, b) = Transport::pair(8);
/// let _server = Peer::builder().router(router).spawn(b);
/// let client = Peer::spawn(a);
///
/// let mut batch = client.batch();
/// let sum = batch.call(client.call::<i64>("add", [2, 3]));
/// let name = batch.call(client.call::<String>("name", ()));
/// batch.notify("log", ["sent as one frame"])?;
/// batch.send().await?;
/// assert_eq!(sum.await?, 5);
/// assert_eq!(name.await?, "calculator");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[must_use = "a batch does nothing until it is sent"]
pub struct Batch<'p> {
    peer: &'p Peer,
    body: BytesMut,
    /// The ids of its calls.
    ids: Vec<Id>,
    entries: usize,
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Batch")
            .field("entries", &self.entries)
            .field("calls", &self.ids.len())
            .finish_non_exhaustive()
    }
}

impl Peer {
    /// A batch to fill with calls and notifications and send as one frame
    /// (see [`Batch`]).
    pub fn batch(&self) -> Batch<'_> {
        Batch {
            peer: self,
            body: BytesMut::new(),
            ids: Vec::new(),
            entries: 0,
        }
    }
}

impl<'p> Batch<'p> {
    /// Adds a call; await the [`PendingCall`] for its result once the
    /// batch is [sent](Batch::send). Its timeout counts from here.
    ///
    /// A call that cannot be added (its params do not encode, the
    /// connection is closed, or it was made on another peer's handle) is
    /// not sent, and its `PendingCall` yields why.
    pub fn call<R, E, P>(&mut self, call: Call<'_, R, E, P>) -> PendingCall<R, E>
    where
        R: DeserializeOwned + Send + 'static,
        E: RpcError + Send + 'static,
        P: Serialize,
    {
        let (peer, method, params, options) = call.into_parts();
        let shared = self.peer.shared.clone();
        let id = shared.ids.next();
        let timeout = options
            .timeout
            .unwrap_or_else(|| self.peer.default_timeout());
        let registered = if !Arc::ptr_eq(&peer.shared, &shared) {
            tracing::warn!(method, "a call of another connection was added to a batch");
            Err(CallError::NotSent(SendError::Closed(
                super::CloseReason::Local,
            )))
        } else {
            shared
                .request_frame(&id, method, &params, options.extras.as_ref())
                .map_err(CallError::InvalidParams)
                .and_then(|frame| {
                    let (rx, _) = shared.register::<R, E>(&id, method)?;
                    self.push(&frame);
                    self.ids.push(id.clone());
                    Ok(rx)
                })
        };
        PendingCall::registered(shared, id, registered, timeout)
    }

    /// Adds a notification.
    ///
    /// # Errors
    ///
    /// [`SendError::InvalidParams`] when `params` do not encode to an
    /// object, an array or `null`.
    pub fn notify(&mut self, method: &str, params: impl Serialize) -> Result<(), SendError> {
        let shared = &self.peer.shared;
        let frame = shared
            .message_frame(None, method, &params, &shared.config.extras)
            .map_err(SendError::InvalidParams)?;
        self.push(&frame);
        Ok(())
    }

    /// How many calls and notifications the batch holds.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether the batch holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    fn push(&mut self, frame: &[u8]) {
        self.body
            .put_u8(if self.entries == 0 { b'[' } else { b',' });
        self.body.extend_from_slice(frame);
        self.entries += 1;
    }

    /// Sends the batch as one frame, once the outbound budget has room. An
    /// empty batch sends nothing.
    ///
    /// # Errors
    ///
    /// [`SendError::Closed`] when the connection is closed; the batch's
    /// calls then fail with [`CallError::Closed`].
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes sends nothing and fails the
    /// batch's calls with [`CallError::Cancelled`].
    pub async fn send(mut self) -> Result<(), SendError> {
        if self.entries == 0 {
            return Ok(());
        }
        self.body.put_u8(b']');
        let body: Bytes = std::mem::take(&mut self.body).freeze();
        let ids = std::mem::take(&mut self.ids);
        let shared = self.peer.shared.clone();
        // Cancelled from here on should this future be dropped.
        let unsent = Unsent {
            shared: &shared,
            ids: Some(ids),
        };
        let sent = shared.send(body).await;
        let ids = unsent.disarm();
        match sent {
            Ok(()) => {
                shared.sent_batches.sent(&shared, ids);
                Ok(())
            }
            Err(error) => {
                let reason = shared.reason_or_local();
                for id in ids {
                    if let Some(waiting) = shared.pending.take(&id) {
                        waiting.span.ended("not sent");
                        waiting.slot.complete(Outcome::Closed(reason.clone()));
                    }
                }
                Err(error)
            }
        }
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        cancel_unsent(&self.peer.shared, std::mem::take(&mut self.ids));
    }
}

/// The calls of a batch whose send was dropped before it completed.
struct Unsent<'a> {
    shared: &'a Shared,
    ids: Option<Vec<Id>>,
}

impl Unsent<'_> {
    fn disarm(mut self) -> Vec<Id> {
        self.ids.take().unwrap_or_default()
    }
}

impl Drop for Unsent<'_> {
    fn drop(&mut self) {
        if let Some(ids) = self.ids.take() {
            cancel_unsent(self.shared, ids);
        }
    }
}

/// Fails calls that were never sent.
fn cancel_unsent(shared: &Shared, ids: Vec<Id>) {
    for id in ids {
        if let Some(waiting) = shared.pending.take(&id) {
            waiting.span.ended("the batch was not sent");
            waiting.slot.complete(Outcome::Cancelled);
        }
    }
}
