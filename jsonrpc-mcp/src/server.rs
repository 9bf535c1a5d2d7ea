//! The server side: a catalog of typed tools, served as the MCP methods of
//! a runtime [`Router`].

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use futures_util::future::BoxFuture;
use jsonrpc_runtime::{Context, ErrorObject, Router};
use schemars::{JsonSchema, SchemaGenerator};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::prompts::{
    arguments_of, GetPromptParams, GetPromptResult, ListPromptsResult, Prompt, PromptEntry,
    PromptMessage,
};
use crate::resources::{
    not_found, reader, ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams,
    ReadResourceResult, Resource, ResourceEntry, ResourceTemplate, TemplateEntry, UriPattern,
};
use crate::types::{
    CallToolParams, CallToolResult, ClientCapabilities, Content, Implementation, InitializeParams,
    InitializeResult, ListToolsResult, LogLevel, LoggingMessageParams, PaginatedParams,
    PromptsCapability, ResourceContents, ResourcesCapability, ServerCapabilities, SetLevelParams,
    Tool, ToolAnnotations, ToolsCapability, LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS,
};

/// How many tools one `tools/list` page holds unless
/// [`page_size`](McpServer::page_size) says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// The first revision where arguments that do not fit a tool are a tool
/// error (`isError`, which the model can correct) rather than -32602.
const ARGUMENT_ERRORS_AS_TOOL_ERRORS: &str = "2025-11-25";

type RunTool =
    dyn Fn(Option<Box<RawValue>>, ToolContext) -> BoxFuture<'static, ToolOutcome> + Send + Sync;

/// What running a tool came to: a result (an `isError` one included), or a
/// protocol error.
type ToolOutcome = Result<CallToolResult, ErrorObject>;

/// A tool of the catalog: its description and how to run it.
struct Entry {
    tool: Tool,
    run: Arc<RunTool>,
}

