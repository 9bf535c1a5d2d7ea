//! The typed client against the layer's server, on a session revision and
//! on the stateless one: the same calls give the same results, and the
//! server's questions (sampling, elicitation, roots) are answered by the
//! client's callbacks as calls on a session and as multi-round requests
//! on the stateless revision.

mod common;

use std::sync::{Arc, Mutex};

use common::code;
use jsonrpc_mcp::client::{ClientError, McpClient, McpClientBuilder, MAX_ROUNDS};
use jsonrpc_mcp::client_features::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitResult, Elicitation, Root,
};
use jsonrpc_mcp::prompts::Role;
use jsonrpc_mcp::resources::Resource;
use jsonrpc_mcp::types::{Content, LogLevel, NoArguments, ResourceContents};
use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::{CallError, Config, Context, ErrorObject, Peer, Router, Transport};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

const SESSION: &str = "2025-11-25";
const STATELESS: &str = "2026-07-28";

#[derive(Deserialize, JsonSchema)]
struct Add {
    a: i64,
    b: i64,
}

#[derive(Deserialize, JsonSchema)]
struct Contact {
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    name: String,
}

fn server() -> McpServer {
    McpServer::new("everything", "1.0.0")
        .tool("add", "Adds.", |args: Add, _: ToolContext| async move {
            Ok::<_, ToolError>((args.a + args.b).to_string())
        })
        .tool(
            "ask_all",
            "Asks the model, the user and the roots.",
            |_: NoArguments, cx: ToolContext| async move {
                let sampled = cx
                    .create_message(CreateMessageParams::user("hi", 10))
                    .await?;
                let who = match cx.elicit::<Contact>("Who?").await? {
                    Elicitation::Accepted(c) => c.name,
                    _ => "nobody".to_owned(),
                };
                let roots = cx.list_roots().await?;
                Ok::<_, ToolError>(format!("{} / {who} / {}", sampled.text(), roots[0].uri))
            },
        )
        .tool(
            "sample",
            "Asks the model only.",
            |_: NoArguments, cx: ToolContext| async move {
                Ok::<_, ToolError>(
                    cx.create_message(CreateMessageParams::user("hi", 10))
                        .await?
                        .text(),
                )
            },
        )
        .tool(
            "chatty",
            "Logs, then answers.",
            |_: NoArguments, cx: ToolContext| async move {
                cx.log(LogLevel::Warning, None, "careful").await.ok();
                Ok::<_, ToolError>("done")
            },
        )
        .resource(Resource::new("test://a", "a"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "A")])
        })
        .prompt(
            "greet",
            "Greets.",
            |args: Greeting, _: ToolContext| async move {
                Ok(vec![jsonrpc_mcp::prompts::PromptMessage::user_content(
                    Content::text(format!("Hello, {}", args.name)),
                )])
            },
        )
        .page_size(1)
}

/// A client that answers everything, of `revision`.
fn answering(revision: &str) -> McpClientBuilder {
    McpClient::builder("test-client", "0.1")
        .protocol_version(revision)
        .on_sampling(|params: CreateMessageParams| async move {
            assert_eq!(params.messages.len(), 1);
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: vec![Content::text("sampled")],
                model: "m".into(),
                stop_reason: None,
            })
        })
        .on_elicitation(|_| async {
            Ok(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(json!({"name": "Ada"}).as_object().unwrap().clone()),
            })
        })
        .roots([Root {
            uri: "file:///work".into(),
            name: None,
        }])
}

/// `builder` started against a fresh connection to `routes`; the server's
/// peer lives as long as the returned one.
async fn start(
    builder: McpClientBuilder,
    routes: Router,
) -> (Result<McpClient, ClientError>, Peer) {
    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder()
        .config(Config::mcp())
        .router(routes)
        .spawn(server_side);
    (builder.connect(client_side).await, server)
}

