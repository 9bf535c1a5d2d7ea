//! Round trip: sequential call latency, client and server peers on one
//! current-thread runtime (the child-process server on its own), against
//! a raw line ping-pong on the same transport (the floor), and jsonrpsee
//! over a loopback WebSocket.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use jsonrpc_benches::setup::{self, Kind};
use jsonrpc_benches::{jsonrpsee_side, runtime, AddParams};
use jsonrpsee::core::client::ClientT as _;

const SERVER: &str = env!("CARGO_BIN_EXE_bench-server");
const RAW: &str = env!("CARGO_BIN_EXE_raw-server");

fn round_trip(c: &mut Criterion) {
    // One CPU for this process and its children: see `sys::pin_to_cpu`.
    assert!(jsonrpc_benches::sys::pin_to_cpu(0));
    let rt = runtime();
    for kind in [Kind::Memory, Kind::Unix, Kind::Tcp, Kind::Child] {
        let mut group = c.benchmark_group(format!("round_trip/{}", kind.name()));
        let mut floor = rt.block_on(setup::floor(kind, Path::new(RAW)));
        group.bench_function("floor", |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(floor.add(black_box(2), 3).await);
                    }
                    start.elapsed()
                })
            })
        });
        drop(floor);
        let ours = rt.block_on(setup::ours(kind, Path::new(SERVER)));
        group.bench_function("ours", |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(ours.add(black_box(2), 3).await);
                    }
                    start.elapsed()
                })
            })
        });
        rt.block_on(ours.client.close(Duration::from_secs(1)));
        group.finish();
    }

    let mut group = c.benchmark_group("round_trip/websocket");
    let ours = rt.block_on(setup::ours(Kind::WebSocket, Path::new(SERVER)));
    group.bench_function("ours", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    black_box(ours.add(black_box(2), 3).await);
                }
                start.elapsed()
            })
        })
    });
    rt.block_on(ours.client.close(Duration::from_secs(1)));
    let (client, server) = rt.block_on(async {
        let (addr, server) = jsonrpsee_side::ws_server().await;
        (jsonrpsee_side::ws_client(addr, 64).await, server)
    });
    group.bench_function("jsonrpsee", |b| {
        b.iter_custom(|iters| {
            rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let sum: i64 = client
                        .request(
                            "add",
                            jsonrpc_benches::jsonrpsee_side::Add(AddParams {
                                a: black_box(2),
                                b: 3,
                            }),
                        )
                        .await
                        .expect("add");
                    black_box(sum);
                }
                start.elapsed()
            })
        })
    });
    drop(client);
    let _ = server.stop();
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = round_trip
}
criterion_main!(benches);
