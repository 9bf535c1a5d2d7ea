//! A typed MCP client: the lists and calls of a server's tools, resources
//! and prompts, and the answers to what the server asks (sampling,
//! elicitation, roots) from callbacks, on either kind of revision.
//!
//! [`McpClient::builder`] says who the client is, which revision it
//! prefers and what it answers; [`connect`](McpClientBuilder::connect)
//! starts it on any transport: stdio of a child process, a socket, or
//! Streamable HTTP (`McpHttpConnector`; from the browser,
//! `McpFetchConnector`).
//!
//! | revision asked for | how the client starts | how the server's questions reach it |
//! |---|---|---|
//! | a session revision (default `2025-11-25`) | `initialize` with the capabilities its callbacks make, then `notifications/initialized` | as requests to the client's peer, answered by the callbacks |
//! | `2026-07-28` (stateless) | `server/discover` (once more with a revision the server's -32022 names); every request then carries the revision, the capabilities and the client's name in `_meta`. A server that does not know `server/discover` gets `initialize` at `2025-11-25` instead | as an `input_required` result: the callbacks answer each question and the request is sent again with the answers and the server's `requestState`, up to [`MAX_ROUNDS`] rounds |
//!
//! # Examples
//!
//! ```
//! use jsonrpc_mcp::client::McpClient;
//! use jsonrpc_mcp::{McpServer, ToolContext};
//! use jsonrpc_runtime::{Config, Peer, Transport};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Add {
//!     a: i64,
//!     b: i64,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let server = McpServer::new("calculator", "1.0.0").tool(
//!     "add",
//!     "Adds two numbers.",
//!     |args: Add, _: ToolContext| async move { Ok::<_, jsonrpc_mcp::ToolError>((args.a + args.b).to_string()) },
//! );
//! for revision in ["2025-11-25", "2026-07-28"] {
//!     let (client_side, server_side) = Transport::pair(16);
//!     let _server = Peer::builder().config(Config::mcp()).router(server.router()).spawn(server_side);
//!     let client = McpClient::builder("example", "1.0")
//!         .protocol_version(revision)
//!         .connect(client_side)
//!         .await?;
//!     assert_eq!(client.protocol_version(), revision);
//!     let tools = client.list_tools().await?;
//!     assert_eq!(tools[0].name, "add");
//!     let sum = client.call_tool("add", serde_json::json!({"a": 2, "b": 3})).await?;
//!     assert_eq!(sum.first_text(), Some("5"));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jsonrpc_runtime::transport::ParamHeaders;
use jsonrpc_runtime::{CallError, CloseReason, Config, ErrorCode, ErrorObject, Peer, Transport};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::client_features::{
    CreateMessageParams, CreateMessageResult, ElicitParams, ElicitResult, Root,
};
use crate::completion::{CompleteParams, CompleteResult};
use crate::prompts::{GetPromptResult, ListPromptsResult, Prompt};
use crate::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceTemplate,
};
use crate::server::{META_CAPABILITIES, META_CLIENT_INFO, META_VERSION};
use crate::types::{
    CallToolResult, ClientCapabilities, DiscoverMeta, Implementation, InitializeResult,
    ListToolsResult, LogLevel, LoggingMessageParams, ServerCapabilities, SubscriptionFilter, Tool,
};
use crate::{LATEST_PROTOCOL_VERSION, STATELESS_VERSIONS};

mod builder;
mod handlers;

pub use self::builder::McpClientBuilder;
use self::handlers::Handlers;

/// How many rounds a stateless request may take (the first included)
/// before the client gives up on a server that keeps asking.
pub const MAX_ROUNDS: usize = 8;

/// How many pages a list may take before the client stops following
/// `nextCursor` (a server whose cursors never end).
pub const MAX_PAGES: usize = 1000;

/// A started MCP client (see the [module](self)).
#[derive(Clone)]
pub struct McpClient {
    peer: Peer,
    server: Arc<ServerInfo>,
    /// The stateless revision's `_meta`, or `None` on a session.
    meta: Option<Arc<Map<String, Value>>>,
    handlers: Handlers,
}

/// What the server said about itself when the client started.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The revision spoken.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, for the client's model.
    pub instructions: Option<String>,
}

/// Why a client could not start or a request of it failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ClientError {
    /// The call failed: an error answer, the connection closing, a result
    /// that does not decode.
    Call(CallError),
    /// The server speaks none of the revisions asked for: those it offers.
    UnsupportedVersion(Vec<String>),
    /// A stateless request was still asking after [`MAX_ROUNDS`] rounds.
    TooManyRounds(String),
    /// The server asked something the client has no callback for, in an
    /// `input_required` round (the method asked).
    Unanswerable(String),
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Call(error) => write!(f, "{error}"),
            ClientError::UnsupportedVersion(offered) => {
                write!(
                    f,
                    "the server speaks none of the revisions asked for; it offers {offered:?}"
                )
            }
            ClientError::TooManyRounds(method) => {
                write!(
                    f,
                    "`{method}` still asked for input after {MAX_ROUNDS} rounds"
                )
            }
            ClientError::Unanswerable(method) => {
                write!(
                    f,
                    "the server asked `{method}`, which this client does not answer"
                )
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Call(error) => Some(error),
            _ => None,
        }
    }
}

