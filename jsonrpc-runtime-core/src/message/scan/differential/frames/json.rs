//! JSON text, and almost-JSON text, put together from pieces: the values
//! the envelopes of the frames are made of.

use proptest::prelude::*;

use super::super::super::MAX_DEPTH;

/// Whitespace between two tokens: mostly none, sometimes any run of the
/// four JSON whitespace characters (raw newlines included).
pub(in super::super) fn ws() -> BoxedStrategy<String> {
    prop_oneof![
        8 => Just(String::new()),
        2 => Just(" ".to_owned()),
        2 => "[ \t\r\n]{1,4}",
    ]
    .boxed()
}

/// Pieces of a string's content: plain, non-ASCII, every escape, escaped
/// surrogate pairs and lone surrogates (valid in a value kept raw, not in a
/// decoded string); with `broken`, now and then what JSON refuses in a
/// string (rarely, so that a broken frame is mostly broken once).
pub(in super::super) fn string_piece(broken: bool) -> BoxedStrategy<&'static str> {
    let valid = prop::sample::select(vec![
        "a",
        "add",
        "x y",
        "é",
        "ünï",
        "😀",
        "\u{FFFF}",
        "\u{2028}",
        "\u{7f}",
        r#"\""#,
        r"\\",
        r"\/",
        r"\b",
        r"\f",
        r"\n",
        r"\r",
        r"\t",
        r"\u00e9",
        r"\u0000",
        r"\uD83D\uDE00",
        r"\ud800",
        r"\uDC00",
        "a piece longer than sixteen bytes, for the word-at-a-time scan",
    ]);
    if !broken {
        return valid.boxed();
    }
    let invalid = prop::sample::select(vec![
        r"\x", r"\u12", r"\u00g9", r"\U0041", "\t", "\n", "\u{1}", "\u{1f}", r"\",
    ]);
    prop_oneof![40 => valid, 1 => invalid].boxed()
}

/// A JSON string (quotes included).
pub(in super::super) fn string(broken: bool) -> BoxedStrategy<String> {
    prop::collection::vec(string_piece(broken), 0..5)
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()))
        .boxed()
}

/// A JSON string without escapes (what the scanner reads in an id or a
/// method).
pub(in super::super) fn plain_string() -> BoxedStrategy<String> {
    let piece = prop::sample::select(vec![
        "a", "x y", "é", "ünï", "😀", "\u{FFFF}", "\u{7f}", "/",
    ]);
    prop::collection::vec(piece, 0..4)
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()))
        .boxed()
}

/// Numbers: any `i64` or `u64`, fractions, exponents, integers past `u64`
/// and `f64`; with `broken`, now and then what only looks like a number.
pub(in super::super) fn number(broken: bool) -> BoxedStrategy<String> {
    let valid = prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "0",
            "-0",
            "7",
            "1.5",
            "-0.25e+3",
            "1E-2",
            "2e9",
            "123456789012345678901234567890",
            "1e400",
            "-1e-400",
        ])
        .prop_map(str::to_owned),
    ];
    if !broken {
        return valid.boxed();
    }
    let invalid = prop::sample::select(vec![
        "01",
        "1.",
        ".5",
        "-",
        "1e",
        "1e+",
        "+1",
        "0x10",
        "NaN",
        "-Infinity",
        "1.e3",
        "--1",
    ])
    .prop_map(str::to_owned);
    prop_oneof![30 => valid, 1 => invalid].boxed()
}

/// A scalar: a number, a literal or a string.
pub(in super::super) fn scalar(broken: bool) -> BoxedStrategy<String> {
    let valid = prop::sample::select(vec!["true", "false", "null"]);
    let literal = if broken {
        let invalid = prop::sample::select(vec!["tru", "nul", "True", "nulll", "fals"]);
        prop_oneof![30 => valid, 1 => invalid].boxed()
    } else {
        valid.boxed()
    };
    prop_oneof![
        2 => number(broken),
        1 => literal.prop_map(str::to_owned),
        3 => string(broken),
    ]
    .boxed()
}

/// An array of `items`, with whitespace around each.
pub(in super::super) fn array_of(item: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (prop::collection::vec((ws(), item, ws()), 0..5), ws())
        .prop_map(|(items, inner)| {
            if items.is_empty() {
                return format!("[{inner}]");
            }
            let items: Vec<String> = items
                .into_iter()
                .map(|(before, item, after)| format!("{before}{item}{after}"))
                .collect();
            format!("[{}]", items.join(","))
        })
        .boxed()
}

/// An object of `values`, with whitespace around each token; member names
/// repeat now and then.
pub(in super::super) fn object_of(value: BoxedStrategy<String>) -> BoxedStrategy<String> {
    let key = prop_oneof![
        3 => prop::sample::select(vec![r#""a""#, r#""b""#, r#""pad""#, r#""""#]).prop_map(str::to_owned),
        2 => string(false),
    ];
    (
        prop::collection::vec((ws(), key, ws(), ws(), value, ws()), 0..5),
        ws(),
    )
        .prop_map(|(members, inner)| {
            if members.is_empty() {
                return format!("{{{inner}}}");
            }
            let members: Vec<String> = members
                .into_iter()
                .map(|(a, key, b, c, value, d)| format!("{a}{key}{b}:{c}{value}{d}"))
                .collect();
            format!("{{{}}}", members.join(","))
        })
        .boxed()
}

/// Any value, nested a few levels.
pub(in super::super) fn value(broken: bool) -> BoxedStrategy<String> {
    scalar(broken)
        .prop_recursive(4, 40, 5, move |inner| {
            prop_oneof![array_of(inner.clone()), object_of(inner)]
        })
        .boxed()
}

/// An object or an array.
pub(in super::super) fn compound(broken: bool) -> BoxedStrategy<String> {
    let inner = value(broken);
    prop_oneof![array_of(inner.clone()), object_of(inner)].boxed()
}

/// Values nested `depth` deep, around the scanner's limit (64) and up to
/// serde_json's (128): arrays and single-member objects in any mix.
pub(in super::super) fn deep() -> BoxedStrategy<String> {
    (
        prop_oneof![
            3 => (MAX_DEPTH - 3)..=(MAX_DEPTH + 3),
            1 => 1usize..=130,
        ],
        prop::collection::vec(any::<bool>(), 130),
        scalar(false),
        ws(),
    )
        .prop_map(|(depth, kinds, leaf, space)| {
            let (mut open, mut close) = (String::new(), String::new());
            for &array in &kinds[..depth] {
                if array {
                    open.push('[');
                    open.push_str(&space);
                    close.insert(0, ']');
                } else {
                    open.push_str(r#"{"k":"#);
                    open.push_str(&space);
                    close.insert(0, '}');
                }
            }
            format!("{open}{leaf}{close}")
        })
        .boxed()
}

// ---------------------------------------------------------------------------
// Envelopes.
