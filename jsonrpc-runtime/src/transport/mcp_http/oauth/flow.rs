//! One authorization, as MCP's authorization spec lays it out: the
//! protected resource's metadata (RFC 9728), its authorization server's
//! (RFC 8414 or OpenID Connect), the client's id (given, a metadata
//! document URL, or dynamic registration, RFC 7591), the authorization
//! code with PKCE (RFC 7636) and the resource indicator (RFC 8707), and
//! the token.

use bytes::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use serde::Deserialize;
use serde_json::{json, Value};

use super::wire::{self, Challenge};
use super::{Auth, FlowState, Registered, MAX_OAUTH_DOCUMENT};
use crate::transport::http::PostClient;
use crate::transport::post::{read_whole, HttpClient as _};
use crate::transport::McpHttpConnector;

#[derive(Deserialize)]
struct ResourceMetadata {
    resource: String,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
pub(super) struct ServerMetadata {
    pub(super) issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    #[serde(default)]
    registration_endpoint: Option<String>,
    #[serde(default)]
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    client_id_metadata_document_supported: bool,
    #[serde(default)]
    authorization_response_iss_parameter_supported: bool,
}

impl ServerMetadata {
    /// 2025-03-26's endpoints of a server without metadata: `/authorize`,
    /// `/token` and `/register` at its origin.
    fn defaults(origin: &str) -> ServerMetadata {
        ServerMetadata {
            issuer: origin.to_owned(),
            authorization_endpoint: format!("{origin}/authorize"),
            token_endpoint: format!("{origin}/token"),
            registration_endpoint: Some(format!("{origin}/register")),
            token_endpoint_auth_methods_supported: None,
            client_id_metadata_document_supported: false,
            authorization_response_iss_parameter_supported: false,
        }
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
}

/// What one HTTP exchange of the flow came to.
struct Answer {
    status: StatusCode,
    location: Option<String>,
    body: Bytes,
}

impl Auth {
    /// Runs the flow for `challenge` on the endpoint `uri`, asking for
    /// `scope`; the access token.
    pub(super) async fn run(
        &self,
        state: &mut FlowState,
        challenge: &Challenge,
        uri: &Uri,
        scope: Option<&str>,
    ) -> Result<String, String> {
        let (resource, issuer, supported) = match self.resource_metadata(challenge, uri).await {
            Ok(found) => {
                if !wire::resource_covers(&found.resource, uri) {
                    return Err(format!(
                        "the protected resource metadata names `{}`, not this server ({uri})",
                        found.resource
                    ));
                }
                let issuer = found
                    .authorization_servers
                    .first()
                    .cloned()
                    .ok_or("the protected resource metadata names no authorization server")?;
                (Some(found.resource), issuer, found.scopes_supported)
            }
            // 2025-03-26, before protected resource metadata: the MCP
            // server's origin is its authorization server.
            Err(_) if challenge.resource_metadata.is_none() => {
                (None, wire::origin(uri), Vec::new())
            }
            Err(e) => return Err(e),
        };
        let server = match self.server_metadata(&issuer).await {
            Ok(server) => server,
            Err(_) if resource.is_none() => ServerMetadata::defaults(&issuer),
            Err(e) => return Err(e),
        };
        let client = self.client_for(state, &server).await?;
        let scope = scope
            .map(str::to_owned)
            .or_else(|| (!supported.is_empty()).then(|| supported.join(" ")));
        let resource = resource.as_deref();
        let (code, verifier) = self
            .authorization_code(&server, &client, resource, scope.as_deref())
            .await?;
        self.token(&server, &client, resource, &code, &verifier)
            .await
    }

    async fn resource_metadata(
        &self,
        challenge: &Challenge,
        uri: &Uri,
    ) -> Result<ResourceMetadata, String> {
        let urls = match &challenge.resource_metadata {
            Some(url) => vec![url.clone()],
            None => wire::resource_metadata_urls(uri),
        };
        self.first_document(&urls, "protected resource metadata")
            .await
    }

    async fn server_metadata(&self, issuer: &str) -> Result<ServerMetadata, String> {
        let urls = wire::authorization_server_urls(issuer)
            .ok_or_else(|| format!("the authorization server `{issuer}` is not a URL"))?;
        let server: ServerMetadata = self
            .first_document(&urls, "authorization server metadata")
            .await?;
        // RFC 8414 §3.3: exactly the issuer the resource named.
        if server.issuer != issuer {
            return Err(format!(
                "the authorization server metadata is of `{}`, not `{issuer}`",
                server.issuer
            ));
        }
        Ok(server)
    }

