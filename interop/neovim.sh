#!/usr/bin/env bash
# Interop check: Neovim's built-in LSP client against the `lsp_server`
# example, in a headless Neovim (interop/neovim_lsp.lua). Installs Debian's
# `neovim` with apt-get when `nvim` is missing (the check is written for the
# 0.7 API, which later versions keep). Usage:
#   bash interop/neovim.sh [PATH/TO/lsp_server]
# The default binary is debug/examples/lsp_server under $CARGO_TARGET_DIR, or
# under the repository's target/; build it first (`cargo build -p examples
# --examples`, as interop/run.sh does). Exits non-zero when a check fails,
# printing the JSON-RPC messages of the session and Neovim's LSP log, and
# 77 (skipped) when Neovim is missing and cannot be installed.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
server=${1:-${CARGO_TARGET_DIR:-$repo/target}/debug/examples/lsp_server}
case $server in /*) ;; *) server=$PWD/$server ;; esac
if [ ! -x "$server" ]; then
    echo "neovim.sh: no lsp_server at $server (build it with: cargo build -p examples --examples)" >&2
    exit 2
fi
if ! command -v nvim >/dev/null; then
    echo "neovim.sh: nvim is missing, installing Debian's neovim" >&2
    if [ "$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi
    export DEBIAN_FRONTEND=noninteractive
    if ! command -v apt-get >/dev/null ||
        ! { $sudo apt-get install -y -qq neovim >/dev/null 2>&1 ||
            { $sudo apt-get update -qq && $sudo apt-get install -y -qq neovim >/dev/null; }; }; then
        echo "neovim.sh: SKIPPED: nvim is missing and apt-get could not install neovim" >&2
        exit 77
    fi
fi
echo "== Neovim $(nvim --version | head -1 | sed 's/^NVIM v//') (built-in LSP client)"
# Neovim's state (its LSP log, with the server's stderr) goes to a scratch
# directory rather than the user's.
state=$(mktemp -d "${TMPDIR:-/tmp}/neovim-lsp.XXXXXX")
trap 'rm -rf "$state"' EXIT
status=0
XDG_CACHE_HOME=$state XDG_STATE_HOME=$state XDG_DATA_HOME=$state XDG_CONFIG_HOME=$state \
    LSP_SERVER=$server nvim --headless --clean -c "luafile $repo/interop/neovim_lsp.lua" </dev/null || status=$?
if [ "$status" -ne 0 ]; then
    for log in "$state"/nvim/lsp.log "$state"/lsp.log; do
        [ -f "$log" ] && { echo "--- $log" >&2; tail -n 100 "$log" >&2; }
    done
    echo "neovim.sh: the check failed (nvim exited $status)" >&2
fi
exit "$status"
