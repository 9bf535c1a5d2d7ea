//! Differential test of the envelope scanner.
//!
//! Fast path: [`scan`] (frames of at most [`SCAN_MAX`] bytes, validated by
//! hand) and [`scan_large`] (longer frames, whose params a route decodes in
//! place into its own type, reached through `classify_frame_decoding`).
//! Plain path: `classify_general`, serde_json reading the whole frame.
//! Every generated frame (valid requests, notifications and responses with
//! every id form, escapes and non-ASCII in every string, whitespace between
//! every pair of tokens, deep nesting around the scanner's depth limit,
//! extra, repeated, escaped and shuffled members, and the same frames
//! truncated, mistyped or broken), at sizes on both sides of `SCAN_MAX`
//! (`SCAN_MAX - 1`, `SCAN_MAX` and `SCAN_MAX + 1` bytes exactly), must
//! classify the same both ways, and params decoded in the scan must be the
//! value their text decodes to.

use std::cell::Cell;

use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::super::classify::{classify_general, ClassifiedFrame};
use super::super::raw::DecodedParams;
use super::super::{
    classify_frame, classify_frame_decoding, decode_prefix, Batches, Dialect, NullId, NullParams,
    Responses,
};
use super::*;

mod frames;
use self::frames::*;

// ---------------------------------------------------------------------------
// The routes of the large-frame path.

/// Params of a struct route: optional fields, and a list that reads as
/// empty when it does not decode (its `Deserialize` recovers from an inner
/// error).
#[derive(Debug, PartialEq, Deserialize)]
struct Typed {
    a: Option<i64>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default, deserialize_with = "empty_if_wrong")]
    list: Vec<u32>,
}

fn empty_if_wrong<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    Ok(Vec::<u32>::deserialize(d).unwrap_or_default())
}

/// Decodes params as routes of these types would: `m` any value, `sum` a
/// list of integers, `raw` raw JSON, `typed` and `lenient` a struct (the
/// latter's list recovering from errors); `other` has no route.
struct Routes;

impl DecodeParams for Routes {
    fn decode_params(&self, method: &str, text: &str) -> Option<(DecodedParams, usize)> {
        match method {
            "m" => decode_prefix::<Value>(text),
            "sum" => decode_prefix::<Vec<i64>>(text),
            "raw" => decode_prefix::<Box<RawValue>>(text),
            "typed" | "lenient" => decode_prefix::<Typed>(text),
            _ => None,
        }
    }
}

