//! Run with: cargo run --example mcp_conformance_client -- URL
//!
//! The client the official MCP conformance suite's client scenarios drive
//! (`conformance client --command …`, which appends the scenario server's
//! URL and says the scenario in `MCP_CONFORMANCE_SCENARIO` and the
//! revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`): a
//! `jsonrpc_mcp::client::McpClient` over Streamable HTTP that starts (a
//! session, or `server/discover` on the stateless 2026-07-28), lists the
//! tools and calls what the scenario wants, answering the server's
//! questions (elicitation with each field's default, sampling, roots) on
//! either revision.
//!
//! For the OAuth scenarios (`auth/…`) the transport gets its tokens with
//! a headless `OAuthClient` (the suite's authorization server approves at
//! once and redirects): a client id given in `MCP_CONFORMANCE_CONTEXT`
//! when the scenario has one, a client metadata document URL where the
//! server takes those, else registration.

use std::process::ExitCode;
use std::time::Duration;

use jsonrpc_mcp::client::McpClient;
use jsonrpc_mcp::client_features::{
    CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, Root,
};
use jsonrpc_mcp::prompts::Role;
use jsonrpc_mcp::types::{Content, Tool};
use jsonrpc_runtime::transport::{McpHttpConnector, OAuthClient};
use serde_json::{json, Map, Value};

#[path = "support/logging.rs"]
mod logging;

#[tokio::main]
async fn main() -> ExitCode {
    logging::init();
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: mcp_conformance_client URL");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version =
        std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_else(|_| "2025-11-25".into());
    match run(&url, &scenario, &version).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_conformance_client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str, version: &str) -> Result<(), Box<dyn std::error::Error>> {
    let transport = McpHttpConnector::new(url).oauth(oauth()).connect().await?;
    let client = McpClient::builder("jsonrpc-mcp-conformance-client", env!("CARGO_PKG_VERSION"))
        .protocol_version(version)
        .on_elicitation(|form| async move { Ok(with_defaults(&form)) })
        .capability("elicitation", json!({"form": {"applyDefaults": true}}))
        .on_sampling(|_| async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: vec![Content::text("A sampled answer.")],
                model: "jsonrpc-mcp-conformance-client".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
        .roots([Root {
            uri: "file:///tmp".into(),
            name: Some("tmp".into()),
        }])
        .connect(transport)
        .await?;
    let tools = client.list_tools().await?;
    for tool in &tools {
        let Some(arguments) = arguments_for(scenario, tool, &tools) else {
            continue;
        };
        let result = client.call_tool(&tool.name, arguments).await?;
        eprintln!("mcp_conformance_client: {}: {result:?}", tool.name);
    }
    client.close(Duration::from_secs(1)).await;
    Ok(())
}

/// The arguments to call `tool` with in `scenario`, or `None` when the
/// scenario does not call it. `tools` is what the server listed.
fn arguments_for(scenario: &str, tool: &Tool, tools: &[Tool]) -> Option<Value> {
    match (scenario, tool.name.as_str()) {
        ("tools_call", "add_numbers") => Some(json!({"a": 2, "b": 3})),
        // The stateless scenarios' servers have one tool of two numbers.
        ("tools_call" | "request-metadata", _) if tools.len() == 1 => Some(json!({"a": 2, "b": 3})),
        // The OAuth scenarios' servers have `test-tool`, whose call may need
        // more scopes than listing did (a step-up).
        (auth, _) if auth.starts_with("auth/") => Some(json!({})),
        ("elicitation-sep1034-client-defaults", "test_client_elicitation_defaults")
        | ("sse-retry", "test_reconnection") => Some(json!({})),
        // The schema as it came, untouched.
        ("json-schema-2020-12-preservation", "json_schema_echo") => tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .map(|t| json!({"schema": t.input_schema})),
        _ => None,
    }
}

/// The suite's client metadata document URL (it never fetches it).
const CLIENT_METADATA: &str = "https://conformance-test.local/client-metadata.json";

/// Tokens from the scenario's authorization server, which approves at
/// once; a client id the scenario's context gives is used as it is.
fn oauth() -> OAuthClient {
    let oauth = OAuthClient::headless("http://localhost:3000/callback")
        .client_name("jsonrpc-mcp-conformance-client")
        .client_metadata_document(CLIENT_METADATA);
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    match context["client_id"].as_str() {
        Some(id) => {
            let secret = context["client_secret"].as_str().map(str::to_owned);
            oauth.pre_registered(id, secret)
        }
        None => oauth,
    }
}

/// A form accepted with each field's default.
fn with_defaults(form: &ElicitParams) -> ElicitResult {
    let mut content = Map::new();
    if let Some(fields) = form.requested_schema["properties"].as_object() {
        for (name, field) in fields {
            if let Some(default) = field.get("default") {
                content.insert(name.clone(), default.clone());
            }
        }
    }
    ElicitResult {
        action: ElicitAction::Accept,
        content: Some(content),
    }
}
