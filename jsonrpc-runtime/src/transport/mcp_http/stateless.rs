//! Requests of MCP's stateless revision (2026-07-28) over Streamable HTTP,
//! the client side: a request whose params carry a revision in `_meta` is
//! sent with no session, its revision in `MCP-Protocol-Version`, and its
//! method and the tool, prompt or resource it is about in `Mcp-Method` and
//! `Mcp-Name`, which the server checks against the body. A `tools/call`
//! also mirrors the arguments its tool declares with `x-mcp-header` into
//! `Mcp-Param-*` headers, as learned from the server's `tools/list`
//! answers. Its error answers come with `400` or `404` and a JSON-RPC
//! body, which is the answer.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use http::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::{MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use crate::transport::ParamHeaders;
use crate::Id;

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The most tools whose argument headers one transport remembers; a
/// server that lists more gets no `Mcp-Param-*` headers for the rest (and
/// refuses their calls, -32020, saying which header is missing).
const MAX_TOOLS: usize = 10_000;

/// The headers of one stateless request.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stateless {
    version: HeaderValue,
    method: HeaderValue,
    name: Option<HeaderValue>,
    /// The `Mcp-Param-*` headers of a `tools/call`.
    params: Vec<(HeaderName, HeaderValue)>,
    /// Set for `tools/list`: its answer says what the tools declare.
    pub(super) listing: Option<Listing>,
}

/// A `tools/list` request whose answer is read for the tools' argument
/// headers.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Listing {
    id: Id,
    /// No cursor: the answer lists the tools from the start, and what was
    /// learned before is forgotten.
    first_page: bool,
}

impl Stateless {
    /// The headers of request `id` of `method` whose `params` name a
    /// revision in `_meta`; `None` for any other message. A name that
    /// cannot be a header value is left out (the server refuses the
    /// request, -32020).
    pub(super) fn read(
        id: &Id,
        method: &str,
        params: Option<&str>,
        tools: &ToolHeaders,
    ) -> Option<Stateless> {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(rename = "_meta")]
            meta: Option<Meta>,
            #[serde(default, borrow)]
            name: Option<Cow<'a, str>>,
            #[serde(default, borrow)]
            uri: Option<Cow<'a, str>>,
            #[serde(default, borrow)]
            arguments: Option<&'a RawValue>,
            #[serde(default, borrow)]
            cursor: Option<&'a RawValue>,
        }
        #[derive(Deserialize)]
        struct Meta {
            #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
            version: Option<String>,
        }
        let params = params.filter(|p| p.contains("\"_meta\""))?;
        let params: Params<'_> = serde_json::from_str(params).ok()?;
        let version = HeaderValue::from_str(&params.meta?.version?).ok()?;
        let name = match method {
            "tools/call" | "prompts/get" => params.name.as_deref(),
            "resources/read" => params.uri.as_deref(),
            _ => None,
        };
        let mirrored = match (method, name) {
            ("tools/call", Some(tool)) => tools.get(tool),
            _ => None,
        };
        let params_headers = mirrored.map_or_else(Vec::new, |mirrored| {
            let arguments = params.arguments.map(RawValue::get).unwrap_or("{}");
            serde_json::from_str::<Value>(arguments)
                .map(|arguments| mirrored.headers(&arguments))
                .unwrap_or_default()
        });
        let listing = (method == "tools/list").then(|| Listing {
            id: id.clone(),
            first_page: params.cursor.is_none(),
        });
        Some(Stateless {
            version,
            method: HeaderValue::from_str(method).ok()?,
            name: name.and_then(|n| HeaderValue::from_str(n).ok()),
            params: params_headers,
            listing,
        })
    }

    /// Puts the request's headers in place of a session's (and of any
    /// `Mcp-Param-*` header the connector was given: only arguments
    /// speak there).
    pub(super) fn apply(&self, headers: &mut HeaderMap) {
        headers.remove(MCP_SESSION_ID);
        headers.insert(MCP_PROTOCOL_VERSION, self.version.clone());
        headers.insert(MCP_METHOD, self.method.clone());
        if let Some(name) = &self.name {
            headers.insert(MCP_NAME, name.clone());
        }
        let configured: Vec<HeaderName> = headers
            .keys()
            .filter(|name| name.as_str().starts_with("mcp-param-"))
            .cloned()
            .collect();
        for name in configured {
            headers.remove(name);
        }
        for (name, value) in &self.params {
            headers.append(name.clone(), value.clone());
        }
    }
}

/// What the tools a server listed mirror into headers, by tool name:
/// learned from the answers to stateless `tools/list` requests.
#[derive(Debug, Default)]
pub(super) struct ToolHeaders(Mutex<HashMap<String, ParamHeaders>>);

impl ToolHeaders {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, ParamHeaders>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The argument headers of `tool`, when it declares any.
    fn get(&self, tool: &str) -> Option<ParamHeaders> {
        let tools = self.lock();
        if tools.is_empty() {
            return None;
        }
        tools.get(tool).cloned()
    }

