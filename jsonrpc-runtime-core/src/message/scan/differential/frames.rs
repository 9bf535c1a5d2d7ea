//! The frames the scanner's differential test generates: JSON text (or
//! almost-JSON) put together from pieces, sized around `SCAN_MAX`, and
//! mutated.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::value::RawValue;

use super::super::SCAN_MAX;

mod json;

pub(super) use self::json::*;

// ---------------------------------------------------------------------------
// The pieces of a frame, rendered as JSON text (or as almost-JSON).

/// An `id`'s value: every form the scanner reads, and every one it leaves
/// to the general path (negative, 19 digits or more, past `u64`, escaped,
/// null, fractions, other types).
pub(super) fn id_value(broken: bool) -> BoxedStrategy<String> {
    prop_oneof![
        6 => (0u32..1000).prop_map(|n| n.to_string()),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        2 => prop::sample::select(vec![
            "0",
            "-0",
            "-1",
            "123456789012345678",
            "999999999999999999",
            "1234567890123456789",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "1.0",
            "1e3",
            "01",
            "null",
            "true",
            "{}",
            "[1]",
        ])
        .prop_map(str::to_owned),
        3 => plain_string(),
        2 => string(broken),
    ]
    .boxed()
}

/// A `method`'s value: the methods the test's routes decode, any string,
/// or not a string at all.
pub(super) fn method_value(broken: bool) -> BoxedStrategy<String> {
    prop_oneof![
        10 => prop::sample::select(vec!["m", "m", "m", "raw", "raw", "sum", "lenient", "typed", "other"])
            .prop_map(|m| format!("\"{m}\"")),
        1 => Just(r#""\u006d""#.to_owned()),
        1 => plain_string(),
        1 => string(broken),
        1 => prop::sample::select(vec!["5", "null", "{}", "[]", "true"]).prop_map(str::to_owned),
    ]
    .boxed()
}

/// A `params`' value: structured (shaped for the typed routes now and
/// then), deep, or not structured at all.
pub(super) fn params_value(broken: bool) -> BoxedStrategy<String> {
    let ints = prop::collection::vec(any::<i64>(), 0..6).prop_map(|ns| {
        let ns: Vec<String> = ns.iter().map(i64::to_string).collect();
        format!("[{}]", ns.join(","))
    });
    let typed = (
        prop::option::of(any::<i64>()),
        prop::option::of(string(false)),
        prop::option::of(prop_oneof![
            Just("[1,2]".to_owned()),
            Just(r#"[1,"x"]"#.to_owned()),
            Just(r#""x""#.to_owned()),
            Just("null".to_owned()),
        ]),
    )
        .prop_map(|(a, text, list)| {
            let mut members = Vec::new();
            if let Some(a) = a {
                members.push(format!(r#""a":{a}"#));
            }
            if let Some(text) = text {
                members.push(format!(r#""text":{text}"#));
            }
            if let Some(list) = list {
                members.push(format!(r#""list":{list}"#));
            }
            format!("{{{}}}", members.join(","))
        });
    prop_oneof![
        8 => compound(broken),
        2 => ints,
        2 => typed,
        1 => deep(),
        1 => scalar(broken),
    ]
    .boxed()
}

/// An `error`'s value: error objects, and values that are not.
pub(super) fn error_value() -> BoxedStrategy<String> {
    prop_oneof![
        3 => (any::<i32>(), string(false)).prop_map(|(code, message)| {
            format!(r#"{{"code":{code},"message":{message}}}"#)
        }),
        1 => value(false).prop_map(|data| format!(r#"{{"code":-32000,"message":"m","data":{data}}}"#)),
        1 => prop::sample::select(vec![r#"{"code":"x","message":"m"}"#, "{}", "5", "null", "[]"])
            .prop_map(str::to_owned),
    ]
    .boxed()
}

/// A member's name, as written: usually plain, now and then with an escape
/// (which names the same member for serde_json, not for the scanner).
pub(super) fn name(plain: &'static str, escaped: &'static str) -> BoxedStrategy<String> {
    prop_oneof![40 => Just(format!("\"{plain}\"")), 1 => Just(escaped.to_owned())].boxed()
}

/// One member: `(name, value)`, both rendered.
pub(super) type Member = (String, String);

pub(super) fn member(
    present: u32,
    name: BoxedStrategy<String>,
    value: BoxedStrategy<String>,
) -> BoxedStrategy<Vec<Member>> {
    // Absent, once, or twice (a repeated member).
    prop_oneof![
        (100 - present) => Just(0usize),
        present => Just(1usize),
        1 => Just(2usize),
    ]
    .prop_flat_map(move |times| prop::collection::vec((name.clone(), value.clone()), times))
    .boxed()
}

/// Which envelope a frame is built as.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    Request,
    Notification,
    Result,
    Error,
    /// Any members at all.
    Any,
}

/// Every member of a `kind` of envelope, with extras now and then, in the
/// usual order or any other; with `broken`, values that are not quite JSON
/// now and then.
pub(super) fn members(kind: Kind, broken: bool) -> BoxedStrategy<Vec<Member>> {
    // How often each member is there, in percent.
    let (id, method, params, result, error) = match kind {
        Kind::Request => (97, 97, 85, 2, 2),
        Kind::Notification => (2, 97, 85, 2, 2),
        Kind::Result => (97, 2, 2, 97, 2),
        Kind::Error => (97, 2, 2, 2, 97),
        Kind::Any => (50, 50, 50, 30, 20),
    };
    let jsonrpc = prop_oneof![
        12 => Just(r#""2.0""#.to_owned()),
        1 => prop::sample::select(vec![
            r#""2\u002e0""#,
            r#""2.1""#,
            r#""2.0 ""#,
            "2.0",
            "null",
        ])
        .prop_map(str::to_owned),
    ];
    let extra_name = prop::sample::select(vec![
        r#""extra""#,
        r#""""#,
        r#""ü""#,
        r#""\u0069d""#,
        r#""x\"y""#,
        r#""jsonrpc ""#,
    ])
    .prop_map(str::to_owned);
    let value_or_deep = prop_oneof![6 => value(broken), 1 => deep()].boxed();
    (
        member(95, name("jsonrpc", r#""json\u0072pc""#), jsonrpc.boxed()),
        member(id, name("id", r#""\u0069d""#), id_value(broken)),
        member(
            method,
            name("method", r#""metho\u0064""#),
            method_value(broken),
        ),
        member(
            params,
            name("params", r#""para\u006ds""#),
            params_value(broken),
        ),
        member(result, name("result", r#""resul\u0074""#), value_or_deep),
        member(error, name("error", r#""\u0065rror""#), error_value()),
        member(3, extra_name.boxed(), value(broken)),
    )
        .prop_flat_map(|(a, b, c, d, e, f, g)| {
            let all: Vec<Member> = [a, b, c, d, e, f, g].into_iter().flatten().collect();
            prop_oneof![Just(all.clone()), Just(all).prop_shuffle()]
        })
        .boxed()
}

/// Where a frame is padded to a given size.
#[derive(Debug, Clone, Copy)]
pub(super) enum PadAt {
    /// Whitespace before the frame.
    Lead,
    /// A string member inside object params or result, an element of
    /// array ones (whitespace before the frame when there are neither).
    Params,
    /// An extra top-level member.
    Extra,
}

/// How long a frame is.
#[derive(Debug, Clone, Copy)]
pub(super) enum Size {
    /// As generated.
    Natural,
    /// Exactly this many bytes (when the frame is not already longer).
    Exactly(usize),
}

/// Sizes on both sides of `SCAN_MAX`, most often one byte from it.
pub(super) fn size() -> BoxedStrategy<Size> {
    prop_oneof![
        4 => prop::sample::select(vec![SCAN_MAX - 1, SCAN_MAX, SCAN_MAX + 1]).prop_map(Size::Exactly),
        1 => (SCAN_MAX - 64..=SCAN_MAX + 4096).prop_map(Size::Exactly),
    ]
    .boxed()
}

/// What is done to the frame once it is built.
#[derive(Debug, Clone)]
pub(super) enum Mutation {
    None,
    /// Cut at this fraction of its length.
    Truncate(Index),
    /// Something after it.
    Trailing(&'static str),
    /// One character replaced by one that matters to JSON.
    Replace(Index, char),
    /// Sent as a batch of one, or of two.
    Batch(bool),
    /// One scalar (a number, a literal, a string) broken: replaced by what
    /// only looks like a number or a literal, or a string given a piece
    /// JSON refuses.
    Fault(Index, &'static str),
}

/// What a broken scalar is made of: for a number or a literal, its
/// replacement; for a string, a piece put in it.
pub(super) const FAULTS: &[&str] = &[
    "01",
    "-01",
    "00",
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
    "1 2",
    "tru",
    "nul",
    "True",
    "nulll",
    "fals",
    r"\x",
    r"\u12",
    r"\u00g9",
    r"\U0041",
    r"\'",
    "\t",
    "\n",
    "\u{1}",
    "\u{1f}",
    "\"",
];

/// A mutation, or (`intact` times in `intact + 12`) none.
pub(super) fn mutation(intact: u32) -> BoxedStrategy<Mutation> {
    prop_oneof![
        intact => Just(Mutation::None),
        2 => any::<Index>().prop_map(Mutation::Truncate),
        1 => prop::sample::select(vec!["x", "}", ",", "{}", "\u{0}", "\"", " 1", "\n{}"])
            .prop_map(Mutation::Trailing),
        2 => (
            any::<Index>(),
            prop::sample::select(vec!['"', '\\', ',', ':', '}', ']', '{', '[', ' ', '1', '-', 'x', '\u{1}']),
        )
            .prop_map(|(at, c)| Mutation::Replace(at, c)),
        1 => any::<bool>().prop_map(Mutation::Batch),
        6 => (any::<Index>(), prop::sample::select(FAULTS)).prop_map(|(at, fault)| Mutation::Fault(at, fault)),
    ]
    .boxed()
}

/// One generated case: the envelope's parts, and what is done to them.
#[derive(Debug, Clone)]
pub(super) struct Case {
    pub(super) members: Vec<Member>,
    /// Whitespace: before the frame, around each token, after the frame.
    pub(super) space: Vec<String>,
    pub(super) size: Size,
    pub(super) pad_at: PadAt,
    /// What the padding string repeats (with escapes and non-ASCII).
    pub(super) pad_unit: &'static str,
    pub(super) mutation: Mutation,
}

/// A case: at its natural size, or `sized` around `SCAN_MAX` (then mostly
/// requests, which the large-frame path is for).
pub(super) fn case(sized: bool) -> impl Strategy<Value = Case> {
    let kind = if sized {
        prop_oneof![
            6 => Just(Kind::Request),
            2 => Just(Kind::Notification),
            1 => Just(Kind::Result),
            1 => Just(Kind::Any),
        ]
        .boxed()
    } else {
        prop_oneof![
            4 => Just(Kind::Request),
            2 => Just(Kind::Notification),
            2 => Just(Kind::Result),
            1 => Just(Kind::Error),
            2 => Just(Kind::Any),
        ]
        .boxed()
    };
    let size = if sized {
        size()
    } else {
        Just(Size::Natural).boxed()
    };
    (
        (kind, prop::bool::weighted(if sized { 0.2 } else { 0.5 }))
            .prop_flat_map(|(kind, broken)| members(kind, broken)),
        prop::collection::vec(ws(), 8),
        size,
        prop_oneof![
            2 => Just(PadAt::Lead),
            2 => Just(PadAt::Params),
            1 => Just(PadAt::Extra)
        ],
        prop::sample::select(vec!["x", "ab", r#"\"é\\n"#, "😀 ", r"\u00e9"]),
        mutation(if sized { 60 } else { 24 }),
    )
        .prop_map(|(members, space, size, pad_at, pad_unit, mutation)| Case {
            members,
            space,
            size,
            pad_at,
            pad_unit,
            mutation,
        })
}

/// A JSON string of exactly `len` bytes of content: `unit` repeated, then
/// `x`s.
pub(super) fn pad_text(unit: &str, len: usize) -> String {
    let mut text = unit.repeat(len / unit.len());
    text.push_str(&"x".repeat(len - text.len()));
    text
}

impl Case {
    /// The frame, padded with `pad` bytes (none when `pad` is `None`).
    fn render(&self, pad: Option<usize>) -> String {
        let space = |i: usize| self.space[i % self.space.len()].as_str();
        let pad = pad.map(|len| pad_text(self.pad_unit, len));
        let mut members = self.members.clone();
        let mut lead = space(0).to_owned();
        match (&pad, self.pad_at) {
            (None, _) => {}
            (Some(pad), PadAt::Lead) => lead = " ".repeat(pad.len() + 2),
            (Some(pad), PadAt::Params) => {
                let params = members.iter_mut().find(|(name, value)| {
                    (name == r#""params""# || name == r#""result""#)
                        && value.starts_with(['{', '['])
                });
                match params {
                    Some((_, value)) => *value = insert_pad(value, pad),
                    None => lead = " ".repeat(pad.len() + 2),
                }
            }
            (Some(pad), PadAt::Extra) => {
                members.push((r#""pad""#.to_owned(), format!("\"{pad}\"")));
            }
        }
        let body: Vec<String> = members
            .iter()
            .enumerate()
            .map(|(i, (name, value))| {
                format!(
                    "{}{name}{}:{}{value}{}",
                    space(i + 1),
                    space(i + 2),
                    space(i + 3),
                    space(i + 4)
                )
            })
            .collect();
        let body = if body.is_empty() {
            space(5).to_owned()
        } else {
            body.join(",")
        };
        format!("{lead}{{{body}}}{}", space(7))
    }

    /// The frame at its size, mutated.
    pub(super) fn frame(&self) -> String {
        let mut frame = self.render(None);
        if let Size::Exactly(len) = self.size {
            // The pad's overhead (quotes, a name, a comma) is the frame's
            // length with an empty pad.
            let base = self.render(Some(0)).len();
            if base <= len {
                frame = self.render(Some(len - base));
                assert_eq!(frame.len(), len);
            }
        }
        match &self.mutation {
            Mutation::None => {}
            Mutation::Truncate(at) => {
                let mut cut = at.index(frame.len() + 1);
                while !frame.is_char_boundary(cut) {
                    cut -= 1;
                }
                frame.truncate(cut);
            }
            Mutation::Trailing(tail) => frame.push_str(tail),
            Mutation::Replace(at, c) => {
                if !frame.is_empty() {
                    let mut i = at.index(frame.len());
                    while !frame.is_char_boundary(i) {
                        i -= 1;
                    }
                    let width = frame[i..].chars().next().map_or(1, char::len_utf8);
                    frame.replace_range(i..i + width, c.encode_utf8(&mut [0; 4]));
                }
            }
            Mutation::Batch(two) => {
                frame = if *two {
                    format!("[{frame},{frame}]")
                } else {
                    format!("[{frame}]")
                };
            }
            Mutation::Fault(at, fault) => {
                let tokens = scalar_tokens(&frame);
                if !tokens.is_empty() {
                    let (start, end) = *at.get(&tokens);
                    if frame.as_bytes()[start] == b'"' {
                        frame.insert_str(start + 1, fault);
                    } else {
                        frame.replace_range(start..end, fault);
                    }
                }
            }
        }
        frame
    }
}

/// Where each scalar of a JSON text is: `start..end` of every string
/// (quotes included), number and literal.
pub(super) fn scalar_tokens(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(bytes.len());
            }
            b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                while i < bytes.len() && !b",:]} \t\r\n".contains(&bytes[i]) {
                    i += 1;
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        tokens.push((start, i));
    }
    tokens
}

/// Params with a string member (object) or element (array) `pad` first.
pub(super) fn insert_pad(params: &str, pad: &str) -> String {
    let (open, rest) = params.split_at(1);
    let empty = rest
        .trim_start_matches([' ', '\t', '\r', '\n'])
        .starts_with(['}', ']']);
    let comma = if empty { "" } else { "," };
    match open {
        "{" => format!(r#"{{"pad":"{pad}"{comma}{rest}"#),
        _ => format!(r#"["{pad}"{comma}{rest}"#),
    }
}

/// The members of a flat envelope as written: `(name, value)` texts.
pub(super) fn split_members(frame: &str) -> Vec<Member> {
    let mut values = serde_json::Deserializer::from_str(frame);
    let object: std::collections::BTreeMap<String, &RawValue> =
        serde::Deserialize::deserialize(&mut values).unwrap();
    // Back in the frame's order: by where each value starts.
    let mut members: Vec<(usize, Member)> = object
        .into_iter()
        .map(|(name, value)| {
            let at = value.get().as_ptr() as usize - frame.as_ptr() as usize;
            (
                at,
                (
                    serde_json::to_string(&name).unwrap(),
                    value.get().to_owned(),
                ),
            )
        })
        .collect();
    members.sort_by_key(|(at, _)| *at);
    members.into_iter().map(|(_, member)| member).collect()
}
