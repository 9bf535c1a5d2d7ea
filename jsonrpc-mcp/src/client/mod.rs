//! A typed MCP client: the lists and calls of a server's tools, resources
//! and prompts, and the answers to what the server asks (sampling,
//! elicitation, roots) from callbacks, on either kind of revision.
//!
//! [`McpClient::builder`] says who the client is, which revision it
//! prefers and what it answers; [`connect`](McpClientBuilder::connect)
//! starts it on any transport: stdio of a child process, a socket, or
//! Streamable HTTP (`McpHttpConnector`).
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

mod handlers;

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

/// Who the client is, the revision it asks for, and what it answers (see
/// [`McpClient::builder`]).
#[must_use = "a builder does nothing until `connect`"]
pub struct McpClientBuilder {
    info: Implementation,
    version: String,
    config: Config,
    handlers: Handlers,
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

impl McpClientBuilder {
    /// The revision to ask for: a session revision (`2025-11-25` …
    /// `2024-11-05`) or the stateless `2026-07-28`.
    pub fn protocol_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }

    /// The peer's config (default [`Config::mcp_client`]): its request
    /// timeout, cancellation and progress policies.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Answers `sampling/createMessage` with `answer`, and declares the
    /// `sampling` capability.
    pub fn on_sampling<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(CreateMessageParams) -> Fut + Send + Sync + 'static,
        Fut:
            std::future::Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.sampling = Some(Arc::new(move |params| Box::pin(answer(params))));
        self
    }

    /// Answers `elicitation/create` with `answer`, and declares the
    /// `elicitation` capability (forms).
    pub fn on_elicitation<F, Fut>(mut self, answer: F) -> Self
    where
        F: Fn(ElicitParams) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.elicitation = Some(Arc::new(move |params| Box::pin(answer(params))));
        self
    }

    /// Answers `roots/list` with `roots`, and declares the `roots`
    /// capability.
    pub fn roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.handlers.roots = Some(Arc::new(roots.into_iter().collect()));
        self
    }

    /// Declares the capability `name` as `value`, over what the callbacks
    /// make: a setting (`elicitation` as `{"form": {"applyDefaults":
    /// true}}`), or one this crate has no callback for (`experimental`).
    pub fn capability(mut self, name: impl Into<String>, value: Value) -> Self {
        self.handlers.declared.insert(name.into(), value);
        self
    }

    /// Calls `hear` with each log message the server sends
    /// (`notifications/message`).
    pub fn on_log(mut self, hear: impl Fn(LoggingMessageParams) + Send + Sync + 'static) -> Self {
        self.handlers.log = Some(Arc::new(hear));
        self
    }

    /// Calls `hear` with the URI of each subscribed resource the server
    /// says changed (`notifications/resources/updated`).
    pub fn on_resource_updated(mut self, hear: impl Fn(String) + Send + Sync + 'static) -> Self {
        self.handlers.resource_updated = Some(Arc::new(hear));
        self
    }

    /// Calls `hear` with `tools`, `resources` or `prompts` when the server
    /// says that list changed.
    pub fn on_list_changed(mut self, hear: impl Fn(String) + Send + Sync + 'static) -> Self {
        self.handlers.list_changed = Some(Arc::new(hear));
        self
    }

    /// Starts the client on `transport` (see the [module](self) for how
    /// each kind of revision starts).
    ///
    /// # Errors
    ///
    /// [`ClientError::Call`] when `initialize` or `server/discover` fails;
    /// [`ClientError::UnsupportedVersion`] when the server speaks none of
    /// the stateless revisions asked for.
    pub async fn connect(mut self, transport: Transport) -> Result<McpClient, ClientError> {
        let peer = Peer::builder()
            .config(self.config.clone())
            .router(self.handlers.router())
            .spawn(transport);
        let capabilities = self.handlers.capabilities();
        let (server, meta) = match self.discover(&peer, &capabilities).await? {
            Some((server, meta)) => (server, Some(Arc::new(meta))),
            None => (self.initialize(&peer, &capabilities).await?, None),
        };
        Ok(McpClient {
            peer,
            server: Arc::new(server),
            meta,
            handlers: self.handlers,
        })
    }

    /// On a stateless revision, `server/discover`: what the server is, and
    /// the `_meta` every request will carry. `None`: a session is to be
    /// started instead (a session revision was asked for, or the server
    /// does not know `server/discover`).
    async fn discover(
        &mut self,
        peer: &Peer,
        capabilities: &ClientCapabilities,
    ) -> Result<Option<(ServerInfo, Map<String, Value>)>, ClientError> {
        if !STATELESS_VERSIONS.contains(&self.version.as_str()) {
            return Ok(None);
        }
        let mut meta = stateless_meta(&self.version, capabilities, &self.info);
        let mut discovered = peer
            .call::<Discovered>("server/discover", json!({"_meta": meta}))
            .await;
        // -32022 names the revisions the server speaks: once, ask again
        // with one this client speaks too.
        if let Some(version) = discovered.as_ref().err().and_then(supported_instead) {
            self.version = version;
            meta = stateless_meta(&self.version, capabilities, &self.info);
            discovered = peer.call("server/discover", json!({"_meta": meta})).await;
        }
        match discovered {
            Ok(mut found) if found.supported_versions.contains(&self.version) => {
                let server = ServerInfo {
                    protocol_version: self.version.clone(),
                    server_info: found.server_info(),
                    capabilities: found.capabilities,
                    instructions: found.instructions,
                };
                Ok(Some((server, meta)))
            }
            Ok(found) => Err(ClientError::UnsupportedVersion(found.supported_versions)),
            // A server of the session revisions only: start a session, at
            // the newest of them.
            Err(CallError::Rpc(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => {
                self.version = LATEST_PROTOCOL_VERSION.to_owned();
                Ok(None)
            }
            Err(error) => Err(error.into()),
        }
    }

    /// `initialize` at the revision asked for, then
    /// `notifications/initialized`.
    async fn initialize(
        &self,
        peer: &Peer,
        capabilities: &ClientCapabilities,
    ) -> Result<ServerInfo, ClientError> {
        let params = json!({
            "protocolVersion": self.version,
            "capabilities": capabilities,
            "clientInfo": self.info,
        });
        let init: InitializeResult = peer.call("initialize", params).await?;
        peer.notify("notifications/initialized", json!({}))
            .await
            .map_err(|e| ClientError::Call(CallError::NotSent(e)))?;
        Ok(ServerInfo {
            protocol_version: init.protocol_version,
            capabilities: init.capabilities,
            server_info: init.server_info,
            instructions: init.instructions,
        })
    }
}

/// `server/discover`'s result as a client reads it: who the server is in
/// `_meta` (as the layer's server writes it, [`DiscoverResult`](crate::types::DiscoverResult)), or
/// in a `serverInfo` member as drafts before it had it, or not at all.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Discovered {
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: ServerCapabilities,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default, rename = "_meta")]
    meta: Option<DiscoverMeta>,
    #[serde(default)]
    server_info: Option<Implementation>,
}

