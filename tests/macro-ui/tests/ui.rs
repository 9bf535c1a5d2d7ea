//! Compile-fail and compile-pass cases for `#[rpc]` and `#[derive(RpcError)]`.
//!
//! Each file under `ui/fail/<area>/` makes one mistake and its
//! `.stderr` records the message users see. Regenerate them with
//! `TRYBUILD=overwrite cargo test -p macro-ui` and read the diff.

#[test]
fn macro_misuse_is_reported_at_the_mistake_and_correct_use_compiles() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*/*.rs");
    cases.pass("ui/pass/*.rs");
}
