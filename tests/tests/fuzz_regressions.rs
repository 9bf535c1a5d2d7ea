//! Inputs that random testing (the targets in `fuzz/`, and
//! `properties.rs`) found mishandled, each pinned down as it was found.

use jsonrpc_runtime::Id;

#[test]
fn string_ids_display_as_json_text() {
    // Rust's `{:?}` escaping differs from JSON's for control and
    // non-printable characters; the wire form is JSON's.
    for (id, shown) in [
        ("\u{1}", r#""\u0001""#),
        ("\u{7f}", "\"\u{7f}\""),
        ("\u{1cf30}", "\"\u{1cf30}\""),
        ("tab\there", r#""tab\there""#),
        ("it's", r#""it's""#),
        ("a\"b\\", r#""a\"b\\""#),
    ] {
        let id = Id::from(id);
        assert_eq!(id.to_string(), shown);
        assert_eq!(id.to_string(), serde_json::to_string(&id).unwrap());
    }
}
