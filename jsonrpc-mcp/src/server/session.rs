//! One session: what its client negotiated, and the answers of the MCP
//! methods from the catalog.

use std::collections::HashMap;
use std::fmt;
use std::future::{ready, Future};
use std::ops::Deref;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use jsonrpc_runtime::{Context, ErrorObject, Peer, Router};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::hub::{Subscriptions, MAX_SUBSCRIPTIONS};
use super::mrtr::InputRequired;
use super::mrtr::Inputs;
use super::results::ToolOutcome;
use super::stateless::{Complete, Envelope, Shape, Stateless, HEADER_MISMATCH, STATELESS_VERSIONS};
use super::Catalog;
use crate::completion::{CompleteParams, CompleteResult, Completion, Reference};
use crate::prompts::{GetPromptParams, GetPromptResult, ListPromptsResult};
use crate::resources::{
    not_found, ListResourceTemplatesResult, ListResourcesResult, ReadFn, ReadResourceParams,
    ReadResourceResult, RESOURCE_NOT_FOUND,
};
use crate::types::{
    CallToolParams, CallToolResult, ClientCapabilities, DiscoverMeta, DiscoverResult,
    Implementation, InitializeParams, InitializeResult, ListToolsResult, LogLevel,
    LoggingMessageParams, PaginatedParams, PromptsCapability, ResourcesCapability,
    ServerCapabilities, SetLevelParams, ToolsCapability, LATEST_PROTOCOL_VERSION,
    PROTOCOL_VERSIONS,
};

/// The MCP methods of one session; those of resources, prompts and
/// completion only when the server has some. Each is answered on the
/// session's revision, or on the stateless one when the request says so.
pub(super) fn routes(session: Arc<Session>) -> Router {
    let catalog = session.catalog.clone();
    let mut router = Router::new().notification(
        "notifications/initialized",
        |_: Option<Value>, _: Context| async {},
    );
    router = on(router, "initialize", &session, Kind::Session, |s, p, cx| {
        let result = s.initialize(p, &cx.ctx);
        let _ = s.peer.set(cx.ctx.peer().clone());
        s.catalog.hub.join(&s);
        ready(Ok(result))
    });
    router = on(
        router,
        "server/discover",
        &session,
        Kind::Stateless,
        |s, _: Option<Value>, _| ready(Ok(s.discover())),
    );
    router = on(
        router,
        "subscriptions/listen",
        &session,
        Kind::Stateless,
        Session::listen,
    );
    router = on(
        router,
        "tools/list",
        &session,
        Kind::Both(Shape::Cached),
        |s, p: Option<PaginatedParams>, _| ready(s.list_tools(p.unwrap_or_default())),
    );
    router = on(
        router,
        "tools/call",
        &session,
        Kind::Asking(Shape::Plain),
        Session::call_tool,
    );
    router = on(
        router,
        "logging/setLevel",
        &session,
        Kind::Session,
        |s, p: SetLevelParams, _| {
            s.log_level.store(p.level as u8, Ordering::Relaxed);
            ready(Ok(serde_json::Map::new()))
        },
    );
    if session.offers_resources() {
        router = on(
            router,
            "resources/list",
            &session,
            Kind::Both(Shape::Cached),
            |s, p: Option<PaginatedParams>, _| ready(s.list_resources(p.unwrap_or_default())),
        );
        router = on(
            router,
            "resources/templates/list",
            &session,
            Kind::Both(Shape::Cached),
            |s, p: Option<PaginatedParams>, _| ready(s.list_templates(p.unwrap_or_default())),
        );
        router = on(
            router,
            "resources/read",
            &session,
            Kind::Asking(Shape::Cached),
            Session::read_resource,
        );
        router = on(
            router,
            "resources/subscribe",
            &session,
            Kind::Session,
            |s, p: ReadResourceParams, _| ready(s.subscribe(p.uri)),
        );
        router = on(
            router,
            "resources/unsubscribe",
            &session,
            Kind::Session,
            |s, p: ReadResourceParams, _| {
                s.subscriptions.remove(&p.uri);
                ready(Ok(serde_json::Map::new()))
            },
        );
    }
    if !catalog.prompts.items.is_empty() {
        router = on(
            router,
            "prompts/list",
            &session,
            Kind::Both(Shape::Cached),
            |s, p: Option<PaginatedParams>, _| ready(s.list_prompts(p.unwrap_or_default())),
        );
        router = on(
            router,
            "prompts/get",
            &session,
            Kind::Asking(Shape::Plain),
            Session::get_prompt,
        );
    }
    if !catalog.completers.is_empty() {
        router = on(
            router,
            "completion/complete",
            &session,
            Kind::Both(Shape::Plain),
            Session::complete,
        );
    }
    router
}

