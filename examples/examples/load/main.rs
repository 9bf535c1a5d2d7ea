//! Run with: cargo run --release --example load -- (--tcp ADDR | --ws URL | --http URL | ...) [--calls N | --subscribe METHOD --unsubscribe METHOD]
//!
//! A load generator for any JSON-RPC server. By default it sends `--calls`
//! requests (`--method`, default `echo`, with `--params`, default a small
//! object) over one connection, keeping at most `--in-flight` unanswered,
//! and reports calls per second, latency percentiles, error answers, and
//! the answers that were lost or duplicated. With `--subscribe` it opens
//! one subscription instead and reports the items it delivers, their rate
//! and the gaps in their sequence.
//!
//! The connection is one of `--tcp ADDR`, `--unix PATH`, `--ws URL-or-ADDR`,
//! `--http URL-or-ADDR` (each request one `POST`, each answer body one
//! inbound message) or `--child "CMD ARGS..."` (the command is spawned and
//! spoken to over its stdin and stdout; its words are split on whitespace,
//! with no shell quoting). `--content-length` switches TCP, Unix sockets
//! and the child to LSP framing. `--ca FILE` names the PEM roots the
//! server's certificate chains to, for `wss://` and `https://` URLs and
//! for TLS over TCP (`--tcp` with `--ca`); `--header "NAME: VALUE"` and
//! `--bearer TOKEN` add request headers over WebSocket (the handshake) and
//! HTTP (every `POST`).
//!
//! It shows how to use a [`Transport`](jsonrpc_runtime::Transport) without
//! a peer: a peer drops answers whose id it does not know, so it could not
//! see a duplicate. Here every request gets a unique id (1, 2, 3, ...), the
//! frames are read and classified one by one, and each id's answers are
//! counted. Once every request has been answered the tool closes its side
//! and reads until the server closes (or `--drain-timeout` passes), so a
//! late duplicate is seen too; over HTTP each request is its own `POST`,
//! answered once, and the run ends with the last answer (a `POST` that
//! fails gets an error answer made up by the transport, -32100: these are
//! counted as HTTP failures, and fail the run). Ids still
//! unanswered when the server closes, or `--drain-timeout` after the last
//! request was sent (or after the last answer, while the server has
//! stopped answering), are lost.
//!
//! The subscription mode (`--subscribe METHOD --unsubscribe METHOD
//! [--params JSON] [--items N | --duration SECS]`) sends one subscribe
//! request and takes its answer's result as the subscription id. Items are
//! the notifications whose params are `{"subscription": <id>, "result":
//! <item>}` (the format of jsonrpsee and Ethereum-style nodes); one with
//! `error` in place of `result` is the server ending the subscription.
//! When the items are integers, each that is not the previous one + 1 is
//! a gap. After `--items` items (default 100000) or `--duration` seconds
//! the tool sends the unsubscribe request with params `[id]` and waits for
//! its answer.
//!
//! A progress line goes to stderr when it is a terminal; the summary goes
//! to stdout (`--json`: one JSON object, for scripts). The exit code is 0
//! when every request was answered exactly once (with `--subscribe`: when
//! the items asked for came with no gaps and the unsubscribe was
//! answered), 1 otherwise, and 2 for bad arguments.
//!
//! Against the `spec_server` example:
//!
//! ```text
//! cargo run --release --example spec_server -- --tcp 127.0.0.1:9000 --http 127.0.0.1:9080 &
//! cargo run --release --example load -- --tcp 127.0.0.1:9000 --calls 1000000 --in-flight 1000
//! cargo run --release --example load -- --http 127.0.0.1:9080 --calls 100000 --in-flight 64
//! cargo run --release --example load -- --child "target/release/examples/spec_server"
//! cargo run --release --example load -- --tcp 127.0.0.1:9000 \
//!     --subscribe subscribe_ticks --unsubscribe unsubscribe_ticks --params '[0,0]' --items 1000000
//! ```

use std::fmt::Write as _;
use std::process::ExitCode;

use serde_json::Value;

mod calls;
mod feed;
mod options;
mod progress;
mod subscribe;
mod tally;
mod target;

#[path = "../support/logging.rs"]
mod logging;

use options::{Mode, NoRun, Options, USAGE};

/// A run's summary, as printed.
trait Report {
    /// Whether the run did what was asked: the exit code.
    fn ok(&self) -> bool;
    /// One JSON object, for `--json`.
    fn to_json(&self) -> Value;
    /// Lines for a person.
    fn to_text(&self) -> String;
}

/// `head`, then one line per label and value, the values aligned.
fn render(head: &str, lines: &[(&str, String)]) -> String {
    let mut out = format!("{head}\n");
    for (label, value) in lines {
        let _ = writeln!(out, "{label:<17} {value}");
    }
    out
}

/// Prints the summary; the exit code it calls for.
fn report(summary: &impl Report, json: bool) -> ExitCode {
    if json {
        println!("{}", summary.to_json());
    } else {
        print!("{}", summary.to_text());
    }
    if summary.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    logging::init();
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(NoRun::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(NoRun::Bad(message)) => {
            eprintln!("load: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let Options {
        link,
        drain_timeout,
        json,
        mode,
    } = options;
    let done = match mode {
        Mode::Calls(calls) => calls::run(&link, calls, drain_timeout)
            .await
            .map(|summary| report(&summary, json)),
        Mode::Subscribe(sub) => subscribe::run(&link, sub, drain_timeout)
            .await
            .map(|summary| report(&summary, json)),
    };
    done.unwrap_or_else(|message| {
        eprintln!("load: {message}");
        ExitCode::FAILURE
    })
}
