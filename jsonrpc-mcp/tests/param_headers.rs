//! Tool arguments mirrored into `Mcp-Param-*` headers (2026-07-28 over
//! Streamable HTTP): the client transport sends what the listed tools
//! declare, the server refuses headers that disagree with the body
//! (`400`, -32020) before the tool runs, a client that was refused lists
//! the tools again and retries once, and tools whose declarations break
//! the rules are left out of the list.

use std::time::Duration;

use jsonrpc_mcp::client::McpClient;
use jsonrpc_mcp::{McpServer, ToolContext, ToolError, HEADER_MISMATCH};
use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::transport::{McpHttpConnector, TcpAcceptor};
use jsonrpc_runtime::{Config, Context, ErrorObject, Peer, Router, Transport};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const STATELESS: &str = "2026-07-28";
const GRACE: Duration = Duration::from_secs(5);

#[derive(Deserialize, JsonSchema)]
struct Routed {
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    #[schemars(extend("x-mcp-header" = "Priority"))]
    #[allow(dead_code)] // there for its header
    priority: Option<i64>,
    query: String,
}

/// A server whose `run` echoes the `Mcp-Param-*` headers it was sent.
fn server() -> McpServer {
    McpServer::new("routed", "1.0.0").tool(
        "run",
        "Runs a query in a region.",
        |args: Routed, cx: ToolContext| async move {
            let caller = cx.context().caller();
            let header = |name| caller.header(name).unwrap_or("-").to_owned();
            Ok::<_, ToolError>(format!(
                "{} {} {} {}",
                args.query,
                args.region,
                header("mcp-param-region"),
                header("mcp-param-priority")
            ))
        },
    )
}

async fn serve() -> (String, jsonrpc_runtime::server::Server) {
    let acceptor = TcpAcceptor::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", acceptor.local_addr().unwrap());
    let routed = server();
    let listener = McpHttpListener::new(acceptor).spawn(move |_: &PeerAddr| routed.router());
    (url, listener)
}

async fn client(url: &str, revision: &str) -> McpClient {
    let transport = McpHttpConnector::new(url).connect().await.unwrap();
    McpClient::builder("test-client", "0.1")
        .protocol_version(revision)
        .connect(transport)
        .await
        .unwrap()
}

#[tokio::test]
async fn declared_arguments_travel_in_headers_and_the_tool_runs() {
    let (url, listener) = serve().await;
    let client = client(&url, STATELESS).await;
    let tools = client.list_tools().await.unwrap();
    assert_eq!(
        tools[0].input_schema["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    let cases = [
        (json!({"region": "eu", "query": "q"}), "q eu eu -"),
        (
            json!({"region": "eu", "priority": 7, "query": "q"}),
            "q eu eu 7",
        ),
        // Whitespace at the ends, and text that is not ASCII: base64.
        (
            json!({"region": " eu ", "query": "q"}),
            "q  eu  =?base64?IGV1IA==?= -",
        ),
        (
            json!({"region": "é", "priority": null, "query": "q"}),
            "q é =?base64?w6k=?= -",
        ),
    ];
    for (arguments, expected) in cases {
        let result = client.call_tool("run", &arguments).await.unwrap();
        assert_eq!(result.first_text(), Some(expected), "{arguments}");
    }
    client.close(GRACE).await;
    listener.shutdown(GRACE).await;
}

#[tokio::test]
async fn a_call_refused_for_its_headers_is_sent_again_after_listing_the_tools() {
    let (url, listener) = serve().await;
    // Not listed yet: the first POST has no `Mcp-Param-Region`, which the
    // server refuses; the client lists the tools and sends it again.
    let client = client(&url, STATELESS).await;
    let result = client
        .call_tool("run", json!({"region": "eu", "query": "q"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("q eu eu -"));
    client.close(GRACE).await;
    // A session revision has no such headers, and needs none.
    let session = self::client(&url, "2025-11-25").await;
    let result = session
        .call_tool("run", json!({"region": "eu", "query": "q"}))
        .await
        .unwrap();
    assert_eq!(result.first_text(), Some("q eu - -"));
    session.close(GRACE).await;
    listener.shutdown(GRACE).await;
}

/// A stateless `tools/call` of `run` posted as it is, with `headers`: the
/// status and the answer.
async fn post(url: &str, arguments: Value, headers: &[(&str, &str)]) -> (u16, Value) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "run", "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": STATELESS,
            "io.modelcontextprotocol/clientCapabilities": {},
        }},
    })
    .to_string();
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: {STATELESS}\r\nMcp-Method: tools/call\r\nMcp-Name: run\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(authority).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response[9..12].parse().unwrap();
    let (_, body) = response.split_once("\r\n\r\n").unwrap();
    // The body of `Connection: close` may come chunked: its JSON is
    // between the first `{` and the last `}`.
    let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
    (status, serde_json::from_str(json).unwrap())
}

