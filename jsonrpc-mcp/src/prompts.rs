//! Prompts: templates of messages a client offers its user, each with named
//! string arguments taken from a typed struct.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use jsonrpc_runtime::ErrorObject;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::types::Content;

/// A prompt as `prompts/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// The name `prompts/get` names it by.
    pub name: String,
    /// A name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether `prompts/get` must give it.
    #[serde(default)]
    pub required: bool,
}

/// `prompts/get`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptParams {
    /// The prompt.
    pub name: String,
    /// Its arguments, by name.
    #[serde(default)]
    pub arguments: HashMap<String, String>,
}

/// `prompts/get`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetPromptResult {
    /// What the messages are for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages.
    pub messages: Vec<PromptMessage>,
}

/// `prompts/list`'s result: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListPromptsResult {
    /// The prompts of this page.
    pub prompts: Vec<Prompt>,
    /// The cursor of the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Who says a prompt's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

impl PromptMessage {
    /// The user saying `text`.
    pub fn user(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::User,
            content: Content::text(text),
        }
    }

    /// The user saying `content`: an image, audio, an embedded resource.
    pub fn user_content(content: Content) -> Self {
        PromptMessage {
            role: Role::User,
            content,
        }
    }

    /// The model saying `text`.
    pub fn assistant(text: impl Into<String>) -> Self {
        PromptMessage {
            role: Role::Assistant,
            content: Content::text(text),
        }
    }
}

/// How a prompt's messages are made: its arguments (as sent), the context.
pub(crate) type GetFn = dyn Fn(
        HashMap<String, String>,
        crate::ToolContext,
    ) -> BoxFuture<'static, Result<Vec<PromptMessage>, ErrorObject>>
    + Send
    + Sync;

/// A prompt of the catalog.
pub(crate) struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) get: Arc<GetFn>,
}

/// The arguments a struct's JSON Schema describes: each property, its
/// description, and whether it is required.
pub(crate) fn arguments_of(schema: &Value) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            description: property["description"].as_str().map(str::to_owned),
            required: required.contains(&name.as_str()),
        })
        .collect()
}