impl Discovered {
    fn server_info(&mut self) -> Implementation {
        match self.meta.take() {
            Some(meta) => meta.server_info,
            None => self.server_info.take().unwrap_or_default(),
        }
    }
}

/// The stateless revision to ask for instead, when `error` is -32022
/// ([`UNSUPPORTED_PROTOCOL_VERSION`](crate::UNSUPPORTED_PROTOCOL_VERSION))
/// naming one this client speaks.
fn supported_instead(error: &CallError) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Data {
        supported: Vec<String>,
    }
    let CallError::Rpc(error) = error else {
        return None;
    };
    if error.code.0 != crate::UNSUPPORTED_PROTOCOL_VERSION {
        return None;
    }
    let data: Data = error.data_as().ok()??;
    data.supported
        .into_iter()
        .find(|v| STATELESS_VERSIONS.contains(&v.as_str()))
}

/// The `_meta` every stateless request carries.
fn stateless_meta(
    version: &str,
    capabilities: &ClientCapabilities,
    info: &Implementation,
) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(META_VERSION.to_owned(), json!(version));
    meta.insert(META_CAPABILITIES.to_owned(), json!(capabilities));
    meta.insert(META_CLIENT_INFO.to_owned(), json!(info));
    meta
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
    /// # Errors
    ///
    /// [`ClientError::Call`] when a page's request fails.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.pages("tools/list", |page: ListToolsResult| {
            (page.tools, page.next_cursor)
        })
        .await
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
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: impl Serialize,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = serde_json::to_value(arguments)
            .map_err(|e| ClientError::Call(CallError::InvalidParams(e)))?;
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
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

impl fmt::Debug for McpClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .field("capabilities", &self.handlers.capabilities())
            .finish_non_exhaustive()
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
