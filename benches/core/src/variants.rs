//! The benchmark bodies `profile` (all of them) and `guard` (these alone)
//! run N times under callgrind: each variant is one request, round trip or
//! batch of the suite, written once here. `callgrind.sh` runs each with two
//! N and takes the difference, the cost of one iteration without the setup.

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt as _;
use jsonrpc_runtime::message::{Message, ParseOptions};
use jsonrpc_runtime::{Context, Id, Peer};

use crate::service::{hand_router, invoke_once, macro_router, respond_once, State};
use crate::setup::{self, Kind};
use crate::{floor, large, loopback, ADD_REQUEST, NOTE};

/// The variants [`run`] knows, in the order `callgrind.sh` reports them.
pub const VARIANTS: &[&str] = &[
    "floor_typed",
    "floor_two_phase",
    "respond_hand",
    "respond_macro",
    "invoke_hand",
    "invoke_macro",
    "peer_hand",
    "peer_macro",
    "peer_note",
    "loopback_echo",
    "round_trip_memory",
    "pipelined_memory_64",
    "pipelined_unix_64",
    "pipelined_unix_64_join_all",
    "pipelined_unix_64_floor",
    "large_text_8_peer",
    "large_text_8_floor",
    "large_text_8_envelope",
];

/// Runs `variant` `n` times; `false` when it is not one of [`VARIANTS`].
pub async fn run(variant: &str, n: u64) -> bool {
    let state = Arc::new(State::default());
    let hand = hand_router(state.clone());
    let macro_ = macro_router(state.clone());
    match variant {
        "floor_typed" | "floor_two_phase" => {
            for _ in 0..n {
                let mut out = Vec::with_capacity(64);
                if variant == "floor_typed" {
                    floor::typed(black_box(ADD_REQUEST), &mut out);
                } else {
                    floor::two_phase(black_box(ADD_REQUEST), &mut out);
                }
                black_box(out);
            }
        }
        "respond_hand" | "respond_macro" => {
            let router = if variant == "respond_hand" {
                &hand
            } else {
                &macro_
            };
            for _ in 0..n {
                black_box(respond_once(router, ADD_REQUEST).await);
            }
        }
        "invoke_hand" | "invoke_macro" => {
            let router = if variant == "invoke_hand" {
                &hand
            } else {
                &macro_
            };
            let ctx = Context::detached(Some(Id::from(1)));
            for _ in 0..n {
                black_box(invoke_once(router, &ctx, ADD_REQUEST).await);
            }
        }
        "peer_hand" | "peer_macro" | "peer_note" => {
            let router = if variant == "peer_macro" {
                &macro_
            } else {
                &hand
            };
            let (transport, mut client) = loopback::pair();
            let _server = Peer::builder()
                .config(crate::config())
                .router(router.clone())
                .spawn(transport);
            for _ in 0..n {
                if variant == "peer_note" {
                    client.tx.send(Bytes::from_static(NOTE)).unwrap();
                    state.noted.notified().await;
                } else {
                    black_box(client.request(Bytes::from_static(ADD_REQUEST)).await);
                }
            }
        }
        "loopback_echo" => {
            // The harness alone: two channel hops and two task switches.
            let (in_tx, mut in_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
            let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
            tokio::spawn(async move {
                while let Some(frame) = in_rx.recv().await {
                    black_box(frame);
                    let _ = out_tx.send(Bytes::from_static(crate::ADD_RESPONSE));
                }
            });
            let mut client = loopback::Client {
                tx: in_tx,
                rx: out_rx,
            };
            for _ in 0..n {
                black_box(client.request(Bytes::from_static(ADD_REQUEST)).await);
            }
        }
        "round_trip_memory" | "pipelined_memory_64" => {
            let ours = setup::ours(Kind::Memory, std::path::Path::new("")).await;
            if variant == "round_trip_memory" {
                for _ in 0..n {
                    black_box(ours.add(2, 3).await);
                }
            } else {
                for _ in 0..n / 64 {
                    black_box(ours.add_pipelined(64).await);
                }
            }
        }
        "pipelined_unix_64" | "pipelined_unix_64_join_all" => {
            let ours = setup::ours(Kind::Unix, std::path::Path::new("")).await;
            for _ in 0..n / 64 {
                if variant == "pipelined_unix_64" {
                    black_box(ours.add_pipelined(64).await);
                } else {
                    black_box(ours.add_join_all(64).await);
                }
            }
        }
        "pipelined_unix_64_floor" => {
            let mut floor = setup::floor(Kind::Unix, std::path::Path::new("")).await;
            for _ in 0..n / 64 {
                black_box(floor.add_pipelined(64).await);
            }
        }
        "large_text_8_peer" | "large_text_8_floor" | "large_text_8_envelope" => {
            let mut line = large::request_line("open", &large::did_open(8 << 20));
            line.push(b'\n');
            let line = Bytes::from(line);
            for _ in 0..n {
                match variant {
                    "large_text_8_floor" => {
                        black_box(
                            serde_json::from_slice::<
                                large::TypedRequest<'_, large::DidOpenParams>,
                            >(&line[..line.len() - 1])
                            .unwrap(),
                        );
                    }
                    "large_text_8_envelope" => {
                        black_box(Message::parse_bytes(
                            &line[..line.len() - 1],
                            &ParseOptions::default(),
                        ));
                    }
                    _ => {
                        let inbound = tokio_util::codec::FramedRead::new(
                            std::io::Cursor::new(line.clone()),
                            jsonrpc_runtime::codec::LineCodec::with_max_frame_len(
                                crate::MAX_FRAME_LEN,
                            ),
                        )
                        .map(|item| item.map_err(jsonrpc_runtime::transport::TransportError::from));
                        let (outbound, mut answers) = loopback::outbound();
                        let peer = Peer::builder()
                            .config(crate::config())
                            .router(hand.clone())
                            .spawn(jsonrpc_runtime::Transport::new(inbound, outbound));
                        black_box(answers.recv().await);
                        peer.closed().await;
                    }
                }
            }
        }
        _ => return false,
    }
    true
}
