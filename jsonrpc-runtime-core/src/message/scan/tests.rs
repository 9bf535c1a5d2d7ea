//! The scanner against the general path, on fixed, mutated and generated
//! frames.

use super::super::classify::{classify_general, ClassifiedFrame};
use super::super::raw::DecodedParams;
use super::super::{Batches, Dialect, NullId, NullParams, Responses};
use super::*;

fn all_options() -> Vec<ParseOptions> {
    let mut all = Vec::new();
    for params in [ParamsShape::ObjectOrArray, ParamsShape::Object] {
        for null_id in [NullId::Serve, NullId::Refuse, NullId::RefuseAll] {
            for dialect in [Dialect::Strict, Dialect::Lenient] {
                all.push(ParseOptions {
                    params,
                    null_id,
                    dialect,
                    responses: Responses::NeverAnswered,
                    null_params: NullParams::Refuse,
                    batches: Batches::Accept,
                    ..ParseOptions::default()
                });
                all.push(ParseOptions {
                    params,
                    null_id,
                    dialect,
                    ..ParseOptions::default()
                });
            }
        }
    }
    all
}

/// Frames the scanner takes.
const TAKEN: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["\u00e9\uD83D\uDE00\udc00\uFFFF"]}"#,
    r#"{"jsonrpc":"2.0","id":2,"method":"m","params":[0,-1,10.5,-0.25e+3,1E-2,2e9,true,false,null,"",{},[],{"":[]}]}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"m","params":{ "a" : [ 1 , { "b" : "x\"\\\/\b\f\n\r\ty" } ] }}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"m","params":["a long string of more than eight bytes, with \"quotes\" inside, ünïcödé too"]}"#,
    r#"{"jsonrpc":"2.0","id":5,"result":"0123456789abcdef0123456789"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"add","params":{"a":2,"b":3}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}"#,
    r#" { "method" : "add" , "params" : [ 2 , 3 ] , "id" : "x-1" , "jsonrpc" : "2.0" } "#,
    r#"{"jsonrpc":"2.0","method":"note","params":{"a":2}}"#,
    r#"{"jsonrpc":"2.0","method":"initialized"}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"shutdown"}"#,
    r#"{"jsonrpc":"2.0","id":123456789012345678,"method":"m","params":[]}"#,
    r#"{"jsonrpc":"2.0","id":"é","method":"dé","params":{"ü":"ñ"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}],"c":"\n"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":5}"#,
    r#"{"jsonrpc":"2.0","id":"r","result":{"x":[1,2,3]}}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":null}"#,
];

/// Frames the scanner leaves to the general path.
const DECLINED: &[&str] = &[
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["\u00g9"]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["\u00"]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1,]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[01]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1.]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[.5]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1e]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[-]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[tru]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":["\x"]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[nul]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1 2]}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1 "b":2}}"#,
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[\"tab\there and more text\"]}",
    r#"{"jsonrpc":"2.0","id":1234567890123456789,"method":"m","params":[]}"#,
    r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":99999999999999999999999,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":-5,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":true,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":"a\"b","method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"a\u0062"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#,
    r#"{"jsonrpc":"2.0","method":"m","params":"s"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","id":2}"#,
    r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":{"k":1}}"#,
    r#"{"jsonrpc":"2.1","id":1,"method":"m"}"#,
    r#"{"jsonrpc":"2.0 ","id":1,"method":"m"}"#,
    r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#,
    r#"{"id":1,"method":"m"}"#,
    r#"{"jsonrpc":"2.0","result":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","result":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"params":[1],"result":1}"#,
    r#"{"jsonrpc":"2.0","id":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
    r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
    r#"{}"#,
    r#"{"#,
    "",
    "\u{0}",
    r#"{"jsonrpc":"2.0","id":1,"method":"m	"}"#,
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\u{1}\"}",
];

/// Every frame above, every prefix of each, and each with every byte
/// replaced in turn by characters that matter to JSON.
fn corpus() -> Vec<String> {
    let mut corpus = Vec::new();
    // Nesting around serde_json's depth limit.
    for depth in [126, 127, 128, 129, 300] {
        corpus.push(format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ));
        corpus.push(format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        ));
    }
    for frame in TAKEN.iter().chain(DECLINED) {
        corpus.push(frame.to_string());
        for (i, _) in frame.char_indices() {
            corpus.push(frame[..i].to_string());
            for c in [
                '"', '\\', ',', ':', '}', ']', '{', '[', ' ', '1', '-', 'x', '\u{1}',
            ] {
                let mut mutated = frame.to_string();
                let width = frame[i..].chars().next().map_or(1, char::len_utf8);
                mutated.replace_range(i..i + width, c.encode_utf8(&mut [0; 4]));
                corpus.push(mutated);
            }
        }
    }
    corpus
}

