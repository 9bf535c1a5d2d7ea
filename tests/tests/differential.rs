//! Differential tests of the runtime's fast paths through the public API:
//! each fast path and its plain twin on the same random and hand-picked
//! input, with identical outcomes required.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::future::IntoFuture as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use bytes::Bytes;
use futures_util::{Sink, StreamExt as _};
use jsonrpc_runtime::__private::SIZE_THRESHOLDS;
use jsonrpc_runtime::codec::{ContentLengthCodec, Frame, FramingError, LineCodec};
use jsonrpc_runtime::transport::TransportError;
use jsonrpc_runtime::{rpc, Config, Context, ErrorObject, Peer, Router, Transport};
use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Value};

/// A threshold of the runtime, by the name it is listed under.
fn threshold(name: &str) -> usize {
    SIZE_THRESHOLDS
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no threshold {name}"))
        .bytes
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        ProptestConfig {
            // A failure prints its minimal input; nothing is written to disk.
            failure_persistence: None,
            ..ProptestConfig::with_cases(cases)
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

// ===========================================================================
// Large-frame decoding against small-frame decoding.
//
// Fast path: a frame over `SCAN_MAX` (16 KiB) is scanned with its params
// decoded in place, straight into the route's type, while the frame is
// read (`scan_large`, the decoded slot of `message/raw.rs`). Plain path:
// the same params in a frame under `SCAN_MAX`, validated by the scanner and
// then decoded by the route from their text. `Router::respond` answers
// both; the answers must be the same result, or the same error (code and
// message, positions aside), for typed routes of every kind. The large
// frame is the small one padded by whitespace before it, after it or
// inside the params, or by a long string member the type ignores (against
// a short one in the small frame).
//
// That the large frame's params were decoded in the scan is seen by the
// types themselves: `Probe` records the deserializer it is handed, and the
// scan's is not the plain path's (it watches for errors the type recovers
// from).

thread_local! {
    /// The deserializers `Probe`s were handed, in order.
    static DESERIALIZERS: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
    /// What the `note` notification decoded.
    static NOTED: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// A `T` that records the type of the deserializer it is decoded by.
#[derive(Debug)]
struct Probe<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Probe<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        DESERIALIZERS.with(|seen| seen.borrow_mut().push(std::any::type_name::<D>()));
        T::deserialize(deserializer).map(Probe)
    }
}

impl<T: Serialize> Serialize for Probe<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Point {
    x: i64,
    y: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Exact {
    x: i64,
    y: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
enum Shape {
    Point,
    Circle(f64),
    Rect { w: i32, h: i32 },
}

#[derive(Debug, Serialize, Deserialize)]
struct ShapeParams {
    shape: Shape,
    #[serde(default)]
    more: Vec<Shape>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind")]
enum Tagged {
    A { x: i64 },
    B { list: Vec<i64> },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Loose {
    Numbers(Vec<i64>),
    Named { x: i64, y: Option<String> },
}

/// Params whose list reads as empty when it does not decode: its
/// `Deserialize` recovers from an inner error.
#[derive(Debug, Serialize, Deserialize)]
struct Lenient {
    #[serde(default, deserialize_with = "empty_if_wrong")]
    list: Vec<u32>,
    text: Option<String>,
}

fn empty_if_wrong<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    Ok(Vec::<u32>::deserialize(d).unwrap_or_default())
}

/// A generated route: params by name or by position.
#[rpc]
trait Calc {
    #[rpc(request = "calc/sum")]
    async fn sum(&self, a: Probe<i64>, b: Option<i64>, tags: Vec<String>) -> Value;
}

struct Calculator;

impl Calc for Calculator {
    async fn sum(&self, a: Probe<i64>, b: Option<i64>, tags: Vec<String>) -> Value {
        json!({ "sum": a.0.wrapping_add(b.unwrap_or(0)), "tags": tags })
    }
}

/// Every route, named by method: each returns what it decoded.
fn typed_router() -> Router {
    fn echo<T: Serialize>(value: T) -> Result<T, ErrorObject> {
        Ok(value)
    }
    Router::new()
        .request(
            "point",
            |p: Probe<Point>, _: Context| async move { echo(p) },
        )
        .request(
            "exact",
            |p: Probe<Exact>, _: Context| async move { echo(p) },
        )
        .request("shape", |p: Probe<ShapeParams>, _: Context| async move {
            echo(p)
        })
        .request(
            "tagged",
            |p: Probe<Tagged>, _: Context| async move { echo(p) },
        )
        .request(
            "loose",
            |p: Probe<Loose>, _: Context| async move { echo(p) },
        )
        .request(
            "vec",
            |p: Probe<Vec<i64>>, _: Context| async move { echo(p) },
        )
        .request(
            "tuple",
            |p: Probe<(i64, Option<String>)>, _: Context| async move { echo(p) },
        )
        .request(
            "optional",
            |p: Probe<Option<Point>>, _: Context| async move { echo(p) },
        )
        .request(
            "lenient",
            |p: Probe<Lenient>, _: Context| async move { echo(p) },
        )
        .request("raw", |p: Probe<Box<RawValue>>, _: Context| async move {
            echo(p)
        })
        .request(
            "value",
            |Probe(mut value): Probe<Value>, _: Context| async move {
                // The padding member is the frame's, not the params'.
                if let Some(object) = value.as_object_mut() {
                    object.remove("pad");
                }
                echo(value)
            },
        )
        .notification("note", |p: Probe<Point>, _: Context| async move {
            NOTED.with(|noted| noted.borrow_mut().push(format!("{:?}", p.0)));
        })
        .merge(Calculator.into_router())
}

const ROUTES: &[&str] = &[
    "point", "exact", "shape", "tagged", "loose", "vec", "tuple", "optional", "lenient", "raw",
    "value", "note", "calc/sum",
];

/// A request (a notification for `note`) of `method` with `params`, `lead`
/// before it and `trail` after it.
fn envelope(lead: &str, method: &str, params: &str, trail: &str) -> String {
    let id = if method == "note" { "" } else { r#""id":1,"# };
    format!(r#"{lead}{{"jsonrpc":"2.0",{id}"method":"{method}","params":{params}}}{trail}"#)
}

/// `params` with `text` inserted right after its opening bracket.
fn inside(params: &str, text: &str) -> String {
    format!("{}{text}{}", &params[..1], &params[1..])
}

/// Pairs of a small frame and a large one (over `SCAN_MAX` by `extra`
/// bytes and one more) that say the same, with how the large one is
/// padded.
fn pairs(method: &str, params: &str, extra: usize) -> Vec<(String, String, &'static str)> {
    let scan_max = threshold("message::scan::SCAN_MAX");
    let small = envelope("", method, params, "");
    // Padding that takes a frame of `len` bytes past the limit.
    let pad = |len: usize| (scan_max + 1 + extra).saturating_sub(len);
    let mut pairs = vec![
        (
            small.clone(),
            envelope(&" ".repeat(pad(small.len())), method, params, ""),
            "whitespace before the frame",
        ),
        (
            small.clone(),
            envelope(
                "",
                method,
                params,
                &"\r\n\t ".repeat(pad(small.len()) / 4 + 1),
            ),
            "whitespace after the frame",
        ),
    ];
    if !params.starts_with(['{', '[']) {
        return pairs;
    }
    // Raw params are their text: whitespace inside them is part of it.
    if method != "raw" {
        let space = "\n \t\r".repeat(pad(small.len()) / 4 + 1);
        pairs.push((
            small.clone(),
            envelope("", method, &inside(params, &space), ""),
            "whitespace inside the params",
        ));
    }
    // A member the type ignores (or refuses alike), long against short.
    let empty = params[1..].trim_start().starts_with('}');
    if params.starts_with('{') && method != "raw" {
        let with = |pad: &str| {
            let comma = if empty { "" } else { "," };
            inside(params, &format!(r#""pad":"{pad}"{comma}"#))
        };
        let short = envelope("", method, &with("y"), "");
        let long = envelope("", method, &with(&"y".repeat(pad(short.len()) + 1)), "");
        pairs.push((short, long, "a long string member inside the params"));
    }
    pairs
}

/// What answering one frame came to: the answer (positions in error
/// messages left out), what a notification decoded, and the deserializers
/// the params' type was handed.
#[derive(Debug)]
struct Outcome {
    answer: Option<Value>,
    noted: Vec<String>,
    deserializers: Vec<&'static str>,
}

fn answer(runtime: &tokio::runtime::Runtime, router: &Router, frame: &str) -> Outcome {
    DESERIALIZERS.with(|seen| seen.borrow_mut().clear());
    NOTED.with(|noted| noted.borrow_mut().clear());
    let bytes = runtime.block_on(router.respond(frame.as_bytes()));
    let answer = bytes.map(|bytes| {
        // serde_json reads no number past `f64` into a `Value` (a raw
        // route echoes `1e400`): such an answer is compared as text.
        let mut answer: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| json!({ "text": String::from_utf8_lossy(&bytes) }));
        if let Some(Value::String(message)) = answer.pointer_mut("/error/message") {
            // serde_json's "at line 1 column 90": where in the frame.
            if let Some(at) = message.find(" at line ") {
                message.truncate(at);
            }
        }
        answer
    });
    Outcome {
        answer,
        noted: NOTED.with(|noted| noted.take()),
        deserializers: DESERIALIZERS.with(|seen| seen.take()),
    }
}

/// The deserializer serde_json hands a type that `from_str` decodes.
fn plain_deserializer() -> &'static str {
    DESERIALIZERS.with(|seen| {
        let before = seen.borrow().len();
        serde_json::from_str::<Probe<i64>>("1").unwrap();
        seen.borrow_mut().remove(before)
    })
}

/// How often the large frame's params were decoded in the scan and used
/// as they were (no second decode).
#[derive(Debug, Default)]
struct Served {
    pairs: usize,
    decoded_in_scan: usize,
}

/// The small frame and the large one of each pair answered alike.
fn compare_sizes(
    runtime: &tokio::runtime::Runtime,
    router: &Router,
    method: &str,
    params: &str,
    extra: usize,
    served: &RefCell<Served>,
) -> Result<(), TestCaseError> {
    let scan_max = threshold("message::scan::SCAN_MAX");
    for (small_frame, large_frame, how) in pairs(method, params, extra) {
        prop_assert!(small_frame.len() <= scan_max, "{}", small_frame);
        prop_assert!(large_frame.len() > scan_max);
        let small = answer(runtime, router, &small_frame);
        let large = answer(runtime, router, &large_frame);
        prop_assert_eq!(
            &small.answer,
            &large.answer,
            "`{}` with params {} and {}",
            method,
            params,
            how
        );
        prop_assert_eq!(&small.noted, &large.noted, "`{}` with {}", method, params);
        // Where serde_json handed the small frame's params to their type,
        // the scan handed the large frame's first.
        let plain = plain_deserializer();
        if small.deserializers.first() == Some(&plain) {
            let scanned = large.deserializers.first();
            prop_assert!(
                scanned.is_some_and(|scanned| *scanned != plain),
                "`{}` with {} and {}: not decoded in the scan ({:?})",
                method,
                params,
                how,
                large.deserializers
            );
        }
        let mut served = served.borrow_mut();
        served.pairs += 1;
        let answered = large
            .answer
            .as_ref()
            .is_none_or(|a| a.get("result").is_some());
        served.decoded_in_scan += usize::from(large.deserializers.len() == 1 && answered);
    }
    Ok(())
}

/// Params to try on every route: each kind of route's own shape, broken
/// ones, recovered-from ones, duplicates, deep nesting, empty containers.
const PARAMS: &[&str] = &[
    r#"{"x":1,"y":"é\n\"😀","tags":["a","\u00e9"]}"#,
    r#"{"x":-9223372036854775808}"#,
    r#"{"x":1,"y":null}"#,
    r#"{"y":"no x"}"#,
    r#"{"x":1,"x":2}"#,
    r#"{"x":"1"}"#,
    r#"{"x":1e400}"#,
    r#"{"x":1,"y":"\ud800"}"#,
    r#"{"x":1,"tags":["a",2]}"#,
    r#"{"shape":"Point"}"#,
    r#"{"shape":{"Circle":1.5},"more":[{"Rect":{"w":1,"h":-2}},"Point"]}"#,
    r#"{"shape":{"Circle":"big"}}"#,
    r#"{"shape":"Square"}"#,
    r#"{"kind":"A","x":1}"#,
    r#"{"x":1,"kind":"B","list":[1,2]}"#,
    r#"{"kind":"C"}"#,
    r#"{"list":[1,"x"],"text":"t"}"#,
    r#"{"list":"x","text":"t"}"#,
    r#"{"list":[1,2],"text":"t"}"#,
    // Broken, but the list's type stops serde_json before the break and
    // the envelope's end follows what it read.
    r#"{"list":[1,"x"}"#,
    r#"{"text":"t","list":["x"}"#,
    r#"{"a":5,"b":null,"tags":[]}"#,
    r#"{"a":5,"b":7,"tags":["x"]}"#,
    r#"{"a":"5"}"#,
    r#"[5,null,["x"]]"#,
    r#"[5]"#,
    r#"[1,2,3]"#,
    r#"[1,"a"]"#,
    r#"[1,null]"#,
    r#"[]"#,
    r#"{}"#,
    r#"{ }"#,
    r#"[{"x":1}]"#,
    r#"null"#,
    r#"5"#,
    r#"{"x":1,}"#,
    r#"[1,"x"}"#,
    r#"{"x":1"#,
];

#[test]
fn large_frames_decode_params_as_small_frames_do() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let router = typed_router();
    let served = RefCell::new(Served::default());
    let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
    let deep_ok = format!("{}1{}", "[".repeat(100), "]".repeat(100));
    let params = PARAMS
        .iter()
        .copied()
        .chain([deep.as_str(), deep_ok.as_str()]);
    for params in params {
        for method in ROUTES {
            compare_sizes(&runtime, &router, method, params, 0, &served).unwrap();
        }
    }
    let served = served.into_inner();
    assert!(served.decoded_in_scan > 50, "{served:?}");
}

/// A value for one of the routes' fields, of the right type or not.
fn field() -> BoxedStrategy<Value> {
    let text = "[a-z\"\\\\\n\t\u{1}é😀 ]{0,10}";
    let leaf = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (0u32..10).prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        text.prop_map(Value::from),
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop::sample::select(vec!["A", "B", "C", "Point", "Square"]).prop_map(Value::from),
        (-1e3f64..1e3).prop_map(|r| json!({ "Circle": r })),
        (any::<i32>(), any::<i32>()).prop_map(|(w, h)| json!({ "Rect": { "w": w, "h": h } })),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(any::<i64>(), 0..4).prop_map(|ns| json!(ns)),
            (any::<i64>(), inner).prop_map(|(x, y)| json!({ "x": x, "y": y })),
        ]
    })
    .boxed()
}

/// Params for any route: objects of the routes' field names, arrays.
fn params() -> BoxedStrategy<Value> {
    let key = prop::sample::select(vec![
        "x", "y", "tags", "list", "text", "kind", "shape", "more", "a", "b", "z",
    ]);
    prop_oneof![
        3 => prop::collection::btree_map(key, field(), 0..5)
            .prop_map(|map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        1 => prop::collection::vec(field(), 0..4).prop_map(Value::Array),
    ]
    .boxed()
}

#[test]
fn large_frames_decode_random_params_as_small_frames_do() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let router = typed_router();
    let served = RefCell::new(Served::default());
    let case = (prop::sample::select(ROUTES), params(), 0usize..2048);
    runner(256)
        .run(&case, |(method, params, extra)| {
            let params = serde_json::to_string(&params).unwrap();
            compare_sizes(&runtime, &router, method, &params, extra, &served)
        })
        .unwrap();
    let served = served.into_inner();
    assert!(served.decoded_in_scan > 100, "{served:?}");
}

// ===========================================================================
// Inline writes against the writer task.
//
// Fast path: a call that is the only one waiting is written on the
// caller's task when the writer is idle (`Shared::send_inline`, then
// `flush_inline`); the answers a reader queued in a burst are written by
// the reader at the burst's end (`flush_inline`). Plain path: the writer
// task, which writes whatever is queued, in order. Over the in-memory pair
// and over `tokio::io::duplex` with either framer (its buffer smaller than
// the largest frames, so an inline write can stall and be handed to the
// writer), the same calls, of sizes across the runtime's thresholds up to
// ~200 KiB, made one at a time (each written by its caller) and all at
// once (64 in flight: all but the first written by the writer task) get
// the same answers, and every message, call and answer, has the same bytes
// sent and received either way.
//
// What decides the path: a call goes inline when it is the only one in the
// table of pending calls (`PendingTable::register`), the reader is not in a
// burst (`Outbox::held`) and the writer task waits for frames
// (`Outbox::claim`); otherwise it is queued for the writer. The runtime
// counts neither, so the test tells them apart by construction (one call
// at a time after a first exchange, or 64 at once with an outbound budget
// none waits for) and checks it: a wrapping transport records each frame
// with whether it was written on the calling task (a task-local set there)
// and which task wrote it (answers come from the reader's task and the
// writer's).

tokio::task_local! {
    /// Set on the task that makes the calls.
    static CALLER: ();
}

/// One frame written into a transport's sink.
#[derive(Debug)]
struct Written {
    frame: Bytes,
    /// Written on the task that makes the calls.
    by_caller: bool,
    /// The task that wrote it.
    task: Option<tokio::task::Id>,
}

/// What went through one side's transport.
#[derive(Debug, Default)]
struct Log {
    written: Vec<Written>,
    read: Vec<Bytes>,
}

type SharedLog = Arc<Mutex<Log>>;

/// A sink that records what it is given, and who gave it.
struct Recorder<S> {
    inner: S,
    log: SharedLog,
}

impl<S: Sink<Bytes, Error = TransportError> + Unpin> Sink<Bytes> for Recorder<S> {
    type Error = TransportError;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.inner).poll_ready(cx)
    }

    fn start_send(mut self: Pin<&mut Self>, frame: Bytes) -> Result<(), TransportError> {
        self.log.lock().unwrap().written.push(Written {
            frame: frame.clone(),
            by_caller: CALLER.try_with(|()| ()).is_ok(),
            task: tokio::task::try_id(),
        });
        Pin::new(&mut self.inner).start_send(frame)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        Pin::new(&mut self.inner).poll_close(cx)
    }
}

