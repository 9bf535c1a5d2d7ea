//! OAuth 2.1 for the MCP HTTP client: a server that answers `401` (or
//! `403 insufficient_scope`) with a `Bearer` challenge gets a token
//! through MCP's authorization flow, and the request is sent again with
//! it (see [`OAuthClient`]).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use hyper::header::HeaderValue;
use hyper::Uri;

use self::wire::Challenge;

mod flow;
mod wire;

/// How many authorizations one request may go through (a token, then more
/// scopes) before it fails: a server whose demands are never met is given
/// up on.
pub const MAX_AUTHORIZATIONS: usize = 3;

/// The most bytes an OAuth answer may be (the metadata documents, a
/// registration, a token): one past it fails the flow, saying so, and a
/// server cannot grow the client's memory with one.
pub const MAX_OAUTH_DOCUMENT: usize = 256 * 1024;

type Authorize = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> + Send + Sync,
>;

/// The client side of MCP's authorization (OAuth 2.1), for
/// [`McpHttpConnector::oauth`](super::McpHttpConnector::oauth).
///
/// When the server refuses a request with `401` and `WWW-Authenticate:
/// Bearer …` (or `403` with `error="insufficient_scope"`), the transport
/// runs the flow once for every request waiting on it, and sends the
/// request again with the token:
///
/// 1. the server's protected resource metadata (RFC 9728): the URL the
///    challenge names, else the endpoint's well-known URL, then the root
///    one; its `resource` must be this server (same origin, a path that is
///    the endpoint's or a parent), and is sent as given (RFC 8707);
/// 2. its first authorization server's metadata (RFC 8414, then OpenID
///    Connect, each form tried in order), whose `issuer` must be exactly
///    the one named;
/// 3. a client id: the one [given](Self::pre_registered), the
///    [metadata document URL](Self::client_metadata_document) when the
///    server takes those, else dynamic registration (RFC 7591), once per
///    authorization server;
/// 4. scopes: the challenge's, else the resource's `scopes_supported`,
///    else none; a step-up asks for the earlier ones too;
/// 5. the authorization code with PKCE (S256) and a `state`, checked on
///    the way back with the issuer's `iss` (RFC 9207); the authorization
///    URL goes to your callback (open it in a browser, catch the redirect),
///    or with [`headless`](Self::headless) it is fetched and its redirect
///    read;
/// 6. the token, with the client's authentication as registered (Basic,
///    form fields, or none).
///
/// A request goes through at most [`MAX_AUTHORIZATIONS`] of them; a flow
/// that fails fails the request with -32100 and the reason.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::{McpHttpConnector, OAuthClient};
///
/// let oauth = OAuthClient::new("http://127.0.0.1:3000/callback", |url: String| async move {
///     // Open `url` in the user's browser; answer the URL the authorization
///     // server redirects back to (its `code` and `state` are read from it).
///     Err::<String, _>(format!("no browser here to open {url}"))
/// })
/// .client_name("my-agent");
/// let connector = McpHttpConnector::new("https://mcp.example.com/mcp").oauth(oauth);
/// # drop(connector);
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub struct OAuthClient {
    config: Arc<Config>,
}

#[derive(Clone)]
struct Config {
    redirect_uri: String,
    client_name: String,
    /// `None`: fetch the authorization URL and read its redirect.
    authorize: Option<Authorize>,
    pre_registered: Option<(String, Option<String>)>,
    metadata_document: Option<String>,
}

