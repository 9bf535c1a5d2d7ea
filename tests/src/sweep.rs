//! The size sweep's values, routes and sizes, shared by
//! `tests/tests/size_sweep.rs` and the `sweep_peer` binary (its server in a
//! child process).
//!
//! Every value is JSON text of an exact length in one of several
//! [`Flavor`]s, so a frame can be made to land on each of the runtime's size
//! thresholds to the byte; every route passes raw JSON, so what arrives can
//! be compared with what was sent byte for byte.

use std::sync::{Arc, Mutex};

use jsonrpc_runtime::codec::Framing;
use jsonrpc_runtime::config::IdStrategy;
use jsonrpc_runtime::policy::ProgressPolicy;
use jsonrpc_runtime::{Config, Context, ErrorObject, Id, Router};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

/// What a value is made of: each flavor exercises another part of the
/// envelope scanner and of serde_json's paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flavor {
    /// One long string of ASCII letters.
    Plain,
    /// A string full of escapes: quotes, backslashes, control characters.
    Escapes,
    /// A string of two-, three- and four-byte UTF-8 characters.
    NonAscii,
    /// Pretty-printed JSON: raw newlines and indentation between members.
    Pretty,
    /// Arrays nested around and past the scanner's depth limit.
    Deep,
    /// An object of many short members.
    Members,
}

/// Every flavor, in a fixed order.
pub const FLAVORS: [Flavor; 6] = [
    Flavor::Plain,
    Flavor::Escapes,
    Flavor::NonAscii,
    Flavor::Pretty,
    Flavor::Deep,
    Flavor::Members,
];

/// The shortest value [`value`] makes in a flavor other than padding.
const SHORTEST: usize = 8;

/// A JSON object whose text is exactly `len` bytes (at least 2), in
/// `flavor`; `seed` varies the content. Values shorter than a flavor needs
/// are an object padded with spaces.
pub fn value(len: usize, flavor: Flavor, seed: u64) -> String {
    assert!(len >= 2, "no JSON object is shorter than `{{}}`");
    if len < SHORTEST {
        return format!("{{{}}}", " ".repeat(len - 2));
    }
    let out = match flavor {
        Flavor::Plain => string_object(len, |_| "y"),
        Flavor::Escapes => {
            const UNITS: [&str; 8] = ["\\\"", "a", "\\\\", "\\n", "\\u0001", "b", "\\t", "/"];
            string_object(len, |i| UNITS[(i + seed as usize) % UNITS.len()])
        }
        Flavor::NonAscii => {
            const UNITS: [&str; 6] = ["é", "€", "😀", "ж", "a", "中"];
            string_object(len, |i| UNITS[(i + seed as usize) % UNITS.len()])
        }
        Flavor::Pretty => pretty(len, seed),
        Flavor::Deep => deep(len, seed),
        Flavor::Members => members(len),
    };
    debug_assert_eq!(out.len(), len, "{flavor:?}");
    out
}

/// `{"s":"…"}` with the string's text made of `unit(i)`s, each taken whole
/// while it fits and plain letters after.
fn string_object(len: usize, unit: impl Fn(usize) -> &'static str) -> String {
    let mut out = String::with_capacity(len);
    out.push_str("{\"s\":\"");
    fill(&mut out, len - 2, unit);
    out.push_str("\"}");
    out
}

/// Appends units to `out` until it is `to` bytes long.
fn fill(out: &mut String, to: usize, unit: impl Fn(usize) -> &'static str) {
    let mut i = 0;
    while out.len() < to {
        let next = unit(i);
        if out.len() + next.len() <= to {
            out.push_str(next);
        } else {
            out.push('y');
        }
        i += 1;
    }
}

/// An indented object over several lines, its last string padded.
fn pretty(len: usize, seed: u64) -> String {
    let head = format!(
        "{{\n  \"n\": {},\n  \"list\": [\n    1,\n    2\n  ],\n  \"s\": \"",
        seed % 10
    );
    let tail = "\"\n}";
    if head.len() + tail.len() > len {
        return string_object(len, |_| "y");
    }
    let mut out = head;
    fill(&mut out, len - tail.len(), |_| "p");
    out.push_str(tail);
    out
}

