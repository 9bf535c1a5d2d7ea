//! The MCP server layer over an in-memory connection, each side on the MCP
//! preset, as the wire carries it: negotiation, tool listing with schemas
//! and pages, calls, tool errors and protocol errors, structured results
//! and content types, and what a tool sees of its session.

use jsonrpc_mcp::types::{CallToolResult, Content, LogLevel, ResourceContents, ToolAnnotations};
use jsonrpc_mcp::{Json, McpServer, ToolContext, ToolError, ToolInfo, PROTOCOL_VERSIONS};
use jsonrpc_runtime::{CallError, Config, Context, ErrorObject, Peer, Router, Transport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

mod common;
use common::{code, connect, initialize};

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
struct NoArgs {}

#[derive(Serialize, JsonSchema)]
struct Sum {
    /// The sum.
    sum: i64,
}

fn server() -> McpServer {
    McpServer::new("test-server", "1.2.3")
        .title("Test server")
        .instructions("Adds numbers.")
        .tool(
            "add",
            "Adds two numbers.",
            |args: AddArgs, _: ToolContext| async move {
                Ok::<_, ToolError>(format!("{}", args.a + args.b))
            },
        )
        .tool_with(
            ToolInfo::new("add_structured")
                .title("Add, structured")
                .description("Adds two numbers; the sum as structured content.")
                .annotations(ToolAnnotations {
                    read_only_hint: Some(true),
                    ..ToolAnnotations::default()
                }),
            |args: AddArgs, _: ToolContext| async move {
                Ok::<_, ToolError>(Json(Sum {
                    sum: args.a + args.b,
                }))
            },
        )
        .tool(
            "fail",
            "Always fails.",
            |_: NoArgs, _: ToolContext| async move {
                Err::<String, _>(ToolError::new("it failed, as it always does"))
            },
        )
        .tool(
            "refuse",
            "A protocol error.",
            |_: NoArgs, _: ToolContext| async move {
                Err::<String, _>(ToolError::protocol(ErrorObject::new(-32010, "refused")))
            },
        )
        .tool(
            "media",
            "Every kind of content.",
            |_: NoArgs, _: ToolContext| async move {
                Ok::<_, ToolError>(vec![
                    Content::text("a text"),
                    Content::image("iVBORw0KGgo=", "image/png"),
                    Content::audio("UklGRg==", "audio/wav"),
                    Content::resource_link("file:///readme.md", "readme"),
                    Content::resource(ResourceContents::text(
                        "file:///notes.txt",
                        "text/plain",
                        "notes",
                    )),
                ])
            },
        )
        .tool(
            "chatty",
            "Logs at two levels.",
            |_: NoArgs, cx: ToolContext| async move {
                let failed = |e: jsonrpc_runtime::peer::SendError| ToolError::new(e.to_string());
                cx.log(LogLevel::Debug, Some("chatty"), "a detail")
                    .await
                    .map_err(failed)?;
                cx.log(LogLevel::Warning, None, json!({"disk": "full"}))
                    .await
                    .map_err(failed)?;
                Ok::<_, ToolError>("logged")
            },
        )
        .tool(
            "whoami",
            "The session as the tool sees it.",
            |_: NoArgs, cx: ToolContext| async move {
                let roots = cx.client_capabilities().is_some_and(|c| c.roots.is_some());
                let client = cx.client_info().map(|c| c.name.clone()).unwrap_or_default();
                Ok::<_, ToolError>(format!(
                    "{} {} roots={roots} id={}",
                    cx.protocol_version(),
                    client,
                    cx.id().is_some()
                ))
            },
        )
}

async fn call(client: &Peer, name: &str, arguments: Value) -> Result<Value, CallError> {
    client
        .call("tools/call", json!({"name": name, "arguments": arguments}))
        .await
}

#[tokio::test]
async fn initialize_answers_each_known_revision_and_the_newest_for_another() {
    let server = server();
    for asked in PROTOCOL_VERSIONS
        .iter()
        .copied()
        .chain(["2099-01-01", "1.0"])
    {
        let (client, _server) = connect(&server);
        let init = initialize(&client, asked).await;
        let answered = if PROTOCOL_VERSIONS.contains(&asked) {
            asked
        } else {
            "2025-11-25"
        };
        assert_eq!(init["protocolVersion"], answered, "asked {asked}: {init}");
        assert_eq!(
            init["serverInfo"],
            json!({"name": "test-server", "title": "Test server", "version": "1.2.3"})
        );
        assert_eq!(init["instructions"], "Adds numbers.");
        assert_eq!(
            init["capabilities"],
            json!({"tools": {"listChanged": true}, "logging": {}})
        );
    }
}

#[tokio::test]
async fn a_call_before_initialize_is_refused_and_ping_is_answered() {
    let (client, _server) = connect(&server());
    let refused = call(&client, "add", json!({"a": 1, "b": 2}))
        .await
        .unwrap_err();
    assert_eq!(code(refused), -32002);
    let pong: Value = client.call("ping", ()).await.unwrap();
    assert_eq!(pong, json!({}));
}

#[tokio::test]
async fn tools_list_describes_each_tool_with_its_schemas() {
    let (client, _server) = connect(&server());
    initialize(&client, "2025-11-25").await;
    let list: Value = client.call("tools/list", json!({})).await.unwrap();
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "add",
            "add_structured",
            "fail",
            "refuse",
            "media",
            "chatty",
            "whoami"
        ]
    );
    assert!(list.get("nextCursor").is_none(), "{list}");

    let add = &tools[0];
    assert_eq!(add["description"], "Adds two numbers.");
    let schema = &add["inputSchema"];
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(
        schema["properties"]["a"]["description"],
        "The first number."
    );
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert!(schema.get("$schema").is_none(), "{schema}");
    assert!(add.get("outputSchema").is_none(), "{add}");

    let structured = &tools[1];
    assert_eq!(structured["title"], "Add, structured");
    assert_eq!(structured["annotations"], json!({"readOnlyHint": true}));
    assert_eq!(structured["outputSchema"]["type"], "object");
    assert_eq!(structured["outputSchema"]["required"], json!(["sum"]));

    assert_eq!(tools[2]["inputSchema"]["type"], "object", "{}", tools[2]);
}