    /// The first of `urls` that answers `200` with a JSON document.
    async fn first_document<T: serde::de::DeserializeOwned>(
        &self,
        urls: &[String],
        what: &str,
    ) -> Result<T, String> {
        for url in urls {
            let answer = self.fetch(Method::GET, url, None, None).await?;
            if answer.status == StatusCode::OK {
                return serde_json::from_slice(&answer.body)
                    .map_err(|e| format!("the {what} at {url} does not read: {e}"));
            }
        }
        Err(format!("no {what} found (tried {})", urls.join(", ")))
    }

    /// The client's id at `server`: given, the metadata document's URL, or
    /// registered (once per authorization server).
    async fn client_for(
        &self,
        state: &mut FlowState,
        server: &ServerMetadata,
    ) -> Result<Registered, String> {
        if let Some((id, secret)) = &self.config.pre_registered {
            return Ok(Registered {
                issuer: server.issuer.clone(),
                id: id.clone(),
                secret: secret.clone(),
                method: self.method_for(server, secret.is_some()),
            });
        }
        if let Some(url) = &self.config.metadata_document {
            if server.client_id_metadata_document_supported {
                return Ok(Registered {
                    issuer: server.issuer.clone(),
                    id: url.clone(),
                    secret: None,
                    method: "none".into(),
                });
            }
        }
        if let Some(known) = state.registered.iter().find(|r| r.issuer == server.issuer) {
            return Ok(known.clone());
        }
        let endpoint = server
            .registration_endpoint
            .as_deref()
            .ok_or("the authorization server takes no registration and no client id was given")?;
        let wanted = self.method_for(server, true);
        let request = json!({
            "client_name": self.config.client_name,
            "redirect_uris": [self.config.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
            "application_type": "native",
        });
        let body = Bytes::from(request.to_string());
        let answer = self
            .fetch(
                Method::POST,
                endpoint,
                Some(("application/json", body)),
                None,
            )
            .await?;
        if !answer.status.is_success() {
            return Err(format!(
                "registration at {endpoint} was refused: {}",
                answer.status
            ));
        }
        let registered: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("the registration answer does not read: {e}"))?;
        let text = |k: &str| registered.get(k).and_then(Value::as_str).map(str::to_owned);
        let secret = text("client_secret");
        let client = Registered {
            issuer: server.issuer.clone(),
            id: text("client_id").ok_or("the registration answer has no client_id")?,
            method: text("token_endpoint_auth_method")
                .unwrap_or_else(|| self.method_for(server, secret.is_some())),
            secret,
        };
        state.registered.push(client.clone());
        Ok(client)
    }

    /// How to authenticate at the token endpoint: the first the server
    /// offers of Basic, form fields and none (none without a secret).
    fn method_for(&self, server: &ServerMetadata, has_secret: bool) -> String {
        let offered = server.token_endpoint_auth_methods_supported.as_deref();
        let offers = |m: &str| offered.is_none_or(|o| o.iter().any(|x| x == m));
        let method = if has_secret && offers("client_secret_basic") {
            "client_secret_basic"
        } else if has_secret && offers("client_secret_post") {
            "client_secret_post"
        } else {
            "none"
        };
        method.to_owned()
    }

    /// Sends the user to the authorization endpoint; the code it redirects
    /// back with, and the PKCE verifier.
    async fn authorization_code(
        &self,
        server: &ServerMetadata,
        client: &Registered,
        resource: Option<&str>,
        scope: Option<&str>,
    ) -> Result<(String, String), String> {
        let verifier = wire::random(32)?;
        let state = wire::random(16)?;
        let challenge = wire::s256(&verifier);
        let mut params = vec![
            ("response_type", "code"),
            ("client_id", client.id.as_str()),
            ("redirect_uri", self.config.redirect_uri.as_str()),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("state", state.as_str()),
        ];
        if let Some(resource) = resource {
            params.push(("resource", resource));
        }
        if let Some(scope) = scope.filter(|s| !s.is_empty()) {
            params.push(("scope", scope));
        }
        let separator = if server.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        let url = format!(
            "{}{separator}{}",
            server.authorization_endpoint,
            wire::form(&params)
        );
        let back = match &self.config.authorize {
            Some(authorize) => authorize(url).await?,
            None => self.approved_at_once(&url).await?,
        };
        if let Some(error) = wire::query_param(&back, "error") {
            return Err(format!("the authorization was refused: {error}"));
        }
        if wire::query_param(&back, "state").as_deref() != Some(state.as_str()) {
            return Err("the authorization answer's state is not the one sent".into());
        }
        // RFC 9207: the issuer says it is the one asked, when it says so.
        match wire::query_param(&back, "iss") {
            Some(iss) if iss != server.issuer => {
                return Err(format!(
                    "the authorization answer comes from `{iss}`, not `{}`",
                    server.issuer
                ))
            }
            None if server.authorization_response_iss_parameter_supported => {
                return Err("the authorization answer lacks the `iss` its server promises".into())
            }
            _ => {}
        }
        let code =
            wire::query_param(&back, "code").ok_or("the authorization answer has no code")?;
        Ok((code, verifier))
    }

