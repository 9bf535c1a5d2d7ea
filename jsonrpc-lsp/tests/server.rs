//! The layer on the wire, against a client peer over an in-memory
//! transport: the handshake's answers, the defaults, the document store as
//! requests see it, calls back to the client, progress, cancellation,
//! trace, and the lifecycle's end.

use std::time::Duration;

use jsonrpc_lsp::types::*;
use jsonrpc_lsp::{
    Client, Context, LanguageServer, LanguageServerClient, LspServer, Result, WorkDone,
};
use jsonrpc_runtime::{CallError, CloseReason, Config, ErrorCode, Peer, Router, Transport};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const WAIT: Duration = Duration::from_secs(30);

struct Backend {
    client: Client,
}

impl LanguageServer for Backend {
    async fn initialize(
        &self,
        _ctx: Context,
        _params: InitializeParams,
    ) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                hover_provider: Some(true.into()),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "test".into(),
                version: None,
            }),
        })
    }

    async fn hover(&self, _ctx: Context, params: HoverParams) -> Result<Option<Hover>> {
        let at = params.text_document_position_params;
        let Some(doc) = self.client.documents().get(&at.text_document.uri) else {
            return Ok(None);
        };
        let value = format!(
            "v{} {:?} {}",
            doc.version(),
            doc.word_at(at.position),
            doc.text()
        );
        Ok(Some(Hover {
            contents: Contents::MarkupContent(MarkupContent {
                kind: MarkupKind::PlainText,
                value,
            }),
            range: None,
        }))
    }

    /// Three locations: two as partial results (when the caller asked for
    /// them), the third in the answer.
    async fn references(&self, ctx: Context, _: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let location = |line| Location {
            uri: Uri::from("file:///test.txt"),
            range: Range {
                start: Position { line, character: 0 },
                end: Position { line, character: 1 },
            },
        };
        for line in 0..2 {
            ctx.partial_result(vec![location(line)]).unwrap();
        }
        Ok(Some(vec![location(2)]))
    }

    async fn execute_command(
        &self,
        ctx: Context,
        params: ExecuteCommandParams,
    ) -> Result<Option<LspAny>> {
        match params.command.as_str() {
            "configuration" => {
                let item = ConfigurationItem {
                    scope_uri: None,
                    section: Some("test".into()),
                };
                let answer = self.client.configuration(vec![item]).await;
                Ok(Some(json!(format!("{answer:?}"))))
            }
            "slow" => {
                let progress = WorkDone::begin(&ctx, &self.client, "Sleeping").await;
                progress.report(Some("started".into()), Some(0)).await;
                tokio::time::sleep(Duration::from_secs(600)).await;
                progress.end(None).await;
                Ok(None)
            }
            "trace" => {
                let _ = self.client.log_trace("plain", Some("details".into())).await;
                Ok(None)
            }
            _ => Err(jsonrpc_runtime::ErrorObject::invalid_params(
                "unknown command",
            )),
        }
    }
}

/// What the server sent the client that the test looks at.
type Seen = mpsc::UnboundedReceiver<(String, Value)>;

/// A server and a client peer on an in-memory pair. The client answers
/// `workspace/configuration` and `window/workDoneProgress/create`, and
/// passes on what it receives.
fn connect() -> (LanguageServerClient, Peer, Seen) {
    let (tx, seen) = mpsc::unbounded_channel();
    let record = |method: &'static str, tx: mpsc::UnboundedSender<(String, Value)>| {
        move |params: Value, _: Context| {
            let _ = tx.send((method.to_owned(), params));
            async {}
        }
    };
    let router = Router::new()
        .request("workspace/configuration", |_: Value, _: Context| async {
            Ok::<_, jsonrpc_runtime::ErrorObject>(json!([{"answer": 42}]))
        })
        .request(
            "window/workDoneProgress/create",
            |_: Value, _: Context| async { Ok::<_, jsonrpc_runtime::ErrorObject>(()) },
        )
        .notification("$/logTrace", record("$/logTrace", tx.clone()))
        .notification("window/logMessage", record("window/logMessage", tx.clone()));
    let (a, b) = Transport::pair(64);
    let (server, config) = LspServer::new(|client| Backend { client }).into_parts();
    let server = Peer::builder().config(config).router(server).spawn(b);
    // `$/progress` goes to the calls that asked; the rest is recorded.
    let client = Peer::builder()
        .config(Config::lsp_client())
        .router(router)
        .spawn(a);
    let _ = tx;
    (LanguageServerClient::new(client), server, seen)
}

