//! Run with: cargo run --example mcp_server [-- --http ADDR [--tls-cert FILE --tls-key FILE] [--instance-tag TAG] [--bearer NAME=TOKEN]...]
//!
//! A Model Context Protocol server on stdin/stdout, or with `--http ADDR`
//! over Streamable HTTP at `http://ADDR/mcp`, written with `jsonrpc_mcp`:
//! the tools are typed functions of an [`McpServer`], and the layer serves
//! `initialize`, `tools/list` and `tools/call` for them.
//!
//! - `initialize` answers with the client's protocol version when it is
//!   supported (`2025-11-25` back to `2024-11-05`), else the latest one,
//!   plus `serverInfo` and `capabilities.tools`. Requests before
//!   `initialize` get -32002 and `ping` is answered `{}` at any time: both
//!   come from [`Config::mcp`].
//! - `tools/list` lists four tools, `tools/call` runs them:
//!   `echo {text}` returns `text`, `add {a, b}` returns the sum,
//!   `sleep {ms}` sleeps, reporting `notifications/progress` when the caller
//!   sent a progress token, and `roots` asks the client for its roots
//!   (`roots/list`, a call from the server to the client) when the client
//!   declared the `roots` capability. `notifications/cancelled` stops a
//!   sleep at once and nothing is answered (the preset drops the handler's
//!   future).
//! - `resources/list` lists `example://readme`, `resources/templates/list`
//!   the template `example://echo/{text}` (reading `example://echo/hi`
//!   gives `hi`), and `prompts/get review {code, focus?}` fills a prompt
//!   in; `completion/complete` suggests values for its `focus`.
//! - An unknown tool is -32602; arguments that do not fit the tool are a
//!   tool error (`isError: true`) on `2025-11-25` and -32602 on the earlier
//!   revisions, as each revision says.
//!
//! Over stdio, only JSON-RPC goes to stdout; logs go to stderr. The server
//! exits once stdin ends and every answer owed has been written.
//!
//! Over HTTP (`--http 127.0.0.1:8080`; keep it on a loopback address
//! unless it asks for tokens) each client gets a session of its own, with
//! the same tools. The server runs until SIGTERM or SIGINT, then drains:
//! running calls finish (for up to a second), every session ends, and it
//! exits 0. `--tls-cert FILE --tls-key FILE` (PEM) serve it as
//! `https://ADDR/mcp`; `--instance-tag TAG` starts every session id with
//! `TAG.`, for a load balancer to send a session's requests to the instance
//! that made it (see `docs/deploy.md`).
//!
//! `--bearer NAME=TOKEN` (as many as there are users) makes every request
//! carry `Authorization: Bearer TOKEN`, checked by the listener's
//! [`on_connect`](McpHttpListener::on_connect) hook: without one the answer is
//! `401` with `WWW-Authenticate: Bearer realm="mcp"`, with a token no user
//! has it is `401` with `error="invalid_token"` (RFC 6750), and a valid
//! one makes NAME the caller's identity. A session belongs to the user
//! whose token sent its `initialize`: another user's request with its id is
//! answered `404`, as for a session that does not exist. The `initialize`
//! log line names the user.
//!
//! Try it from a shell (MCP clients wait for the `initialize` answer before
//! sending anything else, hence the pause):
//!
//! ```text
//! cargo build --example mcp_server
//! { echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}'
//!   sleep 1
//!   echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
//!   echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}'
//! } | target/debug/examples/mcp_server
//! ```
//!
//! Over HTTP, see `docs/guide-mcp-server.md` ("Streamable HTTP") for a `curl`
//! session.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use jsonrpc_mcp::prompts::PromptMessage;
use jsonrpc_mcp::resources::{Resource, ResourceTemplate};
use jsonrpc_mcp::types::{NoArguments, ResourceContents};
use jsonrpc_mcp::{McpServer, ToolContext, ToolError};
use jsonrpc_runtime::connection::PeerAddr;
use jsonrpc_runtime::connection::Refusal;
use jsonrpc_runtime::server::McpHttpListener;
use jsonrpc_runtime::tls::ServerTls;
use jsonrpc_runtime::transport::{Acceptor, TcpAcceptor, TlsAcceptor};
use jsonrpc_runtime::{Config, Peer, Transport};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Number};

#[path = "support/signals.rs"]
mod signals;
use signals::Signals;

#[path = "support/logging.rs"]
mod logging;

/// The longest `sleep` accepted, so a typo cannot park a request for days.
const MAX_SLEEP_MS: u64 = 600_000;

