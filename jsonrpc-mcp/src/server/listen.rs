//! `subscriptions/listen` (2026-07-28): a long-lived request on which the
//! server sends the notifications a stateless client opted in to (list
//! changes, updates of resources), in place of a session's `GET` stream
//! and `resources/subscribe`. The server first acknowledges what it will
//! send, then tags every notification with the request's id in
//! `_meta["io.modelcontextprotocol/subscriptionId"]`; the request lasts
//! until the client cancels it or the connection ends.

use std::sync::Arc;

use futures_util::future::{select, Either};
use jsonrpc_runtime::ErrorObject;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::hub::MAX_SUBSCRIPTIONS;
use super::session::{Session, ToolContext};
use crate::types::SubscriptionFilter;

/// How many notifications wait for a listening stream before the newest
/// are dropped (with a warning): a client that stops reading cannot grow
/// the server's memory.
pub(super) const LISTEN_QUEUE: usize = 64;

/// The `_meta` key that ties a notification to its stream.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `subscriptions/listen`'s params.
#[derive(Debug, Deserialize)]
pub(super) struct ListenParams {
    notifications: SubscriptionFilter,
}

/// One open stream: what it takes, and where its notifications wait.
pub(super) struct Listener {
    filter: SubscriptionFilter,
    queue: mpsc::Sender<(&'static str, Value)>,
}

impl Listener {
    /// Queues `method` for the stream if it opted in (`uri`: the resource
    /// an update is about); whether it was queued.
    pub(super) fn offer(&self, method: &'static str, uri: Option<&str>, params: &Value) -> bool {
        let wanted = match method {
            "notifications/tools/list_changed" => self.filter.tools_list_changed,
            "notifications/prompts/list_changed" => self.filter.prompts_list_changed,
            "notifications/resources/list_changed" => self.filter.resources_list_changed,
            "notifications/resources/updated" => {
                uri.is_some_and(|uri| self.filter.resource_subscriptions.iter().any(|u| u == uri))
            }
            _ => false,
        };
        if !wanted {
            return false;
        }
        match self.queue.try_send((method, params.clone())) {
            Ok(()) => true,
            Err(_) => {
                tracing::warn!(
                    method,
                    "a listening stream is full; its notification is dropped"
                );
                false
            }
        }
    }

    pub(super) fn is_open(&self) -> bool {
        !self.queue.is_closed()
    }
}

impl Session {
    /// What of `asked` this server will send: the lists it has, and the
    /// URIs of resources it has (at most [`MAX_SUBSCRIPTIONS`]).
    fn honoured(&self, asked: SubscriptionFilter) -> SubscriptionFilter {
        let resources = self.offers_resources();
        let mut seen = std::collections::HashSet::new();
        let mut uris = Vec::new();
        for uri in asked.resource_subscriptions {
            if !resources || uris.len() == MAX_SUBSCRIPTIONS {
                break;
            }
            if self.has_resource(&uri) && seen.insert(uri.clone()) {
                uris.push(uri);
            }
        }
        SubscriptionFilter {
            tools_list_changed: asked.tools_list_changed,
            prompts_list_changed: asked.prompts_list_changed && self.offers_prompts(),
            resources_list_changed: asked.resources_list_changed && resources,
            resource_subscriptions: uris,
        }
    }

    /// `subscriptions/listen`: acknowledges, then forwards what the
    /// [`Notifier`](super::Notifier) sends that the stream opted in to,
    /// until the request is cancelled or the connection ends.
    pub(super) async fn listen(
        self: Arc<Self>,
        params: ListenParams,
        cx: ToolContext,
    ) -> Result<Value, ErrorObject> {
        let id = cx.context().id().cloned();
        let meta = json!({ SUBSCRIPTION_ID: id });
        let filter = self.honoured(params.notifications);
        let (queue, mut queued) = mpsc::channel(LISTEN_QUEUE);
        // Joined before the acknowledgement, so nothing sent after it is
        // missed; nothing queued goes out before it.
        let listener = Arc::new(Listener {
            filter: filter.clone(),
            queue,
        });
        self.catalog.hub.listen(&listener);
        let peer = cx.context().peer().clone();
        let acknowledged = json!({"notifications": filter, "_meta": meta});
        peer.notify("notifications/subscriptions/acknowledged", acknowledged)
            .await
            .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
        let mut cancelled = std::pin::pin!(cx.context().cancellation().cancelled());
        loop {
            let next = std::pin::pin!(queued.recv());
            let (method, mut params) = match select(cancelled.as_mut(), next).await {
                Either::Right((Some(next), _)) => next,
                Either::Left(_) | Either::Right((None, _)) => break,
            };
            if let Value::Object(params) = &mut params {
                params.insert("_meta".into(), meta.clone());
            }
            if peer.notify(method, params).await.is_err() {
                break;
            }
        }
        drop(listener);
        Ok(json!({"_meta": meta}))
    }
}
