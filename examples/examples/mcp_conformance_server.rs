//! Run with: cargo run --example mcp_conformance_server [-- --http ADDR]
//!
//! The "everything" server the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) tests, written with `jsonrpc_mcp`:
//! the tools, resources, prompts and completions its server scenarios call,
//! with the names and texts they expect. `bash interop/mcp_conformance.sh`
//! starts it with `--http 127.0.0.1:PORT` (Streamable HTTP at `/mcp`) and
//! runs the suite; with no flag it serves stdio.
//!
//! - Tools: `test_simple_text`, `test_image_content`, `test_audio_content`,
//!   `test_embedded_resource`, `test_multiple_content_types`,
//!   `test_error_handling` (an `isError` result), `test_tool_with_progress`
//!   (three progress reports), `test_tool_with_logging` (three log
//!   messages), `test_sampling {prompt}` and `test_elicitation {message}`
//!   (each asks the client), `test_elicitation_sep1034_defaults` and
//!   `test_elicitation_sep1330_enums` (forms with defaults and enums),
//!   `json_schema_2020_12_tool` (a hand-written 2020-12 schema, listed as
//!   written), `test_mirrored_headers {region, query}` (`region` mirrored
//!   into `Mcp-Param-Region`, checked against the body).
//! - Resources: `test://static-text`, `test://static-binary`,
//!   `test://watched-resource` (subscribable), the template
//!   `test://template/{id}/data`.
//! - Prompts: `test_simple_prompt`, `test_prompt_with_arguments {arg1,
//!   arg2}`, `test_prompt_with_embedded_resource {resourceUri}`,
//!   `test_prompt_with_image`; `completion/complete` answers for `arg1`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use jsonrpc_mcp::client_features::{CreateMessageParams, ElicitParams};
use jsonrpc_mcp::prompts::PromptMessage;
use jsonrpc_mcp::resources::{Resource, ResourceTemplate};
use jsonrpc_mcp::types::{Content, LogLevel, NoArguments, ResourceContents};
use jsonrpc_mcp::{McpServer, ToolContext, ToolError, ToolInfo};
use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::transport::TcpAcceptor;
use jsonrpc_runtime::{Config, Peer, Transport};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

#[path = "support/signals.rs"]
mod signals;
use signals::Signals;

#[path = "support/logging.rs"]
mod logging;

/// A 1×1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A WAV file with one sample.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// How long running calls get to finish when the server is stopped.
const GRACE: Duration = Duration::from_secs(1);

/// The server: every tool, resource and prompt the suite's scenarios use.
fn everything() -> McpServer {
    let server = McpServer::new("jsonrpc-mcp-conformance", env!("CARGO_PKG_VERSION"));
    resources(prompts(multi_round(tools(server))))
}

