//! The server side: a catalog of typed tools, resources and prompts,
//! served as the MCP methods of a runtime [`Router`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use jsonrpc_runtime::transport::ParamHeaders;
use jsonrpc_runtime::{Context, ErrorObject, Router};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::completion::{completer, CompleteFn, Completers, Reference};
use crate::prompts::{arguments_of, Prompt, PromptEntry, PromptMessage};
use crate::resources::{
    reader, Resource, ResourceEntry, ResourceTemplate, TemplateEntry, UriPattern,
};
use crate::types::{
    Implementation, InitializeParams, LogLevel, ResourceContents, Tool, ToolAnnotations,
};

mod ask;
mod hub;
mod listen;
mod mrtr;
mod results;
mod session;
mod stateless;

pub use self::ask::Asking;
use self::hub::Hub;
pub use self::hub::{Notifier, MAX_SUBSCRIPTIONS};
use self::mrtr::StateKey;
use self::results::{object_schema, schema_generator, ToolOutcome};
pub use self::results::{IntoToolResult, Json, ToolError};
use self::session::Session;
pub use self::session::ToolContext;
pub(crate) use self::stateless::{
    missing_capability, META_CAPABILITIES, META_CLIENT_INFO, META_VERSION,
};
pub use self::stateless::{
    HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, STATELESS_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
};

/// How many items one page of a list (`tools/list`, `resources/list`,
/// `resources/templates/list`, `prompts/list`) holds unless
/// [`page_size`](McpServer::page_size) says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

type RunTool =
    dyn Fn(Option<Box<RawValue>>, ToolContext) -> BoxFuture<'static, ToolOutcome> + Send + Sync;

/// A tool of the catalog: its description and how to run it.
struct Entry {
    tool: Tool,
    run: Arc<RunTool>,
    /// The arguments its schema declares with `x-mcp-header`.
    params: ParamHeaders,
}

/// What [`McpServer::on_initialize`] runs.
type OnInitialize = dyn Fn(&InitializeParams, &'static str, &Context) + Send + Sync;

/// The server's name, instructions, tools, resources and prompts, shared
/// by every session.
#[derive(Clone)]
struct Catalog {
    info: Implementation,
    instructions: Option<String>,
    on_initialize: Option<Arc<OnInitialize>>,
    tools: Listed<Entry>,
    resources: Listed<ResourceEntry>,
    templates: Vec<Arc<TemplateEntry>>,
    prompts: Listed<PromptEntry>,
    completers: Completers,
    page_size: usize,
    hub: Arc<Hub>,
    /// What signs the `requestState` of multi-round requests.
    state_key: StateKey,
}

/// Items in the order they were added (the order of their list), each
/// found by its name (a resource's: its URI).
struct Listed<T> {
    items: Vec<Arc<T>>,
    by_name: HashMap<String, usize>,
}

impl<T> Listed<T> {
    fn new() -> Self {
        Listed {
            items: Vec::new(),
            by_name: HashMap::new(),
        }
    }

    /// Adds `item` as `name`; `what` says what it is, for the panic.
    #[track_caller]
    fn push(&mut self, name: String, item: T, what: &str) {
        assert!(
            !self.by_name.contains_key(&name),
            "the MCP server already has {what} `{name}`"
        );
        self.by_name.insert(name, self.items.len());
        self.items.push(Arc::new(item));
    }

    fn get(&self, name: &str) -> Option<&Arc<T>> {
        self.by_name.get(name).map(|&index| &self.items[index])
    }
}

impl<T> Clone for Listed<T> {
    fn clone(&self) -> Self {
        Listed {
            items: self.items.clone(),
            by_name: self.by_name.clone(),
        }
    }
}

/// An MCP server: its identity, its tools (each a typed async function
/// whose argument type gives the tool's input schema), resources, prompts
/// and completers.
///
/// [`router`](Self::router) serves it as a [`Router`] for one session
/// (`initialize` with version negotiation, `notifications/initialized`,
/// `tools/list` with pagination, `tools/call`, and the methods of
/// resources, prompts, completion and logging); run that router on a peer
/// with [`Config::mcp`](jsonrpc_runtime::Config::mcp), which adds `ping`,
/// cancellation, progress and the rule that nothing but `ping` comes
/// before `initialize`. Over Streamable HTTP, give the listener a closure
/// that makes one router per session.
///
/// # Examples
///
/// ```
/// use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
/// use jsonrpc_runtime::{Config, Peer, Transport};
/// use schemars::JsonSchema;
/// use serde::Deserialize;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct AddArgs {
///     /// The first number.
///     a: i64,
///     /// The second number.
///     b: i64,
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let server = McpServer::new("calculator", "1.0.0").tool(
///     "add",
///     "Adds two numbers.",
///     |args: AddArgs, _cx: ToolContext| async move { Ok::<_, ToolError>(format!("{}", args.a + args.b)) },
/// );
///
/// let (client_side, server_side) = Transport::pair(64);
/// let _server = Peer::builder().config(Config::mcp()).router(server.router()).spawn(server_side);
/// let client = Peer::builder().config(Config::mcp_client()).spawn(client_side);
/// let init: serde_json::Value = client
///     .call("initialize", serde_json::json!({
///         "protocolVersion": "2025-11-25", "capabilities": {},
///         "clientInfo": {"name": "doc", "version": "0"}
///     }))
///     .await?;
/// assert_eq!(init["protocolVersion"], "2025-11-25");
/// let sum: serde_json::Value = client
///     .call("tools/call", serde_json::json!({"name": "add", "arguments": {"a": 2, "b": 3}}))
///     .await?;
/// assert_eq!(sum["content"][0]["text"], "5");
/// # Ok::<(), jsonrpc_runtime::CallError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct McpServer {
    catalog: Arc<Catalog>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tools: Vec<&str> = self
            .catalog
            .tools
            .items
            .iter()
            .map(|e| e.tool.name.as_str())
            .collect();
        f.debug_struct("McpServer")
            .field("info", &self.catalog.info)
            .field("tools", &tools)
            .finish()
    }
}

