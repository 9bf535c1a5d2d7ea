//! Large messages: 1 MiB and 8 MiB params through framer + parse + typed
//! decode, against serde_json decoding the same bytes from a slice. Two
//! shapes: an LSP `didOpen` (one big string with escapes) and a list of
//! small records. Through a long-lived peer over an in-process pipe, through
//! `Router::respond` (in process, no transport), and the steps alone (the
//! envelope step is the owned `Message::parse`, which validates the params
//! where the peer and `respond` decode them in the same pass).

use std::hint::black_box;
use std::io::Cursor;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use futures_util::StreamExt as _;
use jsonrpc_benches::large::{self, DidOpenParams, ItemsParams, TypedRequest};
use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_benches::{loopback, runtime, MAX_FRAME_LEN};
use jsonrpc_runtime::codec::LineCodec;
use jsonrpc_runtime::message::{Message, ParseOptions, Parsed};
use jsonrpc_runtime::transport::TransportError;
use jsonrpc_runtime::{Peer, Router, Transport};
use serde::de::DeserializeOwned;
use tokio::runtime::Runtime;
use tokio_util::codec::FramedRead;

const MIB: usize = 1024 * 1024;

fn framed(line: &Bytes) -> FramedRead<Cursor<Bytes>, LineCodec> {
    FramedRead::new(
        Cursor::new(line.clone()),
        LineCodec::with_max_frame_len(MAX_FRAME_LEN),
    )
}

/// A long-lived server peer reading newline-delimited frames from an
/// in-process pipe (`tokio::io::duplex`, 1 MiB of buffer), as it would from
/// a socket: the framer, the classification and the typed decode in the
/// route all run on every message.
struct PipePeer {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    answers: tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    line: Vec<u8>,
    _peer: Peer,
}

impl PipePeer {
    fn start(router: &Router) -> PipePeer {
        let (ours, theirs) = tokio::io::duplex(MIB);
        let (read, write) = tokio::io::split(theirs);
        let transport =
            Transport::from_io(read, write, LineCodec::with_max_frame_len(MAX_FRAME_LEN));
        let peer = Peer::builder()
            .config(jsonrpc_benches::config())
            .router(router.clone())
            .spawn(transport);
        let (read, write) = tokio::io::split(ours);
        PipePeer {
            write,
            answers: tokio::io::BufReader::new(read),
            line: Vec::new(),
            _peer: peer,
        }
    }

    /// Writes one request line and reads its answer.
    async fn call(&mut self, line: &[u8]) -> usize {
        use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
        self.write.write_all(line).await.expect("write");
        self.line.clear();
        self.answers
            .read_until(b'\n', &mut self.line)
            .await
            .expect("read")
    }
}

/// One request line through a fresh peer whose transport reads it from an
/// in-memory reader (`Cursor`): the same work plus starting and closing a
/// peer (a few microseconds) per message.
async fn through_fresh_peer(router: &Router, line: &Bytes) -> Bytes {
    let inbound = framed(line).map(|item| item.map_err(TransportError::from));
    let (outbound, mut answers) = loopback::outbound();
    let peer = Peer::builder()
        .config(jsonrpc_benches::config())
        .router(router.clone())
        .spawn(Transport::new(inbound, outbound));
    let answer = answers.recv().await.expect("an answer");
    peer.closed().await;
    answer
}

fn bench_shape<P: DeserializeOwned>(
    c: &mut Criterion,
    rt: &Runtime,
    router: &Router,
    shape: &str,
    make: impl Fn(usize) -> Vec<u8>,
) {
    for size in [MIB, 8 * MIB] {
        let mut line = make(size);
        let len = line.len();
        let params_text = {
            let text = std::str::from_utf8(&line).unwrap();
            match Message::parse(text, &ParseOptions::default()) {
                Parsed::Single(Message::Request(r)) => r.params.unwrap().get().to_owned(),
                other => panic!("{other:?}"),
            }
        };
        line.push(b'\n');
        let line = Bytes::from(line);
        let body = line.slice(..len);

        // The peer answers (not with an error) before anything is timed.
        let answer = rt.block_on(through_fresh_peer(router, &line));
        assert!(
            !answer.windows(7).any(|w| w == b"\"error\""),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        let mut pipe = {
            let _guard = rt.enter();
            PipePeer::start(router)
        };
        let n = rt.block_on(pipe.call(&line));
        assert!(n > 0 && !pipe.line.windows(7).any(|w| w == b"\"error\""));

        let mut group = c.benchmark_group(format!("large/{shape}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(4));
        group.throughput(Throughput::Bytes(len as u64));
        let mib = format!("{}MiB", size / MIB);
        group.bench_function(BenchmarkId::new("floor_from_slice", &mib), |b| {
            b.iter(|| serde_json::from_slice::<TypedRequest<'_, P>>(black_box(&body)).unwrap())
        });
        group.bench_function(BenchmarkId::new("ours_peer", &mib), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(pipe.call(&line).await);
                    }
                    start.elapsed()
                })
            })
        });
        // The in-process entry point: no transport, no copy through a pipe.
        group.bench_function(BenchmarkId::new("ours_respond", &mib), |b| {
            b.iter(|| {
                rt.block_on(router.respond(black_box(&body)))
                    .expect("an answer")
            })
        });
        group.bench_function(BenchmarkId::new("ours_fresh_peer", &mib), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(through_fresh_peer(router, &line).await);
                    }
                    start.elapsed()
                })
            })
        });
        group.bench_function(BenchmarkId::new("step_framer", &mib), |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(framed(&line).next().await);
                    }
                    start.elapsed()
                })
            })
        });
        group.bench_function(BenchmarkId::new("step_envelope", &mib), |b| {
            b.iter(|| Message::parse_bytes(black_box(&body), &ParseOptions::default()))
        });
        group.bench_function(BenchmarkId::new("step_typed_params", &mib), |b| {
            b.iter(|| serde_json::from_str::<P>(black_box(&params_text)).unwrap())
        });
        group.finish();
    }
}

fn large_messages(c: &mut Criterion) {
    let rt = runtime();
    let router = hand_router(Arc::new(State::default()));
    bench_shape::<DidOpenParams>(c, &rt, &router, "text", |size| {
        large::request_line("open", &large::did_open(size))
    });
    bench_shape::<ItemsParams>(c, &rt, &router, "items", |size| {
        large::request_line("items", &large::items(size))
    });
}

criterion_group!(benches, large_messages);
criterion_main!(benches);