/// Which revisions a method belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Sessions only (`initialize`, `logging/setLevel`, subscriptions):
    /// -32601 on a stateless request.
    Session,
    /// The stateless revision only (`server/discover`, which is cached).
    Stateless,
    /// Both, with the stateless result shaped so.
    Both(Shape),
    /// Both, and on a stateless request it may ask the client (MRTR).
    Asking(Shape),
}

impl Kind {
    /// How a stateless result of this kind is marked.
    fn shape(self) -> Shape {
        match self {
            Kind::Both(shape) | Kind::Asking(shape) => shape,
            Kind::Session | Kind::Stateless => Shape::Cached,
        }
    }
}

/// A route's answer: a session's result as it is, a stateless one marked,
/// or the questions of a round.
#[derive(Serialize)]
#[serde(untagged)]
enum Answer<R> {
    Session(R),
    Stateless(Complete<R>),
    InputRequired(InputRequired),
}

/// `router` with `method` answered by `answer` on this session: the
/// request's stateless `_meta` read and checked first, and on a stateless
/// request the result marked (`resultType`, caching hints), or answered
/// `input_required` when the handler asked what it had no answer to.
fn on<P, R, F, Fut>(
    router: Router,
    method: &'static str,
    session: &Arc<Session>,
    kind: Kind,
    answer: F,
) -> Router
where
    P: DeserializeOwned + Send + 'static,
    R: Serialize + Send + 'static,
    F: Fn(Arc<Session>, P, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
{
    let session = session.clone();
    let answer = Arc::new(answer);
    router.request(
        method,
        move |params: Option<Box<RawValue>>, ctx: Context| {
            let (session, answer) = (session.clone(), answer.clone());
            // Boxed here: the request's future (its envelope, arguments and
            // the handler's own) is ~1 KiB, and a task moves a future several
            // times on its way to the heap; a box moves as one pointer.
            Box::pin(async move {
                let mut envelope = Envelope::read(params.as_deref())?;
                let stateless = Stateless::of(method, &mut envelope, &ctx)?;
                let inputs = match (&stateless, kind) {
                    (Some(_), Kind::Session) | (None, Kind::Stateless) => {
                        return Err(ErrorObject::method_not_found(method))
                    }
                    (Some(_), Kind::Asking(_)) => {
                        let about = envelope.name.take().or(envelope.uri.take());
                        Some(Inputs::new(
                            &session.catalog.state_key,
                            method,
                            about.unwrap_or_default(),
                            envelope.request_state.as_deref(),
                            envelope.input_responses.as_ref(),
                        )?)
                    }
                    _ => None,
                };
                let raw = params.as_deref().map_or("null", RawValue::get);
                let params: P = serde_json::from_str(raw).map_err(ErrorObject::invalid_params)?;
                let scope = Arc::new(Scope { stateless, inputs });
                let cx = ToolContext {
                    ctx,
                    session: session.clone(),
                    scope: scope.clone(),
                };
                let result = answer(session.clone(), params, cx).await;
                let asked = scope
                    .inputs
                    .as_ref()
                    .and_then(|inputs| inputs.input_required(&session.catalog.state_key));
                if let Some(asked) = asked {
                    return Ok(Answer::InputRequired(asked));
                }
                Ok(match &scope.stateless {
                    None => Answer::Session(result?),
                    Some(_) => Answer::Stateless(Complete::new(result?, kind.shape())),
                })
            })
        },
    )
}

/// What one request said of itself: its stateless `_meta`, and its
/// questions and answers.
#[derive(Debug)]
pub(super) struct Scope {
    pub(super) stateless: Option<Stateless>,
    /// The questions and answers of a stateless request that may ask
    /// (`tools/call`, `prompts/get`, `resources/read`).
    pub(super) inputs: Option<Inputs>,
}

/// One session's state: what its client negotiated.
pub(super) struct Session {
    pub(super) catalog: Arc<Catalog>,
    pub(super) negotiated: OnceLock<Declared>,
    /// The least severe level the client wants (`logging/setLevel`), as a
    /// [`LogLevel`]'s rank; every level until it says.
    pub(super) log_level: AtomicU8,
    /// The connection, once `initialize` came: for notifications that do
    /// not answer a request of this session.
    pub(super) peer: OnceLock<Peer>,
    /// The resources whose updates the client wants.
    pub(super) subscriptions: Subscriptions,
}

/// What a client declared: in `initialize` for its session, or in a
/// stateless request's `_meta`.
#[derive(Debug)]
pub(super) struct Declared {
    pub(super) version: &'static str,
    pub(super) capabilities: ClientCapabilities,
    pub(super) client: Option<Implementation>,
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
        let _ = self.negotiated.set(Declared {
            version,
            capabilities: params.capabilities,
            client: Some(params.client_info),
        });
        InitializeResult {
            protocol_version: version.to_owned(),
            capabilities: self.capabilities(false),
            server_info: self.catalog.info.clone(),
            instructions: self.catalog.instructions.clone(),
        }
    }

    /// What the server offers. A session is told of list changes and
    /// resource updates (a [`Notifier`](super::Notifier) sends them) and
    /// may set its log level. A stateless client is told of neither, as
    /// those need `subscriptions/listen`, which this layer does not serve,
    /// and names its log level in each request's `_meta`.
    fn capabilities(&self, stateless: bool) -> ServerCapabilities {
        let catalog = &self.catalog;
        // Changes reach a session as notifications, a stateless client on
        // `subscriptions/listen`: both are told.
        let changes = true;
        ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: changes,
            }),
            resources: self.offers_resources().then_some(ResourcesCapability {
                subscribe: changes,
                list_changed: changes,
            }),
            prompts: (!catalog.prompts.items.is_empty()).then_some(PromptsCapability {
                list_changed: changes,
            }),
            completions: (!catalog.completers.is_empty()).then(serde_json::Map::new),
            logging: (!stateless).then(serde_json::Map::new),
        }
    }

    /// `server/discover`: the stateless revisions, what the server offers
    /// and who it is.
    fn discover(&self) -> DiscoverResult {
        DiscoverResult {
            supported_versions: STATELESS_VERSIONS.map(str::to_owned).to_vec(),
            capabilities: self.capabilities(true),
            instructions: self.catalog.instructions.clone(),
            meta: DiscoverMeta {
                server_info: self.catalog.info.clone(),
            },
        }
    }

    /// Whether the session's connection is open.
    pub(super) fn is_live(&self) -> bool {
        self.peer.get().is_some_and(|p| !p.is_closed())
    }

    pub(super) fn peer(&self) -> Option<&Peer> {
        self.peer.get()
    }

    pub(super) fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.contains(uri)
    }

    /// `resources/subscribe`: a URI of a resource or of a template's match;
    /// -32002 for any other.
    fn subscribe(&self, uri: String) -> Result<serde_json::Map<String, Value>, ErrorObject> {
        if self.reader_of(&uri).is_none() {
            return Err(not_found(&uri, RESOURCE_NOT_FOUND));
        }
        if !self.subscriptions.add(uri) {
            return Err(ErrorObject::invalid_params(format!(
                "a session subscribes to at most {MAX_SUBSCRIPTIONS} resources"
            )));
        }
        Ok(serde_json::Map::new())
    }

    /// One page of `items` from `params`' cursor (where the previous
    /// page ended; none for the first), each described by `describe`, and
    /// the next page's cursor.
    fn page<T, U>(
        &self,
        items: &[Arc<T>],
        params: PaginatedParams,
        describe: impl Fn(&T) -> U,
    ) -> Result<(Vec<U>, Option<String>), ErrorObject> {
        let start = match params.cursor.as_deref() {
            None => 0,
            Some(cursor) => cursor
                .parse::<usize>()
                .ok()
                .filter(|start| *start <= items.len())
                .ok_or_else(|| {
                    ErrorObject::invalid_params(format!("`{cursor}` is not a cursor of this list"))
                })?,
        };
        let end = (start + self.catalog.page_size).min(items.len());
        let next = (end < items.len()).then(|| end.to_string());
        Ok((
            items[start..end]
                .iter()
                .map(|item| describe(item))
                .collect(),
            next,
        ))
    }

    /// One page of `tools/list`.
    fn list_tools(&self, params: PaginatedParams) -> Result<ListToolsResult, ErrorObject> {
        let (tools, next_cursor) =
            self.page(&self.catalog.tools.items, params, |e| e.tool.clone())?;
        Ok(ListToolsResult { tools, next_cursor })
    }

    /// Whether the server has resources or templates to offer.
    pub(super) fn offers_resources(&self) -> bool {
        !self.catalog.resources.items.is_empty() || !self.catalog.templates.is_empty()
    }

    pub(super) fn offers_prompts(&self) -> bool {
        !self.catalog.prompts.items.is_empty()
    }

    /// Whether `uri` is a resource of the server (fixed, or a template's).
    pub(super) fn has_resource(&self, uri: &str) -> bool {
        self.reader_of(uri).is_some()
    }

    /// One page of `resources/list`.
    fn list_resources(&self, params: PaginatedParams) -> Result<ListResourcesResult, ErrorObject> {
        let (resources, next_cursor) = self.page(&self.catalog.resources.items, params, |e| {
            e.resource.clone()
        })?;
        Ok(ListResourcesResult {
            resources,
            next_cursor,
        })
    }

    /// One page of `resources/templates/list`.
    fn list_templates(
        &self,
        params: PaginatedParams,
    ) -> Result<ListResourceTemplatesResult, ErrorObject> {
        let (resource_templates, next_cursor) =
            self.page(&self.catalog.templates, params, |e| e.template.clone())?;
        Ok(ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
        })
    }

    /// One page of `prompts/list`.
    fn list_prompts(&self, params: PaginatedParams) -> Result<ListPromptsResult, ErrorObject> {
        let (prompts, next_cursor) =
            self.page(&self.catalog.prompts.items, params, |e| e.prompt.clone())?;
        Ok(ListPromptsResult {
            prompts,
            next_cursor,
        })
    }

    /// How `uri` is read: by its fixed resource, else by the first
    /// template that matches it (with the template's variables).
    fn reader_of(&self, uri: &str) -> Option<(Arc<ReadFn>, HashMap<String, String>)> {
        let catalog = &self.catalog;
        match catalog.resources.get(uri) {
            Some(entry) => Some((entry.read.clone(), HashMap::new())),
            None => catalog
                .templates
                .iter()
                .find_map(|t| t.pattern.matches(uri).map(|vars| (t.read.clone(), vars))),
        }
    }

    /// `resources/read`: the fixed resource of that URI, else the first
    /// template that matches it; when there is neither, -32002 on a
    /// session and -32602 on a stateless request (SEP-2164), with the URI.
    async fn read_resource(
        self: Arc<Self>,
        params: ReadResourceParams,
        cx: ToolContext,
    ) -> Result<ReadResourceResult, ErrorObject> {
        let uri = params.uri;
        let Some((read, vars)) = self.reader_of(&uri) else {
            // SEP-2164: the stateless revision says -32602.
            let code = if cx.is_stateless() {
                jsonrpc_runtime::ErrorCode::INVALID_PARAMS.0
            } else {
                RESOURCE_NOT_FOUND
            };
            return Err(not_found(&uri, code));
        };
        let contents = read(uri, vars, cx).await?;
        Ok(ReadResourceResult { contents })
    }

    /// `completion/complete`: the completer of that argument, none when
    /// it has no completer; -32602 for a prompt or template the server does
    /// not have.
    async fn complete(
        self: Arc<Self>,
        params: CompleteParams,
        cx: ToolContext,
    ) -> Result<CompleteResult, ErrorObject> {
        let catalog = self.catalog.clone();
        let unknown = match &params.reference {
            Reference::Prompt { name } => catalog
                .prompts
                .get(name)
                .is_none()
                .then(|| format!("unknown prompt `{name}`")),
            Reference::Resource { uri } => (!catalog
                .templates
                .iter()
                .any(|t| t.template.uri_template == *uri))
            .then(|| format!("unknown resource template `{uri}`")),
        };
        if let Some(message) = unknown {
            return Err(ErrorObject::invalid_params(message));
        }
        let key = (params.reference, params.argument.name);
        let Some(run) = catalog.completers.get(&key).cloned() else {
            return Ok(CompleteResult {
                completion: Completion::default(),
            });
        };
        let values = run(params.argument.value, params.context.arguments, cx).await?;
        Ok(CompleteResult {
            completion: Completion::capped(values),
        })
    }

    /// `prompts/get`: an unknown prompt is -32602.
    async fn get_prompt(
        self: Arc<Self>,
        params: GetPromptParams,
        cx: ToolContext,
    ) -> Result<GetPromptResult, ErrorObject> {
        let Some(entry) = self.catalog.prompts.get(&params.name).cloned() else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown prompt `{}`",
                params.name
            )));
        };
        let messages = (entry.get)(params.arguments, cx).await?;
        Ok(GetPromptResult {
            description: entry.prompt.description.clone(),
            messages,
        })
    }

    /// Runs `tools/call`: an unknown tool is -32602, as the specification's
    /// error handling says.
    async fn call_tool(self: Arc<Self>, params: CallToolParams, cx: ToolContext) -> ToolOutcome {
        let Some(entry) = self.catalog.tools.get(&params.name).cloned() else {
            return Err(ErrorObject::invalid_params(format!(
                "unknown tool `{}`",
                params.name
            )));
        };
        if cx.is_stateless() && !entry.params.is_empty() && cx.ctx.caller().uri().is_some() {
            let arguments = params.arguments.as_deref().map_or("{}", RawValue::get);
            let arguments = serde_json::from_str(arguments).unwrap_or(Value::Null);
            if let Err(mismatch) = entry.params.check(&arguments, cx.ctx.caller().headers()) {
                return Err(ErrorObject::new(HEADER_MISMATCH, mismatch.to_string()));
            }
        }
        (entry.run)(params.arguments, cx).await
    }
}

