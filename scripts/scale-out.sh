#!/usr/bin/env bash
# Scale-out behind nginx, shown and checked: N instances of the examples
# behind one nginx on loopback, load through it, and one instance drained
# under load. See docs/deploy.md for the recipe this script runs.
#
#   bash scripts/scale-out.sh                 # 2 instances, ports from 18080
#   bash scripts/scale-out.sh --instances 3 --base-port 28080
#   bash scripts/scale-out.sh --print-config  # the nginx config it would run, and exit
#
# What it does:
#   1. installs nginx from Debian's packages when it is missing (as root,
#      with apt-get; the package's service is not started);
#   2. builds the `spec_server`, `mcp_server` and `load` examples (debug);
#   3. starts, on 127.0.0.1, N `spec_server --http --ws` instances and N
#      `mcp_server --http --instance-tag aI` instances, renders
#      scripts/scale-out/nginx.conf.template into a temporary directory and
#      runs nginx with it as this user in the foreground of a background job
#      (`nginx -c CONF -p PREFIX -g 'daemon off;'`), nothing system-wide;
#   4. one POST over the instances' body cap per instance: 413 through
#      nginx, not 502, and the instance stays in rotation;
#   5. steady phase: JSON-RPC over HTTP from many keep-alive clients, MCP
#      sessions (initialize, notifications/initialized, tools/call..., DELETE)
#      and WebSocket connections and keep-alive HTTP clients of the `load`
#      example, all through nginx, every answer checked;
#   6. drain phase: the same HTTP and MCP load, and meanwhile SIGTERM to
#      instance 1 (its spec_server and its mcp_server); waits for both to
#      exit, then lets the load run on the survivors;
#   7. prints a summary table; exits 1 if any accepted request was lost or
#      any MCP session of a surviving instance got a 404.
#
# Runs outside `cargo test`: it needs nginx, Python 3 and free ports.
# Linux only. Everything it starts is stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

INSTANCES=2
BASE_PORT=18080
STEADY_SECONDS=6
HTTP_CLIENTS=32
MCP_SESSIONS=24
WS_CONNECTIONS=4
WS_CALLS=20000
# `load --http` beside the Python clients: one process, keep-alive POSTs
# through nginx, every id's answer counted.
HTTP_LOAD_CLIENTS=2
HTTP_LOAD_CALLS=5000
PRINT_CONFIG=0
KEEP=${SCALE_OUT_KEEP:-0}

usage() {
    cat <<EOF
usage: bash scripts/scale-out.sh [--instances N] [--base-port PORT] [--seconds S]
                                 [--http-clients N] [--mcp-sessions N] [--print-config]
  --instances N     instances of each server behind nginx, 2 to 9 (default $INSTANCES)
  --base-port PORT  nginx listens on PORT; instance I uses PORT+10+I (HTTP),
                    PORT+20+I (WebSocket) and PORT+30+I (MCP) (default $BASE_PORT)
  --seconds S       length of the steady phase (default $STEADY_SECONDS)
  --http-clients N  concurrent keep-alive JSON-RPC-over-HTTP clients (default $HTTP_CLIENTS)
  --mcp-sessions N  concurrent MCP sessions (default $MCP_SESSIONS)
  --print-config    print the nginx config for these options and exit
  SCALE_OUT_KEEP=1  keep the temporary directory (logs, config, tallies)
EOF
}

while [[ $# -gt 0 ]]; do
    case $1 in
        --instances) INSTANCES=$2; shift 2 ;;
        --base-port) BASE_PORT=$2; shift 2 ;;
        --seconds) STEADY_SECONDS=$2; shift 2 ;;
        --http-clients) HTTP_CLIENTS=$2; shift 2 ;;
        --mcp-sessions) MCP_SESSIONS=$2; shift 2 ;;
        --print-config) PRINT_CONFIG=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "scale-out: unknown argument $1" >&2; usage >&2; exit 2 ;;
    esac
done
if ! [[ $INSTANCES =~ ^[2-9]$ ]]; then
    echo "scale-out: --instances takes 2 to 9 (instance 1 is drained, the others must serve)" >&2
    exit 2
