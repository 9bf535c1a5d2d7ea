//! The MCP server as an OAuth 2.1 resource server: its protected resource
//! metadata (RFC 9728), bearer tokens checked on every request by a
//! validator the user plugs in, and the `401`/`403` challenges that tell a
//! client where to get a token and which scopes it needs (RFC 6750).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use bytes::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Response, Uri};
use serde::Serialize;

use crate::connection::{ConnectionInfo, Refusal};

/// The well-known path prefix of protected resource metadata (RFC 9728 §3).
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// What a [`TokenValidator`] learned of a valid access token.
///
/// The listener puts it into the request's [`ConnectionInfo`] (read it with
/// `info.get::<AccessToken>()`, in a tool through the caller), and
/// the subject becomes the caller's identity, so a session stays with the
/// user who opened it.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::server::AccessToken;
///
/// let token = AccessToken::new("alice")
///     .audience("https://mcp.example.com/mcp")
///     .scopes(["mcp:tools", "mcp:resources"]);
/// assert!(token.has_scope("mcp:tools"));
/// assert_eq!(token.subject(), "alice");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub struct AccessToken {
    subject: String,
    scopes: Vec<String>,
    audiences: Vec<String>,
    expires_at: Option<SystemTime>,
}

impl AccessToken {
    /// A token of `subject` (the user or client it was issued to), with no
    /// scopes, no audience and no expiry yet.
    pub fn new(subject: impl Into<String>) -> Self {
        AccessToken {
            subject: subject.into(),
            scopes: Vec::new(),
            audiences: Vec::new(),
            expires_at: None,
        }
    }

    /// Adds the scopes the token grants.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Adds an audience the token was issued for (RFC 8707's `resource`).
    /// The listener accepts a token only if one of them is its resource.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// When the token stops being valid; the listener refuses it after.
    pub fn expires_at(mut self, at: SystemTime) -> Self {
        self.expires_at = Some(at);
        self
    }

    /// The user or client the token was issued to.
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The scopes the token grants.
    pub fn granted_scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The audiences the token was issued for.
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }
}

/// Why a [`TokenValidator`] refused a token: the client is told
/// `invalid_token` with this description, and should get a new one.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::server::TokenError;
///
/// let error = TokenError::new("the token's signature does not verify");
/// assert_eq!(error.to_string(), "the token's signature does not verify");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub struct TokenError(String);

impl TokenError {
    /// A refusal with a description for the client (keep secrets out).
    pub fn new(description: impl Into<String>) -> Self {
        TokenError(description.into())
    }
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TokenError {}

/// The future a [`TokenValidator`] returns.
pub type Validation = Pin<Box<dyn Future<Output = Result<AccessToken, TokenError>> + Send>>;

/// Checks a bearer token: its signature or its introspection, and what it
/// grants. Any `Fn(String) -> impl Future<Output = Result<AccessToken,
/// TokenError>>` is one.
///
/// The listener checks the rest itself: the audience (RFC 8707: one of
/// [`AccessToken::audiences`] must be the resource), the expiry, and the
/// required scopes.
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub trait TokenValidator: Send + Sync + 'static {
    /// Checks `token`, as the client sent it after `Bearer `.
    fn validate(&self, token: String) -> Validation;
}

impl<F, Fut> TokenValidator for F
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AccessToken, TokenError>> + Send + 'static,
{
    fn validate(&self, token: String) -> Validation {
        Box::pin(self(token))
    }
}

/// An MCP endpoint protected by OAuth 2.1 (see
/// [`McpHttpListener::protected_resource`](super::McpHttpListener::protected_resource)):
/// its metadata document and how its tokens are checked.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::server::{AccessToken, ProtectedResource, TokenError};
///
/// let resource = ProtectedResource::new(
///     "https://mcp.example.com/mcp",
///     ["https://auth.example.com"],
///     |token: String| async move {
///         // A real validator verifies a JWT or asks the authorization
///         // server (RFC 7662); this one knows one token.
///         match token.as_str() {
///             "t0ken" => Ok(AccessToken::new("alice")
///                 .audience("https://mcp.example.com/mcp")
///                 .scopes(["mcp"])),
///             _ => Err(TokenError::new("unknown token")),
///         }
///     },
/// )
/// .scopes_supported(["mcp", "mcp:admin"])
/// .required_scopes(["mcp"]);
/// assert_eq!(
///     resource.metadata_url(),
///     "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// ```
#[derive(Clone)]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub struct ProtectedResource {
    metadata: Arc<Metadata>,
    metadata_url: Arc<str>,
    /// The paths the metadata is served at: the resource's own, then the
    /// root one.
    metadata_paths: [Arc<str>; 2],
    required: Arc<[String]>,
    validator: Arc<dyn TokenValidator>,
}

/// RFC 9728 §2: the fields this server says about itself.
#[derive(Clone, Serialize)]
struct Metadata {
    resource: String,
    authorization_servers: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    scopes_supported: Vec<String>,
    bearer_methods_supported: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_name: Option<String>,
}

impl fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.metadata.resource)
            .field(
                "authorization_servers",
                &self.metadata.authorization_servers,
            )
            .field("required_scopes", &self.required)
            .finish_non_exhaustive()
    }
}

