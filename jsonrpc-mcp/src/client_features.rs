//! What a server asks of its client: a model's completion (sampling), the
//! user's input (elicitation) and the client's roots.
//!
//! A tool asks through its [`ToolContext`](crate::ToolContext):
//! [`create_message`](crate::ToolContext::create_message),
//! [`elicit`](crate::ToolContext::elicit) (a form from a typed struct) and
//! [`list_roots`](crate::ToolContext::list_roots). Each checks first that
//! the client declared the capability, and fails with
//! [`AskError::NotOffered`] when it did not, as the specification forbids
//! the request then.

use std::fmt;

use jsonrpc_runtime::peer::CallError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::prompts::Role;
use crate::types::Content;

/// `sampling/createMessage`'s params: the conversation to complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens the model may produce.
    pub max_tokens: u32,
    /// The system prompt the server suggests; the client may ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which models the server would prefer (`hints`, priorities), as sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<Value>,
    /// The sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Where the model should stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Everything else of the request (`includeContext`, `metadata`, …).
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl CreateMessageParams {
    /// Asks the model to answer the user's `text` in at most `max_tokens`.
    pub fn user(text: impl Into<String>, max_tokens: u32) -> Self {
        CreateMessageParams {
            messages: vec![SamplingMessage {
                role: Role::User,
                content: vec![Content::text(text)],
            }],
            max_tokens,
            system_prompt: None,
            model_preferences: None,
            temperature: None,
            stop_sequences: None,
            other: Map::new(),
        }
    }
}

/// One message of a sampled conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said: one content block on the wire when there is one (as
    /// every revision reads), an array when there are more.
    #[serde(with = "one_or_many")]
    pub content: Vec<Content>,
}

/// `sampling/createMessage`'s result: what the model said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who says it (the model: `assistant`).
    pub role: Role,
    /// What it said.
    #[serde(with = "one_or_many")]
    pub content: Vec<Content>,
    /// The model that said it.
    pub model: String,
    /// Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl CreateMessageResult {
    /// The text of the answer: its text blocks, joined.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

/// `elicitation/create`'s params: a form for the user to fill in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitParams {
    /// What the user is asked.
    pub message: String,
    /// The form: an object schema of flat, primitive fields.
    pub requested_schema: Value,
}

impl ElicitParams {
    /// A form of `fields` (an object of JSON Schemas by field name, each
    /// flat and primitive), of which `required` must be filled in.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::client_features::ElicitParams;
    /// use serde_json::json;
    ///
    /// let form = ElicitParams::form("Confirm?", json!({"ok": {"type": "boolean"}}), &["ok"]);
    /// assert_eq!(form.requested_schema["required"], json!(["ok"]));
    /// ```
    pub fn form(message: impl Into<String>, fields: Value, required: &[&str]) -> Self {
        ElicitParams {
            message: message.into(),
            requested_schema: serde_json::json!({
                "type": "object",
                "properties": fields,
                "required": required,
            }),
        }
    }
}

/// `elicitation/create`'s result: what the user did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// Whether they filled the form in, said no, or dismissed it.
    pub action: ElicitAction,
    /// The form's values, when they accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
}

/// What the user did with a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// They filled it in and sent it.
    Accept,
    /// They said no.
    Decline,
    /// They dismissed it without choosing.
    Cancel,
}

impl ElicitAction {
    /// The action as the wire says it: `accept`, `decline` or `cancel`.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// What [`ToolContext::elicit`](crate::ToolContext::elicit) came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicitation<T> {
    /// The user filled the form in: its values.
    Accepted(T),
    /// The user said no.
    Declined,
    /// The user dismissed the form.
    Cancelled,
}

/// A root the client offers: a directory or file the server may work in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Root {
    /// Its URI (`file:///…`).
    pub uri: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// `roots/list`'s result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
}

