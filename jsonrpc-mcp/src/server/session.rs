//! One session: what its client negotiated, and the answers of the MCP
//! methods from the catalog.

use std::collections::HashMap;
use std::fmt;
use std::ops::Deref;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use jsonrpc_runtime::{Context, ErrorObject, Router};
use serde::Serialize;
use serde_json::Value;

use super::results::ToolOutcome;
use super::Catalog;
use crate::completion::{CompleteParams, CompleteResult, Completion, Reference};
use crate::prompts::{GetPromptParams, GetPromptResult, ListPromptsResult};
use crate::resources::{
    not_found, ListResourceTemplatesResult, ListResourcesResult, ReadResourceParams,
    ReadResourceResult,
};
use crate::types::{
    CallToolParams, CallToolResult, ClientCapabilities, Implementation, InitializeParams,
    InitializeResult, ListToolsResult, LogLevel, LoggingMessageParams, PaginatedParams,
    PromptsCapability, ResourcesCapability, ServerCapabilities, SetLevelParams, ToolsCapability,
    LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS,
};

/// The MCP methods of one session.
pub(super) fn routes(session: Arc<Session>) -> Router {
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
    let router = if session.catalog.prompts.is_empty() {
        router
    } else {
        prompt_routes(router, &session)
    };
    if session.catalog.completers.is_empty() {
        return router;
    }
    router.request(
        "completion/complete",
        move |params: CompleteParams, ctx: Context| {
            let session = session.clone();
            async move { session.complete(params, ctx).await }
        },
    )
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

/// One session's state: what its client negotiated.
pub(super) struct Session {
    pub(super) catalog: Arc<Catalog>,
    pub(super) negotiated: OnceLock<Negotiated>,
    /// The least severe level the client wants (`logging/setLevel`), as a
    /// [`LogLevel`]'s rank; every level until it says.
    pub(super) log_level: AtomicU8,
}

/// What `initialize` settled.
#[derive(Debug, Clone)]
pub(super) struct Negotiated {
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
                completions: (!catalog.completers.is_empty()).then(serde_json::Map::new),
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

    /// `completion/complete`: the completer of that argument, none when
    /// it has no completer; -32602 for a prompt or template the server does
    /// not have.
    async fn complete(
        self: Arc<Self>,
        params: CompleteParams,
        ctx: Context,
    ) -> Result<CompleteResult, ErrorObject> {
        let catalog = self.catalog.clone();
        let known = match &params.reference {
            Reference::Prompt { name } => catalog.prompts_by_name.contains_key(name),
            Reference::Resource { uri } => catalog
                .templates
                .iter()
                .any(|t| t.template.uri_template == *uri),
        };
        if !known {
            return Err(ErrorObject::invalid_params(match &params.reference {
                Reference::Prompt { name } => format!("unknown prompt `{name}`"),
                Reference::Resource { uri } => format!("unknown resource template `{uri}`"),
            }));
        }
        let key = (params.reference, params.argument.name);
        let Some(run) = catalog.completers.get(&key).cloned() else {
            return Ok(CompleteResult {
                completion: Completion::default(),
            });
        };
        let cx = ToolContext { ctx, session: self };
        let values = run(params.argument.value, params.context.arguments, cx).await?;
        Ok(CompleteResult {
            completion: Completion::capped(values),
        })
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
    pub(super) fn argument_error(&self, tool: &str, error: &serde_json::Error) -> ToolOutcome {
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
    pub(super) ctx: Context,
    pub(super) session: Arc<Session>,
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

/// The first revision where arguments that do not fit a tool are a tool
/// error (`isError`, which the model can correct) rather than -32602.
const ARGUMENT_ERRORS_AS_TOOL_ERRORS: &str = "2025-11-25";
