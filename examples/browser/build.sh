#!/usr/bin/env bash
# Builds the browser example and serves it:
#
#   cargo run --example spec_server -- --ws 127.0.0.1:9000 --http 127.0.0.1:9001
#   bash examples/browser/build.sh           # then open the address it prints
#
# `--no-serve` only builds. The WebAssembly goes to examples/browser/pkg/,
# built with the `wasm-release` profile (size first: `opt-level = "z"`,
# LTO) and passed through wasm-bindgen (the CLI at the version Cargo.lock
# pins), which drops the names; the sizes are printed. (`wasm-opt -Oz`
# takes off under 1 KiB more, and Debian's binaryen 108 breaks the
# module's reference types.) Needs the wasm32-unknown-unknown target
# (`rustup target add wasm32-unknown-unknown`); interop/browser.sh
# installs everything.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
serve=1
[ "${1:-}" = "--no-serve" ] && serve=0

cargo build --quiet --manifest-path "$repo/Cargo.toml" -p browser-example \
    --target wasm32-unknown-unknown --profile wasm-release
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section --out-dir "$here/pkg" \
    "$target/wasm32-unknown-unknown/wasm-release/browser_example.wasm"
module=$here/pkg/browser_example_bg.wasm
size=$(stat -c %s "$module")
gzipped=$(gzip -9 -c "$module" | wc -c)
echo "browser example: $module: $((size / 1024)) KiB, $((gzipped / 1024)) KiB gzipped"

if [ "$serve" = 1 ]; then
    echo "serving $here on http://127.0.0.1:8000/?ws=ws://127.0.0.1:9000/&http=http://127.0.0.1:9001/"
    exec python3 -m http.server --bind 127.0.0.1 --directory "$here" 8000
fi
