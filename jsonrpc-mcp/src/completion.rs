//! Completion (`completion/complete`): suggestions for a prompt's argument
//! or a resource template's variable as the user types it.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use jsonrpc_runtime::ErrorObject;
use serde::{Deserialize, Serialize};

use crate::server::ToolContext;
use crate::ToolError;

/// The most values one answer holds, as the specification caps it; the
/// rest are counted in `total` and flagged by `hasMore`.
pub const MAX_COMPLETIONS: usize = 100;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Reference {
    /// An argument of the prompt `name`.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt.
        name: String,
    },
    /// A variable of the resource template `uri` (the template itself).
    #[serde(rename = "ref/resource")]
    Resource {
        /// The template, as `resources/templates/list` gives it.
        uri: String,
    },
}

/// The argument being typed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteArgument {
    /// Its name.
    pub name: String,
    /// What the user has typed so far.
    pub value: String,
}

/// The other arguments already given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompleteContext {
    /// By name.
    #[serde(default)]
    pub arguments: HashMap<String, String>,
}

/// `completion/complete`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: Reference,
    /// The argument being typed.
    pub argument: CompleteArgument,
    /// The other arguments already given.
    #[serde(default)]
    pub context: CompleteContext,
}

/// `completion/complete`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteResult {
    /// The suggestions.
    pub completion: Completion,
}

/// Suggestions for one argument.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most [`MAX_COMPLETIONS`] values, best first.
    pub values: Vec<String>,
    /// How many there are in all, when more than `values` holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than `values` holds.
    #[serde(default)]
    pub has_more: bool,
}

impl Completion {
    /// The first [`MAX_COMPLETIONS`] of `values`, the rest counted.
    pub fn capped(mut values: Vec<String>) -> Self {
        let all = values.len();
        values.truncate(MAX_COMPLETIONS);
        Completion {
            values,
            total: (all > MAX_COMPLETIONS).then_some(all as u64),
            has_more: all > MAX_COMPLETIONS,
        }
    }
}

/// How one argument is completed: what was typed, the other arguments,
/// the context.
pub(crate) type CompleteFn = dyn Fn(
        String,
        HashMap<String, String>,
        ToolContext,
    ) -> BoxFuture<'static, Result<Vec<String>, ErrorObject>>
    + Send
    + Sync;

/// The completers of a catalog, by what and which argument they complete.
pub(crate) type Completers = HashMap<(Reference, String), Arc<CompleteFn>>;

/// The boxed completer of a handler.
pub(crate) fn completer<F, Fut>(handler: F) -> Arc<CompleteFn>
where
    F: Fn(String, HashMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<String>, ToolError>> + Send + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |value, context, cx| {
        let handler = handler.clone();
        Box::pin(async move {
            handler(value, context, cx)
                .await
                .map_err(ToolError::into_error)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_the_cap_is_cut_and_counted() {
        let few = Completion::capped(vec!["a".to_owned(), "b".to_owned()]);
        assert_eq!(
            (few.values.len(), few.total, few.has_more),
            (2, None, false)
        );
        let many = Completion::capped((0..150).map(|n| n.to_string()).collect());
        assert_eq!(many.values.len(), MAX_COMPLETIONS);
        assert_eq!((many.total, many.has_more), (Some(150), true));
        assert_eq!(many.values[0], "0");
    }
}
