//! The MCP messages this layer reads and writes (resources and prompts:
//! [`crate::resources`], [`crate::prompts`]), as the specification
//! names their members (camelCase on the wire). Members this layer does not
//! know are ignored when read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The newest protocol revision this layer speaks.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// The revisions this layer speaks, newest first. A client asking for one
/// of them gets it; any other gets [`LATEST_PROTOCOL_VERSION`], and decides
/// whether it can go on.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A client's or a server's name and version.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// The program's name.
    pub name: String,
    /// A name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its version.
    pub version: String,
}

/// What a client can do, as declared in `initialize`. Each member is kept as
/// sent (an object of settings, or absent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// The client lists roots (`roots/list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<Value>,
    /// The client samples from a model (`sampling/createMessage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Value>,
    /// The client asks its user for input (`elicitation/create`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<Value>,
    /// Everything else the client declared.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `initialize`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The revision the client asks for.
    pub protocol_version: String,
    /// What the client can do.
    #[serde(default)]
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    #[serde(default)]
    pub client_info: Implementation,
}

/// `initialize`'s result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the session speaks.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, for the client's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

/// `server/discover`'s result (2026-07-28): the stateless revisions the
/// server speaks, what it offers and who it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// The stateless revisions served.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the client's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Who the server is.
    #[serde(rename = "_meta")]
    pub meta: DiscoverMeta,
}

/// The `_meta` of [`DiscoverResult`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiscoverMeta {
    /// Who the server is.
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    pub server_info: Implementation,
}

/// What a server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Tools (`tools/list`, `tools/call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Resources (`resources/list`, `resources/templates/list`,
    /// `resources/read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Prompts (`prompts/list`, `prompts/get`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Suggestions for arguments (`completion/complete`); an empty object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<Map<String, Value>>,
    /// Log messages to the client (`logging/setLevel`,
    /// `notifications/message`); an empty object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<Map<String, Value>>,
}

/// A log message's severity, least severe first (RFC 5424's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum LogLevel {
    /// Debugging detail.
    Debug,
    /// Information.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

/// `logging/setLevel`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetLevelParams {
    /// The least severe level the client wants.
    pub level: LogLevel,
}

/// `notifications/message`'s params; `data` is whatever was logged (read
/// back, a JSON value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams<D = Value> {
    /// Its severity.
    pub level: LogLevel,
    /// Who logged it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// What is logged: a string, or an object of details.
    pub data: D,
}

/// What a client opts in to on a `subscriptions/listen` stream (2026-07-28),
/// and what the server acknowledges of it: each notification type is off
/// unless named.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

/// A capability's flag is left out when false, as the specification
/// reads an absent one.
fn is_false(flag: &bool) -> bool {
    !*flag
}

/// The server's resources capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether a client can subscribe to a resource's updates.
    #[serde(default, skip_serializing_if = "is_false")]
    pub subscribe: bool,
    /// Whether the server tells when its list of resources changes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub list_changed: bool,
}

/// The server's prompts capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server tells when its list of prompts changes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub list_changed: bool,
}

/// The server's tools capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server tells when its list of tools changes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub list_changed: bool,
}

/// A tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The name `tools/call` names it by.
    pub name: String,
    /// A name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of its arguments (an object).
    pub input_schema: Value,
    /// The JSON Schema of its structured result, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints about its behaviour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// Hints about a tool's behaviour; a client must not trust them from a
/// server it does not trust.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A name for people to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy (not only add).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments changes nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches outside entities (the web, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// The params of a paginated list (`tools/list`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedParams {
    /// Where the previous page ended (its `nextCursor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `tools/list`'s result: one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools of this page.
    pub tools: Vec<Tool>,
    /// The cursor of the next page; absent on the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// The arguments of a tool that takes none: any object (or none at all)
/// decodes, and its schema is an empty object's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NoArguments {}

/// `tools/call`'s params.
#[derive(Debug, Serialize, Deserialize)]
pub struct CallToolParams {
    /// The tool.
    pub name: String,
    /// Its arguments, as sent (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Box<RawValue>>,
}

/// `tools/call`'s result: what the tool returned, or its failure
/// (`isError`), which the model reads and can act on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The unstructured result.
    pub content: Vec<Content>,
    /// The structured result, matching the tool's `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed; `content` says why.
    #[serde(default)]
    pub is_error: bool,
}

impl CallToolResult {
    /// A result of one text.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![Content::text(text)],
            ..CallToolResult::default()
        }
    }

    /// A tool error: `isError` with one text saying why.
    pub fn error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..CallToolResult::text(text)
        }
    }

    /// The text of the first text content, as a client reads a result.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_mcp::types::CallToolResult;
    ///
    /// assert_eq!(CallToolResult::text("5").first_text(), Some("5"));
    /// assert_eq!(CallToolResult::default().first_text(), None);
    /// ```
    pub fn first_text(&self) -> Option<&str> {
        self.content.iter().find_map(|c| match c {
            Content::Text { text } => Some(text.as_str()),
            _ => None,
        })
    }
}

/// One piece of a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Content {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// The bytes, in base64.
        data: String,
        /// Its media type (`image/png`).
        mime_type: String,
    },
    /// Audio, base64-encoded.
    Audio {
        /// The bytes, in base64.
        data: String,
        /// Its media type (`audio/wav`).
        mime_type: String,
    },
    /// A link to a resource the client can read.
    ResourceLink {
        /// Its URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The contents.
        resource: ResourceContents,
    },
}

impl Content {
    /// A text.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image: base64 `data` of type `mime_type`.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// Audio: base64 `data` of type `mime_type`.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// A link to the resource at `uri`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }

    /// A resource's contents, embedded.
    pub fn resource(resource: ResourceContents) -> Self {
        Content::Resource { resource }
    }
}

/// A resource's contents: text or base64 bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// The resource's URI.
    pub uri: String,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its text, for a text resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Its bytes in base64, for a binary one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

impl ResourceContents {
    /// The text `text` of the resource at `uri`, of type `mime_type`.
    pub fn text(uri: impl Into<String>, mime_type: &str, text: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.to_owned()),
            text: Some(text.into()),
            blob: None,
        }
    }

    /// The bytes (`base64`, already encoded) of the resource at `uri`, of
    /// type `mime_type`.
    pub fn blob(uri: impl Into<String>, mime_type: &str, base64: impl Into<String>) -> Self {
        ResourceContents {
            uri: uri.into(),
            mime_type: Some(mime_type.to_owned()),
            text: None,
            blob: Some(base64.into()),
        }
    }
}
