//! A tool asking its client (sampling, elicitation, roots), and
//! notifications to sessions (resource updates, list changes).

mod common;

use std::time::Duration;

use common::{code, initialize};
use jsonrpc_mcp::client_features::{CreateMessageParams, Elicitation};
use jsonrpc_mcp::resources::Resource;
use jsonrpc_mcp::types::{NoArguments, ResourceContents};
use jsonrpc_mcp::{McpServer, ToolContext, ToolError, MAX_SUBSCRIPTIONS};
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router, Transport};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

#[derive(Debug, Deserialize, JsonSchema)]
struct Contact {
    /// Their name.
    name: String,
    /// How old they are.
    age: u32,
}

fn server() -> McpServer {
    McpServer::new("asking", "1.0.0")
        .tool(
            "sample",
            "Asks the model.",
            |_: NoArguments, cx: ToolContext| async move {
                let answer = cx
                    .create_message(CreateMessageParams::user("Say hi", 20))
                    .await?;
                Ok::<_, ToolError>(format!("{} ({})", answer.text(), answer.model))
            },
        )
        .tool(
            "contact",
            "Asks the user who they are.",
            |_: NoArguments, cx: ToolContext| async move {
                Ok::<_, ToolError>(match cx.elicit::<Contact>("Who are you?").await? {
                    Elicitation::Accepted(c) => format!("{} is {}", c.name, c.age),
                    Elicitation::Declined => "declined".to_owned(),
                    Elicitation::Cancelled => "cancelled".to_owned(),
                })
            },
        )
        .tool(
            "roots",
            "Lists the client's roots.",
            |_: NoArguments, cx: ToolContext| async move {
                let roots = cx.list_roots().await?;
                Ok::<_, ToolError>(
                    roots
                        .iter()
                        .map(|r| r.uri.as_str())
                        .collect::<Vec<_>>()
                        .join(","),
                )
            },
        )
        .resource(
            Resource::new("test://watched", "watched"),
            |uri, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "w")]) },
        )
}

/// A client whose router answers the server's questions from `answers`
/// (`elicitation/create` gets the next one each time) and forwards every
/// notification it gets to the returned channel.
/// The server's peer is the third of the returned: the connection lives
/// while it does.
fn client_of(
    server: &McpServer,
    elicit: Vec<Value>,
) -> (Peer, mpsc::UnboundedReceiver<(String, Value)>, Peer) {
    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder()
        .config(Config::mcp())
        .router(server.router())
        .spawn(server_side);
    let (tx, rx) = mpsc::unbounded_channel();
    let elicit = std::sync::Arc::new(std::sync::Mutex::new(elicit.into_iter()));
    let mut router = Router::new()
        .request(
            "sampling/createMessage",
            |params: Value, _: Context| async move {
                assert_eq!(params["maxTokens"], 20);
                assert_eq!(params["messages"][0]["content"]["text"], "Say hi");
                Ok::<_, ErrorObject>(json!({
                    "role": "assistant",
                    "content": {"type": "text", "text": "hi"},
                    "model": "test-model"
                }))
            },
        )
        .request("elicitation/create", move |params: Value, _: Context| {
            let next = elicit.lock().unwrap().next();
            async move {
                let schema = &params["requestedSchema"];
                assert_eq!(schema["type"], "object");
                assert_eq!(schema["properties"]["age"]["type"], "integer", "{schema}");
                Ok::<_, ErrorObject>(next.expect("an answer for each elicitation"))
            }
        })
        .request("roots/list", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(
                json!({"roots": [{"uri": "file:///a"}, {"uri": "file:///b", "name": "b"}]}),
            )
        });
    for method in [
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
    ] {
        let tx = tx.clone();
        router = router.notification(method, move |params: Value, _: Context| {
            let _ = tx.send((method.to_owned(), params));
            async {}
        });
    }
    let client = Peer::builder()
        .config(Config::mcp_client())
        .router(router)
        .spawn(client_side);
    (client, rx, server)
}

async fn initialize_with(client: &Peer, capabilities: Value) {
    client
        .call::<Value>(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": {"name": "test", "version": "0"}
            }),
        )
        .await
        .expect("initialize");
}

async fn call_tool(client: &Peer, name: &str) -> Value {
    client
        .call::<Value>("tools/call", json!({"name": name}))
        .await
        .expect("tools/call")
}

