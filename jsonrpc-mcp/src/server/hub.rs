//! The server's sessions, for notifications that go to more than one: a
//! resource that changed to the sessions subscribed to it, a list that
//! changed to all.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError, Weak};

use jsonrpc_runtime::Peer;
use serde_json::json;

use super::listen::Listener;
use super::session::Session;

/// The sessions that said `initialize`, held weakly: a session ends with
/// its connection, and is pruned from here as it is found gone.
#[derive(Default)]
pub(super) struct Hub {
    sessions: Mutex<Sessions>,
    /// Open `subscriptions/listen` streams.
    listeners: Mutex<Vec<Weak<Listener>>>,
}

#[derive(Default)]
struct Sessions {
    all: Vec<Weak<Session>>,
    /// How many were live at the last pruning.
    live: usize,
}

impl Sessions {
    fn prune(&mut self) {
        self.all
            .retain(|s| s.upgrade().is_some_and(|s| s.is_live()));
        self.live = self.all.len();
    }
}

impl Hub {
    /// Adds `session`. Sessions that ended are pruned once the list has
    /// doubled since the last pruning: each join costs O(1) amortized.
    pub(super) fn join(&self, session: &Arc<Session>) {
        let mut sessions = self.lock();
        if sessions.all.len() >= 2 * sessions.live.max(16) {
            sessions.prune();
        }
        sessions.all.push(Arc::downgrade(session));
    }

    /// Adds a listening stream; it leaves when dropped.
    pub(super) fn listen(&self, listener: &Arc<Listener>) {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        listeners.retain(|l| l.upgrade().is_some_and(|l| l.is_open()));
        listeners.push(Arc::downgrade(listener));
    }

    /// Offers a notification to every listening stream; how many took it.
    fn offer(&self, method: &'static str, uri: Option<&str>, params: &serde_json::Value) -> usize {
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let mut took = 0;
        listeners.retain(|listener| {
            let Some(listener) = listener.upgrade() else {
                return false;
            };
            took += usize::from(listener.offer(method, uri, params));
            true
        });
        took
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The live sessions' peers, with whether each wants `uri`'s updates
    /// (all of them when `uri` is `None`).
    fn peers(&self, uri: Option<&str>) -> Vec<Peer> {
        let mut sessions = self.lock();
        let mut peers = Vec::new();
        sessions.all.retain(|session| {
            let Some(session) = session.upgrade().filter(|s| s.is_live()) else {
                return false;
            };
            if uri.is_none_or(|uri| session.is_subscribed(uri)) {
                peers.extend(session.peer().cloned());
            }
            true
        });
        sessions.live = sessions.all.len();
        peers
    }
}

/// Sends notifications to the sessions of an [`McpServer`](super::McpServer):
/// a resource's update to those subscribed to it, and a list's change to
/// all. Cheap to clone; keep one where the server's data changes.
///
/// # Examples
///
/// ```
/// use jsonrpc_mcp::resources::Resource;
/// use jsonrpc_mcp::types::ResourceContents;
/// use jsonrpc_mcp::McpServer;
///
/// # async fn example() {
/// let server = McpServer::new("files", "1.0.0").resource(
///     Resource::new("file:///log", "log"),
///     |uri, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "…")]) },
/// );
/// let notifier = server.notifier();
/// // The log grew: every session subscribed to it hears so.
/// notifier.resource_updated("file:///log").await;
/// # }
/// ```
#[derive(Clone)]
pub struct Notifier {
    pub(super) hub: Arc<Hub>,
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notifier").finish_non_exhaustive()
    }
}

impl Notifier {
    /// Tells the sessions subscribed to `uri` (`resources/subscribe`) that
    /// it changed (`notifications/resources/updated`). Returns how many
    /// were told; a session whose connection is closing is skipped.
    ///
    /// # Cancel safety
    ///
    /// Some sessions may have been told and others not.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let params = json!({ "uri": uri });
        self.send(Some(uri), "notifications/resources/updated", params)
            .await
    }

    /// Tells every session that the list of resources changed
    /// (`notifications/resources/list_changed`).
    ///
    /// # Cancel safety
    ///
    /// As [`resource_updated`](Self::resource_updated).
    pub async fn resource_list_changed(&self) -> usize {
        let params = json!({});
        self.send(None, "notifications/resources/list_changed", params)
            .await
    }

    /// Tells every session that the list of tools changed
    /// (`notifications/tools/list_changed`).
    ///
    /// # Cancel safety
    ///
    /// As [`resource_updated`](Self::resource_updated).
    pub async fn tool_list_changed(&self) -> usize {
        self.send(None, "notifications/tools/list_changed", json!({}))
            .await
    }

    /// Tells every session that the list of prompts changed
    /// (`notifications/prompts/list_changed`).
    ///
    /// # Cancel safety
    ///
    /// As [`resource_updated`](Self::resource_updated).
    pub async fn prompt_list_changed(&self) -> usize {
        self.send(None, "notifications/prompts/list_changed", json!({}))
            .await
    }

    async fn send(
        &self,
        uri: Option<&str>,
        method: &'static str,
        params: serde_json::Value,
    ) -> usize {
        let mut told = self.hub.offer(method, uri, &params);
        for peer in self.hub.peers(uri) {
            if peer.notify(method, &params).await.is_ok() {
                told += 1;
            }
        }
        told
    }
}

/// How many resources one session may be subscribed to at once.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The URIs one session subscribed to.
#[derive(Default)]
pub(super) struct Subscriptions(Mutex<HashSet<String>>);

impl Subscriptions {
    /// Adds `uri`; false when the session already has
    /// [`MAX_SUBSCRIPTIONS`] others.
    pub(super) fn add(&self, uri: String) -> bool {
        let mut uris = self.lock();
        if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains(&uri) {
            return false;
        }
        uris.insert(uri);
        true
    }

    pub(super) fn remove(&self, uri: &str) {
        self.lock().remove(uri);
    }

    pub(super) fn contains(&self, uri: &str) -> bool {
        self.lock().contains(uri)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
