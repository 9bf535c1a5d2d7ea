#!/usr/bin/env bash
# Builds jsonrpc-runtime with each cargo feature alone (and with none), and
# its portable core for wasm32-unknown-unknown. Warnings fail the check.
# Run by .ci/run; installs the wasm32 target when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

check() {
    local out
    if ! out=$(cargo check -p jsonrpc-runtime --quiet --message-format short "$@" 2>&1); then
        echo "$out"
        echo "check-features: \`cargo check -p jsonrpc-runtime $*\` failed" >&2
        exit 1
    fi
    if grep -q 'warning' <<<"$out"; then
        echo "$out"
        echo "check-features: \`cargo check -p jsonrpc-runtime $*\` warned" >&2
        exit 1
    fi
}

# The feature names, from the [features] table of the runtime's manifest.
features=$(sed -n '/^\[features\]/,/^\[/p' jsonrpc-runtime/Cargo.toml |
    grep -E '^[a-z][a-z0-9-]* *=' | cut -d= -f1 | tr -d ' ' | grep -v '^default$')

check --no-default-features
for feature in $features; do
    check --no-default-features --features "$feature"
done
check --all-features

# The portable core: what a browser build uses (no sockets, processes or
# stdio).
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    rustup target add wasm32-unknown-unknown
fi
check --no-default-features --features macros,tower,openrpc --target wasm32-unknown-unknown
echo "check-features: $(wc -w <<<"$features") features alone, none, all, and wasm32: ok"