/// Why asking the client failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability (`sampling`,
    /// `elicitation`, `roots`) the request needs.
    NotOffered(&'static str),
    /// The request failed: the client's error, a closed connection, a
    /// timeout, an answer that does not decode.
    Call(CallError),
    /// An accepted form's values do not decode into the form's type.
    InvalidContent(serde_json::Error),
    /// On a stateless request (2026-07-28): the request did not declare
    /// the capability (`sampling`, `elicitation`, `roots`). A tool that
    /// returns it with `?` is answered -32021, naming the capability.
    MissingCapability(&'static str),
    /// On a stateless request: the client has yet to answer the question
    /// of this key. A tool that returns it with `?` is answered
    /// `input_required` with every question it asked and found no answer
    /// to, and runs again when the client sends the answers.
    InputRequired(String),
    /// On a stateless request of a method that cannot be answered
    /// `input_required` (only `tools/call`, `prompts/get` and
    /// `resources/read` can): the question (its method) cannot be asked.
    NotAskable(String),
    /// On a stateless request: the client's answer to the question of
    /// this key is not an answer of its kind. A tool that returns it with
    /// `?` is answered -32602.
    InvalidAnswer(String, serde_json::Error),
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::NotOffered(capability) => {
                write!(f, "the client does not offer `{capability}`")
            }
            AskError::Call(error) => write!(f, "the client's answer: {error}"),
            AskError::InvalidContent(error) => {
                write!(f, "the form's values do not fit: {error}")
            }
            AskError::MissingCapability(capability) => {
                write!(
                    f,
                    "the request did not declare the client capability `{capability}`"
                )
            }
            AskError::InputRequired(key) => write!(f, "the answer to `{key}` is yet to come"),
            AskError::NotAskable(method) => write!(
                f,
                "`{method}` cannot be asked on this request: only `tools/call`, `prompts/get` \
                 and `resources/read` of the stateless revision take answers in a later round"
            ),
            AskError::InvalidAnswer(key, error) => {
                write!(
                    f,
                    "the answer to `{key}` is not an answer of its kind: {error}"
                )
            }
        }
    }
}

impl std::error::Error for AskError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            AskError::NotOffered(_)
            | AskError::MissingCapability(_)
            | AskError::InputRequired(_)
            | AskError::NotAskable(_) => None,
            AskError::Call(error) => Some(error),
            AskError::InvalidContent(error) | AskError::InvalidAnswer(_, error) => Some(error),
        }
    }
}

impl From<CallError> for AskError {
    fn from(error: CallError) -> Self {
        AskError::Call(error)
    }
}

impl From<AskError> for crate::ToolError {
    fn from(error: AskError) -> Self {
        use crate::ToolError;
        match &error {
            AskError::MissingCapability(capability) => {
                ToolError::protocol(crate::server::missing_capability(capability))
            }
            AskError::InvalidAnswer(..) => {
                ToolError::protocol(jsonrpc_runtime::ErrorObject::invalid_params(error))
            }
            _ => ToolError::new(error.to_string()),
        }
    }
}

/// One content block as an object and several as an array, on the way
/// out; either on the way in.
mod one_or_many {
    use super::*;

    pub(super) fn serialize<S: Serializer>(items: &[Content], s: S) -> Result<S::Ok, S::Error> {
        match items {
            [one] => one.serialize(s),
            many => many.serialize(s),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Content>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum OneOrMany {
            One(Content),
            Many(Vec<Content>),
        }
        Ok(match OneOrMany::deserialize(d)? {
            OneOrMany::One(one) => vec![one],
            OneOrMany::Many(many) => many,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_block_is_an_object_and_many_an_array() {
        let one = SamplingMessage {
            role: Role::User,
            content: vec![Content::text("hi")],
        };
        let wire = serde_json::to_value(&one).unwrap();
        assert_eq!(
            wire,
            json!({"role": "user", "content": {"type": "text", "text": "hi"}})
        );
        assert_eq!(
            serde_json::from_value::<SamplingMessage>(wire).unwrap(),
            one
        );
        let many = json!({"role": "assistant", "content": [
            {"type": "text", "text": "a"}, {"type": "text", "text": "b"}
        ], "model": "m"});
        let result: CreateMessageResult = serde_json::from_value(many.clone()).unwrap();
        assert_eq!(result.text(), "ab");
        assert_eq!(serde_json::to_value(&result).unwrap(), many);
    }

    #[test]
    fn elicit_results_decode_each_action() {
        for (wire, action) in [
            ("accept", ElicitAction::Accept),
            ("decline", ElicitAction::Decline),
            ("cancel", ElicitAction::Cancel),
        ] {
            let result: ElicitResult = serde_json::from_value(json!({"action": wire})).unwrap();
            assert_eq!(result.action, action);
        }
        assert!(serde_json::from_value::<ElicitResult>(json!({"action": "maybe"})).is_err());
    }
}