/// What a tool's handler sees: the request's [`Context`] (progress,
/// cancellation, calls to the client, who is calling; the context's
/// methods are this one's too), what the client declared (in its
/// session's `initialize`, or in a stateless request's `_meta`), and the
/// questions to the client ([`input`](ToolContext::input)).
#[derive(Clone)]
pub struct ToolContext {
    pub(super) ctx: Context,
    pub(super) session: Arc<Session>,
    pub(super) scope: Arc<Scope>,
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
    /// Arguments that do not fit the tool: a tool error from 2025-11-25 on
    /// (the model can correct them), -32602 before.
    pub(super) fn argument_error(&self, tool: &str, error: &serde_json::Error) -> ToolOutcome {
        let message = format!("invalid arguments for `{tool}`: {error}");
        // Revisions are dates: they order as strings.
        if self.protocol_version() >= ARGUMENT_ERRORS_AS_TOOL_ERRORS {
            Ok(CallToolResult::error(message))
        } else {
            Err(ErrorObject::invalid_params(message))
        }
    }

    /// The request's context.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// What the client declared: the request's `_meta` on a stateless
    /// request, else the session's `initialize` (none before it).
    fn declared(&self) -> Option<&Declared> {
        match &self.scope.stateless {
            Some(stateless) => Some(&stateless.declared),
            None => self.session.negotiated.get(),
        }
    }

