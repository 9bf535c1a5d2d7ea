#!/usr/bin/env bash
# Runs every interop check against the example servers: the official MCP
# TypeScript and Python SDKs (over stdio and Streamable HTTP) and
# vscode-jsonrpc. Needs Node.js 18+, npm and
# Python 3.10+ with venv; installs the client libraries from npm and PyPI
# into a scratch directory (default /tmp/jsonrpc-interop, or $INTEROP_DIR).
# Not part of `cargo test`. Exits non-zero at the first failed check.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${INTEROP_DIR:-/tmp/jsonrpc-interop}
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p examples --examples
# Where cargo put them: $CARGO_TARGET_DIR (or a config's build.target-dir)
# when set, else the repository's target/.
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target/debug/examples
mkdir -p "$work"
cp "$repo"/interop/*.mjs "$repo"/interop/*.py "$work"
cd "$work"
if [ ! -d node_modules/@modelcontextprotocol/sdk ] || [ ! -d node_modules/vscode-jsonrpc ]; then
    [ -f package.json ] || npm init -y >/dev/null
    npm install --silent @modelcontextprotocol/sdk vscode-jsonrpc
fi
if [ ! -x py/bin/python ] || ! py/bin/python -c 'import mcp' 2>/dev/null; then
    python3 -m venv py
    py/bin/pip install --quiet mcp
fi
version() { node -p "JSON.parse(require('fs').readFileSync('node_modules/$1/package.json')).version"; }
echo "== MCP TypeScript SDK $(version @modelcontextprotocol/sdk)"
node mcp_client.mjs "$bin/mcp_server"
echo "== vscode-jsonrpc $(version vscode-jsonrpc)"
node lsp_client.mjs "$bin/lsp_server" "$bin/spec_server"
echo "== MCP Python SDK $(py/bin/python -c 'import importlib.metadata as m; print(m.version("mcp"))')"
py/bin/python mcp_client.py "$bin/mcp_server"
echo "interop: every check passed"
