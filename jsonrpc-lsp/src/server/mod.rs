//! Serving a [`LanguageServer`]: the layer between the runtime and the
//! implementation (handshake bookkeeping, the document store, the trace
//! setting, the parent process), and the ways to run it.

mod capabilities;
mod parent;

use std::sync::Arc;

use jsonrpc_runtime::{CloseReason, Config, Context, Peer, Router, Transport};

use crate::documents::PositionEncoding;
#[allow(clippy::wildcard_imports)]
use crate::types::*;
use crate::{Client, LanguageServer, Result};

/// A [`LanguageServer`] ready to serve, with the layer's settings.
///
/// It serves on [`Config::lsp`] (`Content-Length` framing,
/// `$/cancelRequest` answered -32800, `$/progress`, the lifecycle: requests
/// before `initialize` -32002, after `shutdown` -32600, `exit` closing with
/// code 0 after `shutdown` and 1 otherwise), and before the server's own
/// methods run it:
///
/// - at `initialize`: connects the [`Client`], keeps the client's
///   capabilities and trace level, picks the position encoding (the first
///   of [`position_encodings`](LspServer::position_encodings) the client
///   offers, else UTF-16) and puts it in the answer's `positionEncoding`
///   unless the server set one, answers `textDocumentSync` as incremental
///   with open and close unless the server set it, announces the providers
///   of the methods the server wrote when its impl is
///   [`#[rpc]`](crate::rpc) (see [`LanguageServer`]), and watches the
///   client's process (`processId`): when it is gone the connection closes;
/// - at `didOpen`, `didChange`, `didClose`: updates the
///   [document store](crate::documents::Documents);
/// - at `$/setTrace`: keeps the new level ([`Client::log_trace`] follows it).
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_lsp::{Client, LanguageServer, LspServer};
///
/// struct Backend {
///     client: Client,
/// }
///
/// impl LanguageServer for Backend {}
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> std::io::Result<()> {
///     let reason = LspServer::new(|client| Backend { client }).serve_stdio().await?;
///     std::process::exit(reason.exit_code())
/// }
/// ```
#[derive(Debug)]
pub struct LspServer<S> {
    layered: Layered<S>,
    config: Config,
    /// The server's own methods, beside the protocol's.
    extra: Option<Router>,
}

/// The implementation and what the layer keeps beside it.
#[derive(Debug)]
pub(crate) struct Layered<S> {
    inner: S,
    client: Client,
    encodings: Arc<[PositionEncoding]>,
    watch_parent: bool,
}

impl<S: LanguageServer> LspServer<S> {
    /// A server made by `make`, which gets the handle on the client.
    pub fn new(make: impl FnOnce(Client) -> S) -> Self {
        let client = Client::default();
        let inner = make(client.clone());
        LspServer {
            layered: Layered {
                inner,
                client,
                encodings: Arc::new([
                    PositionEncoding::Utf8,
                    PositionEncoding::Utf16,
                    PositionEncoding::Utf32,
                ]),
                watch_parent: true,
            },
            config: Config::lsp(),
            extra: None,
        }
    }

    /// The position encodings the server accepts, most wanted first
    /// (default: UTF-8, UTF-16, UTF-32). The handshake picks the first the
    /// client offers; a client that offers none gets UTF-16, which every
    /// client speaks.
    #[must_use]
    pub fn position_encodings(
        mut self,
        encodings: impl IntoIterator<Item = PositionEncoding>,
    ) -> Self {
        self.layered.encodings = encodings.into_iter().collect();
        self
    }

    /// Whether the connection closes when the client's process
    /// (`initialize`'s `processId`) is gone (default: yes; checked every
    /// three seconds, on Unix).
    #[must_use]
    pub fn watch_parent(mut self, watch: bool) -> Self {
        self.layered.watch_parent = watch;
        self
    }

    /// The runtime's settings (default [`Config::lsp`]); keep its
    /// cancellation, progress and lifecycle rules unless you mean to change
    /// the protocol.
    #[must_use]
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Adds methods of the server's own (extensions such as
    /// rust-analyzer's `experimental/*`), served beside the protocol's by
    /// the same rules (the lifecycle, cancellation, progress). Their
    /// handlers reach the client through a clone of
    /// [`client`](LspServer::client).
    ///
    /// # Panics
    ///
    /// When `routes` has a method of the protocol, which
    /// [`LanguageServer`] already serves (or one added before).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_lsp::{Context, ErrorObject, LanguageServer, LspServer};
    /// use jsonrpc_runtime::Router;
    ///
    /// struct Backend;
    /// impl LanguageServer for Backend {}
    ///
    /// let own = Router::new().request("example/version", |(): (), _: Context| async {
    ///     Ok::<_, ErrorObject>("1.0")
    /// });
    /// let (router, _config) = LspServer::new(|_| Backend).merge(own).into_parts();
    /// assert!(router.contains("example/version") && router.contains("textDocument/hover"));
    /// ```
    #[must_use]
    #[track_caller]
    pub fn merge(mut self, routes: Router) -> Self {
        self.extra = Some(match self.extra.take() {
            Some(extra) => extra.merge(routes),
            None => routes,
        });
        self
    }

    /// The handle on the client this server's methods use.
    pub fn client(&self) -> &Client {
        &self.layered.client
    }

    /// The route table, to run with the settings of
    /// [`config`](LspServer::config) on a peer of your own (the `config` is
    /// returned with it).
    ///
    /// # Panics
    ///
    /// When a method [`merge`](LspServer::merge)d in is one of the
    /// protocol's.
    #[track_caller]
    pub fn into_parts(self) -> (Router, Config) {
        let router = self.layered.into_router();
        let router = match self.extra {
            Some(extra) => router.merge(extra),
            None => router,
        };
        (router, self.config)
    }

    /// Serves on `transport` until the connection closes; the reason says
    /// how (its [`exit_code`](CloseReason::exit_code) is what the process
    /// should exit with).
    pub async fn serve(self, transport: Transport) -> CloseReason {
        let (router, config) = self.into_parts();
        Peer::builder()
            .config(config)
            .router(router)
            .serve(transport)
            .await
    }

    /// Serves on the process's stdin and stdout, as editors run language
    /// servers (logs belong on stderr).
    ///
    /// # Errors
    ///
    /// When stdin or stdout cannot be used.
    pub async fn serve_stdio(self) -> std::io::Result<CloseReason> {
        let transport = Transport::stdio(&self.config)?;
        Ok(self.serve(transport).await)
    }
}

impl<S: LanguageServer> Layered<S> {
    /// `initialize`: the client connected and described, the encoding
    /// picked, then the server's answer completed.
    async fn initialize(&self, ctx: Context, params: InitializeParams) -> Result<InitializeResult> {
        self.client.connect(ctx.peer(), &params);
        let offered = params
            .capabilities
            .general
            .as_ref()
            .and_then(|general| general.position_encodings.as_deref())
            .unwrap_or_default();
        let chosen = self
            .encodings
            .iter()
            .copied()
            .find(|e| offered.contains(&e.kind()))
            .unwrap_or(PositionEncoding::Utf16);
        if let (true, Some(pid)) = (self.watch_parent, params.process_id) {
            parent::watch(pid, ctx.peer().clone());
        }
        let mut result = self.inner.initialize(ctx, params).await?;
        let capabilities = &mut result.capabilities;
        // A server that chose an encoding itself is taken at its word.
        let encoding = match &capabilities.position_encoding {
            Some(kind) => PositionEncoding::from_kind(kind).unwrap_or(chosen),
            None => {
                capabilities.position_encoding = Some(chosen.kind());
                chosen
            }
        };
        self.client.documents().set_encoding(encoding);
        // Known when the server's impl is `#[rpc]`: which methods it wrote.
        let implemented = <S as LanguageServer>::__jsonrpc_implemented();
        if let Some(names) = implemented {
            capabilities::derive(capabilities, names);
        }
        if capabilities.text_document_sync.is_none() {
            capabilities.text_document_sync = Some(capabilities::sync(implemented));
        }
        Ok(result)
    }

    async fn did_open(&self, ctx: Context, params: DidOpenTextDocumentParams) {
        self.client.documents().open(params.text_document.clone());
        self.inner.did_open(ctx, params).await;
    }

    async fn did_change(&self, ctx: Context, params: DidChangeTextDocumentParams) {
        if let Err(e) = self.client.documents().change(&params) {
            tracing::warn!("textDocument/didChange: {e}");
        }
        self.inner.did_change(ctx, params).await;
    }

    async fn did_close(&self, ctx: Context, params: DidCloseTextDocumentParams) {
        self.client.documents().close(&params.text_document.uri);
        self.inner.did_close(ctx, params).await;
    }

    async fn set_trace(&self, ctx: Context, params: SetTraceParams) {
        self.client.set_trace(Some(params.value.clone()));
        self.inner.set_trace(ctx, params).await;
    }
}

/// `impl LanguageServer for Layered<S>`: every method goes to the
/// implementation, the layered ones through `Layered`'s own first.
macro_rules! delegate {
    (
        requests {
            $(
                $(#[$rdoc:meta])*
                $rwire:literal $rname:ident ($($rarg:ident: $rparams:ty)?) -> $rresult:ty $(= $rdefault:expr)?;
            )*
        }
        notifications {
            $(
                $(#[$ndoc:meta])*
                $nwire:literal $nname:ident ($($narg:ident: $nparams:ty)?);
            )*
        }
        layered_requests {
            $(
                $(#[$lrdoc:meta])*
                $lrwire:literal $lrname:ident ($($lrarg:ident: $lrparams:ty)?) -> $lrresult:ty $(= $lrdefault:expr)?;
            )*
        }
        layered_notifications {
            $(
                $(#[$lndoc:meta])*
                $lnwire:literal $lnname:ident ($($lnarg:ident: $lnparams:ty)?);
            )*
        }
    ) => {
        impl<S: LanguageServer> LanguageServer for Layered<S> {
            $(
                async fn $rname(&self, ctx: Context $(, $rarg: $rparams)?) -> Result<$rresult> {
                    let watched = crate::partial::watch(&ctx);
                    let result = self.inner.$rname(ctx $(, $rarg)?).await?;
                    Ok(crate::partial::finish(watched, result))
                }
            )*
            $(
                async fn $nname(&self, ctx: Context $(, $narg: $nparams)?) {
                    self.inner.$nname(ctx $(, $narg)?).await
                }
            )*
            $(
                async fn $lrname(&self, ctx: Context $(, $lrarg: $lrparams)?) -> Result<$lrresult> {
                    Layered::<S>::$lrname(self, ctx $(, $lrarg)?).await
                }
            )*
            $(
                async fn $lnname(&self, ctx: Context $(, $lnarg: $lnparams)?) {
                    Layered::<S>::$lnname(self, ctx $(, $lnarg)?).await
                }
            )*
        }
    };
}

lsp_methods!(delegate);
