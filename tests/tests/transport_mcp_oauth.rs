//! The MCP HTTP client's OAuth 2.1 flow against the runtime's own
//! protected resource (`McpHttpListener::protected_resource`) and an
//! authorization server written here: discovery of both metadata
//! documents, dynamic registration, PKCE, the resource indicator, scopes
//! from the challenge, a step-up on `403 insufficient_scope`, and the
//! limit on authorizations.

use std::collections::HashMap;

use std::future::IntoFuture as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use jsonrpc_runtime::server::{AccessToken, McpHttpListener, ProtectedResource, TokenError};
use jsonrpc_runtime::transport::{
    McpHttpConnector, OAuthClient, TcpAcceptor, MAX_AUTHORIZATIONS, MAX_OAUTH_DOCUMENT,
};
use jsonrpc_runtime::{CallError, Config, Context, ErrorObject, Peer, Router};
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use tests::http::serve_fn;

/// The authorization server's record: each request's path and query or
/// form, and the scopes of each token it issued.
#[derive(Default)]
struct Issuer {
    seen: Vec<(String, HashMap<String, String>)>,
    tokens: HashMap<String, Vec<String>>,
    challenge: Option<String>,
    /// Grants only the first requested scope, until this many
    /// authorizations have been made (a step-up is then needed).
    stingy_for: usize,
    authorizations: usize,
    /// The metadata document padded (with trailing spaces) to this many
    /// bytes.
    metadata_len: Option<usize>,
}

type Shared = Arc<Mutex<Issuer>>;

fn parse_form(text: &str) -> HashMap<String, String> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |t: &str| {
                let t = t.replace('+', " ");
                let mut out = Vec::new();
                let bytes = t.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b'%' {
                        out.push(u8::from_str_radix(&t[i + 1..i + 3], 16).unwrap());
                        i += 3;
                    } else {
                        out.push(bytes[i]);
                        i += 1;
                    }
                }
                String::from_utf8(out).unwrap()
            };
            (decode(k), decode(v))
        })
        .collect()
}

async fn authorization_server(shared: Shared) -> SocketAddr {
    // Its own address goes in its documents: bound first, then served.
    let addr = Arc::new(std::sync::OnceLock::new());
    let own = addr.clone();
    let bound = serve_fn(move |request| {
        let (shared, own) = (shared.clone(), own.clone());
        async move { issue(request, &shared, *own.get().unwrap()).await }
    })
    .await;
    addr.set(bound).unwrap();
    bound
}

async fn issue(
    request: Request<Incoming>,
    shared: &Shared,
    addr: SocketAddr,
) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    let body = request.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&body).into_owned();
    let issuer = format!("http://{addr}");
    let mut state = shared.lock().unwrap();
    let fields = match path.as_str() {
        "/register" => serde_json::from_str::<HashMap<String, Value>>(&text)
            .unwrap()
            .into_iter()
            .map(|(k, v)| (k, v.to_string()))
            .collect(),
        "/authorize" => parse_form(&query),
        _ => parse_form(&text),
    };
    state.seen.push((path.clone(), fields.clone()));
    let padded = |value: Value, len: Option<usize>| {
        let mut text = value.to_string();
        if let Some(len) = len {
            assert!(text.len() <= len, "the document is {} bytes", text.len());
            text.extend(std::iter::repeat_n(' ', len - text.len()));
        }
        text
    };
    let metadata_len = state.metadata_len;
    let json = |status: StatusCode, value: Value| {
        let len = (path == "/.well-known/oauth-authorization-server")
            .then_some(metadata_len)
            .flatten();
        let mut response = Response::new(Full::new(Bytes::from(padded(value, len))));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert("content-type", "application/json".parse().unwrap());
        response
    };
    match path.as_str() {
        "/.well-known/oauth-authorization-server" => json(
            StatusCode::OK,
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "registration_endpoint": format!("{issuer}/register"),
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
                "authorization_response_iss_parameter_supported": true,
            }),
        ),
        "/register" => json(
            StatusCode::CREATED,
            json!({
                "client_id": "registered-client", "client_secret": "s3cret",
                "token_endpoint_auth_method": "client_secret_post",
            }),
        ),
        "/authorize" => {
            state.challenge = fields.get("code_challenge").cloned();
            state.authorizations += 1;
            let location = format!(
                "{}?code=code-{}&state={}&iss={issuer}",
                fields["redirect_uri"], state.authorizations, fields["state"]
            );
            let mut response = Response::new(Full::new(Bytes::new()));
            *response.status_mut() = StatusCode::FOUND;
            response
                .headers_mut()
                .insert("location", location.parse().unwrap());
            response
        }
        "/token" => {
            let digest = Sha256::digest(fields["code_verifier"].as_bytes());
            let s256 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
            if Some(s256) != state.challenge
                || fields.get("client_secret").map(String::as_str) != Some("s3cret")
            {
                return json(StatusCode::BAD_REQUEST, json!({"error": "invalid_grant"}));
            }
            let authorize = state
                .seen
                .iter()
                .rev()
                .find(|(p, _)| p == "/authorize")
                .unwrap()
                .1
                .clone();
            let asked: Vec<String> = authorize
                .get("scope")
                .map(|s| s.split(' ').map(str::to_owned).collect())
                .unwrap_or_default();
            let granted = if state.authorizations <= state.stingy_for {
                asked[..1].to_vec()
            } else {
                asked
            };
            let token = format!("token-{}", state.authorizations);
            state.tokens.insert(token.clone(), granted);
            json(
                StatusCode::OK,
                json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
            )
        }
        _ => json(StatusCode::NOT_FOUND, json!({"error": "not_found"})),
    }
}