/// What [`McpServer::on_initialize`] runs.
type OnInitialize = dyn Fn(&InitializeParams, &'static str, &Context) + Send + Sync;

/// The server's name, instructions and tools, shared by every session.
#[derive(Clone)]
struct Catalog {
    info: Implementation,
    instructions: Option<String>,
    on_initialize: Option<Arc<OnInitialize>>,
    entries: Vec<Arc<Entry>>,
    by_name: HashMap<String, usize>,
    resources: Vec<Arc<ResourceEntry>>,
    resources_by_uri: HashMap<String, usize>,
    templates: Vec<Arc<TemplateEntry>>,
    prompts: Vec<Arc<PromptEntry>>,
    prompts_by_name: HashMap<String, usize>,
    page_size: usize,
}

/// An MCP server: its identity and its tools, each a typed async function
/// whose argument type gives the tool's input schema.
///
/// [`router`](Self::router) serves it as a [`Router`] for one session
/// (`initialize` with version negotiation, `notifications/initialized`,
/// `tools/list` with pagination, `tools/call`); run that router on a peer
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
            .entries
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
                entries: Vec::new(),
                by_name: HashMap::new(),
                resources: Vec::new(),
                resources_by_uri: HashMap::new(),
                templates: Vec::new(),
                prompts: Vec::new(),
                prompts_by_name: HashMap::new(),
                page_size: DEFAULT_PAGE_SIZE,
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
    pub fn page_size(mut self, tools: usize) -> Self {
        Arc::make_mut(&mut self.catalog).page_size = tools.max(1);
        self
    }

    /// Adds the tool `name`, described for the model by `description`: a
    /// call decodes its `arguments` as `A` (whose JSON Schema is the tool's
    /// `inputSchema`) and runs `handler`. The handler's `Ok` becomes the
    /// result (see [`IntoToolResult`]: text, [`Content`], [`Json`] for a
    /// structured result with an `outputSchema`); its [`ToolError`] an
    /// `isError` result the model reads.
    ///
    /// # Panics
    ///
    /// When a tool named `name` is already there.
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
    /// When a tool of that name is already there.
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
        let input_schema = object_schema(generator.root_schema_for::<A>().to_value());
        let output_schema = R::output_schema(&mut generator);
        let name = info.name.clone();
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
                    Err(e) => return cx.session.argument_error(&tool_name, &e),
                };
                match handler(args, cx).await {
                    Ok(result) => result.into_tool_result(),
                    Err(error) => error.into_outcome(),
                }
            })
        });
        let catalog = Arc::make_mut(&mut self.catalog);
        assert!(
            !catalog.by_name.contains_key(&name),
            "the MCP server already has a tool named `{name}`"
        );
        catalog.by_name.insert(name, catalog.entries.len());
        catalog.entries.push(Arc::new(Entry { tool, run }));
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
        let catalog = Arc::make_mut(&mut self.catalog);
        assert!(
            !catalog.resources_by_uri.contains_key(&resource.uri),
            "the MCP server already has a resource `{}`",
            resource.uri
        );
        catalog
            .resources_by_uri
            .insert(resource.uri.clone(), catalog.resources.len());
        catalog
            .resources
            .push(Arc::new(ResourceEntry { resource, read }));
        self
    }

    /// Adds the template `template`: `resources/read` of a URI it matches
    /// runs `handler` with the URI and the template's variables
    /// (`file:///{path}` read as `file:///a/b.txt` gives `path` = `a/b.txt`).
    /// A fixed resource of the same URI comes first; templates are tried
    /// in the order they were added.
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
        let description: Arc<str> = Arc::from(description);
        let get: Arc<crate::prompts::GetFn> = Arc::new(move |arguments, cx| {
            let handler = handler.clone();
            let prompt_name = prompt_name.clone();
            let description = description.clone();
            Box::pin(async move {
                let value = serde_json::to_value(arguments).map_err(ErrorObject::internal_error)?;
                let args = serde_json::from_value::<A>(value).map_err(|e| {
                    ErrorObject::invalid_params(format!(
                        "invalid arguments for prompt `{prompt_name}`: {e}"
                    ))
                })?;
                let messages = handler(args, cx).await.map_err(ToolError::into_error)?;
                Ok(GetPromptResult {
                    description: Some(description.to_string()),
                    messages,
                })
            })
        });
        let catalog = Arc::make_mut(&mut self.catalog);
        assert!(
            !catalog.prompts_by_name.contains_key(name),
            "the MCP server already has a prompt named `{name}`"
        );
        catalog
            .prompts_by_name
            .insert(name.to_owned(), catalog.prompts.len());
        catalog.prompts.push(Arc::new(PromptEntry { prompt, get }));
        self
    }

    /// The tools, in the order they were added.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.catalog.entries.iter().map(|e| &e.tool)
    }

    /// The MCP methods for one session, as a router to run on a peer with
    /// [`Config::mcp`](jsonrpc_runtime::Config::mcp). Each call makes a new
    /// session: what its client negotiated is its own.
    pub fn router(&self) -> Router {
        let session = Arc::new(Session {
            catalog: self.catalog.clone(),
            negotiated: OnceLock::new(),
            log_level: AtomicU8::new(LogLevel::Debug as u8),
        });
        let (init, list, call) = (session.clone(), session.clone(), session.clone());
        let level = session.clone();
        let router = Router::new()
            .request(
                "initialize",
                move |params: InitializeParams, ctx: Context| {
                    let result = init.initialize(params, &ctx);
                    async move { Ok::<_, ErrorObject>(result) }
                },
            )
            .notification(
                "notifications/initialized",
                |_: Option<Value>, _: Context| async {},
            )
            .request(
                "tools/list",
                move |params: Option<PaginatedParams>, _: Context| {
                    let page = list.list_tools(params.unwrap_or_default());
                    async move { page }
                },
            )
            .request("tools/call", move |params: CallToolParams, ctx: Context| {
                let session = call.clone();
                async move { session.call_tool(params, ctx).await }
            })
            .request(
                "logging/setLevel",
                move |params: SetLevelParams, _: Context| {
                    level.log_level.store(params.level as u8, Ordering::Relaxed);
                    async { Ok::<_, ErrorObject>(serde_json::Map::new()) }
                },
            );
        let router = if session.offers_resources() {
            resource_routes(router, &session)
        } else {
            router
        };
        if session.catalog.prompts.is_empty() {
            router
        } else {
            prompt_routes(router, &session)
        }
    }
}

