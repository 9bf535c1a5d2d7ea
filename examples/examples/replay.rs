//! Run with: cargo run --example replay -- RECORDING (--child "CMD ARGS" | --tcp ADDR | --unix PATH | --ws URL) [--content-length] [--wait MS]
//!
//! Plays the inbound side of a session recording (written by
//! `Transport::recorded` on the server) against a server, and reports where
//! the server's answers now differ from the recorded ones: a bug report as a
//! file, replayed against a fixed (or a broken) build.
//!
//! Every recorded `in` frame is sent in order. After a request, the replayer
//! waits (up to `--wait`, default 5,000 ms) for the answer with its id; a
//! request the server makes meanwhile is answered with the next recorded
//! `in` response, as the original client did. At the end it prints one line
//! per difference (an answer missing, different, or not in the recording)
//! and a summary; the exit code is 0 when every answer matched, 1 when one
//! differed, 2 on bad arguments or an unreadable recording.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use jsonrpc_runtime::codec::{Frame, Framing};
use jsonrpc_runtime::transport::{TcpConnector, UnixConnector, WebSocketConnector};
use jsonrpc_runtime::{transport::ChildProcess, Config, Transport};
use serde_json::Value;

#[path = "support/logging.rs"]
mod logging;

const USAGE: &str = "usage: replay RECORDING (--child \"CMD ARGS\" | --tcp ADDR | --unix PATH | --ws URL) [--content-length] [--wait MS]";

/// Where the server is.
enum Target {
    Child(String),
    Tcp(String),
    Unix(String),
    Ws(String),
}

struct Options {
    recording: String,
    target: Target,
    content_length: bool,
    wait: Duration,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let recording = args.next().ok_or_else(|| USAGE.to_owned())?;
    let mut target = None;
    let mut content_length = false;
    let mut wait = Duration::from_millis(5000);
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("`{arg}` needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--child" => target = Some(Target::Child(value()?)),
            "--tcp" => target = Some(Target::Tcp(value()?)),
            "--unix" => target = Some(Target::Unix(value()?)),
            "--ws" => target = Some(Target::Ws(value()?)),
            "--content-length" => content_length = true,
            "--wait" => {
                let ms = value()?;
                let ms: u64 = ms
                    .parse()
                    .map_err(|_| format!("`--wait` needs milliseconds, not `{ms}`\n{USAGE}"))?;
                wait = Duration::from_millis(ms);
            }
            other => return Err(format!("unknown argument `{other}`\n{USAGE}")),
        }
    }
    let target = target.ok_or_else(|| format!("no server given\n{USAGE}"))?;
    Ok(Options {
        recording,
        target,
        content_length,
        wait,
    })
}

/// One recorded frame.
struct Recorded {
    dir: String,
    frame: Value,
}

fn read_recording(path: &str) -> Result<Vec<Recorded>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .filter_map(|(n, line)| {
            let parsed: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(e) => return Some(Err(format!("{path}:{}: not JSON: {e}", n + 1))),
            };
            // Frames that were not JSON (or were refused) cannot be compared.
            let frame = parsed.get("frame")?.clone();
            let dir = parsed.get("dir")?.as_str()?.to_owned();
            Some(Ok(Recorded { dir, frame }))
        })
        .collect()
}

/// The transport, and the child process behind it (killed when dropped).
type Connected = (Transport, Option<jsonrpc_runtime::transport::ChildHandle>);

