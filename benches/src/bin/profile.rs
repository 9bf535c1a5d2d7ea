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

use jsonrpc_benches::service::{hand_router, State};
use jsonrpc_benches::setup::{self, Kind};
use jsonrpc_benches::{jsonrpsee_side, loopback, runtime, variants, ADD_REQUEST};
use jsonrpc_runtime::Peer;

use bytes::Bytes;

fn main() {
    let mut args = std::env::args().skip(1);
    let variant = args.next().unwrap_or_else(|| "peer_hand".into());
    let n: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(100_000);
    let rt = runtime();
    rt.block_on(async {
        // The variants that need only the runtime (`core/src/variants.rs`,
        // what the guard runs too).
        if variants::run(&variant, n).await {
            return;
        }
        match variant.as_str() {
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
            "jsonrpsee_async" | "jsonrpsee_sync" => {
                let module = jsonrpsee_side::module(variant == "jsonrpsee_sync");
                let text = std::str::from_utf8(ADD_REQUEST).unwrap();
                for _ in 0..n {
                    black_box(module.raw_json_request(text, 1).await.unwrap());
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
                            .spawn(hand_router(std::sync::Arc::new(State::default())));
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
