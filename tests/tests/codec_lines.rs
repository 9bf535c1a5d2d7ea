//! Behaviour of `LineCodec`, the newline-delimited framer.

use bytes::{Bytes, BytesMut};
use futures_util::{SinkExt, StreamExt};
use jsonrpc_runtime::codec::{Frame, FrameRefusal, LineCodec, DEFAULT_MAX_FRAME_LEN};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::{Decoder, Encoder, FramedRead, FramedWrite};

fn msg(body: &[u8]) -> Frame {
    Frame::Message(Bytes::copy_from_slice(body))
}

/// The refusal of `line`, over a cap of `limit`: its head is its first
/// bytes, as many as the cap allows plus one, at most 256.
fn too_long(limit: usize, line: &[u8]) -> Frame {
    let head = Bytes::copy_from_slice(&line[..line.len().min(limit + 1).min(256)]);
    Frame::Refused(FrameRefusal::TooLong { limit, head })
}

/// Decodes everything in `input`, delivered at once, then ends the stream.
fn decode_one_shot(mut codec: LineCodec, input: &[u8]) -> Vec<Frame> {
    let mut buf = BytesMut::from(input);
    let mut frames = Vec::new();
    while let Some(frame) = codec.decode(&mut buf).expect("line decoding never fails") {
        frames.push(frame);
    }
    while let Some(frame) = codec
        .decode_eof(&mut buf)
        .expect("line decoding never fails")
    {
        frames.push(frame);
    }
    frames
}

/// Decodes `input` delivered in chunks, then ends the stream: the frames and
/// the buffer's high-water mark.
fn decode_chunked<C>(
    codec: C,
    input: &[u8],
    chunk_len: impl FnMut() -> usize,
) -> (Vec<Frame>, usize)
where
    C: tokio_util::codec::Decoder<Item = Frame, Error = jsonrpc_runtime::codec::FramingError>,
{
    let out = tests::decode_chunked(codec, input, chunk_len);
    (out.frames, out.max_len)
}

/// A mix of everything the decoder meets: CRLF, empty lines, a `\r` inside
/// a line, lines at and over a cap of 16, and no final newline.
fn mixed_input() -> Vec<u8> {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"id\":1}\n");
    input.extend_from_slice(b"[1,2]\r\n");
    input.extend_from_slice(b"\n\r\n");
    input.extend_from_slice(b"a\rb\n");
    input.extend_from_slice(&[b'x'; 16]);
    input.extend_from_slice(b"\r\n");
    input.extend_from_slice(&[b'y'; 17]);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(&[b'z'; 100]);
    input.extend_from_slice(b"\r\n");
    input.extend_from_slice(b"{}\n");
    input.extend_from_slice(b"last");
    input
}

fn mixed_frames() -> Vec<Frame> {
    vec![
        msg(b"{\"id\":1}"),
        msg(b"[1,2]"),
        msg(b""),
        msg(b""),
        msg(b"a\rb"),
        msg(&[b'x'; 16]),
        too_long(16, &[b'y'; 17]),
        too_long(16, &[b'z'; 100]),
        msg(b"{}"),
        msg(b"last"),
    ]
}

#[test]
fn lf_terminated_line_is_one_frame() {
    let frames = decode_one_shot(LineCodec::new(), b"{\"id\":1}\n");
    assert_eq!(frames, vec![msg(b"{\"id\":1}")]);
}

#[test]
fn trailing_cr_is_stripped_and_inner_cr_kept() {
    let frames = decode_one_shot(LineCodec::new(), b"{}\r\na\rb\r\nc\r\r\n");
    assert_eq!(frames, vec![msg(b"{}"), msg(b"a\rb"), msg(b"c\r")]);
}

#[test]
fn empty_line_is_an_empty_frame() {
    let frames = decode_one_shot(LineCodec::new(), b"\n\r\n{}\n\n");
    assert_eq!(frames, vec![msg(b""), msg(b""), msg(b"{}"), msg(b"")]);
}

