//! Resources (fixed and templated) and prompts over an in-memory
//! connection on the MCP preset: listing with pages, reading, the
//! not-found error, prompt arguments from a struct, and capabilities
//! declared only for what the server has.

use jsonrpc_mcp::prompts::PromptMessage;
use jsonrpc_mcp::resources::{Resource, ResourceTemplate, RESOURCE_NOT_FOUND};
use jsonrpc_mcp::types::ResourceContents;
use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::{CallError, Peer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

mod common;
use common::{code, connect, initialize};

#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
    /// What to look for.
    focus: Option<String>,
}

fn server() -> McpServer {
    McpServer::new("library", "1.0.0")
        .page_size(2)
        .resource(
            Resource::new("test://static/readme", "readme")
                .description("The read-me.")
                .mime_type("text/plain"),
            |uri: String, _: ToolContext| async move {
                Ok(vec![ResourceContents::text(
                    uri.as_str(),
                    "text/plain",
                    "read me",
                )])
            },
        )
        .resource(
            Resource::new("test://static/broken", "broken"),
            |_: String, _: ToolContext| async move {
                Err::<Vec<ResourceContents>, _>(ToolError::new("the disk is gone"))
            },
        )
        .resource(
            Resource::new("test://static/logo", "logo").mime_type("image/png"),
            |uri: String, _: ToolContext| async move {
                Ok(vec![ResourceContents::blob(
                    uri,
                    "image/png",
                    "iVBORw0KGgo=",
                )])
            },
        )
        .resource_template(
            ResourceTemplate::new("test://users/{id}/posts/{post}", "post").mime_type("text/plain"),
            |uri: String, vars, _: ToolContext| async move {
                let text = format!("post {} of user {}", vars["post"], vars["id"]);
                Ok(vec![ResourceContents::text(uri, "text/plain", text)])
            },
        )
        .prompt(
            "review",
            "Asks for a review of some code.",
            |args: ReviewArgs, _: ToolContext| async move {
                let focus = args.focus.unwrap_or_else(|| "anything".to_owned());
                Ok(vec![
                    PromptMessage::user(format!(
                        "Review this, looking for {focus}:\n{}",
                        args.code
                    )),
                    PromptMessage::assistant("I will."),
                ])
            },
        )
        .complete_prompt_argument(
            "review",
            "focus",
            |typed: String, given, _: ToolContext| async move {
                // Completions may depend on the other arguments.
                let code = given.get("code").cloned().unwrap_or_default();
                let mut topics = vec!["bugs".to_owned(), "bounds".to_owned(), "style".to_owned()];
                if code.contains("unsafe") {
                    topics.insert(0, "soundness".to_owned());
                }
                Ok(topics
                    .into_iter()
                    .filter(|t| t.starts_with(&typed))
                    .collect())
            },
        )
        .complete_template_variable(
            "test://users/{id}/posts/{post}",
            "id",
            |typed: String, _, _: ToolContext| async move {
                Ok((0..250)
                    .map(|n| n.to_string())
                    .filter(|id| id.starts_with(&typed))
                    .collect())
            },
        )
}

/// A session of `server`, initialized on 2025-11-25.
async fn session(server: &McpServer) -> (Peer, Peer) {
    let (client, server) = connect(server);
    let init = initialize(&client, "2025-11-25").await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    (client, server)
}

#[tokio::test]
async fn capabilities_name_resources_and_prompts_only_when_there_are_some() {
    let (client, _server) = connect(&server());
    let init = initialize(&client, "2025-11-25").await;
    assert_eq!(
        init["capabilities"],
        json!({
            "tools": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "prompts": {"listChanged": true},
            "completions": {},
            "logging": {}
        })
    );

    let bare = McpServer::new("bare", "0");
    let (client, _server) = session(&bare).await;
    for method in [
        "resources/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    ] {
        let refused = client.call::<Value>(method, json!({})).await.unwrap_err();
        assert_eq!(code(refused), -32601, "{method}");
    }
}

#[tokio::test]
async fn resources_list_in_pages_and_templates_list() {
    let (client, _server) = session(&server()).await;
    let first: Value = client.call("resources/list", json!({})).await.unwrap();
    assert_eq!(
        first["resources"][0],
        json!({"uri": "test://static/readme", "name": "readme", "description": "The read-me.", "mimeType": "text/plain"})
    );
    assert_eq!(first["resources"].as_array().unwrap().len(), 2);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second: Value = client
        .call("resources/list", json!({"cursor": cursor}))
        .await
        .unwrap();
    assert_eq!(second["resources"][0]["uri"], "test://static/logo");
    assert!(second.get("nextCursor").is_none(), "{second}");

    let templates: Value = client
        .call("resources/templates/list", json!({}))
        .await
        .unwrap();
    assert_eq!(
        templates,
        json!({"resourceTemplates": [{"uriTemplate": "test://users/{id}/posts/{post}", "name": "post", "mimeType": "text/plain"}]})
    );
}

