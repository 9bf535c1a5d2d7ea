//! Runs one benchmark body N times, for instruction counts under callgrind
//! (the machines have no hardware counters):
//!
//! ```text
//! valgrind --tool=callgrind target/release/profile peer_hand 100000
//! ```
//!
//! Variants: floor_typed, floor_two_phase, respond_hand, respond_macro, invoke_hand, invoke_macro,
//! peer_hand, peer_macro, peer_note, loopback_echo, jsonrpsee_async, jsonrpsee_sync,
//! round_trip_memory, pipelined_memory_64, pipelined_unix_64 (and its raw floor,
//! pipelined_unix_64_floor), round_trip_child (and round_trip_child_floor,
//! the servers in a child process: not for callgrind, which follows only this
//! process, but for `strace -f -c`), and over HTTP (one keep-alive
//! connection, the raw client of `jsonrpc_benches::http`): http_floor,
//! http_two_phase, http_ours, http_jsonrpsee; and MCP `tools/call`:
//! mcp_plain and mcp_plain_stateless (a hand-written route, given the
//! session's frame and the stateless one), mcp_session and mcp_stateless
//! (the `jsonrpc-mcp` layer). Run once with N and once with 1
//! and subtract to get the cost of one iteration without the setup.

use std::hint::black_box;
use std::sync::Arc;

use bytes::Bytes;
use jsonrpc_benches::service::{hand_router, invoke_once, macro_router, respond_once, State};
use jsonrpc_benches::setup::{self, Kind};
use jsonrpc_benches::{floor, jsonrpsee_side, loopback, runtime, ADD_REQUEST, NOTE};
use jsonrpc_runtime::message::{Message, ParseOptions};
use jsonrpc_runtime::{Context, Id, Peer};

fn main() {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "peer_hand".into());
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let rt = runtime();
    let state = Arc::new(State::default());
    let hand = hand_router(state.clone());
    let macro_ = macro_router(state.clone());
    let ctx = Context::detached(Some(Id::from(1)));
    rt.block_on(async {
        match variant.as_str() {
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
                    .config(jsonrpc_benches::config())
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
            "mcp_plain" | "mcp_plain_stateless" | "mcp_session" | "mcp_stateless" => {
                // MCP `tools/call` on the MCP preset: a hand-written route
                // (given the session frame, or the stateless one whose
                // `_meta` it ignores), the layer on a session, the layer on
                // stateless requests.
                let router = match variant.as_str() {
                    "mcp_plain" | "mcp_plain_stateless" => jsonrpc_benches::mcp::plain_router(),
                    _ => jsonrpc_benches::mcp::server().router(),
                };
                let (transport, mut client) = loopback::pair();
                let _server = Peer::builder()
                    .config(jsonrpc_runtime::Config::mcp())
                    .router(router)
                    .spawn(transport);
                let call = if variant.ends_with("stateless") {
                    if variant == "mcp_plain_stateless" {
                        black_box(
                            client
                                .request(Bytes::from_static(jsonrpc_benches::mcp::INITIALIZE))
                                .await,
                        );
                    }
                    jsonrpc_benches::mcp::CALL_STATELESS
                } else {
                    black_box(
                        client
                            .request(Bytes::from_static(jsonrpc_benches::mcp::INITIALIZE))
                            .await,
                    );
                    jsonrpc_benches::mcp::CALL
                };
                let first = client.request(Bytes::from_static(call)).await;
                let first = String::from_utf8_lossy(&first);
                assert!(first.contains(r#""text":"5""#), "{first}");
                for _ in 0..n {
                    black_box(client.request(Bytes::from_static(call)).await);
                }
            }
            "loopback_echo" => {
                // The harness alone: two channel hops and two task switches.
                let (in_tx, mut in_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
                let (out_tx, out_rx) = tokio::sync::mpsc::unbounded_channel::<Bytes>();
                tokio::spawn(async move {
                    while let Some(frame) = in_rx.recv().await {
                        black_box(frame);
                        let _ = out_tx.send(Bytes::from_static(jsonrpc_benches::ADD_RESPONSE));
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
            "jsonrpsee_async" | "jsonrpsee_sync" => {
                let module = jsonrpsee_side::module(variant == "jsonrpsee_sync");
                let text = std::str::from_utf8(ADD_REQUEST).unwrap();
                for _ in 0..n {
                    black_box(module.raw_json_request(text, 1).await.unwrap());
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
            "pipelined_unix_64" => {
                let ours = setup::ours(Kind::Unix, std::path::Path::new("")).await;
                for _ in 0..n / 64 {
                    black_box(ours.add_pipelined(64).await);
                }
            }
            "pipelined_unix_64_floor" => {
                let mut floor = setup::floor(Kind::Unix, std::path::Path::new("")).await;
                for _ in 0..n / 64 {
                    black_box(floor.add_pipelined(64).await);
                }
            }
            "round_trip_child" | "round_trip_child_floor" => {
                // The servers are this binary's siblings.
                let exe = std::env::current_exe().expect("exe");
                if variant == "round_trip_child" {
                    let ours = setup::ours(Kind::Child, &exe.with_file_name("bench-server")).await;
                    for _ in 0..n {
                        black_box(ours.add(2, 3).await);
                    }
                } else {
                    let mut floor =
                        setup::floor(Kind::Child, &exe.with_file_name("raw-server")).await;
                    for _ in 0..n {
                        black_box(floor.add(2, 3).await);
                    }
                }
            }
            "large_text_8_peer" | "large_text_8_floor" | "large_text_8_envelope" => {
                use futures_util::StreamExt as _;
                let mut line = jsonrpc_benches::large::request_line(
                    "open",
                    &jsonrpc_benches::large::did_open(8 << 20),
                );
                line.push(b'\n');
                let line = Bytes::from(line);
                for _ in 0..n {
                    match variant.as_str() {
                        "large_text_8_floor" => {
                            black_box(
                                serde_json::from_slice::<
                                    jsonrpc_benches::large::TypedRequest<
                                        '_,
                                        jsonrpc_benches::large::DidOpenParams,
                                    >,
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
                                    jsonrpc_benches::MAX_FRAME_LEN,
                                ),
                            )
                            .map(|item| {
                                item.map_err(jsonrpc_runtime::transport::TransportError::from)
                            });
                            let (outbound, mut answers) = loopback::outbound();
                            let peer = Peer::builder()
                                .config(jsonrpc_benches::config())
                                .router(hand.clone())
                                .spawn(jsonrpc_runtime::Transport::new(inbound, outbound));
                            black_box(answers.recv().await);
                            peer.closed().await;
                        }
                    }
                }
            }
            "http_floor" | "http_two_phase" | "http_ours" | "http_jsonrpsee" => {
                use jsonrpc_benches::http;
                let addr = match variant.as_str() {
                    "http_floor" => http::hyper_floor().await.0,
                    "http_two_phase" => http::hyper_two_phase().await.0,
                    "http_ours" => {
                        let acceptor = jsonrpc_runtime::transport::TcpAcceptor::bind("127.0.0.1:0")
                            .await
                            .unwrap();
                        let addr = acceptor.local_addr().unwrap();
                        let server = jsonrpc_runtime::server::HttpListener::new(acceptor)
                            .spawn(hand.clone());
                        std::mem::forget(server);
                        addr
                    }
                    _ => {
                        let (addr, handle) = jsonrpsee_side::http_server().await;
                        std::mem::forget(handle);
                        addr
                    }
                };
                let mut client = http::HttpClient::connect(addr).await;
                for _ in 0..n {
                    client.call().await;
                }
            }
            other => panic!("unknown variant `{other}`"),
        }
    });
}