/// `resources/list`, `resources/templates/list` and `resources/read`.
fn resource_routes(router: Router, session: &Arc<Session>) -> Router {
    let (list, templates, read) = (session.clone(), session.clone(), session.clone());
    router
        .request(
            "resources/list",
            move |params: Option<PaginatedParams>, _: Context| {
                let page = list.list_resources(params.unwrap_or_default());
                async move { page }
            },
        )
        .request(
            "resources/templates/list",
            move |params: Option<PaginatedParams>, _: Context| {
                let page = templates.list_templates(params.unwrap_or_default());
                async move { page }
            },
        )
        .request(
            "resources/read",
            move |params: ReadResourceParams, ctx: Context| {
                let session = read.clone();
                async move { session.read_resource(params.uri, ctx).await }
            },
        )
}

/// `prompts/list` and `prompts/get`.
fn prompt_routes(router: Router, session: &Arc<Session>) -> Router {
    let (list, get) = (session.clone(), session.clone());
    router
        .request(
            "prompts/list",
            move |params: Option<PaginatedParams>, _: Context| {
                let page = list.list_prompts(params.unwrap_or_default());
                async move { page }
            },
        )
        .request(
            "prompts/get",
            move |params: GetPromptParams, ctx: Context| {
                let session = get.clone();
                async move { session.get_prompt(params, ctx).await }
            },
        )
}