/// `{"d":[[[…["…"]…]]]}`: a depth of 63, 64, 65 or 100 arrays (around the
/// scanner's limit of 64, under serde_json's 128), as deep as `len` allows.
fn deep(len: usize, seed: u64) -> String {
    const DEPTHS: [usize; 4] = [63, 64, 65, 100];
    let mut depth = DEPTHS[(seed % 4) as usize];
    // `{"d":` + depth `[` + `""` + depth `]` + `}`
    while depth > 0 && 5 + 2 * depth + 2 + 1 > len {
        depth -= 1;
    }
    if depth == 0 {
        return string_object(len, |_| "y");
    }
    let mut out = String::with_capacity(len);
    out.push_str("{\"d\":");
    out.push_str(&"[".repeat(depth));
    out.push('"');
    let close = 1 + depth + 1;
    fill(&mut out, len - close, |_| "d");
    out.push('"');
    out.push_str(&"]".repeat(depth));
    out.push('}');
    out
}

/// `{"k0":0,"k1":1,…,"z":"…"}`: members until the rest is padding.
fn members(len: usize) -> String {
    let mut out = String::with_capacity(len);
    out.push('{');
    let tail = "\"z\":\"\"}".len();
    let mut k = 0;
    loop {
        let member = format!("\"k{k}\":{k},");
        if out.len() + member.len() + tail > len {
            break;
        }
        out.push_str(&member);
        k += 1;
    }
    out.push_str("\"z\":\"");
    fill(&mut out, len - 2, |_| "z");
    out.push_str("\"}");
    out
}

/// What a value becomes on a newline-delimited transport: each raw newline
/// a space (whitespace either way, and the frame keeps its length).
pub fn on_the_wire(text: &str, framing: Framing) -> String {
    match framing {
        Framing::NewlineDelimited => text.replace('\n', " "),
        _ => text.to_owned(),
    }
}

/// The length and FNV-1a hash of a text: what a route sends back for a
/// value it was given, so the answer stays small.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Digest {
    /// The text's length in bytes.
    pub len: usize,
    /// Its 64-bit FNV-1a hash.
    pub fnv: u64,
}

/// The [`Digest`] of `text`.
pub fn digest(text: &str) -> Digest {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in text.as_bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    Digest {
        len: text.len(),
        fnv: hash,
    }
}

/// What a client asks a route to make: a value of `len` bytes.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Ask {
    /// The value's length in bytes.
    pub len: usize,
    /// What it is made of.
    pub flavor: Flavor,
    /// Varies its content.
    pub seed: u64,
}

impl Ask {
    /// The value this asks for.
    pub fn value(&self) -> String {
        value(self.len, self.flavor, self.seed)
    }

    fn raw(&self) -> Box<RawValue> {
        RawValue::from_string(self.value()).expect("values are JSON")
    }
}

/// The sweep's method names.
pub mod method {
    /// Request: params of any size; answers their [`Digest`](super::Digest).
    pub const PARAMS: &str = "sweep/params";
    /// Request: [`Ask`](super::Ask); answers the value asked for.
    pub const RESULT: &str = "sweep/result";
    /// Request: [`Ask`](super::Ask); answers -32010 with the value as data.
    pub const ERROR: &str = "sweep/error";
    /// Notification: params of any size, kept as a digest.
    pub const NOTE: &str = "sweep/note";
    /// Request: the digests of the notes since the last time, in order.
    pub const NOTES: &str = "sweep/notes";
    /// Request: [`Ask`](super::Ask); sends the value to the caller as a
    /// [`PUSHED`] notification, then answers `"sent"`.
    pub const PUSH: &str = "sweep/push";
    /// Notification to the client: the value [`PUSH`] was asked for.
    pub const PUSHED: &str = "sweep/pushed";
    /// Request: [`Ask`](super::Ask) with a progress token; reports the value
    /// as progress, then answers `"done"`.
    pub const PROGRESS: &str = "sweep/progress";
}

