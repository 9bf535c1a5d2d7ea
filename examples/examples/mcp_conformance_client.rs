//! Run with: cargo run --example mcp_conformance_client -- URL
//!
//! The client the official MCP conformance suite's client scenarios drive
//! (`conformance client --command …`, which appends the scenario server's
//! URL and says the scenario in `MCP_CONFORMANCE_SCENARIO` and the
//! revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`): a
//! `jsonrpc_mcp::client::McpClient` over Streamable HTTP that starts (a
//! session, or `server/discover` on the stateless 2026-07-28), lists the
//! tools and calls what the scenario wants (the calls its context lists,
//! when it lists any), answering the server's questions (elicitation with
//! each field's default, sampling, roots) on either revision. Over the
//! stateless wire the transport mirrors the arguments tools declare with
//! `x-mcp-header` into `Mcp-Param-*` headers.
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
    // The calls a scenario's context lists, else what the scenario wants
    // of each tool listed.
    let calls: Vec<(String, Value)> = match context()["toolCalls"].as_array() {
        Some(calls) => calls
            .iter()
            .map(|call| {
                (
                    call["name"].as_str().unwrap_or_default().to_owned(),
                    call["arguments"].clone(),
                )
            })
            .collect(),
        None => tools
            .iter()
            .filter_map(|tool| Some((tool.name.clone(), arguments_for(scenario, tool, &tools)?)))
            .collect(),
    };
    for (name, arguments) in calls {
        let result = client.call_tool(&name, arguments).await?;
        eprintln!("mcp_conformance_client: {name}: {result:?}");
    }
    // The scenario of the standard headers reads every resource and gets
    // every prompt too (`Mcp-Name` is their URI or name).
    if scenario == "http-standard-headers" {
        for resource in client.list_resources().await? {
            client.read_resource(&resource.uri).await?;
        }
        for prompt in client.list_prompts().await? {
            client.get_prompt(&prompt.name, json!({})).await?;
        }
    }
    client.close(Duration::from_secs(1)).await;
    Ok(())
}

/// The scenario's context (`MCP_CONFORMANCE_CONTEXT`), or null.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default()
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
        // Every tool listed (the client has left out those whose
        // `x-mcp-header` declarations are invalid), with its required
        // arguments.
        (
            "http-invalid-tool-headers" | "sep-2322-client-request-state" | "http-standard-headers",
            _,
        ) => Some(required(tool)),
        // The schema as it came, untouched.
        ("json-schema-2020-12-preservation", "json_schema_echo") => tools
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .map(|t| json!({"schema": t.input_schema})),
        _ => None,
    }
}

/// Arguments for `tool`'s required properties: a placeholder of each's
/// type.
fn required(tool: &Tool) -> Value {
    let schema = &tool.input_schema;
    let names = schema["required"].as_array().into_iter().flatten();
    let arguments: Map<String, Value> = names
        .filter_map(Value::as_str)
        .map(|name| {
            let value = match schema["properties"][name]["type"].as_str() {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("object") => json!({}),
                Some("array") => json!([]),
                _ => json!("placeholder"),
            };
            (name.to_owned(), value)
        })
        .collect();
    Value::Object(arguments)
}

/// The suite's client metadata document URL (it never fetches it).
const CLIENT_METADATA: &str = "https://conformance-test.local/client-metadata.json";

/// Tokens from the scenario's authorization server, which approves at
/// once; a client id the scenario's context gives is used as it is.
fn oauth() -> OAuthClient {
    let oauth = OAuthClient::headless("http://localhost:3000/callback")
        .client_name("jsonrpc-mcp-conformance-client")
        .client_metadata_document(CLIENT_METADATA);
    let context = context();
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