#[tokio::test]
async fn the_same_calls_give_the_same_results_on_both_kinds_of_revision() {
    let mut seen = Vec::new();
    for revision in [SESSION, STATELESS] {
        let (client, _server) = start(answering(revision), server().router()).await;
        let client = client.unwrap();
        assert_eq!(client.protocol_version(), revision);
        assert_eq!(client.is_stateless(), revision == STATELESS);
        assert_eq!(client.server().server_info.name, "everything");
        // One item a page: the client follows every cursor.
        let tools: Vec<String> = client
            .list_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        let sum = client
            .call_tool("add", json!({"a": 2, "b": 3}))
            .await
            .unwrap();
        let asked = client.call_tool("ask_all", json!({})).await.unwrap();
        let read = client.read_resource("test://a").await.unwrap();
        let prompt = client
            .get_prompt("greet", json!({"name": "Bo"}))
            .await
            .unwrap();
        let resources = client.list_resources().await.unwrap().len();
        let prompts = client.list_prompts().await.unwrap().len();
        let unknown = client.call_tool("nope", json!({})).await.unwrap_err();
        let ClientError::Call(unknown) = unknown else {
            panic!("{unknown:?}")
        };
        seen.push((
            tools,
            sum.first_text().map(str::to_owned),
            asked.first_text().map(str::to_owned),
            serde_json::to_value(read).unwrap(),
            serde_json::to_value(prompt.messages).unwrap(),
            resources,
            prompts,
            code(unknown),
        ));
    }
    assert_eq!(seen[0].0, ["add", "ask_all", "sample", "chatty"]);
    assert_eq!(seen[0].1.as_deref(), Some("5"));
    assert_eq!(seen[0].2.as_deref(), Some("sampled / Ada / file:///work"));
    assert_eq!(seen[0].7, -32602);
    assert_eq!(
        seen[0], seen[1],
        "the session and the stateless revision agree"
    );
}