/// The code of [`method::ERROR`]'s answers.
pub const ERROR_CODE: i64 = -32010;

/// The server's routes. The notes are kept by the router, across the
/// connections it serves (one at a time in the sweep).
pub fn router() -> Router {
    let notes: Arc<Mutex<Vec<Digest>>> = Arc::default();
    let kept = notes.clone();
    Router::new()
        .request("initialize", |_: Value, _: Context| async move {
            Ok::<_, ErrorObject>(serde_json::json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "sweep", "version": "0"},
            }))
        })
        .notification("notifications/initialized", |_: Value, _: Context| async {})
        .request(
            method::PARAMS,
            |params: Box<RawValue>, _: Context| async move {
                Ok::<_, ErrorObject>(digest(params.get()))
            },
        )
        .request(method::RESULT, |ask: Ask, _: Context| async move {
            Ok::<_, ErrorObject>(ask.raw())
        })
        .request(method::ERROR, |ask: Ask, _: Context| async move {
            let error = ErrorObject::new(ERROR_CODE, "the value asked for, as data")
                .with_data(&ask.raw())
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            Err::<(), _>(error)
        })
        .notification(method::NOTE, move |params: Box<RawValue>, _: Context| {
            let kept = kept.clone();
            async move { kept.lock().unwrap().push(digest(params.get())) }
        })
        .request(method::NOTES, move |_: Value, _: Context| {
            let notes = notes.clone();
            async move { Ok::<_, ErrorObject>(std::mem::take(&mut *notes.lock().unwrap())) }
        })
        .request(method::PUSH, |ask: Ask, ctx: Context| async move {
            ctx.peer()
                .notify(method::PUSHED, ask.raw())
                .await
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            Ok::<_, ErrorObject>("sent")
        })
        .request(method::PROGRESS, |ask: Ask, ctx: Context| async move {
            ctx.progress(ask.raw())
                .map_err(|e| ErrorObject::internal_error(e.to_string()))?;
            Ok::<_, ErrorObject>("done")
        })
}

/// The config both sides of the sweep use: `framing`, a frame cap of
/// `max_frame_len`, LSP-style progress, and ids of one width (`"s0000001"`,
/// …) so that an envelope's length does not change from call to call.
pub fn config(framing: Framing, max_frame_len: usize) -> Config {
    Config::default()
        .framing(framing)
        .max_frame_len(max_frame_len)
        .progress(ProgressPolicy::lsp())
        .id_strategy(fixed_width_ids())
}

/// The MCP preset with the sweep's frame cap and ids.
pub fn mcp_config(max_frame_len: usize) -> Config {
    Config::mcp()
        .max_frame_len(max_frame_len)
        .id_strategy(fixed_width_ids())
}

/// Ids `"s0000001"`, `"s0000002"`, …: all of one width.
pub fn fixed_width_ids() -> IdStrategy {
    let next = std::sync::atomic::AtomicU64::new(1);
    IdStrategy::custom(move || {
        let n = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Id::from(format!("s{:07}", n % 10_000_000))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flavor_makes_valid_json_of_the_exact_length() {
        for flavor in FLAVORS {
            for len in (2..300).chain([1023, 1024, 1025, 16_384, 65_537]) {
                for seed in 0..4 {
                    let text = value(len, flavor, seed);
                    assert_eq!(text.len(), len, "{flavor:?} {len}");
                    let parsed: Value = serde_json::from_str(&text)
                        .unwrap_or_else(|e| panic!("{flavor:?} {len}: {e}: {text}"));
                    assert!(parsed.is_object(), "{flavor:?} {len}");
                }
            }
        }
    }

    #[test]
    fn deep_values_cross_the_scanners_depth_limit() {
        for (seed, depth) in [(0, 63), (1, 64), (2, 65), (3, 100)] {
            let text = value(1000, Flavor::Deep, seed);
            assert_eq!(text.matches('[').count(), depth);
        }
    }
}
