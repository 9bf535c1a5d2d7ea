//! `subscriptions/listen` (2026-07-28): the acknowledgement first, with
//! what the server honours of what was asked; then only the notifications
//! opted in to, each tagged with the stream's id; nothing once the stream
//! is gone. Over memory with a raw client, and over Streamable HTTP with
//! the typed client.

use std::time::Duration;

use jsonrpc_mcp::client::McpClient;
use jsonrpc_mcp::resources::Resource;
use jsonrpc_mcp::types::{ResourceContents, SubscriptionFilter};
use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::{Config, Context, Peer, Router, Transport};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const STATELESS: &str = "2026-07-28";
const WAIT: Duration = Duration::from_secs(20);

fn server() -> McpServer {
    McpServer::new("listening", "1.0.0")
        .tool(
            "noop",
            "Does nothing.",
            |_: jsonrpc_mcp::types::NoArguments, _: ToolContext| async { Ok::<_, ToolError>("ok") },
        )
        .resource(Resource::new("test://a", "a"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "A")])
        })
        .resource(Resource::new("test://b", "b"), |uri, _| async move {
            Ok(vec![ResourceContents::text(uri, "text/plain", "B")])
        })
}

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

async fn next(heard: &mut mpsc::UnboundedReceiver<(String, Value)>) -> (String, Value) {
    tokio::time::timeout(WAIT, heard.recv())
        .await
        .expect("a notification in time")
        .unwrap()
}

#[tokio::test]
async fn a_stream_gets_its_acknowledgement_then_only_what_it_opted_in_to() {
    let server = server();
    let notifier = server.notifier();
    let (client_side, server_side) = Transport::pair(64);
    let _server = Peer::builder()
        .config(Config::mcp())
        .router(server.router())
        .spawn(server_side);
    let (tell, mut heard) = mpsc::unbounded_channel();
    let mut router = Router::new();
    for method in [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/updated",
    ] {
        let tell = tell.clone();
        router = router.notification(method, move |params: Value, _: Context| {
            let _ = tell.send((method.to_owned(), params));
            async {}
        });
    }
    let client = Peer::builder()
        .config(Config::mcp_client())
        .router(router)
        .spawn(client_side);
    let params = json!({"_meta": meta(), "notifications": {
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourceSubscriptions": ["test://a", "test://none", "test://a"],
    }});
    let listening = {
        let client = client.clone();
        tokio::spawn(async move { client.call::<Value>("subscriptions/listen", params).await })
    };

    let (method, ack) = next(&mut heard).await;
    assert_eq!(method, "notifications/subscriptions/acknowledged");
    // No prompts here, no such resource, each URI once.
    assert_eq!(
        ack["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://a"]})
    );
    let id = ack["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert!(!id.is_null(), "{ack}");

    assert_eq!(notifier.prompt_list_changed().await, 0, "not honoured");
    assert_eq!(
        notifier.resource_updated("test://b").await,
        0,
        "not asked for"
    );
    assert_eq!(notifier.resource_updated("test://a").await, 1);
    assert_eq!(notifier.tool_list_changed().await, 1);
    let (method, updated) = next(&mut heard).await;
    assert_eq!(
        (method.as_str(), &updated["uri"]),
        ("notifications/resources/updated", &json!("test://a"))
    );
    assert_eq!(
        updated["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    let (method, changed) = next(&mut heard).await;
    assert_eq!(method, "notifications/tools/list_changed");
    assert_eq!(
        changed["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );

    // Cancelled by the client: the stream is gone, nothing is offered to it.
    listening.abort();
    let gone = async {
        while notifier.tool_list_changed().await > 0 {
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(WAIT, gone)
        .await
        .expect("the stream leaves once cancelled");
    // On a session the method does not exist.
    let (client_side, server_side) = Transport::pair(8);
    let _server = Peer::builder()
        .config(Config::mcp())
        .router(server.router())
        .spawn(server_side);
    let session = Peer::builder()
        .config(Config::mcp_client())
        .spawn(client_side);
    let _: Value = session
        .call("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "s", "version": "0"}}))
        .await
        .unwrap();
    let refused = session
        .call::<Value>("subscriptions/listen", json!({"notifications": {}}))
        .await;
    assert!(matches!(refused, Err(jsonrpc_runtime::CallError::Rpc(e)) if e.code.0 == -32601));
}

#[tokio::test]
async fn the_typed_client_listens_over_streamable_http() {
    use jsonrpc_runtime::connection::PeerAddr;
    use jsonrpc_runtime::server::McpHttpListener;
    use jsonrpc_runtime::transport::{McpHttpConnector, TcpAcceptor};

    let server = server();
    let notifier = server.notifier();
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", acceptor.local_addr().unwrap());
    let _listener = McpHttpListener::new(acceptor).spawn(move |_: &PeerAddr| server.router());
    let (tell, mut heard) = mpsc::unbounded_channel();
    let transport = McpHttpConnector::new(&url).connect().await.unwrap();
    let client = McpClient::builder("listener", "0")
        .protocol_version(STATELESS)
        .on_resource_updated(move |uri| {
            let _ = tell.send(uri);
        })
        .connect(transport)
        .await
        .unwrap();
    assert!(client.is_stateless());
    let filter = SubscriptionFilter {
        resource_subscriptions: vec!["test://b".into()],
        ..SubscriptionFilter::default()
    };
    let listening = {
        let client = client.clone();
        tokio::spawn(async move { client.listen(&filter).await })
    };
    // Told once the stream is open; calls go on beside it.
    let told = async {
        while notifier.resource_updated("test://b").await == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(WAIT, told)
        .await
        .expect("the stream opens");
    let uri = tokio::time::timeout(WAIT, heard.recv())
        .await
        .expect("the update in time");
    assert_eq!(uri.as_deref(), Some("test://b"));
    let noop = client.call_tool("noop", json!({})).await.unwrap();
    assert_eq!(noop.first_text(), Some("ok"));
    listening.abort();
}
