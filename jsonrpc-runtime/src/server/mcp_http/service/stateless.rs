//! Stateless requests (MCP 2026-07-28): no session and no handshake; each
//! `POST` carries one request whose headers must agree with its body, and
//! is answered on that `POST` with a status that says how it ended.
//!
//! A `POST` is stateless when it names no session and its
//! `MCP-Protocol-Version` is not one of the session revisions; the rest
//! (no header, a session revision, an `Mcp-Session-Id`) is a session's.
//! The checks here are the transport's: the version header against the
//! body's `_meta`, the revision, `Mcp-Method` and `Mcp-Name`. What a
//! request means (its `_meta` keys, the methods a stateless client may
//! call) is the protocol layer's, on the routes.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::*;

/// The method header of a stateless request.
const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");

/// The name header: the tool, prompt or resource the request is about.
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The header and the body disagree, or a required header is missing.
const HEADER_MISMATCH: i64 = -32020;

/// The revision asked for is not one this server speaks.
const UNSUPPORTED_VERSION: i64 = -32022;

/// What the checks read of a request.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<Id>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default, borrow)]
    params: Option<Params<'a>>,
}

#[derive(Default, Deserialize)]
struct Params<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    uri: Option<Cow<'a, str>>,
    #[serde(default, rename = "_meta")]
    meta: Option<Meta>,
}

/// What the checks read of `_meta`.
#[derive(Default, Deserialize)]
struct Meta {
    /// Any JSON: compared with the header as it is.
    #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<serde_json::Value>,
    #[serde(default, rename = "progressToken")]
    progress_token: Option<IgnoredAny>,
    #[serde(default, rename = "io.modelcontextprotocol/logLevel")]
    log_level: Option<IgnoredAny>,
}

impl Manager {
    /// Whether a POST is a stateless request: no session, and a revision
    /// that is not a session's.
    pub(super) fn is_stateless(&self, headers: &HeaderMap) -> bool {
        if self.options.stateless_versions.is_empty() || headers.contains_key(MCP_SESSION_ID) {
            return false;
        }
        headers.get(MCP_PROTOCOL_VERSION).is_some_and(|version| {
            let version = version.to_str().unwrap_or_default().trim();
            !self.options.protocol_versions.iter().any(|v| v == version)
        })
    }
}

impl McpService {
    /// Checks and serves one stateless request.
    pub(super) async fn post_stateless(
        &self,
        request: Request<Incoming>,
        caller: Arc<ConnectionInfo>,
    ) -> Response<McpBody> {
        let manager = &self.manager;
        let (parts, body) = request.into_parts();
        let body = match read_body(body, manager.config.max_frame_len).await {
            Ok(body) => body,
            Err(refused) => return refused.map(McpBody::from),
        };
        let posted = match Posted::read(&body, manager) {
            Ok(posted) => posted,
            Err(answer) => return json(StatusCode::BAD_REQUEST, answer),
        };
        let dialect = manager.dialect();
        let refuse = |id: &Id, error: ErrorObject| {
            json(
                StatusCode::BAD_REQUEST,
                message::error_response(dialect, id, &error),
            )
        };
        if posted.batch {
            let error =
                ErrorObject::invalid_request("a stateless request is one message, not a batch");
            return refuse(&Id::NULL, error);
        }
        // A response or a notification with no method has nothing to check
        // and nothing to stream.
        let envelope = serde_json::from_slice::<Envelope<'_>>(&body).ok();
        if let Some(envelope) = &envelope {
            if let Err(error) = check(&parts.headers, envelope, &manager.options) {
                return refuse(&envelope.id.clone().unwrap_or(Id::NULL), error);
            }
        }
        // Progress and log messages go out as the request runs, and
        // `subscriptions/listen` is a stream of notifications: a stream.
        let listens = envelope
            .as_ref()
            .is_some_and(|e| e.method == "subscriptions/listen");
        let sse = listens
            || envelope
                .as_ref()
                .and_then(|e| e.params.as_ref()?.meta.as_ref())
                .is_some_and(|meta| meta.progress_token.is_some() || meta.log_level.is_some());
        match self.stateless_session(&caller) {
            Ok(session) => {
                session
                    .post(posted, manager, caller, Answers::Stateless { sse })
                    .await
            }
            Err(refused) => refused.into_response(),
        }
    }