#[tokio::test]
async fn a_tool_samples_elicits_and_lists_roots_when_the_client_declared_them() {
    let answers = vec![
        json!({"action": "accept", "content": {"name": "Ada", "age": 36}}),
        json!({"action": "decline"}),
        json!({"action": "accept", "content": {"name": "Ada", "age": "old"}}),
    ];
    let (client, _, _server) = client_of(&server(), answers);
    initialize_with(
        &client,
        json!({"sampling": {}, "elicitation": {}, "roots": {}}),
    )
    .await;
    let sampled = call_tool(&client, "sample").await;
    assert_eq!(
        sampled["content"][0]["text"], "hi (test-model)",
        "{sampled}"
    );
    let accepted = call_tool(&client, "contact").await;
    assert_eq!(accepted["content"][0]["text"], "Ada is 36", "{accepted}");
    let declined = call_tool(&client, "contact").await;
    assert_eq!(declined["content"][0]["text"], "declined");
    // Values that do not fit the form's type are the tool's error.
    let misfit = call_tool(&client, "contact").await;
    assert_eq!(misfit["isError"], true, "{misfit}");
    assert!(
        misfit["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("do not fit"),
        "{misfit}"
    );
    let roots = call_tool(&client, "roots").await;
    assert_eq!(roots["content"][0]["text"], "file:///a,file:///b");
}

#[tokio::test]
async fn asking_for_a_capability_the_client_did_not_declare_is_a_tool_error() {
    let (client, _, _server) = client_of(&server(), Vec::new());
    initialize_with(&client, json!({})).await;
    for (tool, capability) in [
        ("sample", "sampling"),
        ("contact", "elicitation"),
        ("roots", "roots"),
    ] {
        let result = call_tool(&client, tool).await;
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(&format!("`{capability}`")), "{text}");
    }
}

/// The next notification, within a generous bound.
async fn next(rx: &mut mpsc::UnboundedReceiver<(String, Value)>) -> (String, Value) {
    tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("a notification in time")
        .expect("the channel is open")
}

#[tokio::test]
async fn updates_reach_subscribed_sessions_and_list_changes_reach_all() {
    let server = server();
    let notifier = server.notifier();
    let (first, mut first_rx, _s1) = client_of(&server, Vec::new());
    let (second, mut second_rx, s2) = client_of(&server, Vec::new());
    initialize(&first, "2025-11-25").await;
    initialize(&second, "2025-11-25").await;

    let subscribe = json!({"uri": "test://watched"});
    first
        .call::<Value>("resources/subscribe", &subscribe)
        .await
        .unwrap();
    assert_eq!(notifier.resource_updated("test://watched").await, 1);
    let (method, params) = next(&mut first_rx).await;
    assert_eq!(method, "notifications/resources/updated");
    assert_eq!(params, subscribe);

    // A list change goes to both; the second never heard of the update.
    assert_eq!(notifier.tool_list_changed().await, 2);
    assert_eq!(
        next(&mut first_rx).await.0,
        "notifications/tools/list_changed"
    );
    assert_eq!(
        next(&mut second_rx).await.0,
        "notifications/tools/list_changed"
    );

    first
        .call::<Value>("resources/unsubscribe", &subscribe)
        .await
        .unwrap();
    assert_eq!(notifier.resource_updated("test://watched").await, 0);

    let unknown = first
        .call::<Value>("resources/subscribe", json!({"uri": "test://nothing"}))
        .await
        .unwrap_err();
    assert_eq!(code(unknown), -32002);

    // A session that ended is not told.
    second.close_now().await;
    tokio::time::timeout(Duration::from_secs(30), s2.closed())
        .await
        .expect("the server's side ends with the client's");
    assert_eq!(notifier.prompt_list_changed().await, 1);
    assert_eq!(
        next(&mut first_rx).await.0,
        "notifications/prompts/list_changed"
    );
}

#[tokio::test]
async fn a_session_has_a_cap_on_its_subscriptions() {
    let server = McpServer::new("many", "0").resource_template(
        jsonrpc_mcp::resources::ResourceTemplate::new("test://item/{n}", "item"),
        |uri, _, _| async move { Ok(vec![ResourceContents::text(uri, "text/plain", "")]) },
    );
    let (client, _, _server) = client_of(&server, Vec::new());
    initialize(&client, "2025-11-25").await;
    for n in 0..MAX_SUBSCRIPTIONS {
        client
            .call::<Value>(
                "resources/subscribe",
                json!({"uri": format!("test://item/{n}")}),
            )
            .await
            .unwrap();
    }
    // Subscribing again to one it has is fine; one more is not.
    client
        .call::<Value>("resources/subscribe", json!({"uri": "test://item/0"}))
        .await
        .unwrap();
    let refused = client
        .call::<Value>("resources/subscribe", json!({"uri": "test://item/x"}))
        .await
        .unwrap_err();
    assert_eq!(code(refused), -32602);
}