/// How many slices a `sleep` is cut into; one progress report per slice.
const SLEEP_STEPS: u32 = 10;

/// How long running calls get to finish when the HTTP server is stopped.
const GRACE: Duration = Duration::from_secs(1);

const USAGE: &str = "usage: mcp_server [--http ADDR [--tls-cert FILE --tls-key FILE] \
                     [--instance-tag TAG] [--bearer NAME=TOKEN]...]";

/// The realm named in `WWW-Authenticate` when a token is missing or wrong.
const REALM: &str = "mcp";

// ---------------------------------------------------------------------------
// The server: its tools, each a typed function. `jsonrpc_mcp` answers
// `initialize` (negotiating the revision), `tools/list` (with each tool's
// input schema from its argument type) and `tools/call`.

fn server() -> McpServer {
    McpServer::new("jsonrpc-runtime-mcp-example", env!("CARGO_PKG_VERSION"))
        .instructions("Tools: echo, add, sleep, roots. Resources: example://readme, example://echo/{text}. Prompt: review.")
        .on_initialize(|params, version, ctx| {
            let client = &params.client_info;
            // The user whose bearer token opened the session (`--bearer`).
            let user = match ctx.connection().identity() {
                Some(user) => format!(" (user {user})"),
                None => String::new(),
            };
            eprintln!(
                "mcp_server: initialize from {} {}{user}, asked {}, answering {version}",
                client.name, client.version, params.protocol_version
            );
        })
        .tool("echo", "Returns its text unchanged.", |args: EchoArgs, _: ToolContext| async move {
            Ok::<_, ToolError>(args.text)
        })
        .tool("add", "Adds two numbers.", |args: AddArgs, _: ToolContext| async move {
            Ok::<_, ToolError>(sum(&args.a, &args.b))
        })
        .tool(
            "sleep",
            "Sleeps for `ms` milliseconds, reporting progress; cancellable.",
            sleep,
        )
        .tool(
            "roots",
            "Lists the client's roots, asking the client (`roots/list`).",
            roots,
        )
        .resource(
            Resource::new("example://readme", "readme")
                .description("What this server is.")
                .mime_type("text/plain"),
            |uri: String, _: ToolContext| async move {
                Ok(vec![ResourceContents::text(uri, "text/plain", README)])
            },
        )
        .resource_template(
            ResourceTemplate::new("example://echo/{text}", "echo")
                .description("A resource whose text is the end of its URI.")
                .mime_type("text/plain"),
            |uri: String, vars: HashMap<String, String>, _: ToolContext| async move {
                Ok(vec![ResourceContents::text(uri, "text/plain", vars["text"].as_str())])
            },
        )
        .prompt(
            "review",
            "Asks the model to review some code.",
            |args: ReviewArgs, _: ToolContext| async move {
                let focus = args.focus.as_deref().unwrap_or("anything worth fixing");
                Ok(vec![PromptMessage::user(format!(
                    "Review this code, looking for {focus}:\n\n{}",
                    args.code
                ))])
            },
        )
        .complete_prompt_argument(
            "review",
            "focus",
            |typed: String, _, _: ToolContext| async move {
                let topics = ["bugs", "bounds checks", "naming", "performance", "style"];
                Ok(topics
                    .iter()
                    .filter(|topic| topic.starts_with(typed.as_str()))
                    .map(|topic| (*topic).to_owned())
                    .collect())
            },
        )
}

/// The text of the `example://readme` resource.
const README: &str = "An MCP server built with jsonrpc-mcp: four tools, two resources, one prompt.";

/// The `review` prompt's arguments.
#[derive(Deserialize, JsonSchema)]
struct ReviewArgs {
    /// The code to review.
    code: String,
    /// What to look for (anything, when left out).
    focus: Option<String>,
}

// The tools' arguments: each type's JSON Schema is the tool's `inputSchema`.

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to return.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first number.
    a: Number,
    /// The second number.
    b: Number,
}

#[derive(Deserialize, JsonSchema)]
struct SleepArgs {
    /// How long to sleep, in milliseconds.
    #[schemars(range(max = MAX_SLEEP_MS))]
    ms: u64,
}

/// Asks the client for its roots (a call from the server to the client,
/// on the same connection or session; a tool error when the client did
/// not declare `roots`) and lists them, one per line.
async fn roots(_: NoArguments, cx: ToolContext) -> Result<String, ToolError> {
    let roots = cx.list_roots().await?;
    if roots.is_empty() {
        return Ok("(no roots)".to_owned());
    }
    let lines: Vec<String> = roots
        .into_iter()
        .map(|root| match root.name {
            Some(name) => format!("{} ({name})", root.uri),
            None => root.uri,
        })
        .collect();
    Ok(lines.join("\n"))
}

