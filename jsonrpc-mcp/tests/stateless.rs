//! The stateless revision (2026-07-28) on a connection with no
//! `initialize`: each request's `_meta`, `server/discover`, result
//! markings, the session-only methods refused, and multi-round requests.

mod common;

use common::{code, connect};
use jsonrpc_mcp::client_features::ElicitParams;
use jsonrpc_mcp::resources::Resource;
use jsonrpc_mcp::types::{LogLevel, NoArguments, ResourceContents};
use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::{CallError, Config, Context, Peer, Router, Transport};
use serde_json::{json, Value};
use tokio::sync::mpsc;

fn server() -> McpServer {
    McpServer::new("stateless", "2.0.0")
        .instructions("Ask away.")
        .request_state_key([42; 32])
        .tool(
            "greet",
            "Asks for a name, then greets.",
            |_: NoArguments, cx: ToolContext| async move {
                let form = ElicitParams {
                    message: "Name?".to_owned(),
                    requested_schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                };
                let name = cx.input("who").elicit_with(form).await?;
                let then = cx.input("then").list_roots().await?;
                Ok::<_, ToolError>(format!(
                    "Hello, {}! ({} roots)",
                    name.content.unwrap_or_default()["name"].as_str().unwrap_or("?"),
                    then.len()
                ))
            },
        )
        .tool(
            "logs",
            "Logs its tag once, as a warning.",
            |args: Tag, cx: ToolContext| async move {
                cx.log(LogLevel::Warning, None, args.tag)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok::<_, ToolError>(format!("stateless: {}", cx.is_stateless()))
            },
        )
        .resource(Resource::new("test://a", "a"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "a")])
        })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Tag {
    /// What to log.
    tag: String,
}

/// `_meta` of a stateless request declaring `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    })
}

async fn call(client: &Peer, method: &str, mut params: Value) -> Result<Value, CallError> {
    if params.get("_meta").is_none() {
        params["_meta"] = meta(json!({"elicitation": {}, "roots": {}}));
    }
    client.call::<Value>(method, params).await
}

#[tokio::test]
async fn discover_says_the_revisions_the_capabilities_and_who_the_server_is() {
    let (client, _server) = connect(&server());
    let found = call(&client, "server/discover", json!({})).await.unwrap();
    assert_eq!(found["supportedVersions"], json!(["2026-07-28"]));
    // Changes reach a stateless client on `subscriptions/listen`.
    assert_eq!(
        found["capabilities"],
        json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true}})
    );
    assert_eq!(
        found["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "stateless", "version": "2.0.0"})
    );
    assert_eq!(found["instructions"], "Ask away.");
    assert_eq!(found["resultType"], "complete");
    assert_eq!(found["ttlMs"], 0);
    assert_eq!(found["cacheScope"], "private");

    // Without `_meta`, or its keys, or with a revision it does not speak.
    let bare = client
        .call::<Value>("server/discover", json!({}))
        .await
        .unwrap_err();
    assert_eq!(code(bare), -32602);
    let no_capabilities =
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
    let refused = call(&client, "server/discover", no_capabilities)
        .await
        .unwrap_err();
    assert_eq!(code(refused), -32602);
    let mut future = meta(json!({}));
    future["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    match call(&client, "server/discover", json!({"_meta": future})).await {
        Err(CallError::Rpc(error)) => {
            assert_eq!(error.code.0, -32022);
            let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
            assert_eq!(
                data,
                json!({"supported": ["2026-07-28"], "requested": "v999.0.0"})
            );
        }
        other => panic!("expected -32022, got {other:?}"),
    }
}

#[tokio::test]
async fn requests_need_no_initialize_and_results_say_their_type() {
    let (client, _server) = connect(&server());
    let listed = call(&client, "tools/list", json!({})).await.unwrap();
    assert_eq!(listed["tools"][0]["name"], "greet");
    assert_eq!(listed["resultType"], "complete");
    assert_eq!(listed["cacheScope"], "private");
    let read = call(&client, "resources/read", json!({"uri": "test://a"}))
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "a");
    assert_eq!(read["ttlMs"], 0);
    match call(&client, "resources/read", json!({"uri": "test://none"})).await {
        Err(CallError::Rpc(error)) => {
            assert_eq!(error.code.0, -32602, "SEP-2164");
            let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
            assert_eq!(data["uri"], "test://none");
        }
        other => panic!("expected -32602, got {other:?}"),
    }
    for method in ["initialize", "logging/setLevel", "resources/subscribe"] {
        let refused = call(&client, method, json!({"uri": "test://a", "level": "info"}))
            .await
            .unwrap_err();
        assert_eq!(code(refused), -32601, "{method}");
    }
    // A session's request on the same connection still needs `initialize`.
    let gated = client
        .call::<Value>("tools/list", json!({}))
        .await
        .unwrap_err();
    assert_eq!(code(gated), -32002);
}

