//! Run with: cargo run --example mcp_conformance_client -- URL
//!
//! The client the official MCP conformance suite's client scenarios drive
//! (`conformance client --command …`, which appends the scenario server's
//! URL and says the scenario in `MCP_CONFORMANCE_SCENARIO` and the
//! revision in `MCP_CONFORMANCE_PROTOCOL_VERSION`): a peer over Streamable
//! HTTP that starts a session, lists the tools and calls what the scenario
//! wants, answering the server's questions (elicitation with each field's
//! default, sampling, roots).
//!
//! It speaks the session revisions; a scenario of the stateless revision
//! (2026-07-28) or of OAuth is refused with exit code 2, saying so.

use std::process::ExitCode;
use std::time::Duration;

use jsonrpc_runtime::transport::McpHttpConnector;
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router};
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
    if version.as_str() > "2025-11-25" || scenario.starts_with("auth/") {
        eprintln!(
            "mcp_conformance_client: `{scenario}` at {version} is not a scenario this client runs"
        );
        return ExitCode::from(2);
    }
    match run(&url, &scenario, &version).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp_conformance_client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(url: &str, scenario: &str, version: &str) -> Result<(), Box<dyn std::error::Error>> {
    let transport = McpHttpConnector::new(url).connect().await?;
    let client = Peer::builder()
        .config(Config::mcp_client())
        .router(answers())
        .spawn(transport);
    let _: Value = client
        .call(
            "initialize",
            json!({
                "protocolVersion": version,
                "capabilities": {
                    "elicitation": {"form": {"applyDefaults": true}},
                    "sampling": {},
                    "roots": {"listChanged": false},
                },
                "clientInfo": {"name": "jsonrpc-mcp-conformance-client", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
        .await?;
    client
        .notify("notifications/initialized", json!({}))
        .await?;
    let listed: Value = client.call("tools/list", json!({})).await?;
    let tools = listed["tools"].as_array().cloned().unwrap_or_default();
    for tool in &tools {
        let name = tool["name"].as_str().unwrap_or_default();
        let Some(arguments) = arguments_for(scenario, name, &tools) else {
            continue;
        };
        let result: Value = client
            .call("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        eprintln!("mcp_conformance_client: {name}: {result}");
    }
    client.close(Duration::from_secs(1)).await;
    Ok(())
}

/// The arguments to call `name` with in `scenario`, or `None` when the
/// scenario does not call it. `tools` is what the server listed.
fn arguments_for(scenario: &str, name: &str, tools: &[Value]) -> Option<Value> {
    match (scenario, name) {
        ("tools_call", "add_numbers") => Some(json!({"a": 2, "b": 3})),
        ("elicitation-sep1034-client-defaults", "test_client_elicitation_defaults")
        | ("sse-retry", "test_reconnection") => Some(json!({})),
        // The schema as it came, untouched.
        ("json-schema-2020-12-preservation", "json_schema_echo") => tools
            .iter()
            .find(|t| t["name"] == "json_schema_2020_12_tool")
            .map(|t| json!({"schema": t["inputSchema"]})),
        _ => None,
    }
}

/// What the client answers the server: a form filled in with each field's
/// default, a fixed sample, one root.
fn answers() -> Router {
    Router::new()
        .request(
            "elicitation/create",
            |params: Value, _: Context| async move {
                let mut content = Map::new();
                if let Some(fields) = params["requestedSchema"]["properties"].as_object() {
                    for (name, field) in fields {
                        if let Some(default) = field.get("default") {
                            content.insert(name.clone(), default.clone());
                        }
                    }
                }
                Ok::<_, ErrorObject>(json!({"action": "accept", "content": content}))
            },
        )
        .request("sampling/createMessage", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "A sampled answer."},
                "model": "jsonrpc-mcp-conformance-client",
                "stopReason": "endTurn",
            }))
        })
        .request("roots/list", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({"roots": [{"uri": "file:///tmp", "name": "tmp"}]}))
        })
}