    /// The revision of the request: the session's (the newest before
    /// `initialize`), or the stateless revision the request's `_meta`
    /// names.
    pub fn protocol_version(&self) -> &'static str {
        self.declared()
            .map_or(LATEST_PROTOCOL_VERSION, |d| d.version)
    }

    /// Whether the request is of the stateless revision (2026-07-28): it
    /// says what its client can do in its `_meta`, and questions to the
    /// client are answered in a later round of the request.
    pub fn is_stateless(&self) -> bool {
        self.scope.stateless.is_some()
    }

    /// What the client declared it can do: in `initialize` (nothing before
    /// it), or in the request's `_meta`.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.declared().map(|d| &d.capabilities)
    }

    /// Who the client said it is (a stateless client need not say).
    pub fn client_info(&self) -> Option<&Implementation> {
        self.declared().and_then(|d| d.client.as_ref())
    }

    /// Sends the client a log message (`notifications/message`) at
    /// `level`, from `logger` when given, unless the client asked for more
    /// severe levels only: with `logging/setLevel` on a session, in the
    /// request's `_meta` on a stateless request (which gets no log
    /// messages unless it names a level). `data` is any JSON: a string, or
    /// an object of details.
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
        let least = match &self.scope.stateless {
            // A stateless client is sent log messages only when its
            // request's `_meta` asks for them.
            Some(stateless) => match stateless.log_level {
                Some(least) => least as u8,
                None => return Ok(()),
            },
            None => self.session.log_level.load(Ordering::Relaxed),
        };
        if (level as u8) < least {
            return Ok(());
        }
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
