//! Throughput: 64 and 1,024 calls in flight at once, and notifications one
//! way, over the transports of the round-trip benchmark. Times are per
//! burst; BENCHMARKS.md divides them by the burst size.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use jsonrpc_benches::setup::{self, Kind};
use jsonrpc_benches::{jsonrpsee_side, runtime, AddParams};
use jsonrpsee::core::client::ClientT as _;

const SERVER: &str = env!("CARGO_BIN_EXE_bench-server");
const RAW: &str = env!("CARGO_BIN_EXE_raw-server");
const BURSTS: [usize; 2] = [64, 1024];
const NOTES: usize = 1024;

/// Times `iters` runs of an async body inside one `block_on`.
macro_rules! timed {
    ($rt:expr, $iters:expr, $body:expr) => {
        $rt.block_on(async {
            let start = Instant::now();
            for _ in 0..$iters {
                black_box($body);
            }
            start.elapsed()
        })
    };
}

fn pipelined(c: &mut Criterion) {
    // One CPU for this process and its children: see `sys::pin_to_cpu`.
    assert!(jsonrpc_benches::sys::pin_to_cpu(0));
    let rt = runtime();
    for kind in [Kind::Memory, Kind::Unix, Kind::Tcp, Kind::Child] {
        let mut group = c.benchmark_group(format!("pipelined/{}", kind.name()));
        let mut floor = rt.block_on(setup::floor(kind, Path::new(RAW)));
        for n in BURSTS {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("floor", n), |b| {
                b.iter_custom(|iters| timed!(rt, iters, floor.add_pipelined(n).await))
            });
        }
        drop(floor);
        let ours = rt.block_on(setup::ours(kind, Path::new(SERVER)));
        for n in BURSTS {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(BenchmarkId::new("ours", n), |b| {
                b.iter_custom(|iters| timed!(rt, iters, ours.add_pipelined(n).await))
            });
        }
        rt.block_on(ours.client.close(Duration::from_secs(1)));
        group.finish();
    }

    let mut group = c.benchmark_group("pipelined/websocket");
    let ours = rt.block_on(setup::ours(Kind::WebSocket, Path::new(SERVER)));
    for n in BURSTS {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("ours", n), |b| {
            b.iter_custom(|iters| timed!(rt, iters, ours.add_pipelined(n).await))
        });
    }
    rt.block_on(ours.client.close(Duration::from_secs(1)));
    let (client, server) = rt.block_on(async {
        let (addr, server) = jsonrpsee_side::ws_server().await;
        (jsonrpsee_side::ws_client(addr, 2048).await, server)
    });
    for n in BURSTS {
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("jsonrpsee", n), |b| {
            b.iter_custom(|iters| {
                timed!(rt, iters, {
                    let calls = (0..n as i64).map(|i| {
                        client.request::<i64, _>(
                            "add",
                            jsonrpc_benches::jsonrpsee_side::Add(AddParams { a: i, b: 1 }),
                        )
                    });
                    let sums = futures_util::future::join_all(calls).await;
                    sums.into_iter().map(|s| s.expect("add")).sum::<i64>()
                })
            })
        });
    }
    drop(client);
    let _ = server.stop();
    group.finish();
}

fn notifications(c: &mut Criterion) {
    // One CPU for this process and its children: see `sys::pin_to_cpu`.
    assert!(jsonrpc_benches::sys::pin_to_cpu(0));
    let rt = runtime();
    for kind in [Kind::Memory, Kind::Unix, Kind::Tcp, Kind::Child] {
        let mut group = c.benchmark_group(format!("notifications/{}", kind.name()));
        group.throughput(Throughput::Elements(NOTES as u64));
        let mut floor = rt.block_on(setup::floor(kind, Path::new(RAW)));
        group.bench_function(BenchmarkId::new("floor", NOTES), |b| {
            b.iter_custom(|iters| timed!(rt, iters, floor.notes_then_add(NOTES).await))
        });
        drop(floor);
        let ours = rt.block_on(setup::ours(kind, Path::new(SERVER)));
        group.bench_function(BenchmarkId::new("ours", NOTES), |b| {
            b.iter_custom(|iters| timed!(rt, iters, ours.notes_then_add(NOTES).await))
        });
        rt.block_on(ours.client.close(Duration::from_secs(1)));
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = pipelined, notifications
}
criterion_main!(benches);
