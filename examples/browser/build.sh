#!/usr/bin/env bash
# Builds the browser example and serves it:
#
#   cargo run --example spec_server -- --ws 127.0.0.1:9000 --http 127.0.0.1:9001
#   bash examples/browser/build.sh           # then open the address it prints
#
# `--no-serve` only builds. The WebAssembly goes to examples/browser/pkg/,
# built with the `wasm-release` profile (size first), through wasm-bindgen
# (the CLI at the version Cargo.lock pins) and, when it is installed,
# `wasm-opt -Oz`; the sizes are printed. Needs the wasm32-unknown-unknown
# target (`rustup target add wasm32-unknown-unknown`); interop/browser.sh
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
wasm-bindgen --target web --no-typescript --out-dir "$here/pkg" \
    "$target/wasm32-unknown-unknown/wasm-release/browser_example.wasm"
module=$here/pkg/browser_example_bg.wasm
if command -v wasm-opt >/dev/null; then
    wasm-opt -Oz --all-features "$module" -o "$module.opt" && mv "$module.opt" "$module"
fi
size=$(stat -c %s "$module")
gzipped=$(gzip -9 -c "$module" | wc -c)
echo "browser example: $module: $((size / 1024)) KiB, $((gzipped / 1024)) KiB gzipped"

if [ "$serve" = 1 ]; then
    echo "serving $here on http://127.0.0.1:8000/?ws=ws://127.0.0.1:9000/&http=http://127.0.0.1:9001/"
    exec python3 -m http.server --bind 127.0.0.1 --directory "$here" 8000
fi
