//! The Model Context Protocol on [`jsonrpc-runtime`](jsonrpc_runtime):
//! a server of typed tools, resources and prompts.
//!
//! An [`McpServer`] holds the server's name and its tools, each an async
//! function of a typed argument struct; the struct's JSON Schema (schemars,
//! 2020-12) is the tool's `inputSchema`, so what a client sees cannot drift
//! from what the tool decodes. [`McpServer::router`] serves it as a
//! runtime [`Router`](jsonrpc_runtime::Router): run that on any transport
//! (stdio, a child process, a socket, one session of Streamable HTTP) with
//! [`Config::mcp`](jsonrpc_runtime::Config::mcp), which brings `ping`,
//! cancellation, progress and the `initialize`-first rule.
//!
//! | method | what this layer does |
//! |---|---|
//! | `initialize` | answers the client's revision when it is one of [`PROTOCOL_VERSIONS`] (`2025-11-25` back to `2024-11-05`), else the newest; keeps the client's capabilities for the tools ([`ToolContext::client_capabilities`]) |
//! | `tools/list` | the tools, with input and output schemas, in pages ([`McpServer::page_size`]) with an opaque `nextCursor`; a cursor it did not make is -32602 |
//! | `resources/list`, `resources/templates/list` | fixed resources and URI templates ([`McpServer::resource`], [`McpServer::resource_template`]), paginated |
//! | `resources/read` | the fixed resource of the URI, else the first template matching it (its variables given to the handler); -32002 when there is neither |
//! | `prompts/list`, `prompts/get` | prompts whose arguments are a typed struct's fields ([`McpServer::prompt`]); an unknown prompt or arguments that do not fit are -32602 |
//! | `completion/complete` | suggestions for a prompt's argument or a template's variable from the completer added for it ([`McpServer::complete_prompt_argument`], [`McpServer::complete_template_variable`]), at most 100 with `total` and `hasMore`; none for an argument without a completer; -32602 for a prompt or template the server does not have |
//! | `logging/setLevel` | keeps the least severe level the client wants; [`ToolContext::log`] sends `notifications/message` at that level or above |
//! | `tools/call` | decodes the arguments and runs the tool; an unknown tool is -32602; arguments that do not fit are a tool error (`isError`) from `2025-11-25` on and -32602 before, as each revision says; a [`ToolError`] is `isError` with its message |
//! | `resources/subscribe`, `resources/unsubscribe` | the URIs whose updates the session wants (at most [`MAX_SUBSCRIPTIONS`]); a [`Notifier`] sends the updates and list changes |
//! | `subscriptions/listen` | the stateless revision's stream of notifications: acknowledged first with what the server honours of the client's filter (list changes of what it has, updates of its resources), then each [`Notifier`] notification the stream opted in to, tagged with the request's id; until the client cancels it. -32601 on a session, which gets its notifications without asking |
//! | `server/discover` | the stateless revision's (`2026-07-28`) description of the server: [`STATELESS_VERSIONS`], capabilities, `serverInfo` in `_meta` |
//!
//! # Two kinds of client on one server
//!
//! A session client (`2024-11-05` … `2025-11-25`) sends `initialize` and
//! is answered on its session's revision. A stateless client
//! (`2026-07-28`) sends its revision and capabilities in every request's
//! `_meta` and never `initialize`: this layer reads and checks them (-32602
//! without them, -32022 for a revision it does not speak), answers
//! `server/discover`, marks results with `resultType` (and caching hints
//! on lists and reads), and refuses the session-only methods (`initialize`,
//! `logging/setLevel`, subscriptions) with -32601. One router serves both,
//! over stdio or Streamable HTTP (whose listener sorts the two by
//! `MCP-Protocol-Version`).
//!
//! A tool asks its client through its [`ToolContext`]
//! ([`create_message`](ToolContext::create_message),
//! [`elicit`](ToolContext::elicit), [`list_roots`](ToolContext::list_roots)):
//! on a session that is a call to the client; on a stateless request the
//! request is answered `input_required` with the question, and the tool
//! runs again when the client sends the answers, earlier rounds' answers
//! kept in a `requestState` signed with HMAC-SHA-256
//! ([`McpServer::request_state_key`]).
//!
//! A handler returns text, [`Content`](types::Content) (images, audio,
//! resource links, embedded resources), a whole
//! [`CallToolResult`](types::CallToolResult), or [`Json`] for a structured
//! result, whose type's schema becomes the tool's `outputSchema`.
//!
//! # Examples
//!
//! ```no_run
//! use jsonrpc_mcp::{Json, McpServer, ToolContext, ToolError};
//! use jsonrpc_runtime::{Config, Peer, Transport};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Divide {
//!     /// What is divided.
//!     dividend: f64,
//!     /// What it is divided by; not zero.
//!     divisor: f64,
//! }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Quotient {
//!     quotient: f64,
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = McpServer::new("calculator", "1.0.0").tool(
//!         "divide",
//!         "Divides two numbers.",
//!         |args: Divide, _cx: ToolContext| async move {
//!             if args.divisor == 0.0 {
//!                 return Err(ToolError::new("the divisor is zero"));
//!             }
//!             Ok(Json(Quotient { quotient: args.dividend / args.divisor }))
//!         },
//!     );
//!     let config = Config::mcp();
//!     let transport = Transport::stdio(&config)?;
//!     Peer::builder().config(config).router(server.router()).serve(transport).await;
//!     Ok(())
//! }
//! ```

pub mod client;
pub mod client_features;
pub mod completion;
pub mod prompts;
pub mod resources;
mod server;
pub mod types;

pub use self::server::{
    Asking, IntoToolResult, Json, McpServer, Notifier, ToolContext, ToolError, ToolInfo,
    DEFAULT_PAGE_SIZE, HEADER_MISMATCH, MAX_SUBSCRIPTIONS, MISSING_CLIENT_CAPABILITY,
    STATELESS_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
};
pub use self::types::{LATEST_PROTOCOL_VERSION, PROTOCOL_VERSIONS};