fi
if ! [[ $BASE_PORT =~ ^[0-9]+$ ]] || ((BASE_PORT < 1024 || BASE_PORT > 65000)); then
    echo "scale-out: --base-port takes 1024 to 65000" >&2
    exit 2
fi

say() { echo "scale-out: $*" >&2; }

# -- addresses ---------------------------------------------------------------

HOST=127.0.0.1
NGINX_ADDR=$HOST:$BASE_PORT
http_addr() { echo "$HOST:$((BASE_PORT + 10 + $1))"; }
ws_addr() { echo "$HOST:$((BASE_PORT + 20 + $1))"; }
mcp_addr() { echo "$HOST:$((BASE_PORT + 30 + $1))"; }
tag() { echo "a$1"; }

join_by_comma() { local IFS=,; echo "$*"; }
http_list=() ws_list=() mcp_list=()
for i in $(seq "$INSTANCES"); do
    http_list+=("$(http_addr "$i")")
    ws_list+=("$(ws_addr "$i")")
    mcp_list+=("$(tag "$i")=$(mcp_addr "$i")")
done

render_config() { # PREFIX OUT
    python3 scripts/scale-out/clients.py render \
        --template scripts/scale-out/nginx.conf.template --out "$2" --prefix "$1" \
        --listen "$NGINX_ADDR" --http "$(join_by_comma "${http_list[@]}")" \
        --ws "$(join_by_comma "${ws_list[@]}")" --mcp "$(join_by_comma "${mcp_list[@]}")"
}

if ((PRINT_CONFIG)); then
    render_config /tmp/scale-out.XXXXXX -
    exit 0
fi

# -- nginx -------------------------------------------------------------------

NGINX=$(command -v nginx || true)
[[ -z $NGINX && -x /usr/sbin/nginx ]] && NGINX=/usr/sbin/nginx
if [[ -z $NGINX ]]; then
    if [[ $(id -u) != 0 ]]; then
        say "nginx is missing: install Debian's nginx package (sudo apt-get install nginx), then run this again"
        exit 1
    fi
    say "nginx is missing: installing Debian's nginx package (apt-get update; apt-get install -y nginx)"
    # The package would start a system nginx on port 80: a policy-rc.d that
    # answers 101 ("action forbidden") keeps it stopped. One already there
    # is left as it is.
    made_policy=0
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        say "  (with a temporary /usr/sbin/policy-rc.d so that the package's service is not started)"
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod 755 /usr/sbin/policy-rc.d
        made_policy=1
    fi
    status=0
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nginx; } ||
        status=$?
    ((made_policy)) && rm -f /usr/sbin/policy-rc.d
    if ((status != 0)); then
        say "apt-get failed ($status)"
        exit 1
    fi
    NGINX=/usr/sbin/nginx
fi
if ! command -v python3 >/dev/null; then
    say "python3 is needed for the load clients"
    exit 1
fi
say "using $("$NGINX" -v 2>&1)"

# -- build -------------------------------------------------------------------