    /// The redirect of an authorization server that approves at once.
    async fn approved_at_once(&self, url: &str) -> Result<String, String> {
        let answer = self.fetch(Method::GET, url, None, None).await?;
        match answer.location {
            Some(location) if answer.status.is_redirection() => Ok(location),
            _ => Err(format!(
                "the authorization endpoint answered {} without a redirect: it wants a person",
                answer.status
            )),
        }
    }

    async fn token(
        &self,
        server: &ServerMetadata,
        client: &Registered,
        resource: Option<&str>,
        code: &str,
        verifier: &str,
    ) -> Result<String, String> {
        let mut fields = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.config.redirect_uri.as_str()),
            ("code_verifier", verifier),
        ];
        if let Some(resource) = resource {
            fields.push(("resource", resource));
        }
        let secret = client.secret.as_deref().unwrap_or("");
        let mut authorization = None;
        match client.method.as_str() {
            "client_secret_basic" => authorization = Some(wire::basic(&client.id, secret)),
            "client_secret_post" => {
                fields.push(("client_id", client.id.as_str()));
                fields.push(("client_secret", secret));
            }
            _ => fields.push(("client_id", client.id.as_str())),
        }
        let body = Bytes::from(wire::form(&fields));
        let form = Some(("application/x-www-form-urlencoded", body));
        let answer = self
            .fetch(
                Method::POST,
                &server.token_endpoint,
                form,
                authorization.as_deref(),
            )
            .await?;
        if !answer.status.is_success() {
            let body = String::from_utf8_lossy(&answer.body);
            return Err(format!(
                "the token request was refused: {} {body}",
                answer.status
            ));
        }
        let token: TokenAnswer = serde_json::from_slice(&answer.body)
            .map_err(|e| format!("the token answer does not read: {e}"))?;
        if token
            .token_type
            .as_deref()
            .is_some_and(|t| !t.eq_ignore_ascii_case("bearer"))
        {
            return Err(format!(
                "the token is of type `{}`, not a bearer token",
                token.token_type.unwrap_or_default()
            ));
        }
        Ok(token.access_token)
    }

    /// One request of the flow, redirects not followed.
    async fn fetch(
        &self,
        method: Method,
        url: &str,
        body: Option<(&'static str, Bytes)>,
        authorization: Option<&str>,
    ) -> Result<Answer, String> {
        #[cfg_attr(not(feature = "tls"), allow(unused_mut))]
        let mut connector = McpHttpConnector::new(url);
        #[cfg(feature = "tls")]
        {
            connector.tls = self.tls.clone();
        }
        let (client, uri) = PostClient::new(&connector, url).map_err(|e| e.to_string())?;
        let mut request = Request::new(Bytes::new());
        *request.method_mut() = method;
        *request.uri_mut() = uri;
        let headers = request.headers_mut();
        headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
        if let Some((kind, bytes)) = body {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
            *request.body_mut() = bytes;
        }
        if let Some(value) = authorization.and_then(|a| HeaderValue::from_str(a).ok()) {
            request.headers_mut().insert(header::AUTHORIZATION, value);
        }
        let response = client
            .send(request)
            .await
            .map_err(|why| format!("the request to {url} failed: {why}"))?;
        let status = response.status();
        let location = response
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = read_whole(url, response, MAX_OAUTH_DOCUMENT)
            .await
            .map_err(|failed| failed.message)?;
        Ok(Answer {
            status,
            location,
            body,
        })
    }
}
