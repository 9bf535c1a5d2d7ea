#!/usr/bin/env bash
# Instruction counts per iteration under callgrind: stable on a noisy
# machine, where wall-clock medians move by 30% between runs. Each variant
# runs twice, with a few iterations and with many; the difference divided
# by the difference in iterations is the cost of one iteration without the
# setup.
#
#   bash benches/callgrind.sh              # every variant, ours and jsonrpsee's: a Markdown table (~3 min)
#   bash benches/callgrind.sh --check      # the guard: ours against benches/baseline.txt, fails past +2%
#   bash benches/callgrind.sh --update     # writes benches/baseline.txt from this machine
#   bash benches/callgrind.sh --self-test  # the guard fails on a planted 5% regression, and passes without it
#
# The guard (run by .ci/run) builds only `core/` (the variants that need
# nothing but the runtime, binary `guard`), so it takes about two minutes
# from a cold start. `CALLGRIND_VARIANTS="a b"` limits a run to those
# variants and `CALLGRIND_BASELINE=FILE` reads another baseline. A baseline
# is exact for the processor it was taken on (glibc picks its string
# functions by CPU): on another model the guard says so and allows +10%
# (`CALLGRIND_OTHER_CPU_LIMIT`) until the baseline is taken again there. A
# commit that changes benches/baseline.txt says why in its message.
set -euo pipefail
cd "$(dirname "$0")"
mode=${1:-table}
baseline=${CALLGRIND_BASELINE:-$PWD/baseline.txt}
limit=2
other_cpu_limit=${CALLGRIND_OTHER_CPU_LIMIT:-10}
guarded="floor_two_phase respond_hand respond_macro invoke_hand peer_hand peer_macro peer_note round_trip_memory pipelined_memory_64 pipelined_unix_64 pipelined_unix_64_floor"
everything="floor_typed floor_two_phase respond_hand respond_macro invoke_hand invoke_macro peer_hand peer_macro peer_note loopback_echo jsonrpsee_async jsonrpsee_sync round_trip_memory pipelined_memory_64 pipelined_unix_64 pipelined_unix_64_join_all pipelined_unix_64_floor"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A per

# measure BIN FEW MANY VARIANTS...: instructions per iteration into per[].
measure() {
    local bin=$1 few=$2 many=$3 v a b
    shift 3
    for v in "$@"; do
        for n in "$few" "$many"; do
            valgrind --tool=callgrind --callgrind-out-file="$out/$v.$n" "$bin" "$v" "$n" 2>"$out/$v.$n.log"
        done
        a=$(grep -o 'Collected : [0-9]*' "$out/$v.$few.log" | grep -o '[0-9]*$')
        b=$(grep -o 'Collected : [0-9]*' "$out/$v.$many.log" | grep -o '[0-9]*$')
        per[$v]=$(((b - a) / (many - few)))
    done
}

# guard_run VARIANTS...: builds the guard and measures (64 and 2,112
# iterations: 2,048 apart, whole batches of 64).
guard_run() {
    cargo build --release --quiet -p jsonrpc-bench-core --bin guard
    local target
    target=$(cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    measure "$target/release/guard" 64 2112 "$@"
}

# check VARIANTS...: compares per[] with the baseline; 0 when none grew
# past the limit.
check() {
    local v base now allowed failed=0 taken_on
    taken_on=$(sed -n 's/^# cpu: //p' "$baseline")
    allowed=$limit
    if [ "$taken_on" != "$cpu" ]; then
        allowed=$other_cpu_limit
        echo "callgrind: the baseline was taken on \"$taken_on\", this is \"$cpu\": allowing +$allowed% (run --update here to take it again)"
    fi
    echo "| variant | baseline | now | change |"
    echo "|---|---:|---:|---:|"
    for v in "$@"; do
        base=$(awk -v v="$v" '$1 == v { print $2 }' "$baseline")
        now=${per[$v]}
        if [ -z "$base" ]; then
            echo "| $v | (none) | $now | |"
            echo "callgrind: $v is not in $baseline" >&2
            failed=1
            continue
        fi
        awk -v v="$v" -v b="$base" -v n="$now" 'BEGIN { printf "| %s | %d | %d | %+.2f%% |\n", v, b, n, (n - b) * 100 / b }'
        if awk -v b="$base" -v n="$now" -v l="$allowed" 'BEGIN { exit !(n > b * (1 + l / 100)) }'; then
            echo "callgrind: $v costs $now instructions per iteration, over +$allowed% of the baseline's $base" >&2
            failed=1
        fi
    done
    return $failed
}

case $mode in
table)
    cargo build --release --quiet --bin profile
    measure target/release/profile 64 20032 ${CALLGRIND_VARIANTS:-$everything}
    floor=${per[floor_two_phase]:-0}
    jsonrpsee=${per[jsonrpsee_async]:-0}
    echo "| variant | instructions per iteration | vs two-phase floor | jsonrpsee_async ÷ this |"
    echo "|---|---:|---:|---:|"
    for v in ${CALLGRIND_VARIANTS:-$everything}; do
        awk -v v="$v" -v n="${per[$v]}" -v f="$floor" -v j="$jsonrpsee" \
            'BEGIN { printf "| %s | %d | %.2f× | %.2f× |\n", v, n, f ? n / f : 0, n ? j / n : 0 }'
    done
    ;;
--check)
    variants=${CALLGRIND_VARIANTS:-$guarded}
    guard_run $variants
    if check $variants; then
        echo "callgrind: every guarded variant within +$limit% of benches/baseline.txt"
    else
        echo "callgrind: over the baseline (a change that costs more must say why and run --update)" >&2
        exit 1
    fi
    ;;
--update)
    guard_run $guarded
    {
        echo "# Instructions per iteration of each guarded variant (bash benches/callgrind.sh --update)."
        echo "# cpu: $cpu"
        echo "# rustc: $(rustc --version)"
        for v in $guarded; do
            echo "$v ${per[$v]}"
        done
    } >"$baseline"
    cat "$baseline"
    ;;
--self-test)
    # Two variants, measured once; the baseline as it stands passes, and a
    # baseline 5% below what was measured (a planted regression) fails.
    variants="floor_two_phase peer_hand"
    guard_run $variants
    planted=$out/planted.txt
    {
        echo "# cpu: $cpu"
        for v in $variants; do
            echo "$v $((per[$v] * 100 / 105))"
        done
    } >"$planted"
    if baseline=$planted check $variants >"$out/planted.log" 2>&1; then
        cat "$out/planted.log"
        echo "callgrind self-test: FAILED: a 5% regression passed the guard" >&2
        exit 1
    fi
    grep -q "over +$limit% of the baseline" "$out/planted.log" || {
        cat "$out/planted.log"
        echo "callgrind self-test: FAILED: the guard failed without saying which variant" >&2
        exit 1
    }
    exact=$out/exact.txt
    {
        echo "# cpu: $cpu"
        for v in $variants; do
            echo "$v ${per[$v]}"
        done
    } >"$exact"
    if ! baseline=$exact check $variants >"$out/exact.log" 2>&1; then
        cat "$out/exact.log"
        echo "callgrind self-test: FAILED: the guard failed on its own measurement" >&2
        exit 1
    fi
    echo "callgrind self-test: a planted 5% regression fails the guard, the same counts pass"
    ;;
*)
    echo "usage: bash benches/callgrind.sh [--check | --update | --self-test]" >&2
    exit 2
    ;;
esac