    /// Reads `answer` when it answers `listing`: each tool's declarations
    /// replace what was known of it. A tool whose declarations break the
    /// rules gets no headers (its calls go without them).
    pub(super) fn learn(&self, answer: &[u8], listing: &Listing) {
        #[derive(Deserialize)]
        struct Answer {
            id: Id,
            result: Page,
        }
        #[derive(Deserialize)]
        struct Page {
            tools: Vec<Tool>,
        }
        #[derive(Deserialize)]
        struct Tool {
            name: String,
            #[serde(default, rename = "inputSchema")]
            input_schema: Value,
        }
        let Ok(answer) = serde_json::from_slice::<Answer>(answer) else {
            return;
        };
        if answer.id != listing.id {
            return;
        }
        let mut tools = self.lock();
        if listing.first_page {
            tools.clear();
        }
        for tool in answer.result.tools {
            match ParamHeaders::from_schema(&tool.input_schema) {
                Ok(params) if !params.is_empty() => {
                    if tools.len() < MAX_TOOLS || tools.contains_key(&tool.name) {
                        tools.insert(tool.name, params);
                    }
                }
                Ok(_) => {
                    tools.remove(&tool.name);
                }
                Err(why) => {
                    tracing::debug!(tool = %tool.name, %why, "a tool's x-mcp-header declarations are invalid; its arguments are not mirrored");
                    tools.remove(&tool.name);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_request_with_a_revision_in_meta_is_stateless() {
        let id = Id::from(1);
        let tools = ToolHeaders::default();
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let call = format!(r#"{{"name":"add","arguments":{{"a":1}},{meta}}}"#);
        let read = format!(r#"{{"uri":"file:///a b",{meta}}}"#);
        let mut headers = HeaderMap::new();
        headers.insert(MCP_SESSION_ID, HeaderValue::from_static("s1"));
        Stateless::read(&id, "tools/call", Some(&call), &tools)
            .unwrap()
            .apply(&mut headers);
        assert_eq!(headers[MCP_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(headers[MCP_METHOD], "tools/call");
        assert_eq!(headers[MCP_NAME], "add");
        assert!(headers.get(MCP_SESSION_ID).is_none());
        let read = Stateless::read(&id, "resources/read", Some(&read), &tools).unwrap();
        assert_eq!(read.name.as_ref().unwrap(), "file:///a b");
        let list =
            Stateless::read(&id, "tools/list", Some(&format!("{{{meta}}}")), &tools).unwrap();
        assert_eq!(list.name, None);
        // No revision, no `_meta`, a `_meta` without one: a session's.
        assert_eq!(
            Stateless::read(&id, "tools/call", Some(r#"{"name":"add"}"#), &tools),
            None
        );
        assert_eq!(Stateless::read(&id, "tools/call", None, &tools), None);
        let other = r#"{"name":"x","_meta":{"progressToken":1}}"#;
        assert_eq!(
            Stateless::read(&id, "tools/call", Some(other), &tools),
            None
        );
        // A name no header can carry is left out.
        let odd = format!(r#"{{"name":"a\nb",{meta}}}"#);
        assert_eq!(
            Stateless::read(&id, "tools/call", Some(&odd), &tools)
                .unwrap()
                .name,
            None
        );
    }

    #[test]
    fn a_call_mirrors_what_the_listing_declared() {
        let tools = ToolHeaders::default();
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let listing = |id: i64, cursor: &str| {
            let params = format!("{{{cursor}{meta}}}");
            Stateless::read(&Id::from(id), "tools/list", Some(&params), &tools)
                .unwrap()
                .listing
                .unwrap()
        };
        let region = r#"{"name":"sql","inputSchema":{"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},"query":{"type":"string"}}}}"#;
        let broken = r#"{"name":"bad","inputSchema":{"type":"object","properties":{
            "v":{"type":"number","x-mcp-header":"V"}}}}"#;
        let first = listing(1, "");
        // An answer to another request teaches nothing.
        tools.learn(
            format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{region}]}}}}"#).as_bytes(),
            &first,
        );
        let call = |name: &str, arguments: &str| {
            let params = format!(r#"{{"name":"{name}","arguments":{arguments},{meta}}}"#);
            let mut headers = HeaderMap::new();
            headers.insert("mcp-param-region", HeaderValue::from_static("configured"));
            Stateless::read(&Id::from(9), "tools/call", Some(&params), &tools)
                .unwrap()
                .apply(&mut headers);
            headers.get("mcp-param-region").cloned()
        };
        assert_eq!(call("sql", r#"{"region":"eu"}"#), None);
        let answer =
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[{region},{broken}]}}}}"#);
        tools.learn(answer.as_bytes(), &first);
        assert_eq!(call("sql", r#"{"region":"eu","query":"q"}"#).unwrap(), "eu");
        assert_eq!(
            call("sql", r#"{"region":" eu"}"#).unwrap(),
            "=?base64?IGV1?="
        );
        assert_eq!(call("sql", r#"{"region":null}"#), None);
        assert_eq!(call("bad", r#"{"v":1}"#), None);
        // A later page adds to what is known; a first page starts over.
        let second = listing(3, r#""cursor":"c","#);
        let other = region.replace("\"sql\"", "\"sql2\"");
        tools.learn(
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{other}]}}}}"#).as_bytes(),
            &second,
        );
        assert_eq!(call("sql", r#"{"region":"eu"}"#).unwrap(), "eu");
        assert_eq!(call("sql2", r#"{"region":"us"}"#).unwrap(), "us");
        let again = listing(4, "");
        tools.learn(br#"{"jsonrpc":"2.0","id":4,"result":{"tools":[]}}"#, &again);
        assert_eq!(call("sql", r#"{"region":"eu"}"#), None);
    }
}