/// An MCP endpoint whose tokens come from the server at `issuer`,
/// requiring `required`.
async fn protected(
    shared: Shared,
    issuer: SocketAddr,
    required: &'static [&'static str],
) -> String {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", acceptor.local_addr().unwrap());
    let audience = url.clone();
    let resource = ProtectedResource::new(
        url.as_str(),
        [format!("http://{issuer}")],
        move |token: String| {
            let granted = shared.lock().unwrap().tokens.get(&token).cloned();
            let audience = audience.clone();
            async move {
                let scopes = granted.ok_or_else(|| TokenError::new("unknown token"))?;
                Ok(AccessToken::new("user").audience(audience).scopes(scopes))
            }
        },
    )
    .required_scopes(required.iter().copied());
    let routes = Router::new()
        .request("initialize", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "p", "version": "0"}}))
        })
        .request("whoami", |_: Value, ctx: Context| async move {
            let token = ctx.caller().get::<AccessToken>().cloned().unwrap();
            Ok::<_, ErrorObject>(json!(token.granted_scopes()))
        });
    let server = McpHttpListener::new(acceptor)
        .config(Config::mcp())
        .json_responses(true)
        .protected_resource(resource)
        .spawn(routes);
    std::mem::forget(server);
    url
}

async fn client(url: &str) -> Peer {
    let oauth = OAuthClient::headless("http://127.0.0.1:9/callback").client_name("oauth-test");
    let transport = McpHttpConnector::new(url)
        .oauth(oauth)
        .connect()
        .await
        .unwrap();
    Peer::builder()
        .config(Config::mcp_client())
        .spawn(transport)
}

async fn initialize(peer: &Peer) -> Result<Value, CallError> {
    peer.call("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}))
        .await
}

#[tokio::test]
async fn a_401_is_answered_by_the_whole_flow_and_the_request_sent_again() {
    let shared: Shared = Arc::default();
    let issuer = authorization_server(shared.clone()).await;
    let url = protected(shared.clone(), issuer, &["mcp:tools"]).await;
    let peer = client(&url).await;
    initialize(&peer).await.unwrap();
    let scopes: Value = peer.call("whoami", json!({})).await.unwrap();
    assert_eq!(scopes, json!(["mcp:tools"]));
    let state = shared.lock().unwrap();
    let paths: Vec<&str> = state.seen.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/.well-known/oauth-authorization-server",
            "/register",
            "/authorize",
            "/token"
        ]
    );
    let register = &state.seen[1].1;
    assert_eq!(register["application_type"], "\"native\"");
    let authorize = &state.seen[2].1;
    assert_eq!(authorize["code_challenge_method"], "S256");
    assert_eq!(
        authorize["resource"], url,
        "the resource, as the metadata says it"
    );
    assert_eq!(authorize["scope"], "mcp:tools", "the challenge's scope");
    let token = &state.seen[3].1;
    assert_eq!(
        (token["grant_type"].as_str(), token["resource"].as_str()),
        ("authorization_code", url.as_str())
    );
    assert_eq!(
        state.authorizations, 1,
        "one flow: the later requests carry the token"
    );
}

