//! An MCP HTTP endpoint as an OAuth 2.1 protected resource: the RFC 9728
//! metadata served without a token, the `401`/`403` challenges and their
//! `WWW-Authenticate` fields, the audience, expiry and scope checks, and
//! the token's subject as the caller a session is bound to.

use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, StatusCode};
use jsonrpc_runtime::server::{AccessToken, McpHttpListener, ProtectedResource, TokenError};
use jsonrpc_runtime::transport::TcpAcceptor;
use jsonrpc_runtime::{Config, Context, ErrorObject, Router};
use serde_json::{json, Value};
use tests::http::{once, HttpAnswer};

const METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// Tokens the validator knows: `alice` and `bob` are fine, `reader` lacks
/// the `mcp:tools` scope, `elsewhere` is for another resource, `stale`
/// has expired.
fn validate(
    resource: String,
) -> impl Fn(String) -> std::future::Ready<Result<AccessToken, TokenError>> {
    move |token: String| {
        let valid = AccessToken::new(token.as_str()).audience(resource.as_str());
        std::future::ready(match token.as_str() {
            "alice" | "bob" => Ok(valid.scopes(["mcp:tools", "mcp:read"])),
            "reader" => Ok(valid.scopes(["mcp:read"])),
            "elsewhere" => Ok(AccessToken::new("x")
                .audience("https://other.example/mcp")
                .scopes(["mcp:tools"])),
            "stale" => Ok(valid
                .scopes(["mcp:tools"])
                .expires_at(SystemTime::now() - Duration::from_secs(1))),
            _ => Err(TokenError::new("unknown token \"x\"")),
        })
    }
}

/// `whoami` answers the caller's identity and the token's scopes.
fn routes() -> Router {
    Router::new()
        .request("initialize", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "serverInfo": {"name": "t", "version": "0"},
            }))
        })
        .request("whoami", |_: Value, ctx: Context| async move {
            let caller = ctx.caller();
            let token = caller
                .get::<AccessToken>()
                .expect("the token is in the caller");
            Ok::<_, ErrorObject>(json!({
                "identity": caller.identity(),
                "scopes": token.granted_scopes(),
            }))
        })
}

async fn serve() -> (jsonrpc_runtime::server::Server, SocketAddr, String) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let protected = ProtectedResource::new(
        resource.as_str(),
        ["https://auth.example.com"],
        validate(resource.clone()),
    )
    .scopes_supported(["mcp:tools", "mcp:read"])
    .required_scopes(["mcp:tools"])
    .resource_name("the test server");
    let server = McpHttpListener::new(acceptor)
        .config(Config::mcp())
        .json_responses(true)
        .protected_resource(protected)
        .spawn(routes());
    (server, addr, resource)
}

async fn request(
    addr: SocketAddr,
    method: Method,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> HttpAnswer {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    let body = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
    once(addr, builder.body(Full::new(body)).unwrap()).await
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
}

fn whoami(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "whoami"})
}