/// The tools, `test_simple_text` first: a scenario calls the first one
/// listed with no arguments.
fn tools(server: McpServer) -> McpServer {
    server
        .tool(
            "test_simple_text",
            "Returns a simple text.",
            |_: NoArguments, _: ToolContext| async {
                Ok::<_, ToolError>("This is a simple text response for testing.")
            },
        )
        .tool(
            "test_image_content",
            "Returns an image.",
            |_: NoArguments, _: ToolContext| async {
                Ok::<_, ToolError>(Content::image(PNG, "image/png"))
            },
        )
        .tool(
            "test_audio_content",
            "Returns audio.",
            |_: NoArguments, _: ToolContext| async {
                Ok::<_, ToolError>(Content::audio(WAV, "audio/wav"))
            },
        )
        .tool(
            "test_embedded_resource",
            "Returns an embedded resource.",
            |_: NoArguments, _: ToolContext| async {
                Ok::<_, ToolError>(Content::resource(ResourceContents::text(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )))
            },
        )
        .tool(
            "test_multiple_content_types",
            "Returns text, an image and a resource.",
            |_: NoArguments, _: ToolContext| async {
                Ok::<_, ToolError>(vec![
                    Content::text("Multiple content types test:"),
                    Content::image(PNG, "image/png"),
                    Content::resource(ResourceContents::text(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    )),
                ])
            },
        )
        .tool(
            "test_error_handling",
            "Always fails, as a tool error.",
            |_: NoArguments, _: ToolContext| async {
                Err::<String, _>(ToolError::new(
                    "This tool intentionally returns an error for testing",
                ))
            },
        )
        .tool(
            "test_tool_with_progress",
            "Reports progress three times.",
            with_progress,
        )
        .tool(
            "test_tool_with_logging",
            "Logs three messages.",
            with_logging,
        )
        .tool(
            "test_sampling",
            "Asks the client's model to answer a prompt.",
            sampling,
        )
        .tool(
            "test_elicitation",
            "Asks the user for a name and an email address.",
            elicitation,
        )
        .tool(
            "test_elicitation_sep1034_defaults",
            "Asks the user to fill in a form whose fields have defaults.",
            |_: NoArguments, cx: ToolContext| {
                elicit_form(
                    cx,
                    "Please review and update the form fields with defaults",
                    json!({
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true},
                    }),
                    &[],
                )
            },
        )
        .tool(
            "test_elicitation_sep1330_enums",
            "Asks the user to choose from enums of each kind.",
            |_: NoArguments, cx: ToolContext| {
                elicit_form(cx, "Please choose options", enum_fields(), &[])
            },
        )
        .tool_with(
            ToolInfo::new("json_schema_2020_12_tool")
                .description("Tool with JSON Schema 2020-12 features")
                .input_schema(schema_2020_12()),
            |_: Value, _: ToolContext| async { Ok::<_, ToolError>("schema accepted") },
        )
        .tool(
            "test_mirrored_headers",
            "Runs a query in a region; the region travels in the Mcp-Param-Region header too.",
            |args: RoutedArgs, _: ToolContext| async move {
                Ok::<_, ToolError>(format!("ran {:?} in {}", args.query, args.region))
            },
        )
}

/// `test_mirrored_headers`: an argument a gateway may route on, which
/// clients mirror into `Mcp-Param-Region` over Streamable HTTP (and the
/// server checks against the body).
#[derive(Deserialize, JsonSchema)]
struct RoutedArgs {
    /// Where the query runs.
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
    /// The query.
    query: String,
}

/// `test_tool_with_progress`: 0, 50 and 100 of 100, 50 ms apart.
async fn with_progress(_: NoArguments, cx: ToolContext) -> Result<String, ToolError> {
    for (step, progress) in [0, 50, 100].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.progress(json!({"progress": progress, "total": 100}))
            .map_err(|e| ToolError::new(format!("progress: {e}")))?;
    }
    Ok("Progress test completed".to_owned())
}

/// `test_tool_with_logging`: three `info` messages, 50 ms apart.
async fn with_logging(_: NoArguments, cx: ToolContext) -> Result<String, ToolError> {
    let messages = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (step, message) in messages.into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.log(LogLevel::Info, None, message)
            .await
            .map_err(|e| ToolError::new(format!("log: {e}")))?;
    }
    Ok("Logging test completed".to_owned())
}

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// What to ask the model.
    prompt: String,
}

async fn sampling(args: SamplingArgs, cx: ToolContext) -> Result<String, ToolError> {
    let answer = cx
        .create_message(CreateMessageParams::user(args.prompt, 100))
        .await?;
    Ok(format!("LLM response: {}", answer.text()))
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// What to ask the user.
    message: String,
}

async fn elicitation(args: ElicitationArgs, cx: ToolContext) -> Result<String, ToolError> {
    let fields = json!({
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    });
    let required = ["username", "email"];
    elicit_form(cx, &args.message, fields, &required).await
}

