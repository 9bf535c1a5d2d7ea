#!/usr/bin/env bash
# Soak: the `load` example against `spec_server` on each transport (tcp, unix,
# ws, child stdio), both release builds, one connection each, sampling the
# server's resident memory (VmRSS) every second while the load runs.
#
#   bash scripts/soak.sh                        # 1,000,000 calls, 1,000 in flight, every transport
#   CALLS=100000 TRANSPORTS="tcp ws" bash scripts/soak.sh
#
# Prints one table row per transport: calls/s, latency percentiles, lost and
# duplicated answers, and the server's RSS after warm-up (the first sample at
# or after 10% of the calls, estimated from the run's mean rate), at the end
# of the run (the last sample) and its peak; for the socket servers also once
# the connection is closed. Each run's JSON summary and RSS samples are kept
# in $SOAK_OUT (a temporary directory unless set). Exits 1 if any run lost or
# duplicated an answer. Linux only (/proc).
set -euo pipefail
cd "$(dirname "$0")/.."

CALLS=${CALLS:-1000000}
IN_FLIGHT=${IN_FLIGHT:-1000}
TRANSPORTS=${TRANSPORTS:-tcp unix ws child}
SOAK_OUT=${SOAK_OUT:-$(mktemp -d -t soak.XXXXXX)}
mkdir -p "$SOAK_OUT"

cargo build --release --quiet --example spec_server --example load
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/examples

server_pid=
cleanup() {
    if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
}
trap cleanup EXIT

# One field of a one-line JSON object: `field NAME FILE`.
field() {
    grep -o "\"$1\":[^,}]*" "$2" | head -n 1 | cut -d: -f2- | tr -d '"'
}

rss_kib() {
    awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || true
}

# Starts spec_server with ARGS and waits for its `listening on` line; sets
# server_pid, and listening to where it listens.
listening=
start_server() {
    local err=$SOAK_OUT/server.err
    : >"$err"
    "$bin/spec_server" "$@" </dev/null >/dev/null 2>"$err" &
    server_pid=$!
    for _ in $(seq 300); do
        listening=$({ grep -m 1 '^spec_server: listening on ' "$err" || true; } |
            sed -e 's/^spec_server: listening on //' -e 's/^\(tcp\|unix\) //')
        [[ -n $listening ]] && return
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "soak: spec_server $* did not start:" >&2
    cat "$err" >&2
    exit 1
}

stop_server() {
    kill -TERM "$server_pid"
    wait "$server_pid" || echo "soak: spec_server exited with $?" >&2
    server_pid=
}

printf '%-6s | %9s | %7s | %7s | %7s | %5s | %5s | %9s | %9s | %9s | %9s\n' \
    transport calls/s "p50 µs" "p99 µs" "p99.9µs" lost dup "RSS@10%" "RSS end" "RSS peak" "RSS after" \
    >"$SOAK_OUT/table.txt"

failed=0
for transport in $TRANSPORTS; do
    socket=$SOAK_OUT/spec.sock
    case $transport in
        tcp) start_server --tcp 127.0.0.1:0 && target=(--tcp "$listening") ;;
        unix) start_server --unix "$socket" && target=(--unix "$listening") ;;
        ws) start_server --ws 127.0.0.1:0 && target=(--ws "$listening") ;;
        child) target=(--child "$bin/spec_server") ;;
        *) echo "soak: unknown transport $transport (tcp, unix, ws, child)" >&2; exit 2 ;;
    esac
    summary=$SOAK_OUT/$transport.json
    samples=$SOAK_OUT/$transport.rss
    : >"$samples"
    echo "soak: $transport: $CALLS calls, $IN_FLIGHT in flight" >&2
    "$bin/load" "${target[@]}" --calls "$CALLS" --in-flight "$IN_FLIGHT" --json \
        >"$summary" 2>"$SOAK_OUT/$transport.err" &
    load_pid=$!
    pid=$server_pid
    start=$(date +%s.%N)
    # The child's spec_server is the load tool's child: find it first.
    while [[ $transport == child && -z $pid ]] && kill -0 "$load_pid" 2>/dev/null; do
        pid=$(pgrep -P "$load_pid" -x spec_server || true)
        [[ -n $pid ]] || sleep 0.05
    done
    while kill -0 "$load_pid" 2>/dev/null; do
        rss=$(rss_kib "$pid")
        [[ -n $rss ]] && echo "$(awk -v s="$start" -v n="$(date +%s.%N)" 'BEGIN { printf "%.2f", n - s }') $rss" >>"$samples"
        sleep 1
    done
    status=0
    wait "$load_pid" || status=$?
    [[ $status == 0 ]] || failed=1
    after=-
    if [[ $transport != child ]]; then
        sleep 1
        after=$(rss_kib "$pid")
        stop_server
    fi
    if [[ ! -s $summary ]]; then
        echo "soak: $transport: no summary (exit $status):" >&2
        cat "$SOAK_OUT/$transport.err" >&2
        continue
    fi
    seconds=$(field seconds "$summary")
    # The first sample at or after 10% of the run, the last one, the peak.
    warm=$(awk -v t="$seconds" '$1 >= t / 10 { print $2; exit }' "$samples")
    end=$(tail -n 1 "$samples" | cut -d' ' -f2)
    peak=$(sort -k2 -n "$samples" | tail -n 1 | cut -d' ' -f2)
    printf '%-6s | %9s | %7s | %7s | %7s | %5s | %5s | %9s | %9s | %9s | %9s\n' \
        "$transport" "$(field calls_per_second "$summary" | cut -d. -f1)" \
        "$(field p50 "$summary")" "$(field p99 "$summary")" "$(field p99_9 "$summary")" \
        "$(field lost "$summary")" "$(field duplicated "$summary")" \
        "${warm:-?} KiB" "${end:-?} KiB" "${peak:-?} KiB" \
        "$([[ $after == - ]] && echo - || echo "$after KiB")" >>"$SOAK_OUT/table.txt"
    if [[ $status != 0 ]]; then
        echo "soak: $transport: load exited with $status: $(grep -o '"problems":\[[^]]*\]' "$summary")" >&2
    fi
done

cat "$SOAK_OUT/table.txt"
echo "soak: summaries and RSS samples in $SOAK_OUT" >&2
exit $failed