impl fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClient")
            .field("redirect_uri", &self.config.redirect_uri)
            .field("client_name", &self.config.client_name)
            .field("headless", &self.config.authorize.is_none())
            .field(
                "pre_registered",
                &self.config.pre_registered.as_ref().map(|(id, _)| id),
            )
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client whose user approves in `authorize`: it gets the
    /// authorization URL and answers the URL the authorization server
    /// redirected to (at `redirect_uri`), or why it could not.
    pub fn new<F, Fut>(redirect_uri: impl Into<String>, authorize: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        Self::with(
            redirect_uri.into(),
            Some(Arc::new(move |url| Box::pin(authorize(url)))),
        )
    }

    /// A client for an authorization server that approves without a
    /// person (a test's, a machine identity's): the authorization URL is
    /// fetched and its redirect read.
    pub fn headless(redirect_uri: impl Into<String>) -> Self {
        Self::with(redirect_uri.into(), None)
    }

    fn with(redirect_uri: String, authorize: Option<Authorize>) -> Self {
        OAuthClient {
            config: Arc::new(Config {
                redirect_uri,
                client_name: "jsonrpc-runtime MCP client".into(),
                authorize,
                pre_registered: None,
                metadata_document: None,
            }),
        }
    }

    fn config_mut(&mut self) -> &mut Config {
        Arc::make_mut(&mut self.config)
    }

    /// The name registration gives the authorization server.
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.config_mut().client_name = name.into();
        self
    }

    /// A client id (and secret) registered beforehand: no registration.
    pub fn pre_registered(mut self, client_id: impl Into<String>, secret: Option<String>) -> Self {
        self.config_mut().pre_registered = Some((client_id.into(), secret));
        self
    }

    /// The URL of the client's metadata document, used as its id where the
    /// authorization server says it takes those
    /// (`client_id_metadata_document_supported`).
    pub fn client_metadata_document(mut self, url: impl Into<String>) -> Self {
        self.config_mut().metadata_document = Some(url.into());
        self
    }
}

/// Whether a `403`'s challenge asks for more scopes (a step-up), which a
/// new authorization can give.
pub(super) fn is_step_up(www_authenticate: Option<&str>) -> bool {
    www_authenticate
        .and_then(Challenge::parse)
        .is_some_and(|c| c.error.as_deref() == Some("insufficient_scope"))
}

/// A client registered at one authorization server.
#[derive(Debug, Clone)]
struct Registered {
    issuer: String,
    id: String,
    secret: Option<String>,
    /// How it authenticates at the token endpoint.
    method: String,
}

/// One transport's authorization: the token in use and what the flow
/// keeps between runs.
pub(super) struct Auth {
    config: Arc<Config>,
    #[cfg(feature = "tls")]
    tls: Option<crate::tls::ClientTls>,
    token: Mutex<Option<HeaderValue>>,
    /// Held for a whole flow: requests refused meanwhile wait for its
    /// token instead of starting flows of their own.
    state: tokio::sync::Mutex<FlowState>,
}

#[derive(Default)]
pub(super) struct FlowState {
    registered: Vec<Registered>,
    /// The scopes asked for so far, kept for a step-up.
    scopes: Vec<String>,
}

impl Auth {
    pub(super) fn new(
        client: &OAuthClient,
        #[cfg(feature = "tls")] tls: Option<crate::tls::ClientTls>,
    ) -> Auth {
        Auth {
            config: client.config.clone(),
            #[cfg(feature = "tls")]
            tls,
            token: Mutex::new(None),
            state: tokio::sync::Mutex::default(),
        }
    }

    /// The `Authorization` value to send, once there is a token.
    pub(super) fn header(&self) -> Option<HeaderValue> {
        self.token.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Gets a token for the challenge `www_authenticate` answered to a
    /// request sent with `sent` (the value it carried). Another request
    /// may have got one since: then that is used.
    pub(super) async fn reauthorize(
        &self,
        www_authenticate: Option<&str>,
        sent: Option<&HeaderValue>,
        uri: &Uri,
    ) -> Result<(), String> {
        let challenge = www_authenticate
            .and_then(Challenge::parse)
            .ok_or("the server wants authorization but sent no Bearer challenge")?;
        let mut state = self.state.lock().await;
        if self.header().as_ref() != sent {
            return Ok(());
        }
        for scope in challenge
            .scope
            .iter()
            .flat_map(|s| s.split(' '))
            .filter(|s| !s.is_empty())
        {
            if !state.scopes.iter().any(|s| s == scope) {
                state.scopes.push(scope.to_owned());
            }
        }
        let scope = (!state.scopes.is_empty()).then(|| state.scopes.join(" "));
        let token = self
            .run(&mut state, &challenge, uri, scope.as_deref())
            .await?;
        let mut value = HeaderValue::try_from(format!("Bearer {token}"))
            .map_err(|_| "the access token holds characters a header cannot carry")?;
        value.set_sensitive(true);
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = Some(value);
        Ok(())
    }
}