/// The fields of a `WWW-Authenticate: Bearer k="v", …` challenge.
fn challenge(answer: &HttpAnswer) -> Vec<(String, String)> {
    let value = answer.header("www-authenticate").expect("a challenge");
    let fields = value.strip_prefix("Bearer ").expect("a Bearer challenge");
    let mut out = Vec::new();
    let mut rest = fields;
    while let Some((name, after)) = rest.split_once("=\"") {
        let mut value = String::new();
        let mut chars = after.char_indices();
        let mut end = after.len();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => value.extend(chars.next().map(|(_, c)| c)),
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        out.push((name.trim_start_matches([',', ' ']).to_owned(), value));
        rest = &after[end..];
    }
    out
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[tokio::test]
async fn the_metadata_is_served_without_a_token_at_both_well_known_paths() {
    let (_server, addr, resource) = serve().await;
    for path in [METADATA_PATH, "/.well-known/oauth-protected-resource"] {
        let answer = request(addr, Method::GET, path, &[], None).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(
            answer.json(),
            json!({
                "resource": resource,
                "authorization_servers": ["https://auth.example.com"],
                "scopes_supported": ["mcp:tools", "mcp:read"],
                "bearer_methods_supported": ["header"],
                "resource_name": "the test server",
            }),
            "{path}"
        );
    }
    let post = request(addr, Method::POST, METADATA_PATH, &[], None).await;
    assert_eq!(post.status, StatusCode::METHOD_NOT_ALLOWED);
    let other = request(
        addr,
        Method::GET,
        "/.well-known/oauth-protected-resource/x",
        &[],
        None,
    )
    .await;
    assert_eq!(other.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_request_without_a_token_is_told_where_the_metadata_is_and_which_scopes() {
    let (_server, addr, _) = serve().await;
    let answer = request(addr, Method::POST, "/mcp", &[], Some(&initialize())).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    let fields = challenge(&answer);
    assert_eq!(
        field(&fields, "resource_metadata"),
        Some(format!("http://{addr}{METADATA_PATH}").as_str())
    );
    assert_eq!(field(&fields, "scope"), Some("mcp:tools"));
    assert_eq!(
        field(&fields, "error"),
        None,
        "no token is no error (RFC 6750 §3.1)"
    );
    // A token anywhere but the `Authorization` header does not count.
    let answer = request(
        addr,
        Method::POST,
        "/mcp?access_token=alice",
        &[],
        Some(&initialize()),
    )
    .await;
    assert_eq!(
        answer.status,
        StatusCode::UNAUTHORIZED,
        "a token in the query is no token"
    );
    assert_eq!(field(&challenge(&answer), "error"), None);
    let answer = request(
        addr,
        Method::GET,
        "/mcp",
        &[("authorization", "Basic YWxpY2U6")],
        None,
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn refused_tokens_get_invalid_token_and_a_missing_scope_gets_403() {
    let (_server, addr, _) = serve().await;
    let cases = [
        (
            "nobody",
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "unknown token",
        ),
        (
            "elsewhere",
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "not issued for this resource",
        ),
        (
            "stale",
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            "expired",
        ),
        (
            "reader",
            StatusCode::FORBIDDEN,
            "insufficient_scope",
            "lacks a scope",
        ),
    ];
    for (token, status, error, description) in cases {
        let bearer = format!("Bearer {token}");
        let answer = request(
            addr,
            Method::POST,
            "/mcp",
            &[("authorization", &bearer)],
            Some(&initialize()),
        )
        .await;
        assert_eq!(answer.status, status, "{token}");
        let fields = challenge(&answer);
        assert_eq!(field(&fields, "error"), Some(error), "{token}");
        assert!(
            field(&fields, "error_description")
                .unwrap()
                .contains(description),
            "{token}: {fields:?}"
        );
        assert!(field(&fields, "resource_metadata").is_some(), "{token}");
        assert_eq!(field(&fields, "scope"), Some("mcp:tools"), "{token}");
    }
}

#[tokio::test]
async fn a_valid_token_reaches_the_routes_and_its_session_stays_with_its_subject() {
    let (_server, addr, _) = serve().await;
    let alice = [("authorization", "Bearer alice")];
    let answer = request(addr, Method::POST, "/mcp", &alice, Some(&initialize())).await;
    assert_eq!(answer.status, StatusCode::OK);
    let session = answer
        .header("mcp-session-id")
        .expect("a session")
        .to_owned();
    let headers = [
        ("authorization", "Bearer alice"),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let answer = request(addr, Method::POST, "/mcp", &headers, Some(&whoami(2))).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.json()["result"],
        json!({"identity": "alice", "scopes": ["mcp:tools", "mcp:read"]})
    );
    // Bob's valid token does not open Alice's session.
    let headers = [
        ("authorization", "Bearer bob"),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let answer = request(addr, Method::POST, "/mcp", &headers, Some(&whoami(3))).await;
    assert!(answer.status.is_client_error(), "{}", answer.status);
    assert!(answer.json().get("result").is_none());
}
