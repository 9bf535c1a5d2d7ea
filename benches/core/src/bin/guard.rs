//! Runs one of the variants that need only the runtime N times, for
//! `bash benches/callgrind.sh --check` (the guard in `.ci/run`): it builds
//! without the other frameworks the full `profile` binary compares with.
//!
//! ```text
//! valgrind --tool=callgrind target/release/guard peer_hand 2064
//! ```

fn main() {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "peer_hand".into());
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let known =
        jsonrpc_bench_core::runtime().block_on(jsonrpc_bench_core::variants::run(&variant, n));
    if !known {
        eprintln!(
            "guard: unknown variant `{variant}`; one of: {}",
            jsonrpc_bench_core::variants::VARIANTS.join(", ")
        );
        std::process::exit(2);
    }
}