/// Checks that params decoded in the scan are what their text decodes to
/// on its own.
fn check_decoded(method: &str, text: &str, slot: &DecodedSlot) -> Result<(), TestCaseError> {
    match method {
        "m" => prop_assert_eq!(
            slot.take::<Value>(),
            Some(serde_json::from_str::<Value>(text).unwrap())
        ),
        "sum" => prop_assert_eq!(
            slot.take::<Vec<i64>>(),
            Some(serde_json::from_str::<Vec<i64>>(text).unwrap())
        ),
        "raw" => prop_assert_eq!(
            slot.take::<Box<RawValue>>().map(|raw| raw.get().to_owned()),
            Some(text.to_owned())
        ),
        "typed" | "lenient" => prop_assert_eq!(
            slot.take::<Typed>(),
            Some(serde_json::from_str::<Typed>(text).unwrap())
        ),
        other => prop_assert!(false, "params decoded for `{}`", other),
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The comparison.

fn all_options() -> Vec<ParseOptions> {
    let mut all = Vec::new();
    for params in [ParamsShape::ObjectOrArray, ParamsShape::Object] {
        for null_id in [NullId::Serve, NullId::Refuse, NullId::RefuseAll] {
            for dialect in [Dialect::Strict, Dialect::Lenient] {
                all.push(ParseOptions {
                    params,
                    null_id,
                    dialect,
                    ..ParseOptions::default()
                });
                all.push(ParseOptions {
                    params,
                    null_id,
                    dialect,
                    responses: Responses::NeverAnswered,
                    null_params: NullParams::Refuse,
                    batches: Batches::Refuse,
                    ..ParseOptions::default()
                });
            }
        }
    }
    all
}

/// How often each fast path was taken (and how often neither was).
#[derive(Default)]
struct Taken {
    scan: Cell<usize>,
    scan_large: Cell<usize>,
    neither: Cell<usize>,
}

/// `frame` read by the fast paths and by the general path under `options`:
/// the same classification.
fn compare(frame: &str, options: &ParseOptions, taken: &Taken) -> Result<(), TestCaseError> {
    let plain = format!("{:?}", classify_general(frame, options));
    let mut fast = false;
    if frame.len() <= SCAN_MAX {
        if let Some(scanned) = scan(frame, options) {
            fast = true;
            taken.scan.set(taken.scan.get() + 1);
            prop_assert_eq!(
                format!("Single({scanned:?})"),
                plain.as_str(),
                "scan: {:?}",
                frame
            );
        }
    }
    prop_assert_eq!(
        format!("{:?}", classify_frame(frame, options)),
        plain.as_str(),
        "classify_frame: {:?}",
        frame
    );
    let mut slot = None;
    let decoding = classify_frame_decoding(frame, options, &Routes, &mut slot);
    prop_assert_eq!(
        format!("{decoding:?}"),
        plain.as_str(),
        "classify_frame_decoding: {:?}",
        frame
    );
    if let ClassifiedFrame::Single(
        Classified::Request {
            method,
            params: Some(RawJson::Decoded(text, slot)),
            ..
        }
        | Classified::Notification {
            method,
            params: Some(RawJson::Decoded(text, slot)),
            ..
        },
    ) = &decoding
    {
        fast = true;
        taken.scan_large.set(taken.scan_large.get() + 1);
        check_decoded(method, text, slot)?;
    }
    if !fast {
        taken.neither.set(taken.neither.get() + 1);
    }
    Ok(())
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new_with_rng(
        Config {
            // A failure prints its minimal input; nothing is written to disk.
            failure_persistence: None,
            ..Config::with_cases(cases)
        },
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    )
}

#[test]
fn generated_frames_classify_as_the_general_path_does() {
    let taken = Taken::default();
    runner(512)
        .run(&case(false), |case| {
            let frame = case.frame();
            for options in &all_options() {
                compare(&frame, options, &taken)?;
            }
            Ok(())
        })
        .unwrap();
    // The scanner took frames, and left others to the general path.
    let (scan, neither) = (taken.scan.get(), taken.neither.get());
    assert!(scan > 1_000, "the scanner took {scan} frames");
    assert!(
        neither > 1_000,
        "the general path alone read {neither} frames"
    );
}

#[test]
fn generated_frames_around_scan_max_classify_as_the_general_path_does() {
    let options = all_options();
    let taken = Taken::default();
    // Each frame under the default rules and one other set.
    runner(512)
        .run(&(case(true), any::<Index>()), |(case, rules)| {
            let frame = case.frame();
            compare(&frame, &ParseOptions::default(), &taken)?;
            compare(&frame, rules.get(&options), &taken)
        })
        .unwrap();
    // Both fast paths were taken, and so was the general path.
    let (scan, large, neither) = (
        taken.scan.get(),
        taken.scan_large.get(),
        taken.neither.get(),
    );
    assert!(scan > 20, "the scanner took {scan} frames");
    assert!(
        large > 20,
        "the large-frame scan decoded {large} frames' params"
    );
    assert!(neither > 20, "the general path alone read {neither} frames");
}

/// Hand-picked frames, padded to each size around `SCAN_MAX` in each place
/// a pad can go: the fast path takes each one it should.
#[test]
fn hand_picked_frames_around_scan_max_take_the_fast_path() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#,
        "[".repeat(MAX_DEPTH),
        "]".repeat(MAX_DEPTH)
    );
    // Each frame, and whether a large one's params decode in the scan
    // (never a response's; never a list that only decodes by recovering
    // from an error).
    let frames: Vec<(String, bool)> = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}],"c":"\n\u00e9"}}"#,
            true,
        ),
        (r#"{"jsonrpc":"2.0","id":"xé","method":"m","params":{}}"#, true),
        (
            r#"{ "method" : "sum" , "params" : [ 1 , -2 , 3 ] , "id" : "s" , "jsonrpc" : "2.0" }"#,
            true,
        ),
        (
            "{\"jsonrpc\":\"2.0\",\"method\":\"raw\",\"params\":\n[\"ünï\",\t{\"k\":[]}]\r\n}",
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":123456789012345678,"method":"typed","params":{"a":-5,"list":[1,2]}}"#,
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":0,"method":"typed","params":{"a":-5,"list":[1,"x"]}}"#,
            false,
        ),
        (r#"{"jsonrpc":"2.0","id":7,"result":{"x":[1,2,3]}}"#, false),
        (&deep, true),
    ]
    .into_iter()
    .map(|(frame, decoded)| (frame.to_owned(), decoded))
    .collect();
    let options = ParseOptions::default();
    let taken = Taken::default();
    for (frame, decoded) in &frames {
        for pad_at in [PadAt::Lead, PadAt::Params, PadAt::Extra] {
            for len in [SCAN_MAX - 1, SCAN_MAX, SCAN_MAX + 1] {
                let case = Case {
                    members: split_members(frame),
                    space: vec![String::new()],
                    size: Size::Exactly(len),
                    pad_at,
                    pad_unit: r#"\"é\\n"#,
                    mutation: Mutation::None,
                };
                let padded = case.frame();
                assert_eq!(padded.len(), len, "{frame}");
                let before = (taken.scan.get(), taken.scan_large.get());
                compare(&padded, &options, &taken).unwrap();
                let after = (taken.scan.get(), taken.scan_large.get());
                // An extra member is the general path's by design, and a
                // string padding `sum`'s list of integers does not decode.
                let pad_decodes = !(matches!(pad_at, PadAt::Params) && frame.contains(r#""sum""#));
                let expected = match pad_at {
                    PadAt::Extra => (0, 0),
                    _ if len <= SCAN_MAX => (1, 0),
                    _ => (0, usize::from(*decoded && pad_decodes)),
                };
                assert_eq!(
                    (after.0 - before.0, after.1 - before.1),
                    expected,
                    "{len} bytes, padded at {pad_at:?}: {padded:.200}"
                );
            }
        }
    }
}