#[tokio::test]
async fn tools_list_pages_follow_the_cursor_to_the_end() {
    let server = server().page_size(4);
    let (client, _server) = connect(&server);
    initialize(&client, "2025-11-25").await;
    let first: Value = client.call("tools/list", ()).await.unwrap();
    assert_eq!(first["tools"].as_array().unwrap().len(), 4);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_owned();
    let second: Value = client
        .call("tools/list", json!({"cursor": cursor}))
        .await
        .unwrap();
    let names: Vec<&str> = second["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["media", "chatty", "whoami"]);
    assert!(second.get("nextCursor").is_none(), "{second}");

    for bad in ["x", "-1", "99"] {
        let refused = client
            .call::<Value>("tools/list", json!({"cursor": bad}))
            .await
            .unwrap_err();
        assert_eq!(code(refused), -32602, "cursor {bad}");
    }
}

#[tokio::test]
async fn tools_call_answers_results_tool_errors_and_protocol_errors() {
    let (client, _server) = connect(&server());
    initialize(&client, "2025-11-25").await;
    let sum = call(&client, "add", json!({"a": 2, "b": 3})).await.unwrap();
    assert_eq!(
        sum,
        json!({"content": [{"type": "text", "text": "5"}], "isError": false})
    );

    let structured = call(&client, "add_structured", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(structured["structuredContent"], json!({"sum": 5}));
    assert_eq!(structured["content"][0]["text"], r#"{"sum":5}"#);

    let failed = call(&client, "fail", json!({})).await.unwrap();
    assert_eq!(failed["isError"], true);
    assert_eq!(failed["content"][0]["text"], "it failed, as it always does");

    let refused = call(&client, "refuse", json!({})).await.unwrap_err();
    assert_eq!(code(refused), -32010);

    let unknown = call(&client, "nope", json!({})).await.unwrap_err();
    assert_eq!(code(unknown), -32602);

    // No `arguments` at all is an empty object.
    let bare: Value = client
        .call("tools/call", json!({"name": "fail"}))
        .await
        .unwrap();
    assert_eq!(bare["isError"], true);
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_a_tool_error_from_2025_11_25_and_invalid_params_before() {
    let server = server();
    let (client, _server) = connect(&server);
    initialize(&client, "2025-11-25").await;
    let result = call(&client, "add", json!({"a": "two"})).await.unwrap();
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("invalid arguments for `add`"), "{text}");

    for older in ["2025-06-18", "2025-03-26", "2024-11-05"] {
        let (client, _server) = connect(&server);
        initialize(&client, older).await;
        let refused = call(&client, "add", json!({"a": "two"})).await.unwrap_err();
        assert_eq!(code(refused), -32602, "{older}");
    }
}

#[tokio::test]
async fn every_kind_of_content_is_written_as_the_specification_names_it() {
    let (client, _server) = connect(&server());
    initialize(&client, "2025-11-25").await;
    let media = call(&client, "media", json!({})).await.unwrap();
    assert_eq!(
        media["content"],
        json!([
            {"type": "text", "text": "a text"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///readme.md", "name": "readme"},
            {"type": "resource", "resource": {"uri": "file:///notes.txt", "mimeType": "text/plain", "text": "notes"}}
        ])
    );
    // And they read back.
    let read: CallToolResult = serde_json::from_value(media).unwrap();
    assert_eq!(read.content.len(), 5);
}

#[tokio::test]
async fn a_tool_sees_its_own_sessions_negotiation() {
    let server = server();
    let (old, _old_server) = connect(&server);
    let (new, _new_server) = connect(&server);
    initialize(&old, "2025-03-26").await;
    initialize(&new, "2025-11-25").await;
    let seen = |v: Value| v["content"][0]["text"].as_str().unwrap().to_owned();
    assert_eq!(
        seen(call(&old, "whoami", json!({})).await.unwrap()),
        "2025-03-26 test-client roots=true id=true"
    );
    assert_eq!(
        seen(call(&new, "whoami", json!({})).await.unwrap()),
        "2025-11-25 test-client roots=true id=true"
    );
}

#[test]
#[should_panic(expected = "already has a tool named `add`")]
fn a_second_tool_of_one_name_is_refused() {
    let _ = server().tool("add", "Again.", |_: NoArgs, _: ToolContext| async move {
        Ok::<_, ToolError>("again")
    });
}

#[tokio::test]
async fn log_messages_reach_the_client_at_the_level_it_set() {
    let (messages_tx, mut messages) = tokio::sync::mpsc::unbounded_channel::<Value>();
    let (client_side, server_side) = Transport::pair(64);
    let _server = Peer::builder()
        .config(Config::mcp())
        .router(server().router())
        .spawn(server_side);
    let client_routes =
        Router::new().notification("notifications/message", move |params: Value, _: Context| {
            let _ = messages_tx.send(params);
            async {}
        });
    let client = Peer::builder()
        .config(Config::mcp_client())
        .router(client_routes)
        .spawn(client_side);
    initialize(&client, "2025-11-25").await;

    // Every level until the client says.
    call(&client, "chatty", json!({})).await.unwrap();
    assert_eq!(
        next(&mut messages).await,
        json!({"level": "debug", "logger": "chatty", "data": "a detail"})
    );
    assert_eq!(
        next(&mut messages).await,
        json!({"level": "warning", "data": {"disk": "full"}})
    );

    let set: Value = client
        .call("logging/setLevel", json!({"level": "info"}))
        .await
        .unwrap();
    assert_eq!(set, json!({}));
    call(&client, "chatty", json!({})).await.unwrap();
    assert_eq!(next(&mut messages).await["level"], "warning");
    // The debug message was not sent: the next one is from the next call.
    call(&client, "chatty", json!({})).await.unwrap();
    assert_eq!(next(&mut messages).await["level"], "warning");

    let refused = client
        .call::<Value>("logging/setLevel", json!({"level": "loud"}))
        .await
        .unwrap_err();
    assert_eq!(code(refused), -32602);
}

/// The next log message the client got; a hang is a failure, not a wait.
async fn next(messages: &mut tokio::sync::mpsc::UnboundedReceiver<Value>) -> Value {
    tokio::time::timeout(std::time::Duration::from_secs(30), messages.recv())
        .await
        .expect("a log message within 30 s")
        .expect("the client is running")
}