/// `a + b`: exact for integers (any two JSON integers that fit in 64 bits
/// add up exactly in 128), floating-point otherwise.
fn sum(a: &Number, b: &Number) -> String {
    let integer = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    if let (Some(a), Some(b)) = (integer(a), integer(b)) {
        return (a + b).to_string();
    }
    let float = a.as_f64().unwrap_or(f64::NAN) + b.as_f64().unwrap_or(f64::NAN);
    float.to_string()
}

/// Sleeps `ms` in [`SLEEP_STEPS`] slices, reporting progress before each
/// slice when the caller sent a progress token.
///
/// There is no report at 100%: the answer says that, and some clients (the
/// TypeScript SDK among them) handle a notification a tick after the
/// response that follows it on the wire, so a report written right before
/// the answer would reach them after the call had ended.
///
/// Cancellation drops this future wherever it waits; the guard logs it.
async fn sleep(args: SleepArgs, ctx: ToolContext) -> Result<String, ToolError> {
    if args.ms > MAX_SLEEP_MS {
        return Err(ToolError::new(format!(
            "`ms` must be at most {MAX_SLEEP_MS}, got {}",
            args.ms
        )));
    }
    let mut guard = StopLog {
        id: ctx.id().map(ToString::to_string).unwrap_or_default(),
        started: Instant::now(),
        ms: args.ms,
        finished: false,
    };
    let total = Duration::from_millis(args.ms);
    let report = |step: u32| {
        let slept = args.ms * u64::from(step) / u64::from(SLEEP_STEPS);
        let value = json!({
            "progress": step,
            "total": SLEEP_STEPS,
            "message": format!("slept {slept} of {} ms", args.ms),
        });
        if let Err(e) = ctx.progress(value) {
            eprintln!("mcp_server: sleep could not report progress: {e}");
        }
    };
    for step in 0..SLEEP_STEPS {
        report(step);
        let slice_end = total * (step + 1) / SLEEP_STEPS;
        // An elapsed deadline is skipped: tokio rounds it up to the next
        // millisecond tick.
        let deadline = guard.started + slice_end;
        if deadline > Instant::now() {
            tokio::time::sleep_until(deadline.into()).await;
        }
    }
    guard.finished = true;
    Ok(format!("slept {} ms", args.ms))
}

/// Logs a sleep that was stopped before it finished (cancelled, or the
/// connection closed).
struct StopLog {
    id: String,
    started: Instant,
    ms: u64,
    finished: bool,
}

impl Drop for StopLog {
    fn drop(&mut self) {
        if !self.finished {
            eprintln!(
                "mcp_server: sleep (request {}) stopped after {:.3} ms of {} ms",
                self.id,
                self.started.elapsed().as_secs_f64() * 1000.0,
                self.ms
            );
        }
    }
}