/// Asks the user to fill in a form of `fields`, of which `required` must
/// be filled in, and says what they did.
async fn elicit_form(
    cx: ToolContext,
    message: &str,
    fields: Value,
    required: &[&str],
) -> Result<String, ToolError> {
    let result = cx
        .elicit_with(ElicitParams::form(message, fields, required))
        .await?;
    let content = Value::Object(result.content.unwrap_or_default());
    Ok(format!(
        "Elicitation completed: action={}, content={content}",
        result.action.as_str()
    ))
}

/// SEP-1330's five kinds of enum field.
fn enum_fields() -> Value {
    let titled = |titles: [&str; 3], word: &str| -> Vec<Value> {
        titles
            .iter()
            .enumerate()
            .map(|(i, title)| json!({"const": format!("value{}", i + 1), "title": format!("{title} {word}")}))
            .collect()
    };
    json!({
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": titled(["First", "Second", "Third"], "Option")},
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array", "minItems": 1, "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array", "minItems": 1, "maxItems": 3,
            "items": {"anyOf": titled(["First", "Second", "Third"], "Choice")},
        },
    })
}

/// A schema with what JSON Schema 2020-12 added: `$defs`, `$anchor`,
/// composition and conditionals.
fn schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            },
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false,
    })
}

/// The tools of the stateless revision's scenarios (2026-07-28): questions
/// to the client answered in a later round of the request (on a session,
/// the same tools call the client), a capability the request must declare,
/// and logging only when the request asks for it.
fn multi_round(server: McpServer) -> McpServer {
    server
        .tool(
            "test_missing_capability",
            "Needs the client's sampling.",
            |_: NoArguments, cx: ToolContext| async move {
                let answer = cx
                    .create_message(CreateMessageParams::user("Say hi", 10))
                    .await?;
                Ok::<_, ToolError>(answer.text())
            },
        )
        .tool(
            "test_streaming_elicitation",
            "Asks the user for a name.",
            |_: NoArguments, cx: ToolContext| async move {
                let name = ask_name(&cx, "user_name", "What is your name?").await?;
                Ok::<_, ToolError>(format!("Hello, {name}!"))
            },
        )
        .tool(
            "test_logging_tool",
            "Logs a message when the request asks for log messages.",
            |_: NoArguments, cx: ToolContext| async move {
                cx.log(LogLevel::Info, None, "test_logging_tool ran")
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok::<_, ToolError>("logged")
            },
        )
        .tool(
            "test_input_required_result_elicitation",
            "Asks the user for a name, then greets them.",
            |_: NoArguments, cx: ToolContext| async move {
                let name = ask_name(&cx, "user_name", "What is your name?").await?;
                Ok::<_, ToolError>(format!("Hello, {name}!"))
            },
        )
        .tool(
            "test_input_required_result_sampling",
            "Asks the model a question.",
            |_: NoArguments, cx: ToolContext| async move {
                let asked = CreateMessageParams::user("What is the capital of France?", 100);
                let answer = cx.input("capital_question").create_message(asked).await?;
                Ok::<_, ToolError>(format!("The model said: {}", answer.text()))
            },
        )
        .tool(
            "test_input_required_result_list_roots",
            "Lists the client's roots.",
            |_: NoArguments, cx: ToolContext| async move {
                let roots = cx.input("client_roots").list_roots().await?;
                let uris: Vec<&str> = roots.iter().map(|r| r.uri.as_str()).collect();
                Ok::<_, ToolError>(format!("Roots: {}", uris.join(", ")))
            },
        )
        .tool(
            "test_input_required_result_request_state",
            "Asks for a confirmation; its answer comes back in the request's state.",
            |_: NoArguments, cx: ToolContext| async move {
                confirm(&cx).await?;
                Ok::<_, ToolError>("state-ok: confirmed")
            },
        )
        .tool(
            "test_input_required_result_tampered_state",
            "Asks for a confirmation; a state that was changed is refused.",
            |_: NoArguments, cx: ToolContext| async move {
                confirm(&cx).await?;
                Ok::<_, ToolError>("confirmed")
            },
        )
        .tool(
            "test_input_required_result_multiple_inputs",
            "Asks three things at once.",
            |_: NoArguments, cx: ToolContext| async move {
                // All three are asked before any answer is needed, so one
                // round carries every question.
                let name = ask_name(&cx, "user_name", "What is your name?").await;
                let greeting = cx
                    .input("greeting")
                    .create_message(CreateMessageParams::user("Generate a greeting", 50))
                    .await;
                let roots = cx.input("client_roots").list_roots().await;
                let (name, greeting, roots) = (name?, greeting?, roots?);
                Ok::<_, ToolError>(format!(
                    "{} {name}! ({} roots)",
                    greeting.text(),
                    roots.len()
                ))
            },
        )
        .tool(
            "test_input_required_result_multi_round",
            "Asks two things, one round each.",
            |_: NoArguments, cx: ToolContext| async move {
                let name = ask_name(&cx, "step1", "Step 1: What is your name?").await?;
                let color = ask_field(
                    &cx,
                    "step2",
                    "Step 2: What is your favorite color?",
                    "color",
                )
                .await?;
                Ok::<_, ToolError>(format!("{name} likes {color}"))
            },
        )
        .tool(
            "test_input_required_result_capabilities",
            "Asks only what the client declared it can answer.",
            |_: NoArguments, cx: ToolContext| async move {
                let can_elicit = cx
                    .client_capabilities()
                    .is_some_and(|c| c.elicitation.is_some());
                if can_elicit {
                    let name = ask_name(&cx, "user_name", "What is your name?").await?;
                    return Ok::<_, ToolError>(format!("Hello, {name}!"));
                }
                let asked = CreateMessageParams::user("What is your name?", 50);
                let answer = cx.input("name_question").create_message(asked).await?;
                Ok(format!("Hello, {}!", answer.text()))
            },
        )
}

