//! What a tool's handler returns: results, structured results, errors; and
//! the schemas made from types.

use std::fmt;

use jsonrpc_runtime::ErrorObject;
use schemars::{JsonSchema, SchemaGenerator};
use serde::Serialize;
use serde_json::Value;

use crate::types::{CallToolResult, Content};

/// A tool's failure, for the model to read: an `isError` result with the
/// message as its text. [`ToolError::protocol`] makes a JSON-RPC error
/// instead, for a call the client should not have made.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError(ToolErrorKind);

#[derive(Debug, Clone, PartialEq)]
enum ToolErrorKind {
    Tool(String),
    Protocol(ErrorObject),
}

impl ToolError {
    /// A tool error saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError(ToolErrorKind::Tool(message.into()))
    }

    /// A JSON-RPC error answer instead of a result.
    pub fn protocol(error: ErrorObject) -> Self {
        ToolError(ToolErrorKind::Protocol(error))
    }

    /// As a JSON-RPC error, for methods with no `isError` result
    /// (resources, prompts): a tool error is -32603 with its message.
    pub(crate) fn into_error(self) -> ErrorObject {
        match self.0 {
            ToolErrorKind::Tool(message) => ErrorObject::new(-32603, message),
            ToolErrorKind::Protocol(error) => error,
        }
    }

    pub(super) fn into_outcome(self) -> ToolOutcome {
        match self.0 {
            ToolErrorKind::Tool(message) => Ok(CallToolResult::error(message)),
            ToolErrorKind::Protocol(error) => Err(error),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            ToolErrorKind::Tool(message) => f.write_str(message),
            ToolErrorKind::Protocol(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

/// What a tool's handler can return.
pub trait IntoToolResult: Send + 'static {
    /// The result, or a protocol error when it cannot be encoded.
    ///
    /// # Errors
    ///
    /// -32603 when a structured result does not serialize.
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject>;

    /// The tool's `outputSchema`, when its results are structured.
    fn output_schema(_generator: &mut SchemaGenerator) -> Option<Value> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult {
            content: vec![self],
            ..CallToolResult::default()
        })
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        Ok(CallToolResult {
            content: self,
            ..CallToolResult::default()
        })
    }
}

/// A structured result: `structuredContent` (the tool's `outputSchema` is
/// `T`'s JSON Schema), with the same JSON as text for clients that read
/// only `content`.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<CallToolResult, ErrorObject> {
        let value = serde_json::to_value(&self.0).map_err(ErrorObject::internal_error)?;
        Ok(CallToolResult {
            content: vec![Content::text(value.to_string())],
            structured_content: Some(value),
            is_error: false,
        })
    }

    fn output_schema(generator: &mut SchemaGenerator) -> Option<Value> {
        Some(object_schema(generator.root_schema_for::<T>().to_value()))
    }
}

/// JSON Schema 2020-12, as MCP asks, without a `$schema` member.
pub(super) fn schema_generator() -> SchemaGenerator {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.into_generator()
}

/// A tool's schemas are objects: a unit or a schema with no type (`()`,
/// `serde_json::Value`) takes arguments as an object of anything.
pub(super) fn object_schema(schema: Value) -> Value {
    match &schema {
        Value::Object(map) if map.get("type").is_some_and(|t| t == "object") => schema,
        Value::Object(map) if map.get("type").is_none() && !map.contains_key("$ref") => {
            let mut map = map.clone();
            map.insert("type".to_owned(), Value::from("object"));
            Value::Object(map)
        }
        _ => schema,
    }
}

/// What running a tool came to: a result (an `isError` one included), or a
/// protocol error.
pub(super) type ToolOutcome = Result<CallToolResult, ErrorObject>;
