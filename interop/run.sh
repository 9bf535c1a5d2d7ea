#!/usr/bin/env bash
# Runs every interop check against the example servers: the official MCP
# TypeScript and Python SDKs (over stdio and Streamable HTTP),
# vscode-jsonrpc, three LSP clients against lsp_server (pygls's
# LanguageClient, vscode-languageclient headless, Neovim's built-in client),
# jsonrpsee's HTTP client, jsonrpsee's WebSocket client and server
# (subscriptions both ways: theirs against spec_server, ours against theirs),
# and the official OpenRPC meta-schema. Needs Node.js 18+, npm and Python
# 3.10+ with venv; installs the client libraries from npm and PyPI into a
# scratch directory (default /tmp/jsonrpc-interop, or $INTEROP_DIR), Neovim
# with apt-get when `nvim` is missing (the Neovim check is skipped, saying
# so, only when that fails), and builds the two jsonrpsee checks
# (interop/jsonrpsee-client, a workspace of its own) into the same target
# directory as the examples. Not part of `cargo test`. Exits non-zero at the
# first failed check.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${INTEROP_DIR:-/tmp/jsonrpc-interop}
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p examples --examples
# Where cargo put them: $CARGO_TARGET_DIR (or a config's build.target-dir)
# when set, else the repository's target/.
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target/debug/examples
jsonrpsee_manifest=$repo/interop/jsonrpsee-client/Cargo.toml
cargo build --quiet --manifest-path "$jsonrpsee_manifest" --target-dir "$target"
mkdir -p "$work"
cp "$repo"/interop/*.mjs "$repo"/interop/*.cjs "$repo"/interop/*.py "$work"
cd "$work"
packages="@modelcontextprotocol/sdk vscode-jsonrpc vscode-languageclient @open-rpc/schema-utils-js @open-rpc/meta-schema ajv ajv-formats"
missing=()
for package in $packages; do
    [ -d "node_modules/$package" ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    [ -f package.json ] || npm init -y >/dev/null
    npm install --silent "${missing[@]}"
fi
if [ ! -x py/bin/python ] || ! py/bin/python -c 'import mcp, pygls' 2>/dev/null; then
    python3 -m venv py
    py/bin/pip install --quiet mcp pygls
fi
pyversion() { py/bin/python -c "import importlib.metadata as m; print(m.version('$1'))"; }
version() { node -p "JSON.parse(require('fs').readFileSync('node_modules/$1/package.json')).version"; }
echo "== MCP TypeScript SDK $(version @modelcontextprotocol/sdk)"
node mcp_client.mjs "$bin/mcp_server"
echo "== vscode-jsonrpc $(version vscode-jsonrpc)"
node lsp_client.mjs "$bin/lsp_server" "$bin/spec_server"
echo "== MCP Python SDK $(pyversion mcp)"
py/bin/python mcp_client.py "$bin/mcp_server"
echo "== pygls $(pyversion pygls) (lsprotocol $(pyversion lsprotocol))"
py/bin/python lsp_pygls.py "$bin/lsp_server"
echo "== vscode-languageclient $(version vscode-languageclient) (vscode-languageserver-protocol $(version vscode-languageserver-protocol), vscode-jsonrpc $(version vscode-jsonrpc)), headless"
node lsp_languageclient.mjs "$bin/lsp_server"
# Prints its own header; exits 77 when Neovim cannot be installed.
neovim=0
bash "$repo/interop/neovim.sh" "$bin/lsp_server" || neovim=$?
if [ "$neovim" -eq 77 ]; then
    echo "== Neovim: SKIPPED (nvim is missing and apt-get could not install it)"
elif [ "$neovim" -ne 0 ]; then
    exit "$neovim"
fi
# A crate's version in the jsonrpsee checks' Cargo.lock.
lockversion() {
    awk -v name="$1" '$0 == "name = \"" name "\"" { getline; gsub(/"/, "", $3); print $3 }' \
        "$repo/interop/jsonrpsee-client/Cargo.lock"
}
echo "== jsonrpsee-http-client $(lockversion jsonrpsee-http-client)"
"$target/debug/jsonrpsee-client-interop" "$bin/spec_server"
echo "== jsonrpsee WebSocket client and server $(lockversion jsonrpsee-ws-client) (jsonrpsee-server $(lockversion jsonrpsee-server))"
"$target/debug/jsonrpsee-ws-interop" "$bin/spec_server"
echo "== OpenRPC meta-schema: @open-rpc/schema-utils-js $(version @open-rpc/schema-utils-js) (spec-types $(version @open-rpc/spec-types)), @open-rpc/meta-schema $(version @open-rpc/meta-schema), ajv $(version ajv), ajv-formats $(version ajv-formats)"
node openrpc_check.mjs "$bin/spec_server" "$bin/calculator"
echo "interop: every check passed"