/// Asks the user under `key` for one string field, `field`.
async fn ask_field(
    cx: &ToolContext,
    key: &str,
    message: &str,
    field: &str,
) -> Result<String, ToolError> {
    let form = ElicitParams::form(message, json!({field: {"type": "string"}}), &[field]);
    let result = cx.input(key).elicit_with(form).await?;
    let value = result
        .content
        .as_ref()
        .and_then(|c| c.get(field))
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new(format!("no `{field}` in the answer")))?;
    Ok(value.to_owned())
}

/// Asks the user under `key` for their name.
async fn ask_name(cx: &ToolContext, key: &str, message: &str) -> Result<String, ToolError> {
    ask_field(cx, key, message, "name").await
}

/// Asks the user to confirm (`confirm`: `{ok: boolean}`).
async fn confirm(cx: &ToolContext) -> Result<(), ToolError> {
    let form = ElicitParams::form(
        "Please confirm",
        json!({"ok": {"type": "boolean"}}),
        &["ok"],
    );
    cx.input("confirm").elicit_with(form).await?;
    Ok(())
}

#[derive(Deserialize, JsonSchema)]
struct PromptArgs {
    /// The first argument.
    arg1: String,
    /// The second argument.
    arg2: String,
}

#[derive(Deserialize, JsonSchema)]
struct EmbeddedArgs {
    /// The URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

fn prompts(server: McpServer) -> McpServer {
    server
        .prompt(
            "test_simple_prompt",
            "A prompt with no arguments.",
            |_: NoArguments, _: ToolContext| async {
                Ok(vec![PromptMessage::user(
                    "This is a simple prompt for testing.",
                )])
            },
        )
        .prompt(
            "test_prompt_with_arguments",
            "A prompt with two arguments.",
            |args: PromptArgs, _: ToolContext| async move {
                Ok(vec![PromptMessage::user(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    args.arg1, args.arg2
                ))])
            },
        )
        .prompt(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource.",
            |args: EmbeddedArgs, _: ToolContext| async move {
                let resource = ResourceContents::text(
                    args.resource_uri,
                    "text/plain",
                    "Embedded resource content for testing.",
                );
                Ok(vec![
                    PromptMessage::user_content(Content::resource(resource)),
                    PromptMessage::user("Please process the embedded resource above."),
                ])
            },
        )
        .prompt(
            "test_prompt_with_image",
            "A prompt with an image.",
            |_: NoArguments, _: ToolContext| async {
                Ok(vec![
                    PromptMessage::user_content(Content::image(PNG, "image/png")),
                    PromptMessage::user("Please analyze the image above."),
                ])
            },
        )
        .prompt(
            "test_input_required_result_prompt",
            "A prompt that asks the user for its context.",
            |_: NoArguments, cx: ToolContext| async move {
                let context = ask_field(
                    &cx,
                    "user_context",
                    "What context should the prompt use?",
                    "context",
                )
                .await?;
                Ok(vec![PromptMessage::user(format!(
                    "Use this context: {context}"
                ))])
            },
        )
        .complete_prompt_argument(
            "test_prompt_with_arguments",
            "arg1",
            |typed: String, _, _: ToolContext| async move {
                Ok(["paris", "park", "party"]
                    .into_iter()
                    .filter(|value| value.starts_with(typed.as_str()))
                    .map(str::to_owned)
                    .collect())
            },
        )
}