/// `transport`, with every frame read and written recorded.
fn recorded(transport: Transport) -> (Transport, SharedLog) {
    let log = SharedLog::default();
    let (sink, stream) = transport.split();
    let read = log.clone();
    let stream = stream.inspect(move |item| {
        if let Ok(Frame::Message(frame)) = item {
            read.lock().unwrap().read.push(frame.clone());
        }
    });
    let sink = Recorder {
        inner: sink,
        log: log.clone(),
    };
    (Transport::new(stream, sink), log)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Pair,
    Lines,
    ContentLength,
}

/// Two connected transports.
fn connect(wire: Wire) -> (Transport, Transport) {
    fn duplex<C>(codec: C) -> (Transport, Transport)
    where
        C: tokio_util::codec::Decoder<Item = Frame, Error = FramingError>
            + tokio_util::codec::Encoder<Bytes, Error = FramingError>
            + Clone
            + Send
            + 'static,
    {
        // Smaller than the largest frames: writes stall half-way.
        let (a, b) = tokio::io::duplex(64 * 1024);
        let (a_read, a_write) = tokio::io::split(a);
        let (b_read, b_write) = tokio::io::split(b);
        (
            Transport::from_io(a_read, a_write, codec.clone()),
            Transport::from_io(b_read, b_write, codec),
        )
    }
    match wire {
        Wire::Pair => Transport::pair(64),
        Wire::Lines => duplex(LineCodec::new()),
        Wire::ContentLength => duplex(ContentLengthCodec::new()),
    }
}