#[test]
fn the_scanner_classifies_as_the_general_path_does() {
    let corpus = corpus();
    let mut taken = 0;
    for options in all_options() {
        for frame in &corpus {
            if let Some(fast) = scan(frame, &options) {
                taken += 1;
                let general = format!("{:?}", classify_general(frame, &options));
                assert_eq!(
                    format!("Single({fast:?})"),
                    general,
                    "{frame} under {options:?}"
                );
            }
        }
    }
    // The fast path is taken, not only declined.
    assert!(taken > 1_000, "the scanner took {taken} frames");
}

#[test]
fn the_common_shapes_take_the_fast_path() {
    let options = ParseOptions::default();
    for frame in TAKEN {
        assert!(scan(frame, &options).is_some(), "{frame}");
    }
}

#[test]
fn the_scanner_declines_what_it_does_not_know() {
    let options = ParseOptions::default();
    for frame in DECLINED {
        assert!(scan(frame, &options).is_none(), "{frame}");
    }
}

/// A small deterministic generator (xorshift), for frames built from
/// the pieces the scanner cares about.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'s>(&mut self, from: &[&'s str]) -> &'s str {
        from[self.below(from.len())]
    }

    /// The first of `from` most of the time, one of the rest once in
    /// eight.
    fn mostly<'s>(&mut self, from: &[&'s str]) -> &'s str {
        if self.below(8) == 0 {
            self.pick(from)
        } else {
            from[0]
        }
    }
}

