//! Every method of the protocol is reachable: each request and
//! notification a client sends has a route through `LanguageServer`, and
//! each one a server sends has a typed method on `Client`. The list of
//! methods is read from the types crate's own source (generated from the
//! LSP meta-model), found through `cargo metadata`, so a method the types
//! crate gains and this crate lacks fails here.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use jsonrpc_lsp::{LanguageServer, LspServer};
use serde_json::Value;

/// One request or notification of the types crate.
#[derive(Debug)]
struct Method {
    /// The type that describes it (`HoverRequest`).
    ty: String,
    /// Its name on the wire (`textDocument/hover`).
    wire: String,
    /// `ClientToServer`, `ServerToClient` or `Both`.
    direction: String,
}

/// The types crate's source directory, as cargo resolved it for this crate
/// (for this machine's platform only: other platforms' dependencies may not
/// have been downloaded).
fn types_crate_source() -> PathBuf {
    let rustc = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    let rustc = String::from_utf8(rustc.stdout).unwrap();
    let host = rustc
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc names its host");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
            host,
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "gen-lsp-types")
        .expect("gen-lsp-types is a dependency");
    let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap());
    manifest.parent().unwrap().join("src/generated")
}

/// The text between `start` and the next `end`, after `from`.
fn between<'a>(text: &'a str, from: usize, start: &str, end: &str) -> Option<(&'a str, usize)> {
    let a = text[from..].find(start)? + from + start.len();
    let b = text[a..].find(end)? + a;
    Some((&text[a..b], b))
}

/// Every `impl Request for X` / `impl Notification for X` of the types
/// crate, with its wire name from the method enums' `as_str`; read once.
fn methods() -> &'static [Method] {
    static METHODS: OnceLock<Vec<Method>> = OnceLock::new();
    METHODS.get_or_init(read_methods)
}

fn read_methods() -> Vec<Method> {
    let dir = types_crate_source();
    let common = std::fs::read_to_string(dir.join("common.rs")).unwrap();
    // `"textDocument/hover" => Self::TextDocumentHover,` (or with braces).
    let wire_of = |variant: &str| -> String {
        let mut at = 0;
        while let Some((name, end)) = between(&common, at, "\"", "\"") {
            let rest = common[end + 1..].trim_start();
            let rest = rest.strip_prefix("=>").map(str::trim_start);
            let rest = rest.map(|r| r.strip_prefix('{').map_or(r, str::trim_start));
            if let Some(rest) = rest.and_then(|r| r.strip_prefix("Self::")) {
                if rest.starts_with(variant)
                    && !rest[variant.len()..].starts_with(|c: char| c.is_alphanumeric())
                {
                    return name.to_owned();
                }
            }
            at = end + 1;
        }
        panic!("no wire name for {variant}");
    };
    let mut out = Vec::new();
    for (file, kind) in [
        ("requests.rs", "Request"),
        ("notifications.rs", "Notification"),
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let mut at = 0;
        while let Some((ty, end)) = between(&text, at, &format!("impl {kind} for "), " {") {
            let (variant, _) = between(&text, end, &format!("Lsp{kind}Method::"), ";").unwrap();
            let (direction, next) = between(&text, end, "MessageDirection::", ";").unwrap();
            out.push(Method {
                ty: ty.to_owned(),
                wire: wire_of(variant),
                direction: direction.to_owned(),
            });
            at = next;
        }
    }
    out
}

struct Nothing;
impl LanguageServer for Nothing {}

#[test]
fn every_method_a_client_sends_has_a_route() {
    let all = methods();
    assert!(
        all.len() > 90,
        "the types crate's methods were not found: {all:?}"
    );
    let (router, _) = LspServer::new(|_| Nothing).into_parts();
    // The runtime's policies handle these two before any route.
    let by_policy = ["$/cancelRequest", "$/progress"];
    let missing: Vec<_> = all
        .iter()
        .filter(|m| m.direction != "ServerToClient" && !by_policy.contains(&m.wire.as_str()))
        .filter(|m| !router.contains(&m.wire))
        .collect();
    assert!(missing.is_empty(), "no route for {missing:#?}");
    let routed = all.iter().filter(|m| router.contains(&m.wire)).count();
    assert_eq!(
        routed,
        router.methods().count(),
        "a route that is no LSP method"
    );
}

#[test]
fn every_method_a_server_sends_has_a_typed_method_on_the_client() {
    let client = include_str!("../src/client.rs");
    let missing: Vec<_> = methods()
        .iter()
        .filter(|m| m.direction != "ClientToServer")
        // Progress is `WorkDone`'s, cancellation the runtime's.
        .filter(|m| !["$/cancelRequest", "$/progress"].contains(&m.wire.as_str()))
        .filter(|m| !client.contains(&format!("::<{}>", m.ty)))
        .collect();
    assert!(
        missing.is_empty(),
        "no typed method on Client for {missing:#?}"
    );
}