fn initialize_params(encodings: &[&str], trace: &str) -> Value {
    json!({
        "processId": null,
        "rootUri": null,
        "trace": trace,
        "capabilities": {
            "general": {"positionEncodings": encodings},
            "window": {"workDoneProgress": true}
        }
    })
}

async fn initialize(client: &LanguageServerClient, encodings: &[&str]) -> Value {
    let params = initialize_params(encodings, "off");
    tokio::time::timeout(WAIT, client.peer().call::<Value>("initialize", params))
        .await
        .expect("initialize answered")
        .expect("initialize succeeds")
}

async fn hover(client: &LanguageServerClient, line: u32, character: u32) -> String {
    let params = json!({
        "textDocument": {"uri": "file:///test.txt"},
        "position": {"line": line, "character": character},
    });
    let answer: Value = client
        .peer()
        .call("textDocument/hover", params)
        .await
        .unwrap();
    answer["contents"]["value"]
        .as_str()
        .unwrap_or("null")
        .to_owned()
}

#[tokio::test]
async fn the_handshake_settles_the_encoding_and_the_sync_kind() {
    let (client, _server, _seen) = connect();
    let before = client
        .peer()
        .call::<Value>("textDocument/hover", json!({}))
        .await;
    assert!(
        matches!(before, Err(CallError::Rpc(e)) if e.code == ErrorCode::SERVER_NOT_INITIALIZED)
    );

    let answer = initialize(&client, &["utf-16", "utf-32"]).await;
    // UTF-8 is not offered; UTF-16 is the next the server wants.
    assert_eq!(answer["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(answer["capabilities"]["textDocumentSync"]["change"], 2);
    assert_eq!(
        answer["capabilities"]["textDocumentSync"]["openClose"],
        true
    );
    assert_eq!(answer["capabilities"]["hoverProvider"], true);
    assert_eq!(answer["serverInfo"]["name"], "test");
}

#[tokio::test]
async fn a_request_the_server_does_not_implement_is_method_not_found() {
    let (client, _server, _seen) = connect();
    initialize(&client, &[]).await;
    let params =
        json!({"textDocument": {"uri": "file:///a"}, "position": {"line": 0, "character": 0}});
    let answer = client
        .peer()
        .call::<Value>("textDocument/definition", params)
        .await;
    assert!(matches!(answer, Err(CallError::Rpc(e)) if e.code == ErrorCode::METHOD_NOT_FOUND));
    // A notification it does not implement is ignored, and the connection
    // goes on.
    client
        .peer()
        .notify("workspace/didChangeConfiguration", json!({"settings": {}}))
        .await
        .unwrap();
    let shutdown = client.peer().call::<Value>("shutdown", ()).await.unwrap();
    assert_eq!(shutdown, Value::Null);
}

#[tokio::test]
async fn a_request_sees_every_change_that_arrived_before_it() {
    let (client, _server, _seen) = connect();
    initialize(&client, &["utf-16"]).await;
    let open = json!({"textDocument": {
        "uri": "file:///test.txt", "languageId": "plaintext", "version": 1, "text": "a😀b"
    }});
    client
        .peer()
        .notify("textDocument/didOpen", open)
        .await
        .unwrap();
    // 300 insertions of "x" just after the emoji (UTF-16 character 3), no
    // waiting between them.
    for version in 2..302 {
        let change = json!({
            "textDocument": {"uri": "file:///test.txt", "version": version},
            "contentChanges": [{"range": {
                "start": {"line": 0, "character": 3}, "end": {"line": 0, "character": 3}
            }, "text": "x"}],
        });
        client
            .peer()
            .notify("textDocument/didChange", change)
            .await
            .unwrap();
    }
    let expected = format!("a😀{}b", "x".repeat(300));
    let word = format!("Some(\"{}b\")", "x".repeat(300));
    assert_eq!(
        hover(&client, 0, 4).await,
        format!("v301 {word} {expected}")
    );

    let close = json!({"textDocument": {"uri": "file:///test.txt"}});
    client
        .peer()
        .notify("textDocument/didClose", close)
        .await
        .unwrap();
    assert_eq!(hover(&client, 0, 0).await, "null");
}

#[tokio::test]
async fn the_client_handle_calls_the_client() {
    let (client, _server, _seen) = connect();
    initialize(&client, &[]).await;
    let params = json!({"command": "configuration", "arguments": []});
    let answer: Value = client
        .peer()
        .call("workspace/executeCommand", params)
        .await
        .unwrap();
    assert!(answer.as_str().unwrap().contains("42"), "{answer}");
}

#[tokio::test]
async fn a_cancelled_request_is_answered_32800_and_its_progress_ends() {
    let (client, _server, _seen) = connect();
    initialize(&client, &[]).await;
    let params = json!({"command": "slow", "arguments": []});
    let mut call = client
        .peer()
        .call_with_progress::<Value, jsonrpc_runtime::ErrorObject, Value>(
            "workspace/executeCommand",
            params,
            Default::default(),
        )
        .unwrap();
    let mut kinds = Vec::new();
    while kinds.len() < 2 {
        let report = tokio::time::timeout(WAIT, call.next_progress())
            .await
            .unwrap();
        kinds.push(
            report.unwrap().unwrap()["kind"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    assert_eq!(kinds, ["begin", "report"]);
    call.cancel(None).unwrap();
    // The handler is dropped where it sleeps; its `WorkDone` ends the
    // progress on the way out, before the answer.
    while let Some(report) = tokio::time::timeout(WAIT, call.next_progress())
        .await
        .unwrap()
    {
        kinds.push(report.unwrap()["kind"].as_str().unwrap().to_owned());
    }
    assert_eq!(kinds, ["begin", "report", "end"]);
    let answer = tokio::time::timeout(WAIT, call.result()).await.unwrap();
    assert!(
        matches!(&answer, Err(CallError::Domain(e)) if e.code == ErrorCode::REQUEST_CANCELLED),
        "{answer:?}"
    );
}

#[tokio::test]
async fn log_trace_follows_the_trace_level() {
    let (client, _server, mut seen) = connect();
    initialize(&client, &[]).await;
    let trace = || {
        client
            .peer()
            .call::<Value>("workspace/executeCommand", json!({"command": "trace"}))
    };
    // `off` (from initialize): nothing is sent.
    trace().await.unwrap();
    client
        .peer()
        .notify("$/setTrace", json!({"value": "messages"}))
        .await
        .unwrap();
    trace().await.unwrap();
    client
        .peer()
        .notify("$/setTrace", json!({"value": "verbose"}))
        .await
        .unwrap();
    trace().await.unwrap();
    let mut got = Vec::new();
    while got.len() < 2 {
        let (method, params) = tokio::time::timeout(WAIT, seen.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(method, "$/logTrace");
        got.push(params);
    }
    assert_eq!(got[0], json!({"message": "plain"}));
    assert_eq!(got[1], json!({"message": "plain", "verbose": "details"}));
    assert!(seen.try_recv().is_err(), "a trace sent while off");
}

#[tokio::test]
async fn exit_after_shutdown_closes_with_code_0() {
    let (client, server, _seen) = connect();
    initialize(&client, &[]).await;
    client.peer().call::<Value>("shutdown", ()).await.unwrap();
    let refused = client
        .peer()
        .call::<Value>("textDocument/hover", json!({}))
        .await;
    assert!(matches!(refused, Err(CallError::Rpc(e)) if e.code == ErrorCode::INVALID_REQUEST));
    client.peer().notify("exit", ()).await.unwrap();
    let reason = tokio::time::timeout(WAIT, server.closed()).await.unwrap();
    assert!(
        matches!(reason, CloseReason::Exit { code: 0 }),
        "{reason:?}"
    );
}

/// A server whose impl is `#[rpc]`: the layer knows what it wrote.
struct Derived;

#[jsonrpc_lsp::rpc]
impl LanguageServer for Derived {
    async fn hover(&self, _: Context, _: HoverParams) -> Result<Option<Hover>> {
        Ok(None)
    }

    async fn completion(
        &self,
        _: Context,
        _: CompletionParams,
    ) -> Result<Option<CompletionResponse>> {
        Ok(None)
    }

    async fn completion_resolve(&self, _: Context, item: CompletionItem) -> Result<CompletionItem> {
        Ok(item)
    }

    async fn rename(&self, _: Context, _: RenameParams) -> Result<Option<WorkspaceEdit>> {
        Ok(None)
    }

    async fn prepare_rename(
        &self,
        _: Context,
        _: PrepareRenameParams,
    ) -> Result<Option<PrepareRenameResult>> {
        Ok(None)
    }

    async fn did_save(&self, _: Context, _: DidSaveTextDocumentParams) {}
}

async fn capabilities_of<S: LanguageServer>(server: LspServer<S>) -> Value {
    let (a, b) = Transport::pair(16);
    let (router, config) = server.into_parts();
    let _server = Peer::builder().config(config).router(router).spawn(b);
    let client = Peer::builder().config(Config::lsp_client()).spawn(a);
    let answer: Value = client
        .call("initialize", initialize_params(&[], "off"))
        .await
        .unwrap();
    answer["capabilities"].clone()
}

#[tokio::test]
async fn an_rpc_impl_announces_the_providers_of_what_it_wrote() {
    let caps = capabilities_of(LspServer::new(|_| Derived)).await;
    assert_eq!(caps["hoverProvider"], true, "{caps}");
    assert_eq!(
        caps["completionProvider"]["resolveProvider"], true,
        "{caps}"
    );
    assert_eq!(caps["renameProvider"]["prepareProvider"], true, "{caps}");
    assert_eq!(caps["textDocumentSync"]["save"], true, "{caps}");
    assert!(caps.get("definitionProvider").is_none(), "{caps}");
    assert!(caps["textDocumentSync"].get("willSave").is_none(), "{caps}");

    // Without `#[rpc]` on the impl, only what `initialize` says.
    let caps = capabilities_of(LspServer::new(|client| Backend { client })).await;
    assert_eq!(caps["hoverProvider"], true, "{caps}");
    assert!(caps.get("completionProvider").is_none(), "{caps}");
    assert!(caps.get("renameProvider").is_none(), "{caps}");
}

#[tokio::test]
async fn after_partial_results_the_answer_is_empty_and_nothing_is_lost() {
    let (client, _server, _seen) = connect();
    initialize(&client, &[]).await;
    let params = json!({
        "textDocument": {"uri": "file:///test.txt"},
        "position": {"line": 0, "character": 0},
        "context": {"includeDeclaration": true},
    });
    let mut call = client
        .peer()
        .call_partial_results::<Value, jsonrpc_runtime::ErrorObject, Value>(
            "textDocument/references",
            params.clone(),
            Default::default(),
        )
        .unwrap();
    let mut lines = Vec::new();
    while let Some(partial) = tokio::time::timeout(WAIT, call.next_progress())
        .await
        .unwrap()
    {
        let partial = partial.unwrap();
        lines.extend(
            partial
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l["range"]["start"]["line"].clone()),
        );
    }
    assert_eq!(lines, [json!(0), json!(1), json!(2)]);
    assert_eq!(call.result().await.unwrap(), json!([]));

    // Without a partialResultToken, the answer is the handler's own.
    let answer: Value = client
        .peer()
        .call("textDocument/references", params)
        .await
        .unwrap();
    assert_eq!(answer.as_array().unwrap().len(), 1);
}
