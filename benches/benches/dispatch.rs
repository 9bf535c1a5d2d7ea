//! Dispatch: one request line (bytes) in, one response line (bytes) out, in
//! process, no I/O, for `add {a, b}`; also a notification and an unknown
//! method. See BENCHMARKS.md for what each variant includes.

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion};
use jsonrpc_benches::service::{hand_router, invoke_once, macro_router, respond_once, State};
use jsonrpc_benches::{
    check_add_response, floor, jsonrpsee_side, loopback, runtime, ADD_REQUEST, ADD_RESPONSE, NOTE,
    UNKNOWN_REQUEST,
};
use jsonrpc_runtime::{Context, Id, Peer};
use tokio::runtime::Runtime;

/// Times `iters` runs of an async body inside one `block_on` (the body may
/// `.await`).
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

/// A task that answers every frame with a fixed response: the cost of the
/// loopback transport itself (two channel hops, two task switches).
fn spawn_echo(rt: &Runtime) -> loopback::Client {
    let (in_tx, mut in_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
    rt.spawn(async move {
        while let Some(frame) = in_rx.recv().await {
            black_box(frame);
            if out_tx.send(Bytes::from_static(ADD_RESPONSE)).is_err() {
                break;
            }
        }
    });
    loopback::Client {
        tx: in_tx,
        rx: out_rx,
    }
}

struct Peers {
    state: Arc<State>,
    hand: loopback::Client,
    macro_: loopback::Client,
    _servers: (Peer, Peer),
}

fn peers(rt: &Runtime) -> Peers {
    let _guard = rt.enter();
    let state = Arc::new(State::default());
    let (t1, hand) = loopback::pair();
    let (t2, macro_) = loopback::pair();
    let s1 = Peer::builder()
        .config(jsonrpc_benches::config())
        .router(hand_router(state.clone()))
        .spawn(t1);
    let s2 = Peer::builder()
        .config(jsonrpc_benches::config())
        .router(macro_router(state.clone()))
        .spawn(t2);
    Peers {
        state,
        hand,
        macro_,
        _servers: (s1, s2),
    }
}

fn add(c: &mut Criterion) {
    let rt = runtime();
    let state = Arc::new(State::default());
    let hand = hand_router(state.clone());
    let macro_ = macro_router(state.clone());
    let ctx = Context::detached(Some(Id::from(1)));
    let mut peers = peers(&rt);
    let mut echo = spawn_echo(&rt);
    let module_async = jsonrpsee_side::module(false);
    let module_sync = jsonrpsee_side::module(true);

    // Every variant answers correctly before it is timed.
    let mut out = Vec::new();
    assert!(floor::typed(ADD_REQUEST, &mut out));
    check_add_response(&out, 5);
    out.clear();
    assert!(floor::two_phase(ADD_REQUEST, &mut out));
    check_add_response(&out, 5);
    rt.block_on(async {
        check_add_response(&invoke_once(&hand, &ctx, ADD_REQUEST).await, 5);
        check_add_response(&invoke_once(&macro_, &ctx, ADD_REQUEST).await, 5);
        let req = Bytes::from_static(ADD_REQUEST);
        check_add_response(&peers.hand.request(req.clone()).await, 5);
        check_add_response(&peers.macro_.request(req).await, 5);
        let text = std::str::from_utf8(ADD_REQUEST).unwrap();
        for module in [&module_async, &module_sync] {
            let (answer, _) = module.raw_json_request(text, 1).await.unwrap();
            check_add_response(answer.get().as_bytes(), 5);
        }
    });

    let mut group = c.benchmark_group("dispatch/add");
    group.bench_function("floor_typed", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(64);
            floor::typed(black_box(ADD_REQUEST), &mut out);
            out
        })
    });
    group.bench_function("floor_two_phase", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(64);
            floor::two_phase(black_box(ADD_REQUEST), &mut out);
            out
        })
    });
    group.bench_function("ours_respond_hand", |b| {
        b.iter_custom(|iters| timed!(rt, iters, respond_once(&hand, ADD_REQUEST).await))
    });
    group.bench_function("ours_respond_macro", |b| {
        b.iter_custom(|iters| timed!(rt, iters, respond_once(&macro_, ADD_REQUEST).await))
    });
    group.bench_function("ours_invoke_hand", |b| {
        b.iter_custom(|iters| timed!(rt, iters, invoke_once(&hand, &ctx, ADD_REQUEST).await))
    });
    group.bench_function("ours_invoke_macro", |b| {
        b.iter_custom(|iters| timed!(rt, iters, invoke_once(&macro_, &ctx, ADD_REQUEST).await))
    });
    group.bench_function("loopback_echo_task", |b| {
        b.iter_custom(|iters| {
            timed!(
                rt,
                iters,
                echo.request(Bytes::from_static(ADD_REQUEST)).await
            )
        })
    });
    group.bench_function("ours_peer_hand", |b| {
        b.iter_custom(|iters| {
            timed!(
                rt,
                iters,
                peers.hand.request(Bytes::from_static(ADD_REQUEST)).await
            )
        })
    });
    group.bench_function("ours_peer_macro", |b| {
        b.iter_custom(|iters| {
            timed!(
                rt,
                iters,
                peers.macro_.request(Bytes::from_static(ADD_REQUEST)).await
            )
        })
    });
    group.bench_function("jsonrpsee_async", |b| {
        b.iter_custom(|iters| {
            timed!(rt, iters, {
                let text = std::str::from_utf8(black_box(ADD_REQUEST)).unwrap();
                module_async.raw_json_request(text, 1).await.unwrap().0
            })
        })
    });
    group.bench_function("jsonrpsee_sync", |b| {
        b.iter_custom(|iters| {
            timed!(rt, iters, {
                let text = std::str::from_utf8(black_box(ADD_REQUEST)).unwrap();
                module_sync.raw_json_request(text, 1).await.unwrap().0
            })
        })
    });
    group.finish();
    drop(peers);
    let _ = state;
}

