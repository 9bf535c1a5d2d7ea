//! A tool asking its client: sampling, elicitation and roots, each only
//! when the client declared it can.

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

impl ToolContext {
    /// Asks the client's model to continue a conversation
    /// (`sampling/createMessage`).
    ///
    /// # Errors
    ///
    /// [`AskError::NotOffered`] when the client did not declare `sampling`;
    /// [`AskError::Call`] when the client refused or the call failed.
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
        self.ask(
            "sampling",
            |c| c.sampling.is_some(),
            "sampling/createMessage",
            params,
        )
        .await
    }

    /// Asks the user to fill in a form made from `T`'s fields
    /// (`elicitation/create`); `T`'s JSON Schema is the form, so keep its
    /// fields flat and primitive (strings, numbers, booleans, enums of
    /// strings), as the specification allows.
    ///
    /// # Errors
    ///
    /// [`AskError::NotOffered`] when the client did not declare
    /// `elicitation`; [`AskError::Call`] when the call failed;
    /// [`AskError::InvalidContent`] when the accepted values do not decode
    /// into `T`.
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

    /// Asks the user to fill in the form `params` describes, as it is
    /// (`elicitation/create`).
    ///
    /// # Errors
    ///
    /// As [`elicit`](Self::elicit), but for the content's type.
    pub async fn elicit_with(&self, params: ElicitParams) -> Result<ElicitResult, AskError> {
        self.ask(
            "elicitation",
            |c| c.elicitation.is_some(),
            "elicitation/create",
            params,
        )
        .await
    }

    /// The client's roots (`roots/list`).
    ///
    /// # Errors
    ///
    /// [`AskError::NotOffered`] when the client did not declare `roots`;
    /// [`AskError::Call`] when the call failed.
    pub async fn list_roots(&self) -> Result<Vec<Root>, AskError> {
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

    /// Calls `method` on the client when it declared `capability`.
    async fn ask<P: Serialize, R: DeserializeOwned + Send + 'static>(
        &self,
        capability: &'static str,
        declared: impl Fn(&ClientCapabilities) -> bool,
        method: &str,
        params: P,
    ) -> Result<R, AskError> {
        if !self.client_capabilities().is_some_and(declared) {
            return Err(AskError::NotOffered(capability));
        }
        Ok(self.ctx.peer().call::<R>(method, params).await?)
    }
}