fn resources(server: McpServer) -> McpServer {
    server
        .resource(
            Resource::new("test://static-text", "static-text")
                .description("A text resource.")
                .mime_type("text/plain"),
            |uri: String, _: ToolContext| async move {
                let text = "This is the content of the static text resource.";
                Ok(vec![ResourceContents::text(uri, "text/plain", text)])
            },
        )
        .resource(
            Resource::new("test://static-binary", "static-binary")
                .description("A binary resource (a PNG).")
                .mime_type("image/png"),
            |uri: String, _: ToolContext| async move {
                Ok(vec![ResourceContents::blob(uri, "image/png", PNG)])
            },
        )
        .resource(
            Resource::new("test://watched-resource", "watched-resource")
                .description("A resource to subscribe to.")
                .mime_type("text/plain"),
            |uri: String, _: ToolContext| async move {
                Ok(vec![ResourceContents::text(
                    uri,
                    "text/plain",
                    "Watched resource content",
                )])
            },
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template")
                .description("Data for an id.")
                .mime_type("application/json"),
            |uri: String, vars: HashMap<String, String>, _: ToolContext| async move {
                let id = &vars["id"];
                let text =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok(vec![ResourceContents::text(
                    uri,
                    "application/json",
                    text.to_string(),
                )])
            },
        )
}

#[tokio::main]
async fn main() -> ExitCode {
    logging::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => serve_stdio().await,
        [flag, addr] if flag == "--http" => serve_http(addr).await,
        _ => {
            eprintln!("usage: mcp_conformance_server [--http ADDR]");
            ExitCode::from(2)
        }
    }
}

async fn serve_stdio() -> ExitCode {
    let config = Config::mcp();
    let transport = match Transport::stdio(&config) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("mcp_conformance_server: cannot use stdin/stdout: {e}");
            return ExitCode::FAILURE;
        }
    };
    let reason = Peer::builder()
        .config(config)
        .router(everything().router())
        .serve(transport)
        .await;
    std::process::exit(reason.exit_code())
}

async fn serve_http(addr: &str) -> ExitCode {
    let mut signals = match Signals::new() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("mcp_conformance_server: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let acceptor = match TcpAcceptor::bind(addr).await {
        Ok(acceptor) => acceptor,
        Err(e) => {
            eprintln!("mcp_conformance_server: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match acceptor.local_addr() {
        Ok(local) => eprintln!("mcp_conformance_server: listening on http://{local}/mcp"),
        Err(e) => eprintln!("mcp_conformance_server: listening (address unknown: {e})"),
    }
    let server = everything();
    let running = McpHttpListener::new(acceptor).spawn(move |_: &PeerAddr| server.router());
    let signal = signals.recv().await;
    eprintln!("mcp_conformance_server: {signal}, shutting down");
    running.shutdown(GRACE).await;
    ExitCode::SUCCESS
}
