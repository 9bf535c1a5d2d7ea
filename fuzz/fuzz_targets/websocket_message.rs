//! The WebSocket transport's inbound path, end to end but without a socket:
//! `WebSocketAcceptor::handshake` over an in-memory `tokio::io::duplex`, a
//! fixed client handshake, then client frames built from the input
//! (fragments, control frames, reserved bits and opcodes, unmasked frames,
//! bad UTF-8, frames over the cap) and optional raw bytes after them; see
//! [`Input`] for the layout.
//!
//! The step that turns a received message into a `Frame` is private to the
//! transport, so this drives the public constructor that wraps it. The
//! frames that come out are checked against a model of RFC 6455 as the
//! transport documents it: text messages come out whole and in order,
//! binary ones as refusals, a message over the cap as one `TooLong`
//! refusal followed by an error with close code 1009, a protocol or UTF-8
//! violation as an error, a close frame as the end of the stream.

#![no_main]

use futures_util::StreamExt as _;
use jsonrpc_runtime::codec::{Frame, FrameRefusal};
use jsonrpc_runtime::transport::TransportError;
use jsonrpc_runtime::transport::{OpenOptions, WebSocketAcceptor};
use jsonrpc_runtime::{Config, Transport};
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};

const HANDSHAKE: &[u8] = b"GET /rpc HTTP/1.1\r\n\
    Host: localhost\r\n\
    Upgrade: websocket\r\n\
    Connection: Upgrade\r\n\
    Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\
    Sec-WebSocket-Version: 13\r\n\r\n";

/// Frame caps: below and above the 125-byte limit of control frames.
const CAPS: [usize; 4] = [16, 125, 1024, 64 * 1024];

/// The mask every frame is sent with.
const MASK: [u8; 4] = [0x37, 0xfa, 0x21, 0x3d];

/// The input, read as a list of client frames:
///
/// ```text
/// byte 0     the cap: an index into CAPS
/// per frame  head (1 byte), length (2 bytes, big-endian), payload
///            head: 0x80 FIN, 0x40 unmasked, 0x20 RSV1, 0x10 64-bit length
///            form, low nibble the opcode; a payload cut short by the end
///            of the input is sent as far as it goes
/// ```
///
/// A length of 0xffff ends the frames: the rest of the input is sent as
/// raw bytes.
struct Input<'a> {
    max: usize,
    frames: Vec<WsFrame<'a>>,
    trailer: &'a [u8],
}

struct WsFrame<'a> {
    fin: bool,
    unmasked: bool,
    rsv: bool,
    long_length: bool,
    opcode: u8,
    payload: &'a [u8],
}

impl<'a> Input<'a> {
    fn parse(data: &'a [u8]) -> Option<Self> {
        let (&cap, mut rest) = data.split_first()?;
        let mut frames = Vec::new();
        while let [head, hi, lo, tail @ ..] = rest {
            let len = usize::from(u16::from_be_bytes([*hi, *lo]));
            if len == 0xffff {
                return Some(Input {
                    max: CAPS[usize::from(cap % 4)],
                    frames,
                    trailer: tail,
                });
            }
            let (payload, tail) = tail.split_at(len.min(tail.len()));
            frames.push(WsFrame {
                fin: head & 0x80 != 0,
                unmasked: head & 0x40 != 0,
                rsv: head & 0x20 != 0,
                long_length: head & 0x10 != 0,
                opcode: head & 0x0f,
                payload,
            });
            rest = tail;
        }
        Some(Input {
            max: CAPS[usize::from(cap % 4)],
            frames,
            trailer: &[],
        })
    }
}

impl WsFrame<'_> {
    /// The frame on the wire, as a client writes it.
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(self.fin) << 7 | u8::from(self.rsv) << 6 | self.opcode);
        let mask_bit = if self.unmasked { 0 } else { 0x80 };
        let len = self.payload.len();
        match len {
            _ if self.long_length => {
                out.push(mask_bit | 127);
                out.extend_from_slice(&(len as u64).to_be_bytes());
            }
            0..=125 => out.push(mask_bit | len as u8),
            _ => {
                out.push(mask_bit | 126);
                out.extend_from_slice(&(len as u16).to_be_bytes());
            }
        }
        if self.unmasked {
            out.extend_from_slice(self.payload);
        } else {
            out.extend_from_slice(&MASK);
            out.extend(
                self.payload
                    .iter()
                    .zip(MASK.iter().cycle())
                    .map(|(b, m)| b ^ m),
            );
        }
    }
}

