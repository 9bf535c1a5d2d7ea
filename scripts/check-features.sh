#!/usr/bin/env bash
# Builds jsonrpc-runtime and its portable core (jsonrpc-runtime-core) with
# each cargo feature alone (and with none, and with all), and the core for
# wasm32-unknown-unknown. Warnings fail the check.
# Run by .ci/run; installs the wasm32 target when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# check CRATE ARGS...: `cargo check -p CRATE ARGS...`, failing on a warning.
check() {
    local crate=$1 out
    shift
    if ! out=$(cargo check -p "$crate" --quiet --message-format short "$@" 2>&1); then
        echo "$out"
        echo "check-features: \`cargo check -p $crate $*\` failed" >&2
        exit 1
    fi
    if grep -q 'warning' <<<"$out"; then
        echo "$out"
        echo "check-features: \`cargo check -p $crate $*\` warned" >&2
        exit 1
    fi
}

# The feature names of CRATE, from the [features] table of its manifest.
features_of() {
    sed -n '/^\[features\]/,/^\[/p' "$1/Cargo.toml" |
        grep -E '^[a-z][a-z0-9-]* *=' | cut -d= -f1 | tr -d ' ' | grep -v '^default$'
}

count=0
for crate in jsonrpc-runtime-core jsonrpc-runtime; do
    check "$crate" --no-default-features
    for feature in $(features_of "$crate"); do
        check "$crate" --no-default-features --features "$feature"
        count=$((count + 1))
    done
    check "$crate" --all-features
done

# The portable core: what a browser build uses (no sockets, processes or
# stdio).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
check jsonrpc-runtime-core --features tower,openrpc --target wasm32-unknown-unknown
check jsonrpc-runtime --no-default-features --features macros,tower,openrpc --target wasm32-unknown-unknown
check jsonrpc-mcp --target wasm32-unknown-unknown
# The browser tests and the browser example compile (they run in Chromium:
# interop/browser.sh), and clippy holds them to the workspace's lints.
wasm_clippy() {
    local out
    if ! out=$(cargo clippy --target wasm32-unknown-unknown --quiet --message-format short "$@" -- -D warnings 2>&1); then
        echo "$out"
        echo "check-features: \`cargo clippy --target wasm32-unknown-unknown $*\` failed" >&2
        exit 1
    fi
}
# (clippy checks them too: no separate `cargo check` of the browser build)
wasm_clippy -p jsonrpc-runtime --no-default-features --features macros,browser
wasm_clippy -p browser-tests --tests
wasm_clippy -p browser-example
echo "check-features: $count features alone, none, all (core and runtime), and for wasm32 the core, the runtime without defaults and with the browser transports, jsonrpc-mcp, the browser tests and the browser example: ok"
