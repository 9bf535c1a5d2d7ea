//! Resources: fixed ones listed by URI, and templates (RFC 6570 simple
//! expressions, `file:///{path}`) whose matching URIs a handler reads.

use std::collections::HashMap;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use jsonrpc_runtime::ErrorObject;
use serde::{Deserialize, Serialize};

use crate::server::ToolContext;
use crate::types::ResourceContents;
use crate::ToolError;

/// The error code of a `resources/read` for a URI the server does not
/// have, as the specification gives it.
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// A resource as `resources/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// Its URI, which `resources/read` names it by.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl Resource {
    /// A resource at `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// What it is.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Its media type.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A family of resources as `resources/templates/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template (RFC 6570), such as `file:///{path}`.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What its resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The media type of its resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

impl ResourceTemplate {
    /// Resources matching `uri_template`, named `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    /// What its resources are.
    #[must_use]
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The media type of its resources.
    #[must_use]
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// `resources/read`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceParams {
    /// The resource.
    pub uri: String,
}

/// `resources/read`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadResourceResult {
    /// The resource's contents (several for a resource with parts).
    pub contents: Vec<ResourceContents>,
}

/// `resources/list`'s result: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// The resources of this page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `resources/templates/list`'s result: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// The templates of this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// The cursor of the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// What a read came to.
pub(crate) type ReadOutcome = Result<Vec<ResourceContents>, ErrorObject>;

/// How a resource or a template's resource is read: the URI, the
/// template's variables (none for a fixed resource), the context.
pub(crate) type ReadFn = dyn Fn(String, HashMap<String, String>, ToolContext) -> BoxFuture<'static, ReadOutcome>
    + Send
    + Sync;

/// A fixed resource of the catalog.
pub(crate) struct ResourceEntry {
    pub(crate) resource: Resource,
    pub(crate) read: Arc<ReadFn>,
}

/// A template of the catalog, its pattern parsed.
pub(crate) struct TemplateEntry {
    pub(crate) template: ResourceTemplate,
    pub(crate) pattern: UriPattern,
    pub(crate) read: Arc<ReadFn>,
}

/// The boxed reader of a handler.
pub(crate) fn reader<F, Fut>(handler: F) -> Arc<ReadFn>
where
    F: Fn(String, HashMap<String, String>, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<ResourceContents>, ToolError>> + Send + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |uri, vars, cx| {
        let handler = handler.clone();
        Box::pin(async move { handler(uri, vars, cx).await.map_err(ToolError::into_error) })
    })
}

/// A URI template of literal text and `{name}` expressions (RFC 6570
/// level 1), matched against URIs: each expression takes one or more
/// characters up to the literal that follows it (the last one, the rest of
/// the URI).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UriPattern {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Variable(String),
}

impl UriPattern {
    /// Parses `template`; `None` when a brace is unmatched, an expression
    /// is empty or uses an operator (`{+path}`), or two expressions touch.
    pub(crate) fn parse(template: &str) -> Option<UriPattern> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest.find('}')?;
                    let name = &rest[1..end];
                    let simple = !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
                    if !simple || matches!(parts.last(), Some(Part::Variable(_))) {
                        return None;
                    }
                    parts.push(Part::Variable(name.to_owned()));
                    rest = &rest[end + 1..];
                }
                Some(start) => {
                    let literal = &rest[..start];
                    if literal.contains('}') {
                        return None;
                    }
                    parts.push(Part::Literal(literal.to_owned()));
                    rest = &rest[start..];
                }
                None => {
                    if rest.contains('}') {
                        return None;
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Some(UriPattern { parts })
    }

    /// The variables of `uri` when it matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<HashMap<String, String>> {
        let mut vars = HashMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Variable(name) => {
                    let end = match parts.peek() {
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    if end == 0 {
                        return None;
                    }
                    vars.insert(name.clone(), rest[..end].to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(vars)
    }
}

/// The error of a read of a URI nobody has.
pub(crate) fn not_found(uri: &str, code: i64) -> ErrorObject {
    let error = || ErrorObject::new(code, "Resource not found");
    // A JSON object of one string always serializes.
    error()
        .with_data(&serde_json::json!({ "uri": uri }))
        .unwrap_or_else(|_| error())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn templates_match_literal_text_and_take_each_variable_up_to_the_next() {
        let pattern = UriPattern::parse("users://{id}/posts/{post}").unwrap();
        assert_eq!(
            pattern.matches("users://42/posts/7"),
            Some(vars(&[("id", "42"), ("post", "7")]))
        );
        assert_eq!(pattern.matches("users://42/posts/"), None);
        assert_eq!(pattern.matches("users:///posts/7"), None);
        assert_eq!(pattern.matches("people://42/posts/7"), None);

        let tail = UriPattern::parse("file:///{path}").unwrap();
        assert_eq!(
            tail.matches("file:///a/b.txt"),
            Some(vars(&[("path", "a/b.txt")]))
        );
        let fixed = UriPattern::parse("test://static").unwrap();
        assert_eq!(fixed.matches("test://static"), Some(HashMap::new()));
        assert_eq!(fixed.matches("test://static/more"), None);
    }

    #[test]
    fn malformed_templates_are_refused() {
        for bad in ["a{", "a}", "{}", "{+path}", "{a}{b}", "x{a b}"] {
            assert_eq!(UriPattern::parse(bad), None, "{bad}");
        }
    }
}