/// One page of `items` from `cursor` (where the previous page ended; none
/// for the first), and the next page's cursor.
fn page<T: Clone>(
    items: &[T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorObject> {
    let start = match cursor {
        None => 0,
        Some(cursor) => cursor
            .parse::<usize>()
            .ok()
            .filter(|start| *start <= items.len())
            .ok_or_else(|| {
                ErrorObject::invalid_params(format!("`{cursor}` is not a cursor of this list"))
            })?,
    };
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

/// A tool's name, title, description and annotations, for
/// [`McpServer::tool_with`].
#[derive(Debug, Clone)]
pub struct ToolInfo {
    name: String,
    title: Option<String>,
    description: Option<String>,
    annotations: Option<ToolAnnotations>,
}

impl ToolInfo {
    /// A tool named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        ToolInfo {
            name: name.into(),
            title: None,
            description: None,
            annotations: None,
        }
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

/// One session's state: what its client negotiated.
struct Session {
    catalog: Arc<Catalog>,
    negotiated: OnceLock<Negotiated>,
    /// The least severe level the client wants (`logging/setLevel`), as a
    /// [`LogLevel`]'s rank; every level until it says.
    log_level: AtomicU8,
}

/// What `initialize` settled.
#[derive(Debug, Clone)]
struct Negotiated {
    version: &'static str,
    capabilities: ClientCapabilities,
    client: Implementation,
}

impl Session {
    /// Answers `initialize`: the client's revision when this layer speaks
    /// it, else the newest. A second `initialize` is refused by the MCP
    /// preset before it gets here.
    fn initialize(&self, params: InitializeParams, ctx: &Context) -> InitializeResult {
        let version = PROTOCOL_VERSIONS
            .iter()
            .copied()
            .find(|v| *v == params.protocol_version)
            .unwrap_or(LATEST_PROTOCOL_VERSION);
        if let Some(hook) = &self.catalog.on_initialize {
            hook(&params, version, ctx);
        }
        let _ = self.negotiated.set(Negotiated {
            version,
            capabilities: params.capabilities,
            client: params.client_info,
        });
        let catalog = &self.catalog;
        InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: ServerCapabilities {
                tools: Some(ToolsCapability {
                    list_changed: false,
                }),
                resources: self.offers_resources().then(ResourcesCapability::default),
                logging: Some(serde_json::Map::new()),
                prompts: (!catalog.prompts.is_empty()).then(PromptsCapability::default),
            },
            server_info: catalog.info.clone(),
            instructions: catalog.instructions.clone(),
        }
    }

    /// The revision negotiated (the newest before `initialize`).
    fn version(&self) -> &'static str {
        self.negotiated
            .get()
            .map_or(LATEST_PROTOCOL_VERSION, |n| n.version)
    }

    /// One page of `tools/list`.
    fn list_tools(&self, params: PaginatedParams) -> Result<ListToolsResult, ErrorObject> {
        let catalog = &self.catalog;
        let (entries, next_cursor) = page(
            &catalog.entries,
            params.cursor.as_deref(),
            catalog.page_size,
        )?;
        Ok(ListToolsResult {
            tools: entries.iter().map(|e| e.tool.clone()).collect(),
            next_cursor,
        })
    }

    /// Whether the server has resources or templates to offer.
    fn offers_resources(&self) -> bool {
        !self.catalog.resources.is_empty() || !self.catalog.templates.is_empty()
    }

    /// One page of `resources/list`.
    fn list_resources(&self, params: PaginatedParams) -> Result<ListResourcesResult, ErrorObject> {
        let catalog = &self.catalog;
        let (entries, next_cursor) = page(
            &catalog.resources,
            params.cursor.as_deref(),
            catalog.page_size,
        )?;
        Ok(ListResourcesResult {
            resources: entries.iter().map(|e| e.resource.clone()).collect(),
            next_cursor,
        })
    }

    /// One page of `resources/templates/list`.
    fn list_templates(
        &self,
        params: PaginatedParams,
    ) -> Result<ListResourceTemplatesResult, ErrorObject> {
        let catalog = &self.catalog;
        let (entries, next_cursor) = page(
            &catalog.templates,
            params.cursor.as_deref(),
            catalog.page_size,
        )?;
        Ok(ListResourceTemplatesResult {
            resource_templates: entries.iter().map(|e| e.template.clone()).collect(),
            next_cursor,
        })
    }

    /// `resources/read`: the fixed resource of that URI, else the first
    /// template that matches it; -32002 when there is neither.
    async fn read_resource(
        self: Arc<Self>,
        uri: String,
        ctx: Context,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let catalog = self.catalog.clone();
        let found = match catalog.resources_by_uri.get(&uri) {
            Some(&index) => Some((catalog.resources[index].read.clone(), HashMap::new())),
            None => catalog
                .templates
                .iter()
                .find_map(|t| t.pattern.matches(&uri).map(|vars| (t.read.clone(), vars))),
        };
        let Some((read, vars)) = found else {
            return Err(not_found(&uri));
        };
        let cx = ToolContext { ctx, session: self };
        let contents = read(uri, vars, cx).await?;
        Ok(ReadResourceResult { contents })
    }

    /// One page of `prompts/list`.
    fn list_prompts(&self, params: PaginatedParams) -> Result<ListPromptsResult, ErrorObject> {
        let catalog = &self.catalog;
        let (entries, next_cursor) = page(
            &catalog.prompts,
            params.cursor.as_deref(),
            catalog.page_size,
        )?;
        Ok(ListPromptsResult {
            prompts: entries.iter().map(|e| e.prompt.clone()).collect(),
            next_cursor,
        })
    }

    /// `prompts/get`: an unknown prompt is -32602.
    async fn get_prompt(
        self: Arc<Self>,
        params: GetPromptParams,
        ctx: Context,
    ) -> Result<GetPromptResult, ErrorObject> {
        let Some(&index) = self.catalog.prompts_by_name.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown prompt `{}`",
                params.name
            )));
        };
        let get = self.catalog.prompts[index].get.clone();
        let cx = ToolContext { ctx, session: self };
        get(params.arguments, cx).await
    }

    /// Runs `tools/call`: an unknown tool is -32602, as the specification's
    /// error handling says.
    async fn call_tool(self: Arc<Self>, params: CallToolParams, ctx: Context) -> ToolOutcome {
        let Some(&index) = self.catalog.by_name.get(&params.name) else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown tool `{}`",
                params.name
            )));
        };
        let entry = self.catalog.entries[index].clone();
        let cx = ToolContext { ctx, session: self };
        (entry.run)(params.arguments, cx).await
    }

    /// Arguments that do not fit the tool: a tool error from 2025-11-25 on
    /// (the model can correct them), -32602 before.
    fn argument_error(&self, tool: &str, error: &serde_json::Error) -> ToolOutcome {
        let message = format!("invalid arguments for `{tool}`: {error}");
        if self.version() >= ARGUMENT_ERRORS_AS_TOOL_ERRORS {
            Ok(CallToolResult::error(message))
        } else {
            Err(ErrorObject::invalid_params(message))
        }
    }
}

/// What a tool's handler sees: the request's [`Context`] (progress,
/// cancellation, calls to the client, who is calling; the context's
/// methods are this one's too) and what the session's client negotiated.
#[derive(Clone)]
pub struct ToolContext {
    ctx: Context,
    session: Arc<Session>,
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("id", &self.ctx.id())
            .field("protocol_version", &self.protocol_version())
            .finish()
    }
}

