#!/usr/bin/env bash
# The peer in a browser: runs the wasm-bindgen tests of tests/browser in
# headless Chromium (through chromedriver) against native servers this
# script starts: `spec_server --ws --http` (WebSocket and fetch), and
# `mcp_server --http` (the MCP client over fetch). Then builds the
# examples/browser page, serves it, drives it in Chromium with Playwright
# and saves a screenshot to docs/browser-example.png.
#
# Installs what it needs: the wasm32-unknown-unknown target, wasm-bindgen-cli
# at the version Cargo.lock pins, Debian's chromium and chromium-driver (with
# apt-get, when missing), and playwright-core from npm into a scratch
# directory (default /tmp/jsonrpc-browser, or $BROWSER_DIR). Not part of
# `cargo test`. Exits non-zero when a test fails. Arguments filter the tests
# by name, as `cargo test` does.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${BROWSER_DIR:-/tmp/jsonrpc-browser}
mkdir -p "$work"

# What the tests need from outside cargo.
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
pinned=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' "$repo/Cargo.lock")
if [ "$(wasm-bindgen --version 2>/dev/null | cut -d' ' -f2)" != "$pinned" ]; then
    cargo install wasm-bindgen-cli --version "$pinned" --locked ||
        cargo install wasm-bindgen-cli --version "$pinned"
fi
if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver
fi
echo "== $(chromium --version 2>/dev/null), $(chromedriver --version | cut -d' ' -f1-2), wasm-bindgen $pinned"

cargo build --quiet --manifest-path "$repo/Cargo.toml" -p examples --example spec_server --example mcp_server
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target/debug/examples

pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
# start NAME ARGS...: runs the example in the background; its log is
# $work/NAME.log.
start() {
    local name=$1
    shift
    "$bin/$name" "$@" 2>"$work/$name.log" &
    pids+=($!)
}
# url NAME SCHEME: the SCHEME:// address NAME printed once bound.
url() {
    local log=$work/$1.log found
    for _ in $(seq 1 300); do
        found=$(grep -o "listening on $2://[^ ]*" "$log" | head -n1 | cut -d' ' -f3) || true
        [ -n "$found" ] && echo "$found" && return
        sleep 0.1
    done
    echo "browser.sh: $1 did not start:" >&2
    cat "$log" >&2
    exit 1
}
start spec_server --ws 127.0.0.1:0 --http 127.0.0.1:0
start mcp_server --http 127.0.0.1:0
ws=$(url spec_server ws)
http=$(url spec_server http)
mcp=$(url mcp_server http)
echo "== servers: $ws, $http, $mcp"

echo "== wasm-bindgen-test in headless Chromium"
(
    cd "$repo/tests/browser" # wasm-bindgen-test-runner reads webdriver.json here
    JSONRPC_BROWSER_WS=$ws JSONRPC_BROWSER_HTTP=$http JSONRPC_BROWSER_MCP=$mcp \
        CHROMEDRIVER=/usr/bin/chromedriver WASM_BINDGEN_TEST_TIMEOUT=300 \
        CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
        cargo test -p browser-tests --target wasm32-unknown-unknown --test browser -- "$@"
)
[ $# -gt 0 ] && exit 0 # a filtered run is about the tests alone

echo "== the browser example (examples/browser), its size, and a screenshot"
bash "$repo/examples/browser/build.sh" --no-serve
if [ ! -d "$work/node_modules/playwright-core" ]; then
    (cd "$work" && { [ -f package.json ] || npm init -y >/dev/null; } && npm install --silent playwright-core)
fi
cp "$repo/interop/browser_page.mjs" "$work/"
python3 -u -m http.server --bind 127.0.0.1 --directory "$repo/examples/browser" 0 >"$work/page.log" 2>&1 &
pids+=($!)
page=
for _ in $(seq 1 300); do
    page=$(grep -o 'port [0-9]*' "$work/page.log" | head -n1 | cut -d' ' -f2) || true
    [ -n "$page" ] && break
    sleep 0.1
done
[ -n "$page" ] || { echo "browser.sh: the page server did not start" >&2; cat "$work/page.log" >&2; exit 1; }
(cd "$work" && node browser_page.mjs \
    "http://127.0.0.1:$page/?ws=$ws&http=$http" "$repo/docs/browser-example.png")