// ---------------------------------------------------------------------------

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() {
        return serve_stdio().await;
    }
    match HttpOptions::parse(&args) {
        Some(options) => serve_http(&options).await,
        None => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

/// `--http ADDR`, and optionally a certificate and key for HTTPS, the
/// instance tag session ids start with (for a load balancer to route on)
/// and the users' bearer tokens.
struct HttpOptions {
    addr: String,
    tls: Option<(String, String)>,
    instance_tag: Option<String>,
    /// Each user's name, by token (`--bearer NAME=TOKEN`); empty: no
    /// authentication.
    users: HashMap<String, String>,
}

impl HttpOptions {
    fn parse(args: &[String]) -> Option<HttpOptions> {
        let (mut addr, mut cert, mut key, mut instance_tag) = (None, None, None, None);
        let mut users = HashMap::new();
        let mut args = args.iter();
        while let Some(flag) = args.next() {
            let value = args.next()?.clone();
            match flag.as_str() {
                "--http" => addr = Some(value),
                "--tls-cert" => cert = Some(value),
                "--tls-key" => key = Some(value),
                // ASCII letters, digits, `-` and `_`: what the listener takes.
                "--instance-tag"
                    if !value.is_empty()
                        && value
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') =>
                {
                    instance_tag = Some(value)
                }
                // A name, and a token in RFC 6750's `b64token` syntax; one
                // token per user.
                "--bearer" => {
                    let (name, token) = value.split_once('=')?;
                    if name.is_empty() || !is_b64token(token) {
                        return None;
                    }
                    if users.insert(token.to_owned(), name.to_owned()).is_some() {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        let tls = match (cert, key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return None,
        };
        Some(HttpOptions {
            addr: addr?,
            tls,
            instance_tag,
            users,
        })
    }
}

/// RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
/// "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
}

/// `listener` with a hook that checks every request's bearer token when
/// there are users: a missing or unknown token is refused with `401` and a
/// `WWW-Authenticate` challenge (RFC 6750 section 3), a known one gives the
/// request its user's name as its identity, which binds the session it
/// opens to that user.
fn authenticated<A>(
    listener: McpHttpListener<A>,
    users: &HashMap<String, String>,
) -> McpHttpListener<A>
where
    A: Acceptor,
    A::Connection: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    if users.is_empty() {
        return listener;
    }
    let users = users.clone();
    listener.on_connect(move |info| {
        let Some(token) = info.bearer_token() else {
            return Err(Refusal::unauthorized("a bearer token is required")
                .header("www-authenticate", &format!("Bearer realm=\"{REALM}\"")));
        };
        // A lookup by token: a real server would compare hashes of its
        // tokens in constant time, or ask its identity provider.
        let Some(user) = users.get(token) else {
            return Err(
                Refusal::unauthorized("the bearer token is not valid").header(
                    "www-authenticate",
                    &format!(
                        "Bearer realm=\"{REALM}\", error=\"invalid_token\", \
                     error_description=\"the token is not valid\""
                    ),
                ),
            );
        };
        info.set_identity(user.as_str());
        Ok(())
    })
}

async fn serve_stdio() -> ExitCode {
    let config = Config::mcp();
    let transport = match Transport::stdio(&config) {
        Ok(transport) => transport,
        Err(e) => {
            eprintln!("mcp_server: cannot use stdin/stdout: {e}");
            return ExitCode::FAILURE;
        }
    };
    let reason = Peer::builder()
        .config(config)
        .router(server().router())
        .serve(transport)
        .await;
    eprintln!("mcp_server: {reason}");
    // Every answer owed has been written. Exit here rather than return:
    // when stdin is a terminal, tokio reads it on a blocking thread that
    // would keep the runtime (and the process) alive until the next line.
    std::process::exit(reason.exit_code())
}

/// Serves MCP over Streamable HTTP at `http://ADDR/mcp` (or `https://`)
/// until SIGTERM or SIGINT, each session with tools of its own.
async fn serve_http(options: &HttpOptions) -> ExitCode {
    let addr = options.addr.as_str();
    // Before anything is bound, so a signal sent as soon as the server says
    // it listens is handled, not fatal.
    let mut signals = match Signals::new() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("mcp_server: cannot handle signals: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = match &options.tls {
        None => {
            let acceptor = match TcpAcceptor::bind(addr).await {
                Ok(acceptor) => acceptor,
                Err(e) => {
                    eprintln!("mcp_server: cannot listen on {addr}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            listening("http", acceptor.local_addr());
            mcp_listener(McpHttpListener::new(acceptor), options)
        }
        Some((cert, key)) => {
            let tls = match ServerTls::from_pem_files(cert, key) {
                Ok(tls) => tls,
                Err(e) => {
                    eprintln!("mcp_server: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let acceptor = match TlsAcceptor::bind(addr, tls).await {
                Ok(acceptor) => acceptor,
                Err(e) => {
                    eprintln!("mcp_server: cannot listen on {addr}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            listening("https", acceptor.local_addr());
            mcp_listener(McpHttpListener::new(acceptor), options)
        }
    };
    let signal = signals.recv().await;
    eprintln!("mcp_server: {signal}, shutting down");
    server.shutdown(GRACE).await;
    ExitCode::SUCCESS
}

fn listening(scheme: &str, local: std::io::Result<std::net::SocketAddr>) {
    match local {
        Ok(local) => eprintln!("mcp_server: listening on {scheme}://{local}/mcp"),
        Err(e) => eprintln!("mcp_server: listening (address unknown: {e})"),
    }
}

/// The MCP server on `listener`, with the example's tools and options.
fn mcp_listener<A>(
    listener: McpHttpListener<A>,
    options: &HttpOptions,
) -> jsonrpc_runtime::server::Server
where
    A: Acceptor,
    A::Connection: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let mut listener = authenticated(listener, &options.users)
        .on_session_close(|id, why| eprintln!("mcp_server: session {id} ended: {why}"));
    if let Some(tag) = &options.instance_tag {
        listener = listener.instance_tag(tag);
    }
    let server = server();
    listener.spawn(move |_: &PeerAddr| server.router())
}