/// How the model expects the stream to end after its frames.
#[derive(Debug, PartialEq)]
enum End {
    /// The frames ran out with nothing wrong; what follows depends on the
    /// trailer (none: an error, as the client left without a close frame).
    Open,
    /// A refusal for a message over the cap, then an error with code 1009.
    TooLong,
    /// An error (a refusal for a message over the cap may come first, as
    /// the transport meets the size before other faults of a frame).
    Error,
    /// A close frame: nothing more is read. The stream ends cleanly when
    /// the close frame is the last thing sent.
    Closed { last: bool },
}

/// The frames the transport should yield for `frames`, and how it ends.
fn model(frames: &[WsFrame<'_>], max: usize, trailer_empty: bool) -> (Vec<Frame>, End) {
    let mut out = Vec::new();
    // The message being assembled from fragments: text or not, its bytes.
    let mut fragments: Option<(bool, Vec<u8>)> = None;
    for (i, frame) in frames.iter().enumerate() {
        let payload = frame.payload.to_vec();
        let opcode = frame.opcode;
        // The header is checked first: a reserved opcode, then the size.
        if matches!(opcode, 3..=7 | 11..=15) {
            return (out, End::Error);
        }
        if payload.len() > max {
            return (out, End::TooLong);
        }
        if frame.rsv || frame.unmasked {
            return (out, End::Error);
        }
        if opcode >= 8 {
            if !frame.fin || payload.len() > 125 {
                return (out, End::Error);
            }
            match opcode {
                8 => {
                    let reason_ok = payload.len() != 1
                        && (payload.len() < 2 || std::str::from_utf8(&payload[2..]).is_ok());
                    if !reason_ok {
                        return (out, End::Error);
                    }
                    let last = i + 1 == frames.len() && trailer_empty;
                    return (out, End::Closed { last });
                }
                _ => continue,
            }
        }
        let message = match (opcode, fragments.take()) {
            (0, Some((text, mut bytes))) => {
                if bytes.len() + payload.len() > max {
                    return (out, End::TooLong);
                }
                bytes.extend_from_slice(&payload);
                (text, bytes)
            }
            (1 | 2, None) => (opcode == 1, payload),
            _ => return (out, End::Error),
        };
        let (text, bytes) = message;
        if text {
            match std::str::from_utf8(&bytes) {
                Ok(_) => {}
                // A sequence cut at the end may be completed by the next
                // fragment.
                Err(e) if e.error_len().is_none() && !frame.fin => {}
                Err(_) => return (out, End::Error),
            }
        }
        if !frame.fin {
            fragments = Some((text, bytes));
            continue;
        }
        out.push(match text {
            true => Frame::Message(bytes.into()),
            false => Frame::Refused(FrameRefusal::Binary),
        });
    }
    (out, End::Open)
}

fn close_code(error: &TransportError) -> Option<u16> {
    match error {
        TransportError::WebSocket(e) => e.close_code(),
        _ => None,
    }
}

/// Everything the transport yields, up to and including its first error.
async fn serve(stream: tokio::io::DuplexStream, max: usize) -> Vec<Result<Frame, TransportError>> {
    let config = Config::default().max_frame_len(max);
    let mut transport = WebSocketAcceptor::handshake(stream, &OpenOptions::new(&config))
        .await
        .expect("the fixed handshake is accepted");
    let mut items = Vec::new();
    while let Some(item) = transport.next().await {
        let failed = item.is_err();
        items.push(item);
        if failed {
            assert!(transport.next().await.is_none(), "an error ends the stream");
            break;
        }
        assert!(items.len() < 100_000, "the stream does not end");
    }
    items
}

/// The client side: the handshake, its answer, then `bytes`, reading and
/// dropping whatever the server sends (pongs, close frames) until it hangs
/// up.
async fn run_client(
    mut from_server: impl AsyncRead + Unpin,
    mut to_server: impl AsyncWrite + Unpin,
    bytes: &[u8],
) {
    // The server refuses bytes sent before its answer to the handshake.
    to_server
        .write_all(HANDSHAKE)
        .await
        .expect("send the handshake");
    let mut answer = Vec::new();
    while !answer.ends_with(b"\r\n\r\n") {
        let byte = from_server.read_u8().await.expect("the handshake's answer");
        answer.push(byte);
    }
    assert!(
        answer.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    let send = async {
        // The server may hang up before reading it all.
        let _ = to_server.write_all(bytes).await;
        let _ = to_server.shutdown().await;
    };
    let drain = async {
        let _ = tokio::io::copy(&mut from_server, &mut tokio::io::sink()).await;
    };
    tokio::join!(send, drain);
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = Input::parse(data) else {
        return;
    };
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
    }
    let max = input.max;
    let mut bytes = Vec::new();
    for frame in &input.frames {
        frame.encode(&mut bytes);
    }
    bytes.extend_from_slice(input.trailer);

    let items = RUNTIME.with(|rt| {
        rt.block_on(async {
            let (client, server) = tokio::io::duplex(64 * 1024);
            let (from_server, to_server) = tokio::io::split(client);
            let client = run_client(from_server, to_server, &bytes);
            tokio::join!(client, serve(server, max)).1
        })
    });

    // What any input must give.
    for (i, item) in items.iter().enumerate() {
        match item {
            Ok(Frame::Message(body)) => {
                assert!(std::str::from_utf8(body).is_ok(), "text is UTF-8");
                assert!(body.len() <= max, "a message over the cap came out");
            }
            Ok(Frame::Refused(FrameRefusal::Binary)) => {}
            Ok(Frame::Refused(FrameRefusal::TooLong { limit, .. })) => {
                assert_eq!(*limit, max);
                let next = items.get(i + 1).expect("an error after a refusal");
                let error = next.as_ref().expect_err("an error after a refusal");
                assert_eq!(close_code(error), Some(1009), "{error}");
            }
            Ok(other) => panic!("unexpected frame {other:?}"),
            Err(_) => assert_eq!(i + 1, items.len()),
        }
    }

    // What the model predicts.
    let (expected, end) = model(&input.frames, max, input.trailer.is_empty());
    let got: Vec<&Frame> = items.iter().filter_map(|i| i.as_ref().ok()).collect();
    let expected: Vec<&Frame> = expected.iter().collect();
    let refused_too_long = |f: &&Frame| matches!(f, Frame::Refused(FrameRefusal::TooLong { .. }));
    let ended_in_error = matches!(items.last(), Some(Err(_)));
    match end {
        End::Open if !input.trailer.is_empty() => {
            assert!(
                got.starts_with(&expected),
                "{got:?} does not start with {expected:?}"
            );
        }
        End::Open => {
            assert_eq!(got, expected, "{items:?}");
            assert!(
                ended_in_error,
                "no close frame: the stream ends in an error: {items:?}"
            );
        }
        End::TooLong => {
            let split = got.split_last().map(|(l, r)| (refused_too_long(l), r));
            assert_eq!(split, Some((true, &expected[..])), "{items:?}");
            assert!(ended_in_error, "{items:?}");
        }
        End::Error => {
            let got = match got.split_last() {
                Some((last, rest)) if refused_too_long(last) => rest,
                _ => &got[..],
            };
            assert_eq!(got, &expected[..], "{items:?}");
            assert!(
                ended_in_error,
                "a violation ends the stream in an error: {items:?}"
            );
        }
        End::Closed { last } => {
            assert_eq!(got, expected, "{items:?}");
            if last {
                assert!(
                    !ended_in_error,
                    "a close frame ends the stream cleanly: {items:?}"
                );
            }
        }
    }
});