#[tokio::test]
async fn resources_read_fixed_and_templated_and_not_found() {
    let (client, _server) = session(&server()).await;
    let readme: Value = client
        .call("resources/read", json!({"uri": "test://static/readme"}))
        .await
        .unwrap();
    assert_eq!(
        readme,
        json!({"contents": [{"uri": "test://static/readme", "mimeType": "text/plain", "text": "read me"}]})
    );
    let logo: Value = client
        .call("resources/read", json!({"uri": "test://static/logo"}))
        .await
        .unwrap();
    assert_eq!(logo["contents"][0]["blob"], "iVBORw0KGgo=");

    let post: Value = client
        .call("resources/read", json!({"uri": "test://users/42/posts/7"}))
        .await
        .unwrap();
    assert_eq!(post["contents"][0]["text"], "post 7 of user 42");
    assert_eq!(post["contents"][0]["uri"], "test://users/42/posts/7");

    for missing in [
        "test://static/nope",
        "test://users/42/posts/",
        "test://users/42",
    ] {
        let refused = client
            .call::<Value>("resources/read", json!({"uri": missing}))
            .await
            .unwrap_err();
        let CallError::Rpc(error) = refused else {
            panic!("expected an error answer for {missing}");
        };
        assert_eq!(error.code.0, RESOURCE_NOT_FOUND, "{missing}");
        assert_eq!(
            error.data_as::<Value>().unwrap(),
            Some(json!({"uri": missing}))
        );
    }

    let broken = client
        .call::<Value>("resources/read", json!({"uri": "test://static/broken"}))
        .await
        .unwrap_err();
    assert_eq!(code(broken), -32603);
}

#[tokio::test]
async fn prompts_list_their_arguments_and_get_fills_them_in() {
    let (client, _server) = session(&server()).await;
    let list: Value = client.call("prompts/list", ()).await.unwrap();
    assert_eq!(
        list,
        json!({"prompts": [{
            "name": "review",
            "description": "Asks for a review of some code.",
            "arguments": [
                {"name": "code", "description": "The code to review.", "required": true},
                {"name": "focus", "description": "What to look for.", "required": false}
            ]
        }]})
    );

    let got: Value = client
        .call(
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "x = 1", "focus": "bugs"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        got,
        json!({
            "description": "Asks for a review of some code.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Review this, looking for bugs:\nx = 1"}},
                {"role": "assistant", "content": {"type": "text", "text": "I will."}}
            ]
        })
    );
    let optional_left_out: Value = client
        .call(
            "prompts/get",
            json!({"name": "review", "arguments": {"code": "y"}}),
        )
        .await
        .unwrap();
    assert_eq!(
        optional_left_out["messages"][0]["content"]["text"],
        "Review this, looking for anything:\ny"
    );

    let missing = client
        .call::<Value>("prompts/get", json!({"name": "review", "arguments": {}}))
        .await
        .unwrap_err();
    assert_eq!(code(missing), -32602);
    let unknown = client
        .call::<Value>("prompts/get", json!({"name": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(code(unknown), -32602);
}

#[test]
#[should_panic(expected = "is not a URI template")]
fn a_template_with_an_operator_is_refused() {
    let _ = McpServer::new("s", "0").resource_template(
        ResourceTemplate::new("file:///{+path}", "files"),
        |_: String, _, _: ToolContext| async move { Ok(Vec::new()) },
    );
}

#[tokio::test]
async fn completion_suggests_from_the_completer_of_each_argument() {
    let (client, _server) = session(&server()).await;
    let complete = |reference: Value, name: &str, value: &str, context: Value| {
        client.call::<Value>(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": name, "value": value}, "context": {"arguments": context}}),
        )
    };
    let focus = complete(
        json!({"type": "ref/prompt", "name": "review"}),
        "focus",
        "b",
        json!({}),
    )
    .await
    .unwrap();
    assert_eq!(
        focus,
        json!({"completion": {"values": ["bugs", "bounds"], "hasMore": false}})
    );
    let given = complete(
        json!({"type": "ref/prompt", "name": "review"}),
        "focus",
        "",
        json!({"code": "unsafe { x }"}),
    )
    .await
    .unwrap();
    assert_eq!(given["completion"]["values"][0], "soundness", "{given}");

    let template = json!({"type": "ref/resource", "uri": "test://users/{id}/posts/{post}"});
    let ids = complete(template.clone(), "id", "", json!({}))
        .await
        .unwrap();
    assert_eq!(ids["completion"]["values"].as_array().unwrap().len(), 100);
    assert_eq!(ids["completion"]["total"], 250);
    assert_eq!(ids["completion"]["hasMore"], true);
    let twos = complete(template.clone(), "id", "24", json!({}))
        .await
        .unwrap();
    assert_eq!(
        twos["completion"]["values"],
        json!(["24", "240", "241", "242", "243", "244", "245", "246", "247", "248", "249"])
    );
    // An argument with no completer: no suggestions.
    let none = complete(template, "post", "1", json!({})).await.unwrap();
    assert_eq!(
        none,
        json!({"completion": {"values": [], "hasMore": false}})
    );

    for unknown in [
        json!({"type": "ref/prompt", "name": "nope"}),
        json!({"type": "ref/resource", "uri": "test://nope/{x}"}),
    ] {
        let refused = complete(unknown.clone(), "x", "", json!({}))
            .await
            .unwrap_err();
        assert_eq!(code(refused), -32602, "{unknown}");
    }
}