impl ToolContext {
    /// The request's context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The revision the session speaks.
    pub fn protocol_version(&self) -> &'static str {
        self.session.version()
    }

    /// What the client declared it can do (nothing before `initialize`).
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.session.negotiated.get().map(|n| &n.capabilities)
    }

    /// Who the client said it is.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.session.negotiated.get().map(|n| &n.client)
    }

    /// Sends the client a log message (`notifications/message`) at
    /// `level`, from `logger` when given, unless the client asked
    /// (`logging/setLevel`) for more severe levels only. `data` is any
    /// JSON: a string, or an object of details.
    ///
    /// # Errors
    ///
    /// As [`Peer::notify`](jsonrpc_runtime::Peer::notify): the connection
    /// is closed, or `data` does not serialize.
    ///
    /// # Cancel safety
    ///
    /// As [`Peer::notify`](jsonrpc_runtime::Peer::notify).
    pub async fn log(
        &self,
        level: LogLevel,
        logger: Option<&str>,
        data: impl Serialize,
    ) -> Result<(), jsonrpc_runtime::peer::SendError> {
        if (level as u8) < self.session.log_level.load(Ordering::Relaxed) {
            return Ok(());
        }
        let data =
            serde_json::to_value(data).map_err(jsonrpc_runtime::peer::SendError::InvalidParams)?;
        let params = LoggingMessageParams {
            level,
            logger: logger.map(str::to_owned),
            data,
        };
        self.ctx
            .peer()
            .notify("notifications/message", params)
            .await
    }
}

impl Deref for ToolContext {
    type Target = Context;

    fn deref(&self) -> &Context {
        &self.ctx
    }
}

/// A tool's failure, for the model to read: an `isError` result with the
/// message as its text. [`ToolError::protocol`] makes a JSON-RPC error
/// instead, for a call the client should not have made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(ToolErrorKind);

#[derive(Debug, Clone, PartialEq)]
enum ToolErrorKind {
    Tool(String),
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(ToolErrorKind::Tool(message.into()))
    }

    /// A JSON-RPC error answer instead of a result.
    pub fn protocol(error: ErrorObject) -> Self {
        ToolError(ToolErrorKind::Protocol(error))
    }

    /// As a JSON-RPC error, for methods with no `isError` result
    /// (resources, prompts): a tool error is -32603 with its message.
    pub(crate) fn into_error(self) -> ErrorObject {
        match self.0 {
            ToolErrorKind::Tool(message) => ErrorObject::new(-32603, message),
            ToolErrorKind::Protocol(error) => error,
        }
    }

    fn into_outcome(self) -> ToolOutcome {
        match self.0 {
            ToolErrorKind::Tool(message) => Ok(CallToolResult::error(message)),
            ToolErrorKind::Protocol(error) => Err(error),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ToolErrorKind::Tool(message) => f.write_str(message),
            ToolErrorKind::Protocol(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

/// What a tool's handler can return.
pub trait IntoToolResult: Send + 'static {
    /// The result, or a protocol error when it cannot be encoded.
    ///
    /// # Errors
    ///
    /// -32603 when a structured result does not serialize.
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject>;

    /// The tool's `outputSchema`, when its results are structured.
    fn output_schema(_generator: &mut SchemaGenerator) -> Option<Value> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult {
            content: vec![self],
            ..CallToolResult::default()
        })
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult {
            content: self,
            ..CallToolResult::default()
        })
    }
}

/// A structured result: `structuredContent` (the tool's `outputSchema` is
/// `T`'s JSON Schema), with the same JSON as text for clients that read
/// only `content`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        let value = serde_json::to_value(&self.0).map_err(ErrorObject::internal_error)?;
        Ok(CallToolResult {
            content: vec![Content::text(value.to_string())],
            structured_content: Some(value),
            is_error: false,
        })
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Value> {
        Some(object_schema(generator.root_schema_for::<T>().to_value()))
    }
}

/// JSON Schema 2020-12, as MCP asks, without a `$schema` member.
fn schema_generator() -> SchemaGenerator {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.into_generator()
}

/// A tool's schemas are objects: a unit or a schema with no type (`()`,
/// `serde_json::Value`) takes arguments as an object of anything.
fn object_schema(schema: Value) -> Value {
    match &schema {
        Value::Object(map) if map.get("type").is_some_and(|t| t == "object") => schema,
        Value::Object(map) if map.get("type").is_none() && !map.contains_key("$ref") => {
            let mut map = map.clone();
            map.insert("type".to_owned(), Value::from("object"));
            Value::Object(map)
        }
        _ => schema,
    }
}
