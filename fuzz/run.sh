#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 60) each, one after another,
# and prints how many inputs each one executed.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#   RUNS=10000000 fuzz/run.sh 600     # stop a target at 10M executions
#
# cargo-fuzz needs nightly compiler flags; the machines have one stable
# toolchain, so RUSTC_BOOTSTRAP=1 lets it use them. Each target starts from
# its committed seeds (fuzz/corpus/<target>) and grows a working corpus
# under the target directory, so the committed one stays small. Crashes are
# written to fuzz/artifacts/<target>/.
#
# The targets are built with debug assertions and overflow checks, and
# without a sanitizer: the runtime is `#![forbid(unsafe_code)]`, the targets
# check behaviour, and AddressSanitizer costs about three quarters of the
# speed. SANITIZER=address fuzz/run.sh turns it on.
set -euo pipefail

seconds=${1:-60}
shift || true
fuzz_dir=$(cd "$(dirname "$0")" && pwd)
export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$fuzz_dir/target}
sanitizer=${SANITIZER:-none}
if [ $# -gt 0 ]; then
    targets=("$@")
else
    targets=(line_decoder content_length_decoder classify websocket_message router_params encode_roundtrip)
fi

cargo fuzz build --fuzz-dir "$fuzz_dir" -s "$sanitizer" -a
summary=()
for target in "${targets[@]}"; do
    work="$CARGO_TARGET_DIR/fuzz-corpus/$target"
    mkdir -p "$work"
    log="$CARGO_TARGET_DIR/fuzz-$target.log"
    echo "== $target: ${seconds}s (log: $log)"
    status=0
    # With -jobs, libFuzzer writes the job's own log (fuzz-0.log) into the
    # current directory and copies it into ours when the job ends: one
    # directory per target, so runs of several targets at once keep apart.
    rundir="$CARGO_TARGET_DIR/fuzz-run/$target"
    mkdir -p "$rundir"
    (cd "$rundir" && cargo fuzz run --fuzz-dir "$fuzz_dir" -s "$sanitizer" -a \
        "$target" "$work" "$fuzz_dir/corpus/$target" -- \
        -max_total_time="$seconds" ${RUNS:+-runs="$RUNS"} -jobs=1 -print_final_stats=1) \
        >"$log" 2>&1 || status=$?
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    speed=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    line="$target: ${runs:-?} executions, ${speed:-?} exec/s"
    if [ "$status" -ne 0 ]; then
        line="$line, FAILED (exit $status, see $log)"
    fi
    echo "$line"
    summary+=("$line")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
