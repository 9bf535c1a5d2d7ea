//! The command line: the usage text, the flags, and the checks across them
//! that turn flags into [`Options`].

use std::path::PathBuf;
use std::time::Duration;

use jsonrpc_runtime::http::{HeaderName, HeaderValue};
use jsonrpc_runtime::tls::ClientTls;
use serde_json::value::RawValue;
use tokio::sync::Semaphore;

use crate::target::{ClientSettings, Link, Target};

pub(crate) const USAGE: &str = "\
usage: load (--tcp ADDR | --unix PATH | --ws URL-or-ADDR | --http URL-or-ADDR | --child \"CMD ARGS...\")
            [--ca FILE] [--header \"NAME: VALUE\"]... [--bearer TOKEN]
            [--calls N] [--in-flight N] [--method NAME] [--params JSON]
            [--content-length] [--drain-timeout SECS] [--json]
       load TARGET --subscribe METHOD --unsubscribe METHOD [--params JSON]
            [--items N | --duration SECS] [--drain-timeout SECS] [--json]

  --tcp ADDR            connect to a TCP server (host:port); TLS with --ca
  --unix PATH           connect to a Unix-socket server
  --ws URL-or-ADDR      connect to a WebSocket server (ws:// or wss://host:port/path, or host:port)
  --http URL-or-ADDR    post to a JSON-RPC server over HTTP (http:// or https://host:port/path,
                        or host:port); each request is one POST
  --child \"CMD ARGS...\" spawn CMD and talk over its stdin/stdout (split on whitespace)
  --ca FILE             PEM roots the server's certificate must chain to: for wss:// and
                        https:// URLs, and for --tcp (which it turns to TLS over TCP)
  --header \"NAME: VALUE\"
                        a request header, repeatable (--ws: the handshake; --http: every POST)
  --bearer TOKEN        send `Authorization: Bearer TOKEN` (--ws and --http)
  --calls N             requests to send (default 100000)
  --in-flight N         most requests unanswered at once (default 100)
  --method NAME         the method to call (default echo)
  --params JSON         its params, an object or an array (default {\"hello\":\"world\",\"n\":42});
                        with --subscribe, the subscribe request's params (default none)
  --content-length      LSP framing (Content-Length headers) on tcp, unix and child
  --drain-timeout SECS  how long to wait for the last answers (default 10); with --subscribe,
                        also for the subscribe answer, each next item and the unsubscribe answer
  --json                print the summary as one JSON object on stdout

subscription mode (not over --http, which carries no notifications):
  --subscribe METHOD    open a subscription; its answer is the subscription id, and items are
                        the notifications with params {\"subscription\": id, \"result\": item}
  --unsubscribe METHOD  end it, with params [id], once enough items came
  --items N             stop after N items (default 100000)
  --duration SECS       stop SECS seconds after the subscription opened
  Integer items are checked in sequence: each that is not the previous one + 1 is a gap.

exit code: 0 if every request was answered exactly once (by the server: over --http, a failed
POST is not an answer; with --subscribe: the items asked for came, with no gaps, and the
unsubscribe was answered), 1 if not, 2 for bad arguments";

const DEFAULT_CALLS: u64 = 100_000;
/// Every id is tracked (9 bytes each): a billion calls take 9 GB.
const MAX_CALLS: u64 = 1_000_000_000;
const DEFAULT_IN_FLIGHT: usize = 100;
const DEFAULT_METHOD: &str = "echo";
const DEFAULT_PARAMS: &str = r#"{"hello":"world","n":42}"#;
const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_ITEMS: u64 = 100_000;
/// Items are only counted: the cap keeps the number readable.
const MAX_ITEMS: u64 = 1_000_000_000_000;

/// Command-line options.
#[derive(Debug)]
pub(crate) struct Options {
    pub(crate) link: Link,
    pub(crate) drain_timeout: Duration,
    pub(crate) json: bool,
    pub(crate) mode: Mode,
}

/// What to send.
#[derive(Debug)]
pub(crate) enum Mode {
    /// Requests, each answer counted.
    Calls(Calls),
    /// One subscription, its items counted.
    Subscribe(Subscribe),
}

/// The calls mode: `--calls` requests of `--method`.
#[derive(Debug)]
pub(crate) struct Calls {
    pub(crate) calls: u64,
    pub(crate) in_flight: usize,
    pub(crate) method: String,
    pub(crate) params: Box<RawValue>,
}

/// The subscription mode.
#[derive(Debug)]
pub(crate) struct Subscribe {
    pub(crate) subscribe: String,
    pub(crate) unsubscribe: String,
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) until: Until,
}

/// When a subscription has delivered what was asked.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Until {
    Items(u64),
    Elapsed(Duration),
}

/// What the command line asked for instead of a load run.
pub(crate) enum NoRun {
    Help,
    Bad(String),
}

/// The flags as given, before the checks across them.
#[derive(Default)]
struct Flags {
    target: Option<Target>,
    ca: Option<PathBuf>,
    headers: Vec<(HeaderName, HeaderValue)>,
    bearer: Option<String>,
    calls: Option<u64>,
    in_flight: Option<usize>,
    method: Option<String>,
    params: Option<String>,
    subscribe: Option<String>,
    unsubscribe: Option<String>,
    items: Option<u64>,
    duration: Option<Duration>,
    content_length: bool,
    drain_timeout: Option<Duration>,
    json: bool,
}

impl Options {
    pub(crate) fn parse(args: impl Iterator<Item = String>) -> Result<Options, NoRun> {
        let flags = Flags::read(args)?;
        flags.into_options().map_err(NoRun::Bad)
    }
}

impl Flags {
    fn read(mut args: impl Iterator<Item = String>) -> Result<Flags, NoRun> {
        let bad = NoRun::Bad;
        let mut flags = Flags::default();
        while let Some(arg) = args.next() {
            // Flags without a value first.
            match arg.as_str() {
                "-h" | "--help" => return Err(NoRun::Help),
                "--content-length" => flags.content_length = true,
                "--json" => flags.json = true,
                _ if arg.starts_with("--") => {}
                _ => return Err(bad(format!("unexpected argument `{arg}`"))),
            }
            if matches!(arg.as_str(), "--content-length" | "--json") {
                continue;
            }
            let value = args
                .next()
                .ok_or_else(|| bad(format!("`{arg}` needs a value")))?;
            if let Some(picked) = Target::from_option(&arg, value.clone()) {
                if flags.target.is_some() {
                    return Err(bad(format!(
                        "`{arg}`: give exactly one of --tcp, --unix, --ws, --http, --child"
                    )));
                }
                flags.target = Some(picked.map_err(bad)?);
                continue;
            }
            flags.set(&arg, value).map_err(bad)?;
        }
        Ok(flags)
    }

    /// Records the value of a flag that picks no target.
    fn set(&mut self, flag: &str, value: String) -> Result<(), String> {
        match flag {
            "--calls" => self.calls = Some(positive(flag, &value, MAX_CALLS)?),
            "--in-flight" => {
                let n = positive(flag, &value, Semaphore::MAX_PERMITS as u64)?;
                self.in_flight = Some(usize::try_from(n).map_err(|e| e.to_string())?);
            }
            "--method" => self.method = Some(value),
            "--params" => self.params = Some(value),
            "--drain-timeout" => self.drain_timeout = Some(seconds(flag, &value)?),
            "--ca" => self.ca = Some(PathBuf::from(value)),
            "--header" => self.headers.push(header(&value)?),
            "--bearer" => {
                if HeaderValue::try_from(format!("Bearer {value}")).is_err() {
                    return Err(
                        "`--bearer`: the token holds characters a header cannot carry \
                                (control characters, a newline)"
                            .to_owned(),
                    );
                }
                self.bearer = Some(value);
            }
            "--subscribe" => self.subscribe = Some(value),
            "--unsubscribe" => self.unsubscribe = Some(value),
            "--items" => self.items = Some(positive(flag, &value, MAX_ITEMS)?),
            "--duration" => match seconds(flag, &value)? {
                d if d.is_zero() => {
                    return Err(format!(
                        "`--duration {value}`: expected more than 0 seconds"
                    ))
                }
                d => self.duration = Some(d),
            },
            _ => return Err(format!("unknown option `{flag}`")),
        }
        Ok(())
    }

    fn into_options(mut self) -> Result<Options, String> {
        let target = self.target.take().ok_or_else(|| {
            "say where to send the load: --tcp, --unix, --ws, --http or --child".to_owned()
        })?;
        if self.content_length && !target.uses_framer() {
            return Err(format!(
                "`--content-length` does not apply to {}: it has its own framing",
                target.kind()
            ));
        }
        if !target.takes_headers() {
            let flag = match (self.headers.is_empty(), &self.bearer) {
                (_, Some(_)) => Some("--bearer"),
                (false, None) => Some("--header"),
                (true, None) => None,
            };
            if let Some(flag) = flag {
                return Err(format!(
                    "`{flag}` applies to --ws and --http, whose requests carry headers; {} has none",
                    target.kind()
                ));
            }
        }
        let mode = self.mode(&target)?;
        // Last: it reads the file.
        let (target, tls) = with_ca(target, self.ca.as_deref())?;
        Ok(Options {
            link: Link {
                target,
                settings: ClientSettings {
                    tls,
                    headers: self.headers,
                    bearer: self.bearer,
                },
                content_length: self.content_length,
            },
            drain_timeout: self.drain_timeout.unwrap_or(DEFAULT_DRAIN_TIMEOUT),
            json: self.json,
            mode,
        })
    }

    /// Calls, or a subscription, with their defaults filled in.
    fn mode(&mut self, target: &Target) -> Result<Mode, String> {
        let params = self.params.take();
        let (subscribe, unsubscribe) = match (self.subscribe.take(), self.unsubscribe.take()) {
            (None, None) => {
                if self.items.is_some() || self.duration.is_some() {
                    return Err("`--items` and `--duration` go with `--subscribe`".to_owned());
                }
                return Ok(Mode::Calls(Calls {
                    calls: self.calls.unwrap_or(DEFAULT_CALLS),
                    in_flight: self.in_flight.unwrap_or(DEFAULT_IN_FLIGHT),
                    method: self
                        .method
                        .take()
                        .unwrap_or_else(|| DEFAULT_METHOD.to_owned()),
                    params: structured_params(params.as_deref().unwrap_or(DEFAULT_PARAMS))?,
                }));
            }
            (Some(subscribe), Some(unsubscribe)) => (subscribe, unsubscribe),
            (Some(_), None) => {
                return Err("`--subscribe` needs `--unsubscribe METHOD`, to end it".to_owned())
            }
            (None, Some(_)) => return Err("`--unsubscribe` goes with `--subscribe`".to_owned()),
        };
        if !target.carries_notifications() {
            return Err(
                "`--subscribe` needs a connection the server can notify on: \
                        HTTP carries only answers; use --tcp, --unix, --ws or --child"
                    .to_owned(),
            );
        }
        let calls_only = [
            (self.calls.is_some(), "--calls"),
            (self.in_flight.is_some(), "--in-flight"),
            (self.method.is_some(), "--method"),
        ];
        if let Some((_, flag)) = calls_only.iter().find(|(given, _)| *given) {
            return Err(format!("`{flag}` applies to calls, not to `--subscribe`"));
        }
        let until = match (self.items, self.duration) {
            (Some(_), Some(_)) => return Err("give `--items` or `--duration`, not both".to_owned()),
            (_, Some(duration)) => Until::Elapsed(duration),
            (items, None) => Until::Items(items.unwrap_or(DEFAULT_ITEMS)),
        };
        Ok(Mode::Subscribe(Subscribe {
            subscribe,
            unsubscribe,
            params: params.as_deref().map(structured_params).transpose()?,
            until,
        }))
    }
}

/// The target `--ca` applies to (`--tcp` becomes TLS over TCP) and the
/// roots it reads; an error where TLS does not apply.
fn with_ca(
    target: Target,
    ca: Option<&std::path::Path>,
) -> Result<(Target, Option<ClientTls>), String> {
    let Some(path) = ca else {
        return Ok((target, None));
    };
    let target = match target {
        Target::Tcp(addr) => Target::Tls(addr),
        web @ (Target::Ws(_) | Target::Http(_)) if web.is_secure() => web,
        Target::Ws(url) | Target::Http(url) => {
            return Err(format!(
                "`--ca` applies to wss:// and https:// URLs: `{url}` is not secure"
            ))
        }
        other => {
            return Err(format!(
                "`--ca` applies to --tcp, wss:// and https://: {} has no TLS",
                other.kind()
            ))
        }
    };
    let tls = ClientTls::from_roots_pem_file(path).map_err(|e| format!("`--ca`: {e}"))?;
    Ok((target, Some(tls)))
}

/// `Name: value`, as a header.
fn header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let Some((name, value)) = text.split_once(':') else {
        return Err(format!(
            "`--header {text}`: expected `NAME: VALUE`, such as `X-Tenant: blue`"
        ));
    };
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("`--header {text}`: `{}` is not a header name", name.trim()))?;
    let value = HeaderValue::from_str(value.trim()).map_err(|_| {
        format!("`--header {text}`: the value holds characters a header cannot carry")
    })?;
    Ok((name, value))
}

/// A count from 1 to `max`; `1_000_000` is accepted.
fn positive(flag: &str, value: &str, max: u64) -> Result<u64, String> {
    match value.replace('_', "").parse::<u64>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{flag} {value}`: expected a whole number from 1 to {max}"
        )),
    }
}

/// A duration in seconds, fractions allowed.
fn seconds(flag: &str, value: &str) -> Result<Duration, String> {
    value
        .parse::<f64>()
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| format!("`{flag} {value}`: expected a number of seconds"))
}

/// Params as JSON-RPC allows them: an object or an array.
fn structured_params(text: &str) -> Result<Box<RawValue>, String> {
    let raw: Box<RawValue> =
        serde_json::from_str(text).map_err(|e| format!("`--params {text}` is not JSON: {e}"))?;
    match raw.get().as_bytes().first() {
        Some(b'{' | b'[') => Ok(raw),
        _ => Err(format!(
            "`--params {text}`: JSON-RPC params are an object or an array"
        )),
    }
}
