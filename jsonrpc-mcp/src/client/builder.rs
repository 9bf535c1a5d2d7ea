//! Starting a client: who it is, the revision it asks for, what it
//! answers, and the first exchange (`server/discover`, or `initialize`).

use super::*;

/// Who the client is, the revision it asks for, and what it answers (see
/// [`McpClient::builder`]).
#[must_use = "a builder does nothing until `connect`"]
pub struct McpClientBuilder {
    pub(super) info: Implementation,
    pub(super) version: String,
    pub(super) config: Config,
    pub(super) handlers: Handlers,
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

    /// Starts the client on `transport` (see the [module](super) for how
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

impl fmt::Debug for McpClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClientBuilder")
            .field("info", &self.info)
            .field("version", &self.version)
            .field("capabilities", &self.handlers.capabilities())
            .finish_non_exhaustive()
    }
}