#[test]
fn several_lines_in_one_buffer_come_out_in_order() {
    let mut codec = LineCodec::new();
    let mut buf = BytesMut::from(&b"1\n2\r\n3\n4"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"1")));
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"2")));
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"3")));
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(&buf[..], b"4");
}

#[test]
fn incomplete_line_waits_for_its_newline() {
    let mut codec = LineCodec::new();
    let mut buf = BytesMut::from(&b"{\"id\""[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b":1}\r");
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"\n");
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"{\"id\":1}")));
    assert!(buf.is_empty());
}

#[test]
fn frames_are_split_out_of_the_buffer_without_copying() {
    let mut codec = LineCodec::new();
    let mut buf = BytesMut::from(&b"{\"a\":1}\r\n[2]\n"[..]);
    let start = buf.as_ptr() as usize;
    let Some(Frame::Message(first)) = codec.decode(&mut buf).unwrap() else {
        panic!("expected a message");
    };
    let Some(Frame::Message(second)) = codec.decode(&mut buf).unwrap() else {
        panic!("expected a message");
    };
    assert_eq!(first.as_ptr() as usize, start);
    assert_eq!(second.as_ptr() as usize, start + 9);
}

#[test]
fn byte_by_byte_feeding_gives_the_same_frames_as_one_shot() {
    let input = mixed_input();
    let one_shot = decode_one_shot(LineCodec::with_max_frame_len(16), &input);
    assert_eq!(one_shot, mixed_frames());
    let (byte_by_byte, _) = decode_chunked(LineCodec::with_max_frame_len(16), &input, || 1);
    assert_eq!(byte_by_byte, one_shot);
}

#[test]
fn random_split_points_give_the_same_frames_as_one_shot() {
    let input = mixed_input();
    let expected = mixed_frames();
    for seed in [1, 2, 3, 0x9E37_79B9_7F4A_7C15, 0xDEAD_BEEF] {
        let mut rng = tests::XorShift(seed);
        for _ in 0..50 {
            let (frames, _) = decode_chunked(LineCodec::with_max_frame_len(16), &input, || {
                1 + rng.below(24)
            });
            assert_eq!(frames, expected, "seed {seed}");
        }
    }
}

#[test]
fn line_of_exactly_the_cap_is_accepted() {
    let line = vec![b'x'; 32];
    for ending in [&b"\n"[..], b"\r\n"] {
        let input = [&line[..], ending].concat();
        let frames = decode_one_shot(LineCodec::with_max_frame_len(32), &input);
        assert_eq!(frames, vec![msg(&line)]);
        let (chunked, _) = decode_chunked(LineCodec::with_max_frame_len(32), &input, || 1);
        assert_eq!(chunked, vec![msg(&line)]);
    }
}

#[test]
fn line_of_exactly_the_cap_is_accepted_at_eof() {
    let line = vec![b'x'; 32];
    let frames = decode_one_shot(
        LineCodec::with_max_frame_len(32),
        &[&line[..], b"\r"].concat(),
    );
    assert_eq!(frames, vec![msg(&line)]);
}

#[test]
fn oversized_line_is_refused_and_next_line_served() {
    let input = [&[b'x'; 33][..], b"\n{\"id\":2}\n"].concat();
    let frames = decode_one_shot(LineCodec::with_max_frame_len(32), &input);
    assert_eq!(frames, vec![too_long(32, &[b'x'; 33]), msg(b"{\"id\":2}")]);
}

#[test]
fn oversized_crlf_line_is_refused_and_next_line_served() {
    let input = [&[b'x'; 33][..], b"\r\n[]\r\n"].concat();
    let frames = decode_one_shot(LineCodec::with_max_frame_len(32), &input);
    assert_eq!(frames, vec![too_long(32, &[b'x'; 33]), msg(b"[]")]);
}

#[test]
fn oversized_line_is_refused_before_its_newline_arrives() {
    let mut codec = LineCodec::with_max_frame_len(8);
    let mut buf = BytesMut::from(&b"123456789"[..]);
    assert_eq!(
        codec.decode(&mut buf).unwrap(),
        Some(too_long(8, b"123456789"))
    );
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"still the same line\n{}\n");
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"{}")));
}

