//! What the client answers when the server asks: sampling, elicitation and
//! roots, written once and used both ways: as routes of the client's peer
//! on a session (the server calls them), and as answers to the questions
//! of an `input_required` result on the stateless revision.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use jsonrpc_runtime::{Context, ErrorObject, Router};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::client_features::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, ListRootsResult, Root,
};
use crate::types::{ClientCapabilities, LoggingMessageParams};

type Answerer<P, R> = Arc<dyn Fn(P) -> BoxFuture<'static, Result<R, ErrorObject>> + Send + Sync>;
type Listener<P> = Arc<dyn Fn(P) + Send + Sync>;

/// The client's answers to the server's questions, and what it hears.
#[derive(Clone, Default)]
pub(super) struct Handlers {
    pub(super) sampling: Option<Answerer<CreateMessageParams, CreateMessageResult>>,
    pub(super) elicitation: Option<Answerer<ElicitParams, ElicitResult>>,
    pub(super) roots: Option<Arc<Vec<Root>>>,
    pub(super) log: Option<Listener<LoggingMessageParams>>,
    pub(super) resource_updated: Option<Listener<String>>,
    pub(super) list_changed: Option<Listener<String>>,
    /// Capabilities declared as given, over those the callbacks make.
    pub(super) declared: Map<String, Value>,
}

impl Handlers {
    /// The capabilities these answers make: each question the client can
    /// answer.
    pub(super) fn capabilities(&self) -> ClientCapabilities {
        let mut made = ClientCapabilities {
            sampling: self.sampling.as_ref().map(|_| json!({})),
            elicitation: self.elicitation.as_ref().map(|_| json!({"form": {}})),
            roots: self.roots.as_ref().map(|_| json!({"listChanged": false})),
            ..ClientCapabilities::default()
        };
        for (name, value) in &self.declared {
            match name.as_str() {
                "sampling" => made.sampling = Some(value.clone()),
                "elicitation" => made.elicitation = Some(value.clone()),
                "roots" => made.roots = Some(value.clone()),
                _ => {
                    made.other.insert(name.clone(), value.clone());
                }
            }
        }
        made
    }

    /// Answers one question of `method` with `params`, as a result value.
    pub(super) async fn answer(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        match method {
            "sampling/createMessage" => ask(self.sampling.as_ref(), method, params).await,
            "elicitation/create" => ask(self.elicitation.as_ref(), method, params).await,
            "roots/list" => match &self.roots {
                Some(roots) => to_value(&ListRootsResult {
                    roots: roots.to_vec(),
                }),
                None => Err(ErrorObject::method_not_found(method)),
            },
            _ => Err(ErrorObject::method_not_found(method)),
        }
    }

    /// The routes of the client's peer on a session.
    pub(super) fn router(&self) -> Router {
        let mut router = Router::new();
        for method in ["sampling/createMessage", "elicitation/create", "roots/list"] {
            let handlers = self.clone();
            router = router.request(method, move |params: Value, _: Context| {
                let handlers = handlers.clone();
                async move { handlers.answer(method, params).await }
            });
        }
        let log = self.log.clone();
        router = router.notification(
            "notifications/message",
            move |params: LoggingMessageParams, _: Context| {
                if let Some(log) = &log {
                    log(params);
                }
                async {}
            },
        );
        let updated = self.resource_updated.clone();
        router = router.notification(
            "notifications/resources/updated",
            move |params: Value, _: Context| {
                if let (Some(updated), Some(uri)) = (&updated, params["uri"].as_str()) {
                    updated(uri.to_owned());
                }
                async {}
            },
        );
        for list in ["tools", "resources", "prompts"] {
            let changed = self.list_changed.clone();
            let method = format!("notifications/{list}/list_changed");
            router = router.notification(&method, move |_: Value, _: Context| {
                if let Some(changed) = &changed {
                    changed(list.to_owned());
                }
                async {}
            });
        }
        router
    }
}

/// Asks `answerer` (the user's callback) with `params` decoded; -32601
/// when there is none (the capability was not declared), -32602 when the
/// params do not fit.
async fn ask<P: DeserializeOwned, R: Serialize>(
    answerer: Option<&Answerer<P, R>>,
    method: &str,
    params: Value,
) -> Result<Value, ErrorObject> {
    let Some(answerer) = answerer else {
        return Err(ErrorObject::method_not_found(method));
    };
    let params = serde_json::from_value(params).map_err(ErrorObject::invalid_params)?;
    to_value(&answerer(params).await?)
}

fn to_value(result: &impl Serialize) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(|e| ErrorObject::internal_error(e.to_string()))
}