async fn connect(options: &Options) -> Result<Connected, String> {
    let framing = if options.content_length {
        Framing::ContentLength
    } else {
        Framing::NewlineDelimited
    };
    let config = Config::default().framing(framing);
    let failed = |e: &dyn std::fmt::Display| format!("cannot reach the server: {e}");
    match &options.target {
        Target::Child(command) => {
            let mut words = command.split_whitespace();
            let program = words.next().ok_or_else(|| USAGE.to_owned())?;
            let mut command = tokio::process::Command::new(program);
            command.args(words);
            let child = ChildProcess::spawn(command, &config).map_err(|e| failed(&e))?;
            let (transport, handle) = child.into_parts();
            Ok((transport, Some(handle)))
        }
        Target::Tcp(addr) => TcpConnector::new(addr.as_str())
            .codec(&config)
            .connect()
            .await
            .map(|t| (t, None))
            .map_err(|e| failed(&e)),
        Target::Unix(path) => UnixConnector::new(path)
            .codec(&config)
            .connect()
            .await
            .map(|t| (t, None))
            .map_err(|e| failed(&e)),
        Target::Ws(url) => WebSocketConnector::new(url.as_str())
            .connect()
            .await
            .map(|t| (t, None))
            .map_err(|e| failed(&e)),
    }
}

fn is_request(frame: &Value) -> bool {
    frame.get("method").is_some() && frame.get("id").is_some()
}

fn is_response(frame: &Value) -> bool {
    frame.get("method").is_none() && frame.get("id").is_some()
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let recording = match read_recording(&options.recording) {
        Ok(recording) => recording,
        Err(message) => {
            eprintln!("replay: {message}");
            return ExitCode::from(2);
        }
    };
    let (mut transport, _child) = match connect(&options).await {
        Ok(connected) => connected,
        Err(message) => {
            eprintln!("replay: {message}");
            return ExitCode::from(2);
        }
    };

    // What the server answered then, by id.
    let expected: HashMap<String, &Value> = recording
        .iter()
        .filter(|r| r.dir == "out" && is_response(&r.frame))
        .map(|r| (r.frame["id"].to_string(), &r.frame))
        .collect();
    let inbound: Vec<&Value> = recording
        .iter()
        .filter(|r| r.dir == "in")
        .map(|r| &r.frame)
        .collect();

    let mut answers: HashMap<String, Value> = HashMap::new();
    let mut next = 0;
    while next < inbound.len() {
        let frame = inbound[next];
        next += 1;
        let body = Bytes::from(frame.to_string());
        if let Err(e) = transport.send(body).await {
            eprintln!("replay: the server stopped reading: {e}");
            break;
        }
        if !is_request(frame) {
            continue;
        }
        let id = frame["id"].to_string();
        let deadline = tokio::time::Instant::now() + options.wait;
        while !answers.contains_key(&id) {
            let item = match tokio::time::timeout_at(deadline, transport.next()).await {
                Ok(Some(Ok(Frame::Message(bytes)))) => bytes,
                // Refused frames (and kinds added later) are not answers.
                Ok(Some(Ok(_))) => continue,
                Ok(Some(Err(e))) => {
                    eprintln!("replay: the connection failed: {e}");
                    break;
                }
                Ok(None) | Err(_) => break,
            };
            let Ok(message) = serde_json::from_slice::<Value>(&item) else {
                continue;
            };
            if is_response(&message) {
                answers.insert(message["id"].to_string(), message);
            } else if is_request(&message) && next < inbound.len() && is_response(inbound[next]) {
                // The server calls back: answer as the original client did.
                let reply = Bytes::from(inbound[next].to_string());
                next += 1;
                if transport.send(reply).await.is_err() {
                    break;
                }
            }
        }
    }

    let mut differences = 0;
    let mut ids: Vec<&String> = expected.keys().collect();
    ids.sort();
    for id in ids {
        let then = expected[id];
        match answers.get(id) {
            None => {
                differences += 1;
                println!("id {id}: no answer now; recorded {then}");
            }
            Some(now) if now != then => {
                differences += 1;
                println!("id {id}: answered {now}; recorded {then}");
            }
            Some(_) => {}
        }
    }
    for (id, now) in &answers {
        if !expected.contains_key(id) {
            differences += 1;
            println!("id {id}: answered {now}; not in the recording");
        }
    }
    println!(
        "replay: {} answers compared, {differences} differ",
        expected.len()
    );
    if differences == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