#[test]
fn cap_plus_cr_waits_for_the_next_byte() {
    let mut codec = LineCodec::with_max_frame_len(4);
    let mut buf = BytesMut::from(&b"abcd\r"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"e\n");
    assert_eq!(
        codec.decode(&mut buf).unwrap(),
        Some(too_long(4, b"abcd\re"))
    );
    buf.extend_from_slice(b"abcd\r");
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"\n");
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"abcd")));
}

#[test]
fn oversized_line_in_small_chunks_is_refused_once_and_next_line_served() {
    let cap = 1024;
    let mut input = vec![b'x'; 100 * cap];
    input.extend_from_slice(b"\n{\"id\":3}\n");
    for chunk in [1, 7, 100, 4096] {
        let (frames, high_water) =
            decode_chunked(LineCodec::with_max_frame_len(cap), &input, || chunk);
        assert_eq!(
            frames,
            vec![too_long(cap, &[b'x'; 1024]), msg(b"{\"id\":3}")],
            "chunk {chunk}"
        );
        assert!(
            high_water <= cap + 1 + chunk,
            "buffer held {high_water} bytes with chunks of {chunk}"
        );
    }
}

#[test]
fn discarding_keeps_the_buffer_bounded_by_the_cap() {
    let cap = 64;
    let mut codec = LineCodec::with_max_frame_len(cap);
    let mut buf = BytesMut::new();
    let mut refusals = 0;
    for _ in 0..10_000 {
        buf.extend_from_slice(b"0123456789");
        while let Some(frame) = codec.decode(&mut buf).unwrap() {
            assert_eq!(frame, too_long(cap, &b"0123456789".repeat(7)));
            refusals += 1;
        }
        assert!(
            buf.len() <= cap + 2 + 10,
            "buffer holds {} bytes",
            buf.len()
        );
    }
    assert_eq!(refusals, 1);
    buf.extend_from_slice(b"\n[]\n");
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"[]")));
}

#[test]
fn zero_cap_accepts_only_empty_lines() {
    let frames = decode_one_shot(LineCodec::with_max_frame_len(0), b"\n\r\nx\n\n");
    assert_eq!(
        frames,
        vec![msg(b""), msg(b""), too_long(0, b"x"), msg(b"")]
    );
}

#[test]
fn eof_without_trailing_newline_yields_the_last_line() {
    let frames = decode_one_shot(LineCodec::new(), b"{}\n[1]");
    assert_eq!(frames, vec![msg(b"{}"), msg(b"[1]")]);
    let frames = decode_one_shot(LineCodec::new(), b"[1]\r");
    assert_eq!(frames, vec![msg(b"[1]")]);
}

#[test]
fn eof_after_a_trailing_newline_yields_nothing_more() {
    let frames = decode_one_shot(LineCodec::new(), b"{}\n[1]\n");
    assert_eq!(frames, vec![msg(b"{}"), msg(b"[1]")]);
    assert_eq!(decode_one_shot(LineCodec::new(), b""), vec![]);
}

#[test]
fn eof_inside_an_oversized_line_drops_it_after_one_refusal() {
    let frames = decode_one_shot(LineCodec::with_max_frame_len(4), b"{}\n0123456789");
    assert_eq!(frames, vec![msg(b"{}"), too_long(4, b"0123456789")]);
}

#[test]
fn encoder_appends_a_newline() {
    let mut out = BytesMut::new();
    let mut codec = LineCodec::new();
    codec
        .encode(Bytes::from_static(b"{\"id\":1}"), &mut out)
        .unwrap();
    codec.encode(Bytes::new(), &mut out).unwrap();
    assert_eq!(&out[..], b"{\"id\":1}\n\n");
}

#[test]
fn encoded_messages_decode_to_themselves() {
    let messages: Vec<&[u8]> = vec![
        b"{}",
        b"[1,2,3]",
        b"",
        b"\"a\\nb\"",
        b"{\"k\":\"\xc3\xa9\"}",
    ];
    let mut codec = LineCodec::new();
    let mut wire = BytesMut::new();
    for m in &messages {
        codec.encode(Bytes::copy_from_slice(m), &mut wire).unwrap();
    }
    let frames = decode_one_shot(LineCodec::new(), &wire);
    assert_eq!(frames, messages.iter().map(|m| msg(m)).collect::<Vec<_>>());
}