    /// The peer of this connection's stateless requests, started by the
    /// first.
    fn stateless_session(&self, caller: &ConnectionInfo) -> Result<Arc<Session>, HttpRefusal> {
        if let Some(session) = self.stateless.get() {
            return Ok(session.clone());
        }
        let manager = &self.manager;
        if manager.server.stop.is_cancelled() {
            return Err(HttpRefusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "the server is shutting down".to_owned(),
            ));
        }
        let id = Arc::<str>::from(format!("stateless@{}", self.addr));
        let session = Arc::new(manager.spawn_session(id, &self.addr, caller.clone(), true));
        let session = self.stateless.get_or_init(|| session).clone();
        manager
            .server
            .tracker
            .spawn(supervise(manager.clone(), session.clone()));
        Ok(session)
    }
}

/// The transport's checks of one stateless request, in the order the
/// specification gives: the version header against `_meta`, the revision,
/// then `Mcp-Method` and `Mcp-Name`.
fn check(
    headers: &HeaderMap,
    envelope: &Envelope<'_>,
    options: &Options,
) -> Result<(), ErrorObject> {
    let header = |name: &HeaderName| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("\u{fffd}").trim())
    };
    let version = header(&MCP_PROTOCOL_VERSION).unwrap_or_default();
    let params = envelope.params.as_ref();
    let meta_version = params
        .and_then(|p| p.meta.as_ref())
        .and_then(|meta| meta.version.as_ref());
    if let Some(meta_version) = meta_version {
        if meta_version.as_str() != Some(version) {
            return Err(ErrorObject::new(
                HEADER_MISMATCH,
                format!("`MCP-Protocol-Version: {version}` is not the request's `_meta` revision"),
            ));
        }
    }
    if !options.stateless_versions.iter().any(|v| v == version) {
        let data = serde_json::json!({
            "supported": options.stateless_versions,
            "requested": version,
        });
        let error = ErrorObject::new(UNSUPPORTED_VERSION, "Unsupported protocol version");
        return Err(error.clone().with_data(&data).unwrap_or(error));
    }
    if header(&MCP_METHOD) != Some(&*envelope.method) {
        return Err(ErrorObject::new(
            HEADER_MISMATCH,
            format!(
                "`Mcp-Method` must be the request's method, `{}`",
                envelope.method
            ),
        ));
    }
    let named = match &*envelope.method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.name.as_deref()),
        "resources/read" => params.and_then(|p| p.uri.as_deref()),
        _ => None,
    };
    if let Some(name) = named {
        if header(&MCP_NAME) != Some(name) {
            return Err(ErrorObject::new(
                HEADER_MISMATCH,
                format!("`Mcp-Name` must be the request's `{name}`"),
            ));
        }
    }
    Ok(())
}

/// The status of a stateless answer: `404` for an unknown method, `400`
/// for any other error, `200` for a result.
pub(super) fn status_of(body: &Bytes) -> StatusCode {
    #[derive(Deserialize)]
    struct Answer {
        #[serde(default)]
        error: Option<Code>,
    }
    #[derive(Deserialize)]
    struct Code {
        code: i64,
    }
    match serde_json::from_slice::<Answer>(body) {
        Ok(Answer { error: None }) | Err(_) => StatusCode::OK,
        Ok(Answer {
            error: Some(Code { code: -32601 }),
        }) => StatusCode::NOT_FOUND,
        Ok(Answer { error: Some(_) }) => StatusCode::BAD_REQUEST,
    }
}
