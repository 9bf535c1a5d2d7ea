//! A tool asking its client: sampling, elicitation and roots, each only
//! when the client declared it can. On a session the question is a call
//! to the client; on a stateless request (2026-07-28) it is a question of
//! the request's `input_required` answer, and the handler finds the answer
//! when the client sends the request again.

use jsonrpc_runtime::peer::CallError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::results::{object_schema, schema_generator};
use super::ToolContext;
use crate::client_features::{
    AskError, CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    Elicitation, ListRootsResult, Root,
};
use crate::types::ClientCapabilities;

/// Questions to the client under one key: what a stateless request's
/// `inputRequests` and the client's `inputResponses` name them by. Made by
/// [`ToolContext::input`].
#[derive(Debug)]
pub struct Asking<'a> {
    cx: &'a ToolContext,
    key: Option<String>,
}

impl ToolContext {
    /// Asks under `key` (on a stateless request, the key of the question
    /// in `inputRequests`); the methods of [`ToolContext`] that ask make a
    /// key of their own, the same on every round while the handler asks
    /// the same things in the same order.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::{ToolContext, ToolError};
    ///
    /// async fn where_am_i(cx: ToolContext) -> Result<String, ToolError> {
    ///     let roots = cx.input("client_roots").list_roots().await?;
    ///     Ok(format!("{} roots", roots.len()))
    /// }
    /// ```
    pub fn input(&self, key: &str) -> Asking<'_> {
        Asking {
            cx: self,
            key: Some(key.to_owned()),
        }
    }

    fn unkeyed(&self) -> Asking<'_> {
        Asking {
            cx: self,
            key: None,
        }
    }

    /// Asks the client's model to continue a conversation
    /// (`sampling/createMessage`).
    ///
    /// # Errors
    ///
    /// See [`AskError`]: the client did not declare `sampling`, refused,
    /// or (on a stateless request) the answer is yet to come.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::client_features::CreateMessageParams;
    /// use jsonrpc_mcp::{ToolContext, ToolError};
    ///
    /// async fn summarize(text: String, cx: ToolContext) -> Result<String, ToolError> {
    ///     let asked = CreateMessageParams::user(format!("Summarize: {text}"), 200);
    ///     Ok(cx.create_message(asked).await?.text())
    /// }
    /// ```
    pub async fn create_message(
        &self,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, AskError> {
        self.unkeyed().create_message(params).await
    }

    /// Asks the user to fill in a form made from `T`'s fields
    /// (`elicitation/create`); `T`'s JSON Schema is the form, so keep its
    /// fields flat and primitive (strings, numbers, booleans, enums of
    /// strings), as the specification allows.
    ///
    /// # Errors
    ///
    /// See [`AskError`]; [`AskError::InvalidContent`] when the accepted
    /// values do not decode into `T`.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::client_features::Elicitation;
    /// use jsonrpc_mcp::{ToolContext, ToolError};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Confirm {
    ///     /// Go ahead?
    ///     proceed: bool,
    /// }
    ///
    /// async fn delete(path: String, cx: ToolContext) -> Result<String, ToolError> {
    ///     match cx.elicit::<Confirm>(format!("Delete {path}?")).await? {
    ///         Elicitation::Accepted(Confirm { proceed: true }) => Ok(format!("deleted {path}")),
    ///         _ => Ok("kept".to_owned()),
    ///     }
    /// }
    /// ```
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        &self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, AskError> {
        self.unkeyed().elicit(message).await
    }

    /// Asks the user to fill in the form `params` describes, as it is
    /// (`elicitation/create`).
    ///
    /// # Errors
    ///
    /// See [`AskError`].
    pub async fn elicit_with(&self, params: ElicitParams) -> Result<ElicitResult, AskError> {
        self.unkeyed().elicit_with(params).await
    }

    /// The client's roots (`roots/list`).
    ///
    /// # Errors
    ///
    /// See [`AskError`].
    pub async fn list_roots(&self) -> Result<Vec<Root>, AskError> {
        self.unkeyed().list_roots().await
    }
}

impl Asking<'_> {
    /// [`ToolContext::create_message`] under this key.
    ///
    /// # Errors
    ///
    /// See [`AskError`].
    pub async fn create_message(
        self,
        params: CreateMessageParams,
    ) -> Result<CreateMessageResult, AskError> {
        self.ask(
            "sampling",
            |c| c.sampling.is_some(),
            "sampling/createMessage",
            params,
        )
        .await
    }

    /// [`ToolContext::elicit`] under this key.
    ///
    /// # Errors
    ///
    /// See [`AskError`].
    pub async fn elicit<T: JsonSchema + DeserializeOwned>(
        self,
        message: impl Into<String>,
    ) -> Result<Elicitation<T>, AskError> {
        let schema = object_schema(schema_generator().root_schema_for::<T>().to_value());
        let result = self
            .elicit_with(ElicitParams {
                message: message.into(),
                requested_schema: schema,
            })
            .await?;
        Ok(match result.action {
            ElicitAction::Accept => {
                let values = serde_json::Value::Object(result.content.unwrap_or_default());
                Elicitation::Accepted(
                    serde_json::from_value(values).map_err(AskError::InvalidContent)?,
                )
            }
            ElicitAction::Decline => Elicitation::Declined,
            ElicitAction::Cancel => Elicitation::Cancelled,
        })
    }

    /// [`ToolContext::elicit_with`] under this key.
    ///
    /// # Errors
    ///
    /// See [`AskError`].
    pub async fn elicit_with(self, params: ElicitParams) -> Result<ElicitResult, AskError> {
        self.ask(
            "elicitation",
            |c| c.elicitation.is_some(),
            "elicitation/create",
            params,
        )
        .await
    }

    /// [`ToolContext::list_roots`] under this key.
    ///
    /// # Errors
    ///
    /// See [`AskError`].
    pub async fn list_roots(self) -> Result<Vec<Root>, AskError> {
        let result: ListRootsResult = self
            .ask(
                "roots",
                |c| c.roots.is_some(),
                "roots/list",
                serde_json::Map::new(),
            )
            .await?;
        Ok(result.roots)
    }

    /// Asks `method` of the client when it declared `capability`: a call
    /// on a session, a question of the answer on a stateless request.
    async fn ask<P: Serialize, R: DeserializeOwned + Send + 'static>(
        self,
        capability: &'static str,
        declared: impl Fn(&ClientCapabilities) -> bool,
        method: &str,
        params: P,
    ) -> Result<R, AskError> {
        let cx = self.cx;
        let declared = cx.client_capabilities().is_some_and(declared);
        if cx.scope.stateless.is_none() {
            if !declared {
                return Err(AskError::NotOffered(capability));
            }
            return Ok(cx.ctx.peer().call::<R>(method, params).await?);
        }
        if !declared {
            return Err(AskError::MissingCapability(capability));
        }
        let Some(inputs) = &cx.scope.inputs else {
            return Err(AskError::NotAskable(method.to_owned()));
        };
        let key = self.key.unwrap_or_else(|| inputs.next_key(method));
        let params = serde_json::to_value(params)
            .map_err(|e| AskError::Call(CallError::InvalidParams(e)))?;
        match inputs.answer(&key, method, params) {
            Some(answer) => {
                serde_json::from_value(answer.clone()).map_err(|e| AskError::InvalidAnswer(key, e))
            }
            None => Err(AskError::InputRequired(key)),
        }
    }
}