#[test]
fn encoder_writes_a_pretty_message_on_one_line() {
    let mut out = BytesMut::from(&b"earlier\n"[..]);
    LineCodec::new()
        .encode(
            Bytes::from_static(b"{\n  \"id\": 1,\r\n  \"a\": \"x\\ny\"\n}"),
            &mut out,
        )
        .unwrap();
    assert_eq!(
        &out[..],
        b"earlier\n{   \"id\": 1,\r   \"a\": \"x\\ny\" }\n"
    );
    let frames = decode_one_shot(LineCodec::new(), &out);
    assert_eq!(frames.len(), 2, "still one line: {frames:?}");
    let Frame::Message(json) = &frames[1] else {
        panic!("{frames:?}")
    };
    let value: serde_json::Value = serde_json::from_slice(json).unwrap();
    assert_eq!(value, serde_json::json!({"id": 1, "a": "x\ny"}));
}

#[test]
fn encoder_does_not_apply_the_inbound_cap() {
    let mut out = BytesMut::new();
    LineCodec::with_max_frame_len(2)
        .encode(Bytes::from_static(b"[1,2,3]"), &mut out)
        .unwrap();
    assert_eq!(&out[..], b"[1,2,3]\n");
}

#[test]
fn default_cap_is_eight_mebibytes() {
    assert_eq!(DEFAULT_MAX_FRAME_LEN, 8 * 1024 * 1024);
    assert_eq!(LineCodec::new().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    assert_eq!(LineCodec::default().max_frame_len(), DEFAULT_MAX_FRAME_LEN);
    assert_eq!(LineCodec::with_max_frame_len(10).max_frame_len(), 10);
}

#[tokio::test]
async fn framed_read_keeps_serving_after_a_refused_line() {
    let (mut writer, reader) = tokio::io::duplex(64);
    let mut frames = FramedRead::new(reader, LineCodec::with_max_frame_len(100));
    let sender = tokio::spawn(async move {
        writer.write_all(b"{\"id\":1}\n").await?;
        writer.write_all(&[b'x'; 10_000]).await?;
        writer.write_all(b"\r\n{\"id\":2}\r\n{\"id\":3}").await?;
        writer.shutdown().await
    });

    let mut received = Vec::new();
    while let Some(frame) = frames.next().await {
        received.push(frame.expect("no decoder error"));
    }
    sender.await.unwrap().unwrap();
    assert_eq!(
        received,
        vec![
            msg(b"{\"id\":1}"),
            too_long(100, &[b'x'; 101]),
            msg(b"{\"id\":2}"),
            msg(b"{\"id\":3}"),
        ]
    );
}

#[tokio::test]
async fn framed_write_and_framed_read_round_trip_over_a_duplex() {
    let (client, server) = tokio::io::duplex(16);
    let mut sink = FramedWrite::new(client, LineCodec::new());
    let sender = tokio::spawn(async move {
        for i in 0..100 {
            sink.feed(Bytes::from(format!("{{\"id\":{i}}}"))).await?;
        }
        sink.close().await
    });
    let frames: Vec<Frame> = FramedRead::new(server, LineCodec::new())
        .map(|frame| frame.expect("no decoder error"))
        .collect()
        .await;
    sender.await.unwrap().unwrap();
    let expected: Vec<Frame> = (0..100)
        .map(|i| msg(format!("{{\"id\":{i}}}").as_bytes()))
        .collect();
    assert_eq!(frames, expected);
}

#[test]
fn arbitrary_bytes_split_anywhere_decode_like_one_shot() {
    const ALPHABET: &[u8] = b"ab{}\r\n\n\r ";
    for seed in 1..=200u64 {
        let mut rng = tests::XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let len = rng.below(200);
        let input: Vec<u8> = (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        let cap = rng.below(12);
        let one_shot = decode_one_shot(LineCodec::with_max_frame_len(cap), &input);
        let (chunked, high_water) =
            decode_chunked(LineCodec::with_max_frame_len(cap), &input, || {
                1 + rng.below(9)
            });
        assert_eq!(chunked, one_shot, "seed {seed}, cap {cap}");
        assert!(
            high_water <= cap + 1 + 9,
            "seed {seed}: buffer held {high_water} bytes"
        );
        for frame in &one_shot {
            if let Frame::Message(body) = frame {
                assert!(body.len() <= cap, "seed {seed}: {body:?} is over the cap");
                assert!(
                    !body.contains(&b'\n'),
                    "seed {seed}: {body:?} holds a newline"
                );
            }
        }
    }
}

#[test]
fn blank_lines_are_frames_by_default_and_skipped_on_request() {
    let input = b"\n  \t\r\n{\"a\":1}\n\r\n";
    let frames = decode_one_shot(LineCodec::new(), input);
    assert_eq!(frames.len(), 4, "{frames:?}");
    assert_eq!(frames[0], msg(b""));
    assert_eq!(frames[2], msg(b"{\"a\":1}"));
    let frames = decode_one_shot(LineCodec::new().skip_blank_lines(true), input);
    assert_eq!(frames, vec![msg(b"{\"a\":1}")]);
    // A blank last line without its newline is skipped too.
    let frames = decode_one_shot(LineCodec::new().skip_blank_lines(true), b"{}\n   ");
    assert_eq!(frames, vec![msg(b"{}")]);
}

/// Messages of every size through a transport's writer over a pipe smaller
/// than the large ones: small frames gathered, large ones written from
/// their own allocation (or, holding a raw newline, copied with it turned
/// into a space), in order, for both framers.
#[tokio::test]
async fn a_transport_writes_large_and_small_frames_in_order_for_both_framers() {
    use futures_util::StreamExt as _;
    use jsonrpc_runtime::codec::Framing;
    use jsonrpc_runtime::Transport;

    let big = |fill: u8, len: usize| {
        let mut m = vec![b'"'; 1];
        m.extend(std::iter::repeat_n(fill, len));
        m.push(b'"');
        m
    };
    let mut with_newline = big(b'x', 300 * 1024);
    with_newline[150 * 1024] = b'\n';
    let messages: Vec<Vec<u8>> = vec![
        b"{\"a\":1}".to_vec(),
        big(b'y', 200 * 1024),
        b"{\"b\":2}".to_vec(),
        with_newline.clone(),
        big(b'z', 64 * 1024),
        b"{\"c\":3}".to_vec(),
    ];
    for framing in [Framing::NewlineDelimited, Framing::ContentLength] {
        let (ours, theirs) = tokio::io::duplex(4096);
        let (_, write) = tokio::io::split(ours);
        let (read, _keep) = tokio::io::split(theirs);
        let mut transport = Transport::from_io(tokio::io::empty(), write, framing.codec(1 << 20));
        let expected: Vec<Vec<u8>> = messages
            .iter()
            .map(|m| match framing {
                Framing::NewlineDelimited => m
                    .iter()
                    .map(|&b| if b == b'\n' { b' ' } else { b })
                    .collect(),
                _ => m.clone(),
            })
            .collect();
        let reader = tokio::spawn(async move {
            FramedRead::new(read, framing.codec(1 << 20))
                .take(6)
                .map(|frame| match frame.unwrap() {
                    Frame::Message(bytes) => bytes.to_vec(),
                    other => panic!("refused: {other:?}"),
                })
                .collect::<Vec<_>>()
                .await
        });
        for m in &messages {
            transport.send(Bytes::from(m.clone())).await.unwrap();
        }
        let frames = tokio::time::timeout(tests::ANSWER_TIMEOUT, reader)
            .await
            .expect("every frame arrives")
            .unwrap();
        assert_eq!(frames.len(), expected.len(), "{framing:?}");
        for (i, (got, want)) in frames.iter().zip(&expected).enumerate() {
            assert!(
                got == want,
                "{framing:?}: frame {i} differs ({} vs {} bytes)",
                got.len(),
                want.len()
            );
        }
    }
}