impl From<CallError> for ClientError {
    fn from(error: CallError) -> Self {
        ClientError::Call(error)
    }
}

impl McpClient {
    /// A client named `name` at `version`, asking for
    /// [`LATEST_PROTOCOL_VERSION`], answering nothing yet.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder {
            info: Implementation {
                name: name.into(),
                title: None,
                version: version.into(),
            },
            version: LATEST_PROTOCOL_VERSION.to_owned(),
            config: Config::mcp_client(),
            handlers: Handlers::default(),
        }
    }
}

impl McpClient {
    /// What the server said about itself.
    pub fn server(&self) -> &ServerInfo {
        &self.server
    }

    /// The revision spoken.
    pub fn protocol_version(&self) -> &str {
        &self.server.protocol_version
    }

    /// Whether requests are of the stateless revision.
    pub fn is_stateless(&self) -> bool {
        self.meta.is_some()
    }

    /// The client's peer, for calls this client has no method for.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Every tool, following `nextCursor` (at most [`MAX_PAGES`] pages).
    ///
    /// On the stateless revision, a tool whose `x-mcp-header`
    /// declarations break the rules (see
    /// [`ParamHeaders`]) is left
    /// out, with a warning that says why: its calls could not carry their
    /// `Mcp-Param-*` headers over Streamable HTTP.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when a page's request fails.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = self
            .pages("tools/list", |page: ListToolsResult| {
                (page.tools, page.next_cursor)
            })
            .await?;
        if self.is_stateless() {
            tools.retain(|tool| match ParamHeaders::from_schema(&tool.input_schema) {
                Ok(_) => true,
                Err(why) => {
                    tracing::warn!(tool = %tool.name, %why, "left out a tool whose x-mcp-header declarations are invalid");
                    false
                }
            });
        }
        Ok(tools)
    }

    /// Calls the tool `name` with `arguments`. A tool that failed is a
    /// result with [`is_error`](CallToolResult::is_error) set, not an
    /// error.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer (an unknown tool is
    /// -32602); on the stateless revision, the errors of the rounds (see
    /// [`request`](Self::request)).
    ///
    /// Over Streamable HTTP the transport mirrors the arguments the tool
    /// declares with `x-mcp-header` into `Mcp-Param-*` headers, as the
    /// tools' last listing said. A server that refuses the headers
    /// ([`HEADER_MISMATCH`](crate::HEADER_MISMATCH), -32020: the tool's
    /// declarations changed, or it was never listed) ran nothing: the
    /// client lists the tools again and sends the call once more.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::Call(CallError::InvalidParams(e)))?;
        let params = json!({"name": name, "arguments": arguments});
        match self.request("tools/call", params.clone()).await {
            Err(ClientError::Call(CallError::Rpc(e)))
                if self.is_stateless() && e.code.0 == crate::HEADER_MISMATCH =>
            {
                tracing::debug!(tool = name, reason = %e.message, "headers refused; listing the tools again");
                self.list_tools().await?;
                self.request("tools/call", params).await
            }
            answered => answered,
        }
    }

    /// Every resource, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when a page's request fails.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.pages("resources/list", |page: ListResourcesResult| {
            (page.resources, page.next_cursor)
        })
        .await
    }

    /// Every resource template, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when a page's request fails.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.pages(
            "resources/templates/list",
            |page: ListResourceTemplatesResult| (page.resource_templates, page.next_cursor),
        )
        .await
    }

    /// Reads the resource at `uri`.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer (a URI the server does
    /// not have is -32002 on sessions, -32602 on the stateless revision).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.request("resources/read", json!({"uri": uri})).await
    }

    /// Every prompt, following `nextCursor`.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when a page's request fails.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.pages("prompts/list", |page: ListPromptsResult| {
            (page.prompts, page.next_cursor)
        })
        .await
    }

    /// The prompt `name` with `arguments` (an object of strings).
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer (an unknown prompt or
    /// arguments that do not fit are -32602).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<GetPromptResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::Call(CallError::InvalidParams(e)))?;
        self.request("prompts/get", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// Suggestions for a prompt's argument or a template's variable.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer.
    pub async fn complete(&self, params: &CompleteParams) -> Result<CompleteResult, ClientError> {
        self.request("completion/complete", json!(params)).await
    }

    /// Asks the server for log messages at `level` and above (sessions
    /// only; on the stateless revision the level goes in each request's
    /// `_meta`, see [`request`](Self::request)).
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer.
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), ClientError> {
        let _: Value = self
            .request("logging/setLevel", json!({"level": level}))
            .await?;
        Ok(())
    }

    /// Asks for `notifications/resources/updated` when the resource at
    /// `uri` changes (sessions only).
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer.
    pub async fn subscribe(&self, uri: &str) -> Result<(), ClientError> {
        let _: Value = self
            .request("resources/subscribe", json!({"uri": uri}))
            .await?;
        Ok(())
    }

    /// Checks the server answers (`ping`).
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when it does not.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let _: Value = self.peer.call("ping", json!({})).await?;
        Ok(())
    }

    /// Ends the client: calls still waiting get `grace` to finish, then the
    /// transport closes (over Streamable HTTP a session is `DELETE`d).
    pub async fn close(&self, grace: Duration) -> CloseReason {
        self.peer.close(grace).await
    }

    /// Sends `method` with `params` (an object) and decodes its result.
    ///
    /// On the stateless revision the request carries the client's `_meta`
    /// (merged into any `_meta` of `params`); a result `input_required`
    /// is answered by the client's callbacks and the request sent again
    /// with `inputResponses` and the server's `requestState`, until a
    /// complete result comes.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] for an error answer or a result that does
    /// not decode; [`ClientError::Unanswerable`] when the server asks what
    /// the client has no callback for; [`ClientError::TooManyRounds`] after
    /// [`MAX_ROUNDS`] rounds.
    pub async fn request<R: DeserializeOwned + Send + 'static>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<R, ClientError> {
        if self.meta.is_none() {
            return Ok(self.peer.call(method, params).await?);
        }
        let mut params = self.with_meta(params)?;
        for _ in 0..MAX_ROUNDS {
            let result: Value = self.peer.call(method, &params).await?;
            if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return serde_json::from_value(result)
                    .map_err(|e| ClientError::Call(CallError::InvalidResult(e)));
            }
            let responses = self.answer_round(&result).await?;
            params.insert("inputResponses".to_owned(), Value::Object(responses));
            match result.get("requestState") {
                Some(state) => params.insert("requestState".to_owned(), state.clone()),
                None => params.remove("requestState"),
            };
        }
        Err(ClientError::TooManyRounds(method.to_owned()))
    }

    /// `params` (an object, or null) with the stateless revision's `_meta`
    /// merged into its own, when the client is stateless.
    fn with_meta(&self, params: Value) -> Result<Map<String, Value>, ClientError> {
        let mut params = match params {
            Value::Object(params) => params,
            Value::Null => Map::new(),
            other => {
                return Err(ClientError::Call(CallError::InvalidParams(
                    serde::ser::Error::custom(format!("params must be an object, not {other}")),
                )))
            }
        };
        if let Some(meta) = &self.meta {
            let own = params.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(own) = own {
                own.extend(meta.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        Ok(params)
    }

    /// Listens for the notifications `filter` opts in to
    /// (`subscriptions/listen`, stateless revision): they reach the
    /// client's callbacks ([`on_list_changed`](McpClientBuilder::on_list_changed),
    /// [`on_resource_updated`](McpClientBuilder::on_resource_updated)) as
    /// they come. Runs until the server ends the stream (then `Ok`), or the
    /// future is dropped (the request is cancelled); no timeout applies.
    /// Spawn it to listen while making other calls.
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when the server refuses (-32601 on a session:
    /// there, changes come as notifications of the session without asking).
    pub async fn listen(&self, filter: &SubscriptionFilter) -> Result<(), ClientError> {
        let params = self.with_meta(json!({ "notifications": filter }))?;
        let _: Value = self
            .peer
            .call("subscriptions/listen", params)
            .no_timeout()
            .await?;
        Ok(())
    }

    /// The answers to an `input_required` result's questions, by key.
    async fn answer_round(&self, result: &Value) -> Result<Map<String, Value>, ClientError> {
        let mut responses = Map::new();
        let asked = result.get("inputRequests").and_then(Value::as_object);
        for (key, question) in asked.into_iter().flatten() {
            let method = question["method"].as_str().unwrap_or_default();
            let params = question.get("params").cloned().unwrap_or(Value::Null);
            let answer = match self.handlers.answer(method, params).await {
                Ok(answer) => answer,
                Err(e) if e.code == ErrorCode::METHOD_NOT_FOUND => {
                    return Err(ClientError::Unanswerable(method.to_owned()))
                }
                Err(e) => return Err(ClientError::Call(CallError::Rpc(e))),
            };
            responses.insert(key.clone(), answer);
        }
        Ok(responses)
    }

    /// Every item of a paginated list, page after page.
    async fn pages<P, T>(
        &self,
        method: &str,
        split: impl Fn(P) -> (Vec<T>, Option<String>),
    ) -> Result<Vec<T>, ClientError>
    where
        P: DeserializeOwned + Send + 'static,
    {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let (page, next) = split(self.request(method, params).await?);
            items.extend(page);
            match next {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(items),
            }
        }
        Ok(items)
    }
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.server)
            .field("stateless", &self.is_stateless())
            .finish_non_exhaustive()
    }
}
