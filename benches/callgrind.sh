#!/usr/bin/env bash
# Instruction counts per iteration under callgrind: stable on a noisy
# machine, where wall-clock medians move by 30% between runs. Each variant
# runs with 64 and with 20,032 iterations; the difference divided by 19,968
# is the cost of one iteration without the setup.
#
#   bash benches/callgrind.sh            # prints a Markdown table
set -euo pipefail
cd "$(dirname "$0")"
cargo build --release --quiet --bin profile
bin=target/release/profile
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
variants="floor_typed floor_two_phase respond_hand respond_macro invoke_hand invoke_macro peer_hand peer_macro peer_note loopback_echo jsonrpsee_async jsonrpsee_sync round_trip_memory pipelined_memory_64 pipelined_unix_64 pipelined_unix_64_floor"
declare -A per
for v in $variants; do
    for n in 64 20032; do
        valgrind --tool=callgrind --callgrind-out-file="$out/$v.$n" "$bin" "$v" "$n" 2>"$out/$v.$n.log"
    done
    a=$(grep -o 'Collected : [0-9]*' "$out/$v.64.log" | grep -o '[0-9]*$')
    b=$(grep -o 'Collected : [0-9]*' "$out/$v.20032.log" | grep -o '[0-9]*$')
    per[$v]=$(( (b - a) / 19968 ))
done
floor=${per[floor_two_phase]}
jsonrpsee=${per[jsonrpsee_async]}
echo "| variant | instructions per iteration | vs two-phase floor | jsonrpsee_async ÷ this |"
echo "|---|---:|---:|---:|"
for v in $variants; do
    awk -v v="$v" -v n="${per[$v]}" -v f="$floor" -v j="$jsonrpsee" \
        'BEGIN { printf "| %s | %d | %.2f× | %.2f× |\n", v, n, n / f, j / n }'
done