impl McpServer {
    /// A server named `name` at `version`, with no tools yet.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        McpServer {
            catalog: Arc::new(Catalog {
                info: Implementation {
                    name: name.into(),
                    title: None,
                    version: version.into(),
                },
                instructions: None,
                on_initialize: None,
                tools: Listed::new(),
                resources: Listed::new(),
                templates: Vec::new(),
                prompts: Listed::new(),
                completers: Completers::new(),
                page_size: DEFAULT_PAGE_SIZE,
                hub: Arc::default(),
                state_key: StateKey::random(),
            }),
        }
    }

    /// A name for people to read, in `serverInfo.title`.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.catalog).info.title = Some(title.into());
        self
    }

    /// How to use the server, sent in `initialize`'s result for the
    /// client's model.
    #[must_use]
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.catalog).instructions = Some(instructions.into());
        self
    }

    /// Runs `hook` on each `initialize`, before it is answered: the
    /// client's params, the revision it gets, and the request's context
    /// (who is calling: over Streamable HTTP, the identity an `on_connect`
    /// hook set). For logs and metrics; the answer does not depend on it.
    #[must_use]
    pub fn on_initialize<F>(mut self, hook: F) -> Self
    where
        F: Fn(&InitializeParams, &'static str, &Context) + Send + Sync + 'static,
    {
        Arc::make_mut(&mut self.catalog).on_initialize = Some(Arc::new(hook));
        self
    }

    /// How many items one page of `tools/list`, `resources/list`,
    /// `resources/templates/list` or `prompts/list` holds (default
    /// [`DEFAULT_PAGE_SIZE`]; at least 1).
    #[must_use]
    pub fn page_size(mut self, items: usize) -> Self {
        Arc::make_mut(&mut self.catalog).page_size = items.max(1);
        self
    }

    /// Adds the tool `name`, described for the model by `description`: a
    /// call decodes its `arguments` as `A` (whose JSON Schema is the tool's
    /// `inputSchema`) and runs `handler`. The handler's `Ok` becomes the
    /// result (see [`IntoToolResult`]: text, [`Content`](crate::types::Content), [`Json`] for a
    /// structured result with an `outputSchema`); its [`ToolError`] an
    /// `isError` result the model reads.
    ///
    /// A property of the arguments marked `x-mcp-header: "Name"` (with
    /// schemars, `#[schemars(extend("x-mcp-header" = "Region"))]` on the
    /// field) is mirrored by clients into an `Mcp-Param-Name` header over
    /// Streamable HTTP; the server refuses a stateless call whose headers
    /// disagree with its arguments ([`HEADER_MISMATCH`], `400`), before the
    /// handler runs.
    ///
    /// # Panics
    ///
    /// When a tool named `name` is already there, or when the input
    /// schema's `x-mcp-header` declarations break the rules (see
    /// [`ParamHeaders::from_schema`]).
    #[must_use]
    #[track_caller]
    pub fn tool<A, R, F, Fut>(self, name: &str, description: &str, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    {
        self.tool_with(ToolInfo::new(name).description(description), handler)
    }

    /// [`tool`](Self::tool) with a title and annotations as well.
    ///
    /// # Panics
    ///
    /// When a tool of that name is already there, or its input schema's
    /// `x-mcp-header` declarations break the rules.
    #[must_use]
    #[track_caller]
    pub fn tool_with<A, R, F, Fut>(mut self, info: ToolInfo, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        R: IntoToolResult,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, ToolError>> + Send + 'static,
    {
        let mut generator = schema_generator();
        let input_schema = info
            .input_schema
            .unwrap_or_else(|| object_schema(generator.root_schema_for::<A>().to_value()));
        let output_schema = R::output_schema(&mut generator);
        let name = info.name.clone();
        let params = ParamHeaders::from_schema(&input_schema)
            .unwrap_or_else(|why| panic!("the input schema of the tool `{name}`: {why}"));
        let tool = Tool {
            name: info.name,
            title: info.title,
            description: info.description,
            input_schema,
            output_schema,
            annotations: info.annotations,
        };
        let handler = Arc::new(handler);
        let tool_name: Arc<str> = Arc::from(name.as_str());
        let run: Arc<RunTool> = Arc::new(move |arguments, cx: ToolContext| {
            let handler = handler.clone();
            let tool_name = tool_name.clone();
            Box::pin(async move {
                let raw = arguments.as_deref().map_or("{}", RawValue::get);
                let args = match serde_json::from_str::<A>(raw) {
                    Ok(args) => args,
                    Err(e) => return cx.argument_error(&tool_name, &e),
                };
                match handler(args, cx).await {
                    Ok(result) => result.into_tool_result(),
                    Err(error) => error.into_outcome(),
                }
            })
        });
        Arc::make_mut(&mut self.catalog).tools.push(
            name,
            Entry { tool, run, params },
            "a tool named",
        );
        self
    }

    /// Adds the resource `resource`, read by `handler` (given its URI) for
    /// `resources/read`; `resources/list` lists it.
    ///
    /// # Panics
    ///
    /// When a resource with that URI is already there.
    #[must_use]
    #[track_caller]
    pub fn resource<F, Fut>(mut self, resource: Resource, handler: F) -> Self
    where
        F: Fn(String, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        let read = reader(move |uri, _, cx| handler(uri, cx));
        let uri = resource.uri.clone();
        Arc::make_mut(&mut self.catalog).resources.push(
            uri,
            ResourceEntry { resource, read },
            "a resource",
        );
        self
    }

    /// Adds the template `template`: `resources/read` of a URI it matches
    /// runs `handler` with the URI and the template's variables
    /// (`file:///{path}` read as `file:///a/b.txt` gives `path` = `a/b.txt`).
    /// A fixed resource of the same URI comes first; templates are tried
    /// in the order they were added.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::resources::ResourceTemplate;
    /// use jsonrpc_mcp::types::ResourceContents;
    /// use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
    /// use jsonrpc_runtime::{Config, Peer, Transport};
    /// use serde_json::{json, Value};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let server = McpServer::new("users", "1.0.0").resource_template(
    ///     ResourceTemplate::new("users://{id}/profile", "profile").mime_type("text/plain"),
    ///     |uri: String, vars, _: ToolContext| async move {
    ///         let text = format!("the profile of user {}", vars["id"]);
    ///         Ok::<_, ToolError>(vec![ResourceContents::text(uri, "text/plain", text)])
    ///     },
    /// );
    /// let (client_side, server_side) = Transport::pair(64);
    /// let _server = Peer::builder().config(Config::mcp()).router(server.router()).spawn(server_side);
    /// let client = Peer::builder().config(Config::mcp_client()).spawn(client_side);
    /// let _: Value = client
    ///     .call("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "doc", "version": "0"}}))
    ///     .await?;
    /// let read: Value = client.call("resources/read", json!({"uri": "users://42/profile"})).await?;
    /// assert_eq!(read["contents"][0]["text"], "the profile of user 42");
    /// # Ok::<(), jsonrpc_runtime::CallError>(())
    /// # }).unwrap();
    /// ```
    ///
    /// # Panics
    ///
    /// When the template is not of literal text and `{name}` expressions
    /// (two of them side by side, an operator such as `{+path}`, an
    /// unmatched brace).
    #[must_use]
    #[track_caller]
    pub fn resource_template<F, Fut>(mut self, template: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(String, HashMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
    {
        let Some(pattern) = UriPattern::parse(&template.uri_template) else {
            panic!(
                "`{}` is not a URI template of literal text and `{{name}}` expressions",
                template.uri_template
            );
        };
        let read = reader(handler);
        Arc::make_mut(&mut self.catalog)
            .templates
            .push(Arc::new(TemplateEntry {
                template,
                pattern,
                read,
            }));
        self
    }

    /// Adds the prompt `name`: `prompts/get` decodes its arguments (a map
    /// of strings) as `A`, whose fields (their doc comments, and whether
    /// they are optional) are the prompt's arguments in `prompts/list`, and
    /// runs `handler` for its messages. Arguments that do not fit are
    /// -32602.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::prompts::PromptMessage;
    /// use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Summarize {
    ///     /// The text to summarize.
    ///     text: String,
    ///     /// How many sentences (three when left out).
    ///     sentences: Option<String>,
    /// }
    ///
    /// let server = McpServer::new("writer", "1.0.0").prompt(
    ///     "summarize",
    ///     "Asks for a summary.",
    ///     |args: Summarize, _: ToolContext| async move {
    ///         let n = args.sentences.unwrap_or_else(|| "three".to_owned());
    ///         Ok::<_, ToolError>(vec![PromptMessage::user(format!("Summarize in {n} sentences:\n{}", args.text))])
    ///     },
    /// );
    /// # let _ = server;
    /// // `prompts/list` shows two arguments: `text` (required) and
    /// // `sentences` (optional), each with its doc comment.
    /// ```
    ///
    /// # Panics
    ///
    /// When a prompt named `name` is already there.
    #[must_use]
    #[track_caller]
    pub fn prompt<A, F, Fut>(mut self, name: &str, description: &str, handler: F) -> Self
    where
        A: DeserializeOwned + JsonSchema + Send + 'static,
        F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, ToolError>> + Send + 'static,
    {
        let schema = schema_generator().root_schema_for::<A>().to_value();
        let prompt = Prompt {
            name: name.to_owned(),
            title: None,
            description: Some(description.to_owned()),
            arguments: arguments_of(&schema),
        };
        let handler = Arc::new(handler);
        let prompt_name: Arc<str> = Arc::from(name);
        let get: Arc<crate::prompts::GetFn> = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            let prompt_name = prompt_name.clone();
            Box::pin(async move {
                let value = serde_json::to_value(arguments).map_err(ErrorObject::internal_error)?;
                let args = serde_json::from_value::<A>(value).map_err(|e| {
                    ErrorObject::invalid_params(format!(
                        "invalid arguments for prompt `{prompt_name}`: {e}"
                    ))
                })?;
                handler(args, cx).await.map_err(ToolError::into_error)
            })
        });
        Arc::make_mut(&mut self.catalog).prompts.push(
            name.to_owned(),
            PromptEntry { prompt, get },
            "a prompt named",
        );
        self
    }

    /// Completes the argument `argument` of the prompt `prompt` with
    /// `handler`, given what the user has typed and the other arguments
    /// already given; its values, best first (the first 100 are sent).
    #[must_use]
    pub fn complete_prompt_argument<F, Fut>(self, prompt: &str, argument: &str, handler: F) -> Self
    where
        F: Fn(String, HashMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, ToolError>> + Send + 'static,
    {
        let reference = Reference::Prompt {
            name: prompt.to_owned(),
        };
        self.completer(reference, argument, completer(handler))
    }

    /// Completes the variable `variable` of the resource template
    /// `uri_template` with `handler` (as
    /// [`complete_prompt_argument`](Self::complete_prompt_argument)).
    #[must_use]
    pub fn complete_template_variable<F, Fut>(
        self,
        uri_template: &str,
        variable: &str,
        handler: F,
    ) -> Self
    where
        F: Fn(String, HashMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<String>, ToolError>> + Send + 'static,
    {
        let reference = Reference::Resource {
            uri: uri_template.to_owned(),
        };
        self.completer(reference, variable, completer(handler))
    }

    fn completer(mut self, reference: Reference, argument: &str, run: Arc<CompleteFn>) -> Self {
        Arc::make_mut(&mut self.catalog)
            .completers
            .insert((reference, argument.to_owned()), run);
        self
    }

    /// The tools, in the order they were added.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.catalog.tools.items.iter().map(|e| &e.tool)
    }

    /// The key that signs the `requestState` of multi-round requests
    /// (2026-07-28), which carries the client's earlier answers: give every
    /// instance of a server behind one address the same secret key, so a
    /// round can land on any of them. Without one, each server makes a
    /// random key (in a browser, where there is no random source this
    /// crate can reach, a weak one: set it there).
    #[must_use]
    pub fn request_state_key(mut self, key: [u8; 32]) -> Self {
        Arc::make_mut(&mut self.catalog).state_key = StateKey::new(key);
        self
    }

    /// A handle that notifies this server's sessions: of a resource's
    /// update (those subscribed to it) and of a changed list (all).
    pub fn notifier(&self) -> Notifier {
        Notifier {
            hub: self.catalog.hub.clone(),
        }
    }

    /// The MCP methods for one session, as a router to run on a peer with
    /// [`Config::mcp`](jsonrpc_runtime::Config::mcp). Each call makes a new
    /// session: what its client negotiated is its own.
    pub fn router(&self) -> Router {
        let session = Arc::new(Session {
            catalog: self.catalog.clone(),
            negotiated: OnceLock::new(),
            log_level: AtomicU8::new(LogLevel::Debug as u8),
            peer: OnceLock::new(),
            subscriptions: Default::default(),
        });
        session::routes(session)
    }
}

/// A tool's name, title, description and annotations, for
/// [`McpServer::tool_with`].
#[derive(Debug, Clone)]
pub struct ToolInfo {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Option<ToolAnnotations>,
    input_schema: Option<Value>,
}

impl ToolInfo {
    /// A tool named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ToolInfo {
            name: name.into(),
            title: None,
            description: None,
            annotations: None,
            input_schema: None,
        }
    }

    /// The `inputSchema` to list, as written, instead of the one made from
    /// the argument type: for a schema schemars cannot make (conditionals,
    /// anchors) or one kept from elsewhere. The arguments still decode as
    /// the handler's type, so keep the two in step (`serde_json::Value`
    /// takes anything).
    #[must_use]
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// A name for people to read.
    #[must_use]
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What it does, for the model.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Hints about its behaviour.
    #[must_use]
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}