say "building the examples (spec_server, mcp_server, load)"
cargo build --quiet --example spec_server --example mcp_server --example load
# Where cargo put them, as cargo itself says (a config or wrapper may
# choose the target directory).
target_dir=$(cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
bin=$target_dir/debug/examples

# -- processes ---------------------------------------------------------------

RUN=$(mktemp -d -t scale-out.XXXXXX)
# nginx's workers (as `nobody` when started by root) read under the prefix.
chmod 755 "$RUN"
mkdir -p "$RUN/tmp"
declare -A pids=()
cleanup() {
    local name
    for name in "${!pids[@]}"; do
        kill -TERM "${pids[$name]}" 2>/dev/null || true
    done
    for name in "${!pids[@]}"; do
        wait "${pids[$name]}" 2>/dev/null || true
    done
    if ((KEEP)); then
        say "logs, config and tallies kept in $RUN"
    else
        rm -rf "$RUN"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_free() { ! (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; }
for addr in "$NGINX_ADDR" "${http_list[@]}" "${ws_list[@]}" "${mcp_list[@]#*=}"; do
    if ! port_free "$addr"; then
        say "$addr is in use: pick other ports with --base-port"
        exit 1
    fi
done

# start NAME LOG-PATTERN COMMAND...: runs COMMAND in the background with its
# stderr in $RUN/NAME.log, and waits until the log shows LOG-PATTERN.
start() {
    local name=$1 pattern=$2
    shift 2
    "$@" </dev/null >"$RUN/$name.out" 2>"$RUN/$name.log" &
    pids[$name]=$!
    for _ in $(seq 200); do
        grep -q -- "$pattern" "$RUN/$name.log" 2>/dev/null && return 0
        if ! kill -0 "${pids[$name]}" 2>/dev/null; then
            break
        fi
        sleep 0.05
    done
    say "$name did not start:"
    cat "$RUN/$name.log" >&2
    exit 1
}

for i in $(seq "$INSTANCES"); do
    # spec_server says `listening on http://` last.
    start "spec$i" "listening on http://" "$bin/spec_server" --http "$(http_addr "$i")" --ws "$(ws_addr "$i")"
    start "mcp$i" "listening on http://" "$bin/mcp_server" --http "$(mcp_addr "$i")" --instance-tag "$(tag "$i")"
    say "instance $i: spec_server http://$(http_addr "$i")/ ws://$(ws_addr "$i")/ (pid ${pids[spec$i]}), mcp_server http://$(mcp_addr "$i")/mcp tag $(tag "$i") (pid ${pids[mcp$i]})"
done

render_config "$RUN" "$RUN/nginx.conf"
"$NGINX" -t -q -c "$RUN/nginx.conf" -p "$RUN" -g 'daemon off;' 2>"$RUN/nginx-t.log" || {
    say "nginx refused the config:"
    cat "$RUN/nginx-t.log" >&2
    exit 1
}
"$NGINX" -c "$RUN/nginx.conf" -p "$RUN" -g 'daemon off;' </dev/null >"$RUN/nginx.out" 2>&1 &
pids[nginx]=$!
for _ in $(seq 200); do
    port_free "$NGINX_ADDR" || break
    kill -0 "${pids[nginx]}" 2>/dev/null || { say "nginx did not start:"; cat "$RUN/nginx.out" "$RUN/error.log" >&2; exit 1; }
    sleep 0.05
done
say "nginx on http://$NGINX_ADDR/ (pid ${pids[nginx]}): JSON-RPC at /, WebSocket at /ws, MCP at /mcp; config $RUN/nginx.conf"

clients() { python3 scripts/scale-out/clients.py "$@"; }
clients caller --port "$BASE_PORT" >&2
# A body over the instances' cap (spec_server: 8 MiB; nginx lets up to 16m
# through) is answered 413 by the instance, read rather than reset, so nginx
# passes the 413 on and keeps the instance in rotation.
clients oversized --port "$BASE_PORT" --instances "$INSTANCES" --bytes $((9 * 1024 * 1024)) >&2

# -- steady phase ------------------------------------------------------------

say "steady phase: ${STEADY_SECONDS}s of JSON-RPC over HTTP ($HTTP_CLIENTS clients), MCP ($MCP_SESSIONS sessions) and WebSocket ($WS_CONNECTIONS connections x $WS_CALLS calls), all through nginx"
ws_jobs=()
ws_files=()
for c in $(seq "$WS_CONNECTIONS"); do
    "$bin/load" --ws "ws://$NGINX_ADDR/ws" --method subtract --params '[42,23]' \
        --calls "$WS_CALLS" --in-flight 64 --json >"$RUN/ws$c.json" 2>"$RUN/ws$c.err" &
    ws_jobs+=($!)
    ws_files+=("$RUN/ws$c.json")
done
http_files=()
for c in $(seq "$HTTP_LOAD_CLIENTS"); do
    "$bin/load" --http "http://$NGINX_ADDR/" --method subtract --params '[42,23]' \
        --calls "$HTTP_LOAD_CALLS" --in-flight 16 --json >"$RUN/http$c.json" 2>"$RUN/http$c.err" &
    ws_jobs+=($!)
    http_files+=("$RUN/http$c.json")
done
clients phase --port "$BASE_PORT" --http-clients "$HTTP_CLIENTS" --mcp-sessions "$MCP_SESSIONS" \
    --seconds "$STEADY_SECONDS" --out "$RUN/steady.json"
for job in "${ws_jobs[@]}"; do
    wait "$job" || true
done

# -- drain phase -------------------------------------------------------------

say "drain phase: the same HTTP and MCP load; SIGTERM to instance 1 (spec_server pid ${pids[spec1]}, mcp_server pid ${pids[mcp1]}) once it runs"
rm -f "$RUN/ready" "$RUN/stop" "$RUN/draining"
clients phase --port "$BASE_PORT" --http-clients "$HTTP_CLIENTS" --mcp-sessions "$MCP_SESSIONS" \
    --ready-file "$RUN/ready" --stop-file "$RUN/stop" --drain-file "$RUN/draining" \
    --drained-tag "$(tag 1)" --out "$RUN/drain.json" &
load_pid=$!
for _ in $(seq 400); do
    [[ -e $RUN/ready ]] && break
    sleep 0.05
done
[[ -e $RUN/ready ]] || { say "the load did not start"; exit 1; }
sleep 2
touch "$RUN/draining"
drain_start=$(date +%s.%N)
kill -TERM "${pids[spec1]}" "${pids[mcp1]}"
spec_status=0 mcp_status=0
wait "${pids[spec1]}" || spec_status=$?
spec_done=$(date +%s.%N)
wait "${pids[mcp1]}" || mcp_status=$?
mcp_done=$(date +%s.%N)
unset 'pids[spec1]' 'pids[mcp1]'
seconds_since() { awk -v a="$drain_start" -v b="$1" 'BEGIN { printf "%.2f", b - a }'; }
say "instance 1 drained: spec_server exited $spec_status after $(seconds_since "$spec_done") s, mcp_server exited $mcp_status after $(seconds_since "$mcp_done") s"
sleep 2
touch "$RUN/stop"
wait "$load_pid"

# -- report ------------------------------------------------------------------

# Let nginx write its buffered access log.
sleep 1.2
refused=$(grep -c 'connect() failed (111: Connection refused)' "$RUN/error.log" || true)
upstream_errors=$(grep -E 'upstream prematurely closed|recv\(\) failed|send\(\) failed|writev\(\) failed|reset by peer' "$RUN/error.log" || true)
ws_spread=$(grep '"GET /ws ' "$RUN/access.log" | grep -o 'upstream=[^ ]*' | sort | uniq -c |
    awk '{ sub("upstream=", "", $2); printf "%s%s %s", sep, $2, $1; sep = ", " }')
notes=(
    "WebSocket connections per instance (nginx access log): ${ws_spread:-none}"
    "nginx error log: $refused connects refused by the draining instance (each retried on another instance, or a 502 for a session of the drained instance)"
    "instance 1: spec_server exited $spec_status, $(seconds_since "$spec_done") s after SIGTERM; mcp_server exited $mcp_status, $(seconds_since "$mcp_done") s after SIGTERM"
)
if [[ -n $upstream_errors ]]; then
    notes+=("nginx error log: requests cut off by an instance:")
    while IFS= read -r line; do notes+=("  $line"); done <<<"$upstream_errors"
fi
note_args=()
for note in "${notes[@]}"; do note_args+=(--note "$note"); done
status=0
clients report --steady "$RUN/steady.json" --drain "$RUN/drain.json" --ws "${ws_files[@]}" \
    --load-http "${http_files[@]}" "${note_args[@]}" || status=$?
if ((spec_status != 0 || mcp_status != 0)); then
    say "FAILED: a drained server did not exit 0"
    status=1
fi
cat <<'EOF'

How to read it: nginx sends each POST to an instance. When the drain begins,
the instance stops accepting: later connects are refused, and nginx sends the
request to the next instance ("retried after a refused connect": never lost,
nginx had not sent it yet). Connections the kernel had already completed
(its accept queue) are taken in and served during the drain, and requests on
nginx's kept-alive connections are answered with `Connection: close`, so every
request that reached an instance is answered. A 502 would be a request nginx
sent that the instance never answered: that is the loss this checks for.
MCP sessions live in the process that made them: those of the drained instance
end (404, 502 once it is gone, or -32001 for a request posted as its session
closed) and their clients start new ones; the others go on.
EOF
exit $status