#[tokio::test]
async fn a_question_to_the_client_takes_rounds_whose_answers_the_state_keeps() {
    let (client, _server) = connect(&server());
    let first = call(&client, "tools/call", json!({"name": "greet"}))
        .await
        .unwrap();
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(
        first["inputRequests"]["who"]["method"],
        "elicitation/create"
    );
    assert_eq!(first["inputRequests"]["who"]["params"]["message"], "Name?");
    let state = first["requestState"].as_str().unwrap().to_owned();

    // The first answer; the second question comes, the first is kept.
    let answer = json!({"who": {"action": "accept", "content": {"name": "Ada"}}});
    let second = call(
        &client,
        "tools/call",
        json!({"name": "greet", "inputResponses": answer, "requestState": state}),
    )
    .await
    .unwrap();
    assert_eq!(second["resultType"], "input_required", "{second}");
    assert_eq!(second["inputRequests"]["then"]["method"], "roots/list");
    assert!(second["inputRequests"].get("who").is_none());
    let state2 = second["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state, state2);

    let roots = json!({"then": {"roots": [{"uri": "file:///r"}]}});
    let done = call(
        &client,
        "tools/call",
        json!({"name": "greet", "inputResponses": roots, "requestState": state2}),
    )
    .await
    .unwrap();
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["content"][0]["text"], "Hello, Ada! (1 roots)");

    // A changed state, a state of another tool, an answer of the wrong kind.
    let tampered = call(
        &client,
        "tools/call",
        json!({"name": "greet", "inputResponses": roots, "requestState": format!("{state2}x")}),
    )
    .await
    .unwrap_err();
    assert_eq!(code(tampered), -32602);
    let moved = call(
        &client,
        "tools/call",
        json!({"name": "logs", "arguments": {"tag": "x"}, "requestState": state2}),
    )
    .await
    .unwrap_err();
    assert_eq!(code(moved), -32602);
    let wrong = call(
        &client,
        "tools/call",
        json!({"name": "greet", "inputResponses": {"who": 12345}}),
    )
    .await
    .unwrap_err();
    assert_eq!(code(wrong), -32602);
}

#[tokio::test]
async fn a_capability_the_request_did_not_declare_is_named_in_32021() {
    let (client, _server) = connect(&server());
    let params = json!({"name": "greet", "_meta": meta(json!({}))});
    match call(&client, "tools/call", params).await {
        Err(CallError::Rpc(error)) => {
            assert_eq!(error.code.0, -32021);
            let data: Value = serde_json::from_str(error.data.unwrap().get()).unwrap();
            assert_eq!(data, json!({"requiredCapabilities": {"elicitation": {}}}));
        }
        other => panic!("expected -32021, got {other:?}"),
    }
}

#[tokio::test]
async fn log_messages_go_only_to_a_request_that_asks_for_them() {
    let (client_side, server_side) = Transport::pair(64);
    let _server = Peer::builder()
        .config(Config::mcp())
        .router(server().router())
        .spawn(server_side);
    let (tx, mut logged) = mpsc::unbounded_channel();
    let router =
        Router::new().notification("notifications/message", move |params: Value, _: Context| {
            let _ = tx.send(params);
            async {}
        });
    let client = Peer::builder()
        .config(Config::mcp_client())
        .router(router)
        .spawn(client_side);
    let with_level = |level: Option<&str>| {
        let mut meta = meta(json!({}));
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        json!({"name": "logs", "arguments": {"tag": level.unwrap_or("none")}, "_meta": meta})
    };
    // No level asked for, and `error` (more severe than the `warning`
    // logged): nothing. Then `info`: the message.
    for level in [None, Some("error"), Some("info")] {
        let done = call(&client, "tools/call", with_level(level))
            .await
            .unwrap();
        assert_eq!(done["content"][0]["text"], "stateless: true");
    }
    // The client handles notifications in the order they came: the first
    // it gets is the `info` request's, or the others were sent.
    let message = tokio::time::timeout(std::time::Duration::from_secs(30), logged.recv())
        .await
        .expect("the `info` request's message in time")
        .unwrap();
    assert_eq!(message["level"], "warning");
    assert_eq!(message["data"], "info");
}
