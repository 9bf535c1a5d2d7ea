//! Requests of the stateless revision (2026-07-28): each carries its
//! revision, the client's capabilities and who the client is in its
//! `_meta`; there is no `initialize`, and results say their `resultType`.

use jsonrpc_runtime::{Context, ErrorObject};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::session::Declared;
use crate::types::{ClientCapabilities, Implementation, LogLevel};

/// The stateless revisions this layer speaks.
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The `_meta` key of a request's revision.
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities.
pub(crate) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of who the client is.
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";

/// A request's headers disagree with its body (over Streamable HTTP): a
/// `tools/call` whose `Mcp-Param-*` headers do not say what the arguments
/// its tool declares with `x-mcp-header` say (the transport itself checks
/// `Mcp-Method` and `Mcp-Name`).
pub const HEADER_MISMATCH: i64 = -32020;
/// A required client capability was not declared.
pub const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// The revision asked for is not one this server speaks.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The members of a request's params every method may carry, read before
/// the method's own.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Envelope {
    #[serde(default, rename = "_meta")]
    meta: Option<Meta>,
    /// The client's answers to what a previous round asked (MRTR).
    #[serde(default)]
    pub(super) input_responses: Option<Value>,
    /// The state a previous round handed out, given back.
    #[serde(default)]
    pub(super) request_state: Option<String>,
    /// The tool or prompt the request is about.
    #[serde(default)]
    pub(super) name: Option<String>,
    /// The resource the request is about.
    #[serde(default)]
    pub(super) uri: Option<String>,
}

/// The `_meta` keys of the stateless revision.
#[derive(Debug, Default, Deserialize)]
struct Meta {
    /// Any JSON, so that a revision that is not a string is echoed back.
    #[serde(default, rename = "io.modelcontextprotocol/protocolVersion")]
    version: Option<Value>,
    #[serde(default, rename = "io.modelcontextprotocol/clientCapabilities")]
    capabilities: Option<ClientCapabilities>,
    #[serde(default, rename = "io.modelcontextprotocol/clientInfo")]
    client: Option<Implementation>,
    #[serde(default, rename = "io.modelcontextprotocol/logLevel")]
    log_level: Option<LogLevel>,
}

impl Envelope {
    /// The envelope of `params` (none: empty). Params without a `_meta`
    /// member are not read: only a stateless request, which has one, uses
    /// the rest.
    pub(super) fn read(params: Option<&RawValue>) -> Result<Envelope, ErrorObject> {
        match params {
            Some(raw) if raw.get().contains("\"_meta\"") => {
                serde_json::from_str(raw.get()).map_err(ErrorObject::invalid_params)
            }
            _ => Ok(Envelope::default()),
        }
    }
}

/// What a stateless request says about its client.
#[derive(Debug)]
pub(super) struct Stateless {
    pub(super) declared: Declared,
    pub(super) log_level: Option<LogLevel>,
}

impl Stateless {
    /// The stateless view of a request: `None` for a session's request,
    /// else its `_meta` read and checked (-32602 without the revision or
    /// the capabilities, -32022 for a revision this layer does not speak).
    ///
    /// A request is stateless when its `_meta` names a revision, when it
    /// is `server/discover`, or when it came over HTTP with a stateless
    /// revision in `MCP-Protocol-Version`.
    pub(super) fn of(
        method: &str,
        envelope: &mut Envelope,
        ctx: &Context,
    ) -> Result<Option<Stateless>, ErrorObject> {
        let header = ctx.caller().header("mcp-protocol-version");
        let stateless = envelope.meta.as_ref().is_some_and(|m| m.version.is_some())
            || method == "server/discover"
            || header.is_some_and(|h| STATELESS_VERSIONS.contains(&h.trim()));
        if !stateless {
            return Ok(None);
        }
        let meta = envelope.meta.take().unwrap_or_default();
        let (Some(requested), Some(capabilities)) = (meta.version, meta.capabilities) else {
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta keys: {META_VERSION} and {META_CAPABILITIES} are required"
            )));
        };
        let Some(version) = STATELESS_VERSIONS.iter().copied().find(|v| requested == *v) else {
            let error =
                ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version");
            let data = json!({"supported": STATELESS_VERSIONS, "requested": requested});
            return Err(error.clone().with_data(&data).unwrap_or(error));
        };
        Ok(Some(Stateless {
            declared: Declared {
                version,
                capabilities,
                client: meta.client,
            },
            log_level: meta.log_level,
        }))
    }
}

/// -32021: the request needs `capability` of the client, which it did not
/// declare.
pub(crate) fn missing_capability(capability: &str) -> ErrorObject {
    let error = ErrorObject::new(
        MISSING_CLIENT_CAPABILITY,
        format!("this request needs the client capability `{capability}`"),
    );
    let data = json!({"requiredCapabilities": {capability: {}}});
    error.clone().with_data(&data).unwrap_or(error)
}

/// How a method's result is marked on the stateless revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `resultType` only.
    Plain,
    /// `resultType` and caching hints (`ttlMs`, `cacheScope`): lists,
    /// reads, `server/discover`.
    Cached,
}

/// A result of the stateless revision: `resultType: complete`, and the
/// caching hints for [`Shape::Cached`] (not to be cached: `ttlMs` 0,
/// `private`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Complete<R> {
    #[serde(flatten)]
    result: R,
    result_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_scope: Option<&'static str>,
}

impl<R> Complete<R> {
    pub(super) fn new(result: R, shape: Shape) -> Self {
        let cached = shape == Shape::Cached;
        Complete {
            result,
            result_type: "complete",
            ttl_ms: cached.then_some(0),
            cache_scope: cached.then_some("private"),
        }
    }
}