#[tokio::test]
async fn headers_that_disagree_with_the_arguments_are_refused_before_the_tool_runs() {
    let (url, listener) = serve().await;
    let arguments = json!({"region": "Hello", "priority": 3, "query": "q"});
    let accepted: [&[(&str, &str)]; 3] = [
        &[("Mcp-Param-Region", "Hello"), ("Mcp-Param-Priority", "3")],
        &[
            ("mcp-param-region", "=?base64?SGVsbG8=?="),
            ("MCP-PARAM-PRIORITY", "3.0"),
        ],
        &[
            ("Mcp-Param-Region", "  Hello  "),
            ("Mcp-Param-Priority", "3"),
        ],
    ];
    for headers in accepted {
        let (status, answer) = post(&url, arguments.clone(), headers).await;
        assert_eq!(status, 200, "{headers:?}: {answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .split(' ')
                .nth(1),
            Some("Hello")
        );
    }
    let refused: [&[(&str, &str)]; 6] = [
        &[("Mcp-Param-Priority", "3")],
        &[("Mcp-Param-Region", "hello"), ("Mcp-Param-Priority", "3")],
        &[
            ("Mcp-Param-Region", "=?base64?SGVsbG8?="),
            ("Mcp-Param-Priority", "3"),
        ],
        &[
            ("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="),
            ("Mcp-Param-Priority", "3"),
        ],
        &[("Mcp-Param-Region", "Hello"), ("Mcp-Param-Priority", "4")],
        &[
            ("Mcp-Param-Region", "Hello"),
            ("Mcp-Param-Region", "Hello"),
            ("Mcp-Param-Priority", "3"),
        ],
    ];
    for headers in refused {
        let (status, answer) = post(&url, arguments.clone(), headers).await;
        assert_eq!(status, 400, "{headers:?}: {answer}");
        assert_eq!(
            answer["error"]["code"], HEADER_MISMATCH,
            "{headers:?}: {answer}"
        );
    }
    // A header for an argument the body does not have.
    let without = json!({"region": "Hello", "query": "q"});
    let (status, answer) = post(
        &url,
        without,
        &[("Mcp-Param-Region", "Hello"), ("Mcp-Param-Priority", "3")],
    )
    .await;
    assert_eq!(
        (status, &answer["error"]["code"]),
        (400, &json!(HEADER_MISMATCH)),
        "{answer}"
    );
    listener.shutdown(GRACE).await;
}

#[tokio::test]
async fn a_stateless_client_leaves_out_tools_whose_declarations_break_the_rules() {
    let tools = json!([
        {"name": "valid", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "plain", "inputSchema": {"type": "object"}},
        {"name": "number", "inputSchema": {"type": "object", "properties": {
            "score": {"type": "number", "x-mcp-header": "Score"}}}},
        {"name": "twice", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "MyField"},
            "b": {"type": "string", "x-mcp-header": "myfield"}}}},
        {"name": "spaced", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "My Region"}}}},
    ]);
    let routes = Router::new()
        .request("server/discover", |_: Value, _: Context| async {
            Ok::<_, ErrorObject>(json!({
                "supportedVersions": [STATELESS],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hand", "version": "1"}},
            }))
        })
        .request("tools/list", move |_: Value, _: Context| {
            let tools = tools.clone();
            async move { Ok::<_, ErrorObject>(json!({"tools": tools, "resultType": "complete"})) }
        });
    let (client_side, server_side) = Transport::pair(64);
    let _server = Peer::builder()
        .config(Config::mcp())
        .router(routes)
        .spawn(server_side);
    let client = McpClient::builder("test-client", "0.1")
        .protocol_version(STATELESS)
        .connect(client_side)
        .await
        .unwrap();
    let listed: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["valid", "plain"]);
}

#[derive(Deserialize, JsonSchema)]
struct Scored {
    #[schemars(extend("x-mcp-header" = "Score"))]
    #[allow(dead_code)] // there for its declaration
    score: f64,
}

#[test]
#[should_panic(expected = "x-mcp-header")]
fn a_tool_whose_declarations_break_the_rules_is_not_registered() {
    let _ = McpServer::new("bad", "1.0.0").tool(
        "score",
        "Scores.",
        |_: Scored, _: ToolContext| async { Ok::<_, ToolError>("scored") },
    );
}