#[tokio::test]
async fn one_http_endpoint_serves_a_session_client_and_a_stateless_one_alike() {
    use jsonrpc_runtime::connection::PeerAddr;
    use jsonrpc_runtime::server::McpHttpListener;
    use jsonrpc_runtime::transport::{McpHttpConnector, TcpAcceptor};

    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", acceptor.local_addr().unwrap());
    let everything = server();
    let listener = McpHttpListener::new(acceptor).spawn(move |_: &PeerAddr| everything.router());
    let mut seen = Vec::new();
    for revision in [SESSION, STATELESS] {
        let transport = McpHttpConnector::new(&url).connect().await.unwrap();
        let client = answering(revision).connect(transport).await.unwrap();
        assert_eq!(client.is_stateless(), revision == STATELESS);
        let sum = client
            .call_tool("add", json!({"a": 40, "b": 2}))
            .await
            .unwrap();
        // Sampling, a form and the roots: calls to the client on the
        // session, three rounds of `input_required` on the stateless POSTs.
        let asked = client.call_tool("ask_all", json!({})).await.unwrap();
        let read = client.read_resource("test://a").await.unwrap();
        // An error answer of a stateless POST comes with 400 and a JSON-RPC
        // body: the client sees the server's error, not a transport failure.
        let ClientError::Call(unknown) = client.read_resource("test://none").await.unwrap_err()
        else {
            panic!("not a call error")
        };
        seen.push((
            sum.first_text().map(str::to_owned),
            asked.first_text().map(str::to_owned),
            serde_json::to_value(read).unwrap(),
            code(unknown)
                == if revision == STATELESS {
                    -32602
                } else {
                    -32002
                },
        ));
        client.close(std::time::Duration::from_secs(5)).await;
    }
    assert_eq!(seen[0].0.as_deref(), Some("42"));
    assert_eq!(seen[0].1.as_deref(), Some("sampled / Ada / file:///work"));
    assert!(
        seen[0].3 && seen[1].3,
        "each revision's code for a missing resource"
    );
    assert_eq!(seen[0], seen[1]);
    listener.shutdown(std::time::Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_question_the_client_cannot_answer_is_refused_on_either_revision() {
    for revision in [SESSION, STATELESS] {
        let bare = McpClient::builder("bare", "0").protocol_version(revision);
        let (client, _server) = start(bare, server().router()).await;
        let client = client.unwrap();
        assert!(client.server().capabilities.tools.is_some());
        match client.call_tool("sample", json!({})).await {
            // A session: the tool learns the client offers no sampling.
            Ok(result) if revision == SESSION => assert!(result.is_error, "{result:?}"),
            // Stateless: the request did not declare the capability.
            Err(ClientError::Call(error)) if revision == STATELESS => {
                assert_eq!(code(error), -32021)
            }
            other => panic!("{revision}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_stateless_client_starts_a_session_with_a_server_without_server_discover() {
    let routes = Router::new().request("initialize", |params: Value, _: Context| async move {
        assert_eq!(
            params["protocolVersion"], SESSION,
            "the newest session revision"
        );
        assert!(params["capabilities"]["sampling"].is_object(), "{params}");
        Ok::<_, ErrorObject>(json!({
            "protocolVersion": SESSION,
            "capabilities": {},
            "serverInfo": {"name": "old", "version": "1"},
        }))
    });
    let (client, _server) = start(answering(STATELESS), routes).await;
    let client = client.unwrap();
    assert_eq!(client.protocol_version(), SESSION);
    assert!(!client.is_stateless());
}

#[tokio::test]
async fn a_server_that_keeps_asking_is_given_up_on_after_max_rounds() {
    let rounds = Arc::new(Mutex::new(0usize));
    let counted = rounds.clone();
    let routes = discover().request("tools/call", move |params: Value, _: Context| {
        *counted.lock().unwrap() += 1;
        let state = params["requestState"].as_str().unwrap_or("").to_owned();
        async move {
            Ok::<_, ErrorObject>(json!({
                "resultType": "input_required",
                "inputRequests": {"again": {"method": "roots/list", "params": {}}},
                "requestState": format!("{state}x"),
            }))
        }
    });
    let (client, _server) = start(answering(STATELESS), routes).await;
    let error = client
        .unwrap()
        .call_tool("add", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ClientError::TooManyRounds(ref m) if m == "tools/call"),
        "{error}"
    );
    assert_eq!(*rounds.lock().unwrap(), MAX_ROUNDS);
}

/// `server/discover` of a server speaking `versions`.
fn discover_of(versions: &'static [&'static str]) -> Router {
    Router::new().request("server/discover", move |_: Value, _: Context| async move {
        Ok::<_, ErrorObject>(json!({
            "supportedVersions": versions,
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hand", "version": "1"}},
        }))
    })
}

fn discover() -> Router {
    discover_of(&[STATELESS])
}

#[tokio::test]
async fn a_server_speaking_another_stateless_revision_is_refused() {
    let (client, _server) = start(answering(STATELESS), discover_of(&["2027-01-01"])).await;
    match client {
        Err(ClientError::UnsupportedVersion(offered)) => assert_eq!(offered, ["2027-01-01"]),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn log_messages_reach_the_callback_on_a_session() {
    let (sender, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let builder = McpClient::builder("listener", "0").on_log(move |message| {
        let _ = sender.send(message);
    });
    let (client, _server) = start(builder, server().router()).await;
    let client = client.unwrap();
    client.set_log_level(LogLevel::Info).await.unwrap();
    let done = client.call_tool("chatty", json!({})).await.unwrap();
    assert_eq!(done.first_text(), Some("done"));
    let message = heard.recv().await.unwrap();
    assert_eq!(
        (message.level, message.data),
        (LogLevel::Warning, json!("careful"))
    );
    // A session-only method on the stateless revision is -32601.
    let (stateless, _server) = start(answering(STATELESS), server().router()).await;
    let error = stateless
        .unwrap()
        .set_log_level(LogLevel::Info)
        .await
        .unwrap_err();
    let ClientError::Call(CallError::Rpc(error)) = error else {
        panic!("{error:?}")
    };
    assert_eq!(error.code.0, -32601);
}

#[tokio::test]
async fn an_unsupported_revision_is_asked_again_with_one_the_server_names() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let routes = Router::new().request("server/discover", move |params: Value, _: Context| {
        let version = params["_meta"]["io.modelcontextprotocol/protocolVersion"].clone();
        let first = {
            let mut seen = seen.lock().unwrap();
            seen.push(version);
            seen.len() == 1
        };
        async move {
            if first {
                return Err(ErrorObject::new(-32022, "Unsupported protocol version")
                    .with_data(&json!({"supported": [STATELESS], "requested": STATELESS}))
                    .unwrap());
            }
            Ok(json!({
                "supportedVersions": [STATELESS],
                "capabilities": {},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "picky", "version": "1"}},
            }))
        }
    });
    let (client, _server) = start(answering(STATELESS), routes).await;
    let client = client.unwrap();
    assert_eq!(client.server().server_info.name, "picky");
    assert_eq!(*asked.lock().unwrap(), [json!(STATELESS), json!(STATELESS)]);
    // Once only: a server that refuses every revision is an error.
    let routes = Router::new().request("server/discover", |_: Value, _: Context| async {
        Err::<Value, _>(
            ErrorObject::new(-32022, "no")
                .with_data(&json!({"supported": [STATELESS]}))
                .unwrap(),
        )
    });
    let (client, _server) = start(answering(STATELESS), routes).await;
    match client {
        Err(ClientError::Call(error)) => assert_eq!(code(error), -32022),
        other => panic!("{other:?}"),
    }
}