fn note(c: &mut Criterion) {
    let rt = runtime();
    let state = Arc::new(State::default());
    let hand = hand_router(state.clone());
    let macro_ = macro_router(state.clone());
    let ctx = Context::detached(None);
    let peers = peers(&rt);

    let mut group = c.benchmark_group("dispatch/note");
    group.bench_function("floor_two_phase", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            floor::two_phase(black_box(NOTE), &mut out);
            out
        })
    });
    group.bench_function("ours_invoke_hand", |b| {
        b.iter_custom(|iters| timed!(rt, iters, invoke_once(&hand, &ctx, NOTE).await))
    });
    group.bench_function("ours_invoke_macro", |b| {
        b.iter_custom(|iters| timed!(rt, iters, invoke_once(&macro_, &ctx, NOTE).await))
    });
    // The handler signals the benchmark once it has run.
    for (name, client) in [
        ("ours_peer_hand", &peers.hand),
        ("ours_peer_macro", &peers.macro_),
    ] {
        let state = &peers.state;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                timed!(rt, iters, {
                    client.tx.send(Bytes::from_static(NOTE)).unwrap();
                    state.noted.notified().await
                })
            })
        });
    }
    group.finish();
}

fn unknown(c: &mut Criterion) {
    let rt = runtime();
    let state = Arc::new(State::default());
    let hand = hand_router(state);
    let ctx = Context::detached(Some(Id::from(1)));
    let mut peers = peers(&rt);
    let module = jsonrpsee_side::module(false);

    let mut group = c.benchmark_group("dispatch/unknown");
    group.bench_function("floor_two_phase", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(96);
            floor::two_phase(black_box(UNKNOWN_REQUEST), &mut out);
            out
        })
    });
    group.bench_function("ours_invoke", |b| {
        b.iter_custom(|iters| timed!(rt, iters, invoke_once(&hand, &ctx, UNKNOWN_REQUEST).await))
    });
    group.bench_function("ours_peer", |b| {
        b.iter_custom(|iters| {
            timed!(
                rt,
                iters,
                peers
                    .hand
                    .request(Bytes::from_static(UNKNOWN_REQUEST))
                    .await
            )
        })
    });
    group.bench_function("jsonrpsee_async", |b| {
        b.iter_custom(|iters| {
            timed!(rt, iters, {
                let text = std::str::from_utf8(black_box(UNKNOWN_REQUEST)).unwrap();
                module.raw_json_request(text, 1).await.unwrap().0
            })
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = add, note, unknown
}
criterion_main!(benches);