#[tokio::test]
async fn a_403_for_scopes_is_a_step_up_asking_for_all_of_them() {
    let shared: Shared = Arc::default();
    shared.lock().unwrap().stingy_for = 1;
    let issuer = authorization_server(shared.clone()).await;
    let url = protected(shared.clone(), issuer, &["mcp:tools", "mcp:admin"]).await;
    let peer = client(&url).await;
    initialize(&peer).await.unwrap();
    let state = shared.lock().unwrap();
    assert_eq!(state.authorizations, 2);
    let scopes: Vec<&str> = state
        .seen
        .iter()
        .filter(|(p, _)| p == "/authorize")
        .map(|(_, f)| f["scope"].as_str())
        .collect();
    assert_eq!(scopes, ["mcp:tools mcp:admin", "mcp:tools mcp:admin"]);
    let registrations = state.seen.iter().filter(|(p, _)| p == "/register").count();
    assert_eq!(registrations, 1, "registered once per authorization server");
}

#[tokio::test]
async fn a_server_never_satisfied_is_given_up_on_after_max_authorizations() {
    let shared: Shared = Arc::default();
    shared.lock().unwrap().stingy_for = usize::MAX;
    let issuer = authorization_server(shared.clone()).await;
    let url = protected(shared.clone(), issuer, &["mcp:tools", "mcp:admin"]).await;
    let peer = client(&url).await;
    let error = initialize(&peer).await.unwrap_err();
    let CallError::Rpc(error) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.code.0, -32100, "{error:?}");
    assert!(error.message.contains("403"), "{}", error.message);
    assert_eq!(shared.lock().unwrap().authorizations, MAX_AUTHORIZATIONS);
}

/// Every token issued so far stops being valid (as when the authorization
/// server revokes them): the next request is refused and starts a flow.
fn revoke(shared: &Shared) {
    shared.lock().unwrap().tokens.clear();
}

/// The sizes around each power of two up to the cap, and one past it.
fn document_sizes() -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut size = 1024;
    while size <= MAX_OAUTH_DOCUMENT {
        sizes.extend([size - 1, size, size + 1]);
        size *= 2;
    }
    sizes
}

fn refused_for_size(error: &CallError) -> bool {
    matches!(error, CallError::Rpc(e) if e.message.contains(&format!("over the {MAX_OAUTH_DOCUMENT}-byte limit")))
}

#[tokio::test]
async fn an_oauth_document_up_to_the_cap_is_read_and_one_byte_more_is_refused_saying_so() {
    let shared: Shared = Arc::default();
    let issuer = authorization_server(shared.clone()).await;
    let url = protected(shared.clone(), issuer, &["mcp:tools"]).await;
    // A fresh transport for each size.
    for len in document_sizes() {
        shared.lock().unwrap().metadata_len = Some(len);
        let peer = client(&url).await;
        match initialize(&peer).await {
            Ok(_) => assert!(len <= MAX_OAUTH_DOCUMENT, "{len} bytes were read"),
            Err(error) => assert!(
                len > MAX_OAUTH_DOCUMENT && refused_for_size(&error),
                "{len}: {error:?}"
            ),
        }
    }
    // One transport for all, each size after a revocation: a refused flow
    // leaves it usable for the next.
    shared.lock().unwrap().metadata_len = None;
    let peer = client(&url).await;
    initialize(&peer).await.unwrap();
    for len in document_sizes().into_iter().rev() {
        revoke(&shared);
        shared.lock().unwrap().metadata_len = Some(len);
        match peer.call::<Value>("whoami", json!({})).await {
            Ok(_) => assert!(len <= MAX_OAUTH_DOCUMENT, "{len} bytes were read"),
            Err(error) => assert!(
                len > MAX_OAUTH_DOCUMENT && refused_for_size(&error),
                "{len}: {error:?}"
            ),
        }
    }
}

#[tokio::test]
async fn requests_refused_together_wait_for_one_flow() {
    let shared: Shared = Arc::default();
    let issuer = authorization_server(shared.clone()).await;
    let url = protected(shared.clone(), issuer, &["mcp:tools"]).await;
    let peer = client(&url).await;
    initialize(&peer).await.unwrap();
    assert_eq!(shared.lock().unwrap().authorizations, 1);
    revoke(&shared);
    let calls = (0..4).map(|_| peer.call::<Value>("whoami", json!({})).into_future());
    for answer in futures_util::future::join_all(calls).await {
        assert_eq!(answer.unwrap(), json!(["mcp:tools"]));
    }
    assert_eq!(
        shared.lock().unwrap().authorizations,
        2,
        "one flow for the four"
    );
}