fn random_value(rng: &mut Rng, depth: usize) -> String {
    const SCALARS: &[&str] = &[
        "0",
        "-1",
        "12",
        "1.5",
        "-0.0e-2",
        "3E+7",
        "true",
        "false",
        "null",
        r#""""#,
        r#""x""#,
        r#""a\"b""#,
        r#""ünï""#,
        r#""a long string, longer than sixteen bytes""#,
    ];
    // Broken, or beyond what the scanner reads.
    const ODD: &[&str] = &[
        "01",
        "1.",
        "-",
        "nul",
        r#""\u00e9""#,
        r#""\q""#,
        "\"tab\tin\"",
    ];
    if rng.below(16) == 0 {
        return rng.pick(ODD).to_owned();
    }
    match rng.below(if depth > 3 { 1 } else { 4 }) {
        0 => rng.pick(SCALARS).to_owned(),
        1 => {
            let items: Vec<String> = (0..rng.below(4))
                .map(|_| random_value(rng, depth + 1))
                .collect();
            format!("[{}]", items.join(rng.mostly(&[",", " , ", ",,"])))
        }
        _ => {
            let members: Vec<String> = (0..rng.below(4))
                .map(|_| {
                    let key = rng.mostly(&[r#""a""#, r#""b c""#, r#""\n""#, "x"]);
                    let colon = rng.mostly(&[":", " : ", ""]);
                    format!("{key}{colon}{}", random_value(rng, depth + 1))
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
    }
}

fn random_frame(rng: &mut Rng) -> String {
    // Each member, its values (the first the usual one), and how often
    // it is there, in sixteenths: once, twice.
    let members: [(&str, &[&str], usize, usize); 7] = [
        ("jsonrpc", &[r#""2.0""#, r#""2.1""#, "2.0"], 15, 1),
        (
            "id",
            &[
                "1",
                "0",
                r#""s""#,
                "-3",
                "1.0",
                "null",
                "99999999999999999999",
            ],
            12,
            1,
        ),
        ("method", &[r#""add""#, r#""a\"b""#, "7"], 12, 1),
        ("params", &[], 12, 1),
        ("result", &[], 4, 1),
        ("error", &[r#"{"code":1,"message":"m"}"#], 1, 0),
        ("extra", &["1"], 1, 0),
    ];
    let mut written = Vec::new();
    for (name, values, once, twice) in members {
        let roll = rng.below(16);
        let times = if roll < twice {
            2
        } else if roll < twice + once {
            1
        } else {
            0
        };
        for _ in 0..times {
            let value = if values.is_empty() {
                random_value(rng, 0)
            } else {
                rng.mostly(values).to_owned()
            };
            written.push(format!(r#""{name}":{value}"#));
        }
    }
    // Shuffled, with whitespace here and there.
    for i in (1..written.len()).rev() {
        let j = rng.below(i + 1);
        written.swap(i, j);
    }
    let sep = rng.mostly(&[",", " ,\n", ",\t"]);
    let lead = rng.mostly(&["", " "]);
    let tail = rng.mostly(&["", "\r\n", "x"]);
    format!("{lead}{{{}}}{tail}", written.join(sep))
}

#[test]
fn random_frames_classify_as_the_general_path_does() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let options = all_options();
    let mut taken = 0;
    for _ in 0..20_000 {
        let frame = random_frame(&mut rng);
        let options = &options[rng.below(options.len())];
        if let Some(fast) = scan(&frame, options) {
            taken += 1;
            let general = format!("{:?}", classify_general(&frame, options));
            assert_eq!(
                format!("Single({fast:?})"),
                general,
                "{frame} under {options:?}"
            );
        }
    }
    assert!(taken > 2_000, "the scanner took {taken} frames");
}

// Large frames: params decoded by the route in the scan.

/// Decodes `m`'s and `add`'s params as any JSON value and `sum`'s as a
/// list of integers, like routes taking those types; no other method's.
struct Routes;

impl DecodeParams for Routes {
    fn decode_params(&self, method: &str, text: &str) -> Option<(DecodedParams, usize)> {
        match method {
            "m" | "add" => super::super::decode_prefix::<serde_json::Value>(text),
            "sum" => super::super::decode_prefix::<Vec<i64>>(text),
            "lenient" => super::super::decode_prefix::<Lenient>(text),
            _ => None,
        }
    }
}

/// Classifies `frame` with [`Routes`] as the decoder, checks it matches the
/// general path, and that decoded params are the params' text, decoded.
/// Whether the params were decoded in the scan.
fn check_large(frame: &str, options: &ParseOptions) -> bool {
    let mut slot = None;
    let classified = super::super::classify_frame_decoding(frame, options, &Routes, &mut slot);
    let general = classify_general(frame, options);
    assert_eq!(
        format!("{classified:?}"),
        format!("{general:?}"),
        "{} under {options:?}",
        frame.trim_start()
    );
    let (text, slot, method) = match &classified {
        ClassifiedFrame::Single(
            Classified::Request {
                params: Some(RawJson::Decoded(text, slot)),
                method,
                ..
            }
            | Classified::Notification {
                params: Some(RawJson::Decoded(text, slot)),
                method,
                ..
            },
        ) => (*text, *slot, method),
        _ => return false,
    };
    match &**method {
        "m" | "add" => assert_eq!(
            slot.take::<serde_json::Value>(),
            Some(serde_json::from_str(text).unwrap())
        ),
        "sum" => assert_eq!(
            slot.take::<Vec<i64>>(),
            Some(serde_json::from_str(text).unwrap())
        ),
        "lenient" => assert_eq!(
            slot.take::<Lenient>().map(|params| params.text.len()),
            Some(serde_json::from_str::<Lenient>(text).unwrap().text.len())
        ),
        method => panic!("decoded params for {method}"),
    }
    true
}

/// Params whose list is empty when it does not decode: the type swallows
/// serde_json's error, which stops in the middle of the list.
#[derive(serde::Deserialize)]
struct Lenient {
    #[serde(default, deserialize_with = "empty_if_wrong")]
    #[allow(dead_code)]
    list: Vec<u32>,
    text: String,
}

fn empty_if_wrong<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    use serde::Deserialize as _;
    Ok(Vec::<u32>::deserialize(d).unwrap_or_default())
}

#[test]
fn a_type_that_swallows_an_error_does_not_let_broken_json_through() {
    let text = serde_json::to_string(&source(SCAN_MAX)).unwrap();
    let options = ParseOptions::default();
    // Valid, and decoded in the scan.
    let frame = format!(
        r#"{{"jsonrpc":"2.0","method":"lenient","params":{{"text":{text},"list":[1,2]}},"id":7}}"#
    );
    assert!(check_large(&frame, &options));
    // The list closed by a brace: serde_json, stopped at "x" by the type,
    // would go on from there and end the params early. The general path
    // reads it instead, and refuses it as a parse error.
    for list in [r#"[1,"x"}"#, r#"["x"]"#, r#"[1,"x",{"a":1}]"#] {
        let frame = format!(
            r#"{{"jsonrpc":"2.0","method":"lenient","params":{{"text":{text},"list":{list}}},"id":7}}"#
        );
        assert!(!check_large(&frame, &options), "{list}");
    }
    let frame = format!(
        r#"{{"jsonrpc":"2.0","method":"lenient","params":{{"text":{text},"list":[1,"x"}},"id":7}}"#
    );
    let general = format!("{:?}", classify_general(&frame, &options));
    assert!(general.contains("-32700"), "{general}");
}

/// Whitespace that takes a frame past the scanner's limit without changing
/// what it says.
fn padded(frame: &str) -> String {
    format!("{}{frame}", " ".repeat(SCAN_MAX))
}

#[test]
fn large_frames_classify_as_the_general_path_does() {
    let options = all_options();
    let mut decoded = 0;
    for frame in TAKEN.iter().chain(DECLINED) {
        for (i, _) in frame.char_indices().chain([(frame.len(), ' ')]) {
            // Two option sets in turn (each prefix is 16 KiB long).
            let options = [&options[0], &options[options.len() - 1]][i % 2];
            decoded += usize::from(check_large(&padded(&frame[..i]), options));
        }
        decoded += usize::from(check_large(&padded(frame), &options[1]));
    }
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..1_000 {
        let frame = random_frame(&mut rng);
        let options = &options[rng.below(options.len())];
        decoded += usize::from(check_large(&padded(&frame), options));
    }
    assert!(decoded > 30, "decoded {decoded} frames' params");
}

/// A text of `len` bytes dense with what JSON escapes.
fn source(len: usize) -> String {
    let line = "\tlet s = \"a \\\"quoted\\\" ünï word\";\r\n";
    let mut text = line.repeat(len / line.len() + 1);
    text.truncate(len);
    text
}

#[test]
fn a_large_frames_params_are_decoded_in_the_scan_in_any_member_order() {
    let text = serde_json::to_string(&source(40_000)).unwrap();
    let params = format!(r#"{{"text":{text},"n":[1,2]}}"#);
    let options = ParseOptions::default();
    for frame in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}}"#),
        format!(r#"{{"method":"m","jsonrpc":"2.0","params":{params},"id":"x"}}"#),
        format!(r#"{{"jsonrpc":"2.0","method":"m","params":{params}}}"#),
        format!(" {{ \"method\" : \"m\" ,\n\"params\" :\t{params} , \"jsonrpc\":\"2.0\" }} "),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"sum","params":[1,2,3],"x":{text}}}"#),
    ] {
        let decoded = check_large(&frame, &options);
        assert_eq!(decoded, !frame.contains(r#""x":"#), "{}", &frame[..80]);
    }
    // Left to the general path: params before the method, params the route
    // does not decode, a method nobody decodes, a response, and the
    // scanner's usual refusals.
    for frame in [
        format!(r#"{{"jsonrpc":"2.0","id":1,"params":{params},"method":"m"}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"sum","params":{params}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"other","params":{params}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"result":{params}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params},"extra":1}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{params}}} x"#),
    ] {
        assert!(!check_large(&frame, &options), "{}", &frame[..80]);
    }
    // Objects only: an array is refused by the general path, not decoded.
    let objects = ParseOptions {
        params: ParamsShape::Object,
        ..ParseOptions::default()
    };
    let frame = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":[{text}]}}"#);
    assert!(!check_large(&frame, &objects));
}

#[test]
fn a_large_frame_broken_anywhere_classifies_as_the_general_path_does() {
    let text = serde_json::to_string(&source(SCAN_MAX)).unwrap();
    let frame = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"t":{text},"n":[1,-2.5e3]}},"id":2}}"#
    )
    .replace(r#","id":2}"#, "}");
    let options = ParseOptions::default();
    assert!(check_large(&frame, &options));
    // Every byte of the envelope and around the text's ends, and a sample
    // inside it, replaced by characters that matter to JSON.
    let head = frame.find(&text).unwrap() + 40;
    let tail = frame.len() - 60;
    let positions = (0..head)
        .chain((head..tail).step_by(997))
        .chain(tail..frame.len())
        .filter(|&i| frame.is_char_boundary(i));
    let mut broken = 0;
    for i in positions {
        let width = frame[i..].chars().next().map_or(1, char::len_utf8);
        for c in [
            '"', '\\', ',', ':', '}', ']', '{', '[', ' ', '1', 'x', '\u{1}',
        ] {
            let mut mutated = frame.clone();
            mutated.replace_range(i..i + width, c.encode_utf8(&mut [0; 4]));
            broken += usize::from(!check_large(&mutated, &options));
        }
        assert!(!check_large(&frame[..i], &options));
    }
    assert!(broken > 100);
}
