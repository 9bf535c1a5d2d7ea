//! Requests of the stateless revision (2026-07-28): each carries its
//! revision, the client's capabilities and who the client is in its
//! `_meta`; there is no `initialize`, and results say their `resultType`.

use jsonrpc_runtime::{Context, ErrorObject};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use crate::types::{ClientCapabilities, Implementation, LogLevel};

/// The stateless revisions this layer speaks.
pub const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

/// The `_meta` key of a request's revision.
pub(super) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the client's capabilities.
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// The `_meta` key of who the client is.
const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
/// The `_meta` key of the least severe log level the client wants.
const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// The result `_meta` key of who the server is.
pub(super) const META_SERVER: &str = "io.modelcontextprotocol/serverInfo";

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
    pub(super) meta: Option<Map<String, Value>>,
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

impl Envelope {
    /// The envelope of `params` (none: empty).
    pub(super) fn read(params: Option<&RawValue>) -> Result<Envelope, ErrorObject> {
        match params {
            None => Ok(Envelope::default()),
            Some(raw) => serde_json::from_str(raw.get()).map_err(ErrorObject::invalid_params),
        }
    }
}

/// What a stateless request says about its client.
#[derive(Debug)]
pub(super) struct Stateless {
    pub(super) version: &'static str,
    pub(super) capabilities: ClientCapabilities,
    pub(super) client: Option<Implementation>,
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
        envelope: &Envelope,
        ctx: &Context,
    ) -> Result<Option<Stateless>, ErrorObject> {
        let meta = envelope.meta.as_ref();
        let header = ctx.caller().header("mcp-protocol-version");
        let stateless = meta.is_some_and(|m| m.contains_key(META_VERSION))
            || method == "server/discover"
            || header.is_some_and(|h| STATELESS_VERSIONS.contains(&h.trim()));
        if !stateless {
            return Ok(None);
        }
        let empty = Map::new();
        let meta = meta.unwrap_or(&empty);
        let missing: Vec<&str> = [META_VERSION, META_CAPABILITIES]
            .into_iter()
            .filter(|key| !meta.contains_key(*key))
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "missing _meta keys: {}",
                missing.join(", ")
            )));
        }
        let requested = meta[META_VERSION].as_str().unwrap_or_default();
        let Some(version) = STATELESS_VERSIONS.iter().copied().find(|v| *v == requested) else {
            let error =
                ErrorObject::new(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version");
            let data = json!({"supported": STATELESS_VERSIONS, "requested": meta[META_VERSION]});
            return Err(error.clone().with_data(&data).unwrap_or(error));
        };
        let capabilities = serde_json::from_value(meta[META_CAPABILITIES].clone())
            .map_err(|e| ErrorObject::invalid_params(format!("`{META_CAPABILITIES}`: {e}")))?;
        let client = meta
            .get(META_CLIENT)
            .and_then(|c| serde_json::from_value(c.clone()).ok());
        let log_level = meta
            .get(META_LOG_LEVEL)
            .and_then(|l| serde_json::from_value(l.clone()).ok());
        Ok(Some(Stateless {
            version,
            capabilities,
            client,
            log_level,
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

/// `result` with `resultType: complete`, and the caching hints for `shape`.
pub(super) fn complete(mut result: Value, shape: Shape) -> Value {
    if let Value::Object(map) = &mut result {
        map.insert("resultType".to_owned(), Value::from("complete"));
        if shape == Shape::Cached {
            map.entry("ttlMs").or_insert(Value::from(0));
            map.entry("cacheScope").or_insert(Value::from("private"));
        }
    }
    result
}
