//! Requests of MCP's stateless revision (2026-07-28) over Streamable HTTP,
//! the client side: a request whose params carry a revision in `_meta` is
//! sent with no session, its revision in `MCP-Protocol-Version`, and its
//! method and the tool, prompt or resource it is about in `Mcp-Method` and
//! `Mcp-Name`, which the server checks against the body. Its error answers
//! come with `400` or `404` and a JSON-RPC body, which is the answer.

use std::borrow::Cow;

use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;

use super::{MCP_PROTOCOL_VERSION, MCP_SESSION_ID};

const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The headers of one stateless request.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Stateless {
    version: HeaderValue,
    method: HeaderValue,
    name: Option<HeaderValue>,
}

impl Stateless {
    /// The headers of a request of `method` whose `params` name a revision
    /// in `_meta`; `None` for any other message. A name that cannot be a
    /// header value is left out (the server refuses the request, -32020).
    pub(super) fn read(method: &str, params: Option<&str>) -> Option<Stateless> {
        #[derive(Deserialize)]
        struct Params<'a> {
            #[serde(rename = "_meta")]
            meta: Option<Meta>,
            #[serde(default, borrow)]
            name: Option<Cow<'a, str>>,
            #[serde(default, borrow)]
            uri: Option<Cow<'a, str>>,
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
            "tools/call" | "prompts/get" => params.name,
            "resources/read" => params.uri,
            _ => None,
        };
        Some(Stateless {
            version,
            method: HeaderValue::from_str(method).ok()?,
            name: name.and_then(|n| HeaderValue::from_str(&n).ok()),
        })
    }

    /// Puts the request's headers in place of a session's.
    pub(super) fn apply(&self, headers: &mut HeaderMap) {
        headers.remove(MCP_SESSION_ID);
        headers.insert(MCP_PROTOCOL_VERSION, self.version.clone());
        headers.insert(MCP_METHOD, self.method.clone());
        if let Some(name) = &self.name {
            headers.insert(MCP_NAME, name.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_request_with_a_revision_in_meta_is_stateless() {
        let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#;
        let call = format!(r#"{{"name":"add","arguments":{{"a":1}},{meta}}}"#);
        let read = format!(r#"{{"uri":"file:///a b",{meta}}}"#);
        let mut headers = HeaderMap::new();
        headers.insert(MCP_SESSION_ID, HeaderValue::from_static("s1"));
        Stateless::read("tools/call", Some(&call)).unwrap().apply(&mut headers);
        assert_eq!(headers[MCP_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(headers[MCP_METHOD], "tools/call");
        assert_eq!(headers[MCP_NAME], "add");
        assert!(headers.get(MCP_SESSION_ID).is_none());
        let read = Stateless::read("resources/read", Some(&read)).unwrap();
        assert_eq!(read.name.as_ref().unwrap(), "file:///a b");
        let list = Stateless::read("tools/list", Some(&format!("{{{meta}}}"))).unwrap();
        assert_eq!(list.name, None);
        // No revision, no `_meta`, a `_meta` without one: a session's.
        assert_eq!(Stateless::read("tools/call", Some(r#"{"name":"add"}"#)), None);
        assert_eq!(Stateless::read("tools/call", None), None);
        let other = r#"{"name":"x","_meta":{"progressToken":1}}"#;
        assert_eq!(Stateless::read("tools/call", Some(other)), None);
        // A name no header can carry is left out.
        let odd = format!(r#"{{"name":"a\nb",{meta}}}"#);
        assert_eq!(Stateless::read("tools/call", Some(&odd)).unwrap().name, None);
    }
}