impl ProtectedResource {
    /// The resource at `resource` (its canonical URI, the MCP endpoint as
    /// clients reach it: `https://host/mcp`), whose tokens come from the
    /// `authorization_servers` (their issuer URLs) and are checked by
    /// `validator`.
    ///
    /// # Panics
    ///
    /// Panics if `resource` is not an absolute `http(s)` URI without a
    /// fragment, or if no authorization server is given.
    #[track_caller]
    pub fn new<I, S>(
        resource: impl Into<String>,
        authorization_servers: I,
        validator: impl TokenValidator,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let resource = resource.into();
        let uri: Uri = resource.parse().expect("the resource must be a URI");
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            panic!("the resource must be an absolute URI: {resource}");
        };
        assert!(
            matches!(scheme, "http" | "https") && !resource.contains('#'),
            "the resource must be an http(s) URI without a fragment: {resource}"
        );
        let path = uri.path().trim_end_matches('/');
        let own = format!("{WELL_KNOWN}{path}");
        let metadata_url = format!("{scheme}://{authority}{own}");
        let authorization_servers: Vec<String> =
            authorization_servers.into_iter().map(Into::into).collect();
        assert!(
            !authorization_servers.is_empty(),
            "a protected resource needs an authorization server"
        );
        ProtectedResource {
            metadata: Arc::new(Metadata {
                resource,
                authorization_servers,
                scopes_supported: Vec::new(),
                bearer_methods_supported: ["header"],
                resource_name: None,
            }),
            metadata_url: metadata_url.into(),
            metadata_paths: [own.into(), WELL_KNOWN.into()],
            required: Arc::new([]),
            validator: Arc::new(validator),
        }
    }

    /// The scopes the metadata lists as supported.
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.metadata_mut().scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The scopes every request's token must grant: a token without them
    /// gets `403 insufficient_scope`, and a `401` names them so the client
    /// asks for them up front.
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A name for people, in the metadata (`resource_name`).
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.metadata_mut().resource_name = Some(name.into());
        self
    }

    /// Where the metadata is (RFC 9728 §3.1: the well-known prefix before
    /// the resource's path), as `WWW-Authenticate` names it.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    fn metadata_mut(&mut self) -> &mut Metadata {
        Arc::make_mut(&mut self.metadata)
    }

    /// Whether `path` is one the metadata is served at.
    pub(super) fn serves_metadata(&self, path: &str) -> bool {
        self.metadata_paths.iter().any(|p| **p == *path)
    }

    /// The metadata document.
    pub(super) fn metadata_response(&self) -> Response<Bytes> {
        let body = serde_json::to_vec(&*self.metadata).unwrap_or_default();
        let mut response = Response::new(Bytes::from(body));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("max-age=3600"),
        );
        // Public, and read by browser-based clients.
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        response
    }

    /// Checks the request's bearer token (from `Authorization` only); on
    /// success the token goes into `info` and its subject becomes the
    /// caller's identity.
    pub(super) async fn authorize(&self, info: &mut ConnectionInfo) -> Result<(), Refusal> {
        let Some(token) = info.bearer_token() else {
            return Err(self.challenge(
                Refusal::unauthorized("this MCP server needs a bearer token"),
                None,
            ));
        };
        let token = match self.validator.validate(token.to_owned()).await {
            Ok(token) => token,
            Err(error) => return Err(self.invalid(&error.0)),
        };
        if !token.audiences.iter().any(|a| *a == self.metadata.resource) {
            return Err(self.invalid("the token was not issued for this resource"));
        }
        if token.expires_at.is_some_and(|at| at <= SystemTime::now()) {
            return Err(self.invalid("the token has expired"));
        }
        if let Some(missing) = self.required.iter().find(|s| !token.has_scope(s)) {
            let refusal = Refusal::forbidden(format!("the token lacks the scope `{missing}`"));
            return Err(self.challenge(
                refusal,
                Some((
                    "insufficient_scope",
                    "the token lacks a scope this server needs",
                )),
            ));
        }
        if info.identity().is_none() {
            info.set_identity(token.subject.clone());
        }
        info.insert(token);
        Ok(())
    }

    fn invalid(&self, description: &str) -> Refusal {
        let refusal =
            Refusal::unauthorized(format!("the bearer token is not valid: {description}"));
        self.challenge(refusal, Some(("invalid_token", description)))
    }

    /// Adds `WWW-Authenticate: Bearer resource_metadata=…, scope=…` and,
    /// for a refused token, its `error` and `error_description`.
    fn challenge(&self, refusal: Refusal, error: Option<(&str, &str)>) -> Refusal {
        let mut value = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.required.is_empty() {
            value.push_str(&format!(", scope=\"{}\"", self.required.join(" ")));
        }
        if let Some((code, description)) = error {
            value.push_str(&format!(
                ", error=\"{code}\", error_description=\"{}\"",
                quoted(description)
            ));
        }
        refusal.header("www-authenticate", &value)
    }
}

/// `text` as the inside of an RFC 7230 quoted string: `"` and `\` are
/// escaped; what a header cannot carry (control characters, non-ASCII) is
/// dropped.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text
        .chars()
        .filter(|c| c.is_ascii() && !c.is_ascii_control())
    {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
