#!/usr/bin/env bash
# The long size sweep: tests/tests/size_sweep.rs with SWEEP=full, in a
# release build. Every size threshold of the runtime (±1 byte) and every
# power of two up to the default 8 MiB frame cap, every flavor of content at
# every size, in every direction, over every transport (memory, pipes with
# both framers, TCP, Unix, WebSocket, child stdio with both framers, HTTP,
# MCP Streamable HTTP), from a fresh connection per size and on one
# long-lived connection with sizes ascending, descending and shuffled.
#
#   bash scripts/sweep.sh            # every transport
#   bash scripts/sweep.sh tcp unix   # only the tests whose names match
#
# Exits non-zero if any message arrived other than it was sent, or not at all.
set -euo pipefail
cd "$(dirname "$0")/.."
export SWEEP=full
start=$(date +%s)
cargo test --release -p tests --test size_sweep -- --test-threads=2 "$@"
echo "the full sweep passed in $(( $(date +%s) - start )) s"