/// `len` bytes of text: plain, or dense with what JSON escapes.
fn text(len: usize, plain: bool) -> String {
    if plain {
        return "y".repeat(len);
    }
    let unit = "a\"é\\\n😀\t";
    let mut text = unit.repeat(len / unit.len());
    text.push_str(&"x".repeat(len - text.len()));
    text
}

#[derive(Debug, Deserialize)]
struct EchoParams {
    n: u64,
    answer: usize,
    text: String,
}

/// What `echo` answers `n` (sent `text`, asking for `answer` bytes).
fn echo_result(n: u64, text_len: usize, answer: usize) -> Value {
    json!({ "n": n, "len": text_len, "text": text(answer, n % 2 == 0) })
}

/// `echo`: a result of the size asked for; every third handler waits once
/// first (its answer is then written from its own task's send, not at the
/// end of the reader's burst).
fn echo_router() -> Router {
    Router::new().request("echo", |p: EchoParams, _: Context| async move {
        if p.n % 3 == 1 {
            tokio::task::yield_now().await;
        }
        Ok::<_, ErrorObject>(echo_result(p.n, p.text.len(), p.answer))
    })
}

/// Sizes on both sides of the runtime's thresholds up to 200 KiB, and a
/// few others.
fn sizes() -> Vec<usize> {
    let mut sizes = vec![0, 100, 150_000, 200 * 1024];
    for t in SIZE_THRESHOLDS.iter().filter(|t| t.bytes <= 200 * 1024) {
        sizes.extend([t.bytes - 1, t.bytes, t.bytes + 1]);
    }
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The calls: `(n, params text, answer size)`, sizes in changing order.
fn calls() -> Vec<(u64, String, usize)> {
    let sizes = sizes();
    (0..64u64)
        .map(|n| {
            let i = n as usize;
            let sent = sizes[(i * 7 + 3) % sizes.len()];
            let answer = sizes[(i * 11 + 5) % sizes.len()];
            (n, text(sent, n % 4 < 2), answer)
        })
        .collect()
}

/// The id a frame of ours carries (`{"jsonrpc":"2.0","id":N,…`).
fn id_of(frame: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(&frame[..frame.len().min(64)]);
    let digits = text
        .split_once(r#""id":"#)
        .map(|(_, rest)| {
            rest.split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap_or("")
        })
        .unwrap_or("");
    digits.parse().unwrap_or_else(|_| panic!("no id in {text}"))
}

/// One connection's traffic, frames by id.
#[derive(Debug)]
struct Session {
    answers: Vec<Value>,
    client: SharedLog,
    server: SharedLog,
}

impl Session {
    fn written(log: &SharedLog) -> BTreeMap<u64, Bytes> {
        let log = log.lock().unwrap();
        log.written
            .iter()
            .map(|w| (id_of(&w.frame), w.frame.clone()))
            .collect()
    }

    fn read(log: &SharedLog) -> BTreeMap<u64, Bytes> {
        let log = log.lock().unwrap();
        log.read
            .iter()
            .map(|frame| (id_of(frame), frame.clone()))
            .collect()
    }
}

/// The calls over a fresh connection: one at a time, or all at once.
async fn session(wire: Wire, together: bool) -> Session {
    let (client, server) = connect(wire);
    let (client, client_log) = recorded(client);
    let (server, server_log) = recorded(server);
    // Room for every call at once: none waits for the budget (and then
    // goes out alone). A call never answered fails rather than hangs.
    let config = Config::default()
        .outbound_budget(256 << 20)
        .request_timeout(tests::ANSWER_TIMEOUT);
    let _server = Peer::builder()
        .router(echo_router())
        .config(config.clone())
        .spawn(server);
    let client = Peer::builder().config(config).spawn(client);
    let calls = calls();
    let params = |(n, text, answer): &(u64, String, usize)| json!({ "n": n, "answer": answer, "text": text });
    let answers = CALLER
        .scope((), async {
            // A first call, so the writer task is up and idle.
            let _: Value = client
                .call("echo", params(&(99, String::new(), 0)))
                .await
                .unwrap();
            if together {
                let calls = calls
                    .iter()
                    .map(|call| client.call::<Value>("echo", params(call)).into_future());
                let answers = futures_util::future::join_all(calls).await;
                answers.into_iter().map(Result::unwrap).collect()
            } else {
                let mut answers = Vec::new();
                for call in &calls {
                    answers.push(client.call::<Value>("echo", params(call)).await.unwrap());
                }
                answers
            }
        })
        .await;
    Session {
        answers,
        client: client_log,
        server: server_log,
    }
}

/// The two sessions over `wire` exchanged the same messages, byte for
/// byte, and got the right answers.
fn assert_same_traffic(wire: Wire, one: &Session, all: &Session) {
    let expected: Vec<Value> = calls()
        .iter()
        .map(|(n, text, answer)| echo_result(*n, text.len(), *answer))
        .collect();
    assert!(one.answers == expected, "{wire:?}: answers one at a time");
    assert!(all.answers == expected, "{wire:?}: answers all at once");
    let calls = |s: &Session| Session::written(&s.client);
    let answers = |s: &Session| Session::written(&s.server);
    // One frame per message each way, none lost, none twice.
    for session in [one, all] {
        for log in [&session.client, &session.server] {
            let log = log.lock().unwrap();
            assert_eq!(log.written.len(), 65, "{wire:?}: frames written");
            assert_eq!(log.read.len(), 65, "{wire:?}: frames read");
        }
        assert_eq!(calls(session).len(), 65, "{wire:?}: ids of the calls");
        assert_eq!(answers(session).len(), 65, "{wire:?}: ids of the answers");
    }
    assert!(
        calls(one) == calls(all),
        "{wire:?}: the calls' bytes differ"
    );
    assert!(
        answers(one) == answers(all),
        "{wire:?}: the answers' bytes differ"
    );
    for session in [one, all] {
        assert!(
            Session::read(&session.server) == calls(session),
            "{wire:?}: calls arrived other than sent"
        );
        assert!(
            Session::read(&session.client) == answers(session),
            "{wire:?}: answers arrived other than sent"
        );
    }
}

#[tokio::test]
async fn calls_one_at_a_time_and_all_at_once_exchange_the_same_bytes() {
    for wire in [Wire::Pair, Wire::Lines, Wire::ContentLength] {
        let one = session(wire, false).await;
        let all = session(wire, true).await;
        assert_same_traffic(wire, &one, &all);
        // Which path wrote the calls (the first, made before the writer
        // task ran, aside): one at a time, the caller every time; all at
        // once, the writer task for all but the first.
        let by_caller = |s: &Session| -> Vec<bool> {
            let log = s.client.lock().unwrap();
            log.written[1..].iter().map(|w| w.by_caller).collect()
        };
        assert!(
            by_caller(&one).iter().all(|&b| b),
            "{wire:?}: {:?}",
            by_caller(&one)
        );
        let inline = by_caller(&all).iter().filter(|&&b| b).count();
        assert!(
            inline <= 1,
            "{wire:?}: {inline} calls written inline at once"
        );
        // The answers: at the end of the reader's burst (handlers done at
        // once) and by the writer task (handlers that waited).
        for session in [&one, &all] {
            let log = session.server.lock().unwrap();
            let writers: BTreeSet<_> = log.written.iter().map(|w| w.task).collect();
            assert!(
                writers.len() >= 2,
                "{wire:?}: answers written by {writers:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_exchange_the_same_bytes_on_a_multi_thread_runtime() {
    // Which path writes is up to the threads here; what is written is not.
    for wire in [Wire::Pair, Wire::Lines, Wire::ContentLength] {
        let one = session(wire, false).await;
        let all = session(wire, true).await;
        assert_same_traffic(wire, &one, &all);
    }
}

// ---------------------------------------------------------------------------
// First steps on the reader of a multi-thread runtime (the route's pace).
//
// Fast path: a request's first step runs on the connection's reader, once
// its route's last 16 first steps took at most 100 µs each. Plain path: a
// task of its own, where the first step is timed, until then and again
// after a slow one. A handler tells which it ran on by the id of its task.
// On a current-thread runtime every first step runs on the reader.

/// The id of the task the handler runs on.
fn task_id() -> String {
    tokio::task::try_id().map_or_else(String::new, |id| id.to_string())
}

/// What the test and a blocking handler tell each other: the handler has
/// started; the test lets it go.
struct Blocking {
    started: tokio::sync::Notify,
    release: Mutex<std::sync::mpsc::Receiver<()>>,
    /// The tasks the `note` notifications ran on, in order.
    notes: Mutex<Vec<String>>,
}

/// The handler of `step` and `fresh`: answers at once, sleeps 5 ms first (a
/// slow first step), or blocks the thread until the test lets go (only a
/// task of its own leaves the reader free meanwhile).
fn step_handler(
    blocking: Arc<Blocking>,
) -> impl Fn((String,), Context) -> StepFuture + Send + Sync {
    move |(mode,): (String,), _: Context| {
        let blocking = blocking.clone();
        Box::pin(async move {
            match mode.as_str() {
                "sleep" => std::thread::sleep(std::time::Duration::from_millis(5)),
                "block" => {
                    blocking.started.notify_one();
                    let released = blocking
                        .release
                        .lock()
                        .unwrap()
                        .recv_timeout(tests::ANSWER_TIMEOUT)
                        .is_ok();
                    assert!(released, "the blocked handler was let go");
                }
                _ => {}
            }
            Ok(task_id())
        })
    }
}

type StepFuture = Pin<Box<dyn std::future::Future<Output = Result<String, ErrorObject>> + Send>>;

/// `step` and `fresh` (two routes, one handler: [`step_handler`]);
/// `kinds` answers in each way a handler can; `note` records its task.
fn paced_router(blocking: Arc<Blocking>) -> Router {
    let notes = blocking.clone();
    Router::new()
        .request("where", |(): (), _: Context| async {
            Ok::<_, ErrorObject>(task_id())
        })
        .request("step", step_handler(blocking.clone()))
        .request("fresh", step_handler(blocking))
        .notification("note", move |(): (), _: Context| {
            let notes = notes.clone();
            async move { notes.notes.lock().unwrap().push(task_id()) }
        })
        .request(
            "kinds",
            |(kind, pad): (String, String), _: Context| async move {
                let size = pad.len();
                match kind.as_str() {
                    "error" => Err(ErrorObject::new(-32010, "refused")
                        .with_data(&json!({ "size": size }))
                        .unwrap()),
                    "panic" => panic!("a handler panicked"),
                    "later" => {
                        tokio::task::yield_now().await;
                        Ok(json!({ "later": size }))
                    }
                    "slow" => {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        Ok(json!({ "slow": size }))
                    }
                    _ => Ok(json!({ "now": size })),
                }
            },
        )
}

/// A server with [`paced_router`] on an in-memory pair, its client, and
/// the sender that lets a blocked handler go.
fn paced_pair() -> (Peer, Peer, Arc<Blocking>, std::sync::mpsc::Sender<()>) {
    let (release, released) = std::sync::mpsc::channel();
    let blocking = Arc::new(Blocking {
        started: tokio::sync::Notify::new(),
        release: Mutex::new(released),
        notes: Mutex::new(Vec::new()),
    });
    let (client, server) = Transport::pair(64);
    let server = Peer::builder()
        .router(paced_router(blocking.clone()))
        .spawn(server);
    (Peer::spawn(client), server, blocking, release)
}

async fn within<T>(what: &str, fut: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(tests::ANSWER_TIMEOUT, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer in time"))
}

/// Calls `method` (`step` or `fresh`, mode `now`) until two answers in a
/// row come from one task, the reader's, which the route has then earned;
/// returns its id. A step preempted past 100 µs on a busy machine starts
/// the count again, hence the rounds allowed.
async fn earn(client: &Peer, method: &str) -> String {
    let mut last = String::new();
    for _ in 0..20 * 17 {
        let id = step(client, method, "now").await;
        if id == last {
            return id;
        }
        last = id;
    }
    panic!("{method} never earned the reader");
}

/// Calls `method` in `mode` (`where` takes no params).
async fn step(client: &Peer, method: &str, mode: &str) -> String {
    let call = async {
        if method == "where" {
            client.call::<String>(method, ()).await
        } else {
            client.call::<String>(method, (mode,)).await
        }
    };
    within(method, call).await.expect(method)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_steps_earn_the_reader_and_a_slow_one_sends_them_back_to_tasks() {
    let (client, _server, blocking, release) = paced_pair();

    // A route's first requests run on tasks of their own, one each.
    let first = step(&client, "step", "now").await;
    let second = step(&client, "step", "now").await;
    assert_ne!(first, second, "a fresh route's first two requests");

    // Quick first steps in a row earn the reader.
    let reader = earn(&client, "step").await;

    // A fresh route's first request blocks its thread: it runs on a task,
    // and the reader answers another route meanwhile.
    let blocked = tokio::spawn({
        let client = client.clone();
        async move { step(&client, "fresh", "block").await }
    });
    within("the blocking handler's start", blocking.started.notified()).await;
    let meanwhile = step(&client, "where", "").await;
    release.send(()).unwrap();
    let blocked_on = within("the blocked handler", blocked).await.unwrap();
    assert_ne!(blocked_on, reader, "a fresh route's blocking request");
    assert!(!meanwhile.is_empty());

    // A slow first step, on the route that earned the reader: its next
    // request runs on a task again, and blocks no one.
    step(&client, "step", "sleep").await;
    let blocked = tokio::spawn({
        let client = client.clone();
        async move { step(&client, "step", "block").await }
    });
    within("the blocking handler's start", blocking.started.notified()).await;
    step(&client, "where", "").await;
    release.send(()).unwrap();
    let blocked_on = within("the blocked handler", blocked).await.unwrap();
    assert_ne!(blocked_on, reader, "the request after a slow first step");

    // Quick steps earn the reader back.
    assert_eq!(
        earn(&client, "step").await,
        reader,
        "the reader, earned again"
    );

    // Notifications too: the first on the notification worker, later ones
    // on the reader.
    for _ in 0..20 * 17 {
        client.notify("note", ()).await.unwrap();
        // A request starts after the notifications before it.
        step(&client, "where", "").await;
        if blocking.notes.lock().unwrap().last() == Some(&reader) {
            break;
        }
    }
    let notes = blocking.notes.lock().unwrap().clone();
    assert_ne!(notes[0], reader, "the first notification");
    assert_eq!(
        notes.last(),
        Some(&reader),
        "notifications never earned the reader"
    );
}

/// The answers of `kinds` in each way, with params sizes around the
/// largest a first step on the reader takes, on `runtime`; `slow_first`
/// starts with a slow first step, so that every request after it runs on
/// a task of its own on a multi-thread runtime.
fn kinds_answers(runtime: &tokio::runtime::Runtime, slow_first: bool) -> Vec<String> {
    let limit = threshold("dispatch::admit::INLINE_PARAMS_MAX");
    runtime.block_on(async {
        let (client, _server, _blocking, _release) = paced_pair();
        if slow_first {
            let _: Result<Value, _> = client.call("kinds", ("slow", "")).await;
        }
        let mut answers = Vec::new();
        for kind in ["now", "later", "error", "panic", "slow"] {
            // The params' text is `["kind","xx…"]`: 7 bytes and the kind's
            // around the padding. Lengths one byte under, at and over the
            // limit, and small ones.
            let around = limit - kind.len() - 7;
            for pad in [0, 1, around - 1, around, around + 1] {
                let params = (kind, "x".repeat(pad));
                let answer: Result<Value, _> =
                    within(kind, client.call("kinds", params).into_future()).await;
                let answer = match answer {
                    Ok(value) => serde_json::to_string(&value).unwrap(),
                    Err(error) => format!("{error:?}"),
                };
                answers.push(format!("{kind} {pad}: {answer}"));
            }
        }
        answers
    })
}

#[test]
fn first_steps_on_the_reader_and_on_tasks_answer_alike() {
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let on_reader = kinds_answers(&current, false);
    assert_eq!(on_reader.len(), 25);
    assert_eq!(
        kinds_answers(&multi, false),
        on_reader,
        "multi-thread, paced"
    );
    assert_eq!(
        kinds_answers(&multi, true),
        on_reader,
        "multi-thread, on tasks"
    );
}
