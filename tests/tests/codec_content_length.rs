//! Behaviour of `ContentLengthCodec`, the LSP-style header framer.

use std::io;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use jsonrpc_runtime::codec::{
    ContentLengthCodec, Frame, FrameRefusal, FramingError, DEFAULT_MAX_FRAME_LEN,
};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::{Decoder, Encoder, FramedRead};

fn msg(body: &[u8]) -> Frame {
    Frame::Message(Bytes::copy_from_slice(body))
}

/// The refusal of `body`, over a cap of `limit`: its head is its first
/// 256 bytes.
fn too_long(limit: usize, body: &[u8]) -> Frame {
    let head = Bytes::copy_from_slice(&body[..body.len().min(256)]);
    Frame::Refused(FrameRefusal::TooLong { limit, head })
}

fn charset(name: &str) -> Frame {
    Frame::Refused(FrameRefusal::UnsupportedCharset(name.to_owned()))
}

/// `Content-Length: N\r\n\r\n` and `body`, as a peer writes it.
fn framed(body: &[u8]) -> Vec<u8> {
    [
        format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes(),
        body,
    ]
    .concat()
}

/// Decodes everything in `input`, delivered at once, then ends the stream.
/// Stops at the first error and returns it with the frames before it.
fn decode_one_shot(
    mut codec: ContentLengthCodec,
    input: &[u8],
) -> (Vec<Frame>, Option<FramingError>) {
    let mut buf = BytesMut::from(input);
    let mut frames = Vec::new();
    loop {
        match codec.decode(&mut buf) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => break,
            Err(err) => return (frames, Some(err)),
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return (frames, None),
            Err(err) => return (frames, Some(err)),
        }
    }
}

/// Decodes well-formed `input`, delivered at once; panics on an error.
fn decode_ok(codec: ContentLengthCodec, input: &[u8]) -> Vec<Frame> {
    match decode_one_shot(codec, input) {
        (frames, None) => frames,
        (_, Some(err)) => panic!("unexpected framing error: {err}"),
    }
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
    (out.frames, out.max_capacity)
}

/// A mix of what the decoder meets, with a cap of 32: both line endings,
/// blank lines between frames, other headers, a refused charset, an empty
/// body. (An over-long body ends the stream: see the tests of the cap.)
fn mixed_input() -> Vec<u8> {
    let mut input = Vec::new();
    input.extend_from_slice(&framed(b"{\"jsonrpc\":\"2.0\",\"id\":1}"));
    input.extend_from_slice(b"\r\n\n");
    input.extend_from_slice(b"content-length:5\nX-Other: yes\n\n[1,2]");
    input.extend_from_slice(
        b"Content-Type: text/plain; charset=latin1\r\nContent-Length: 4\r\n\r\n\xe9\xe9\xe9\xe9",
    );
    input.extend_from_slice(&framed(b""));
    input.extend_from_slice(
        b"CONTENT-LENGTH: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
    );
    input.extend_from_slice(b"\r\n");
    input
}

fn mixed_frames() -> Vec<Frame> {
    vec![
        msg(b"{\"jsonrpc\":\"2.0\",\"id\":1}"),
        msg(b"[1,2]"),
        charset("latin1"),
        msg(b""),
        msg(b"{}"),
    ]
}

fn assert_invalid_header(input: &[u8], expected_fragment: &str) {
    let (_, err) = decode_one_shot(ContentLengthCodec::new(), input);
    match err {
        Some(FramingError::InvalidHeader(message)) => assert!(
            message.contains(expected_fragment),
            "message {message:?} does not mention {expected_fragment:?}"
        ),
        other => panic!("expected an invalid header error, got {other:?}"),
    }
}

fn assert_unexpected_eof(input: &[u8], expected_fragment: &str) {
    let (_, err) = decode_one_shot(ContentLengthCodec::new(), input);
    match err {
        Some(FramingError::Io(err)) => {
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
            assert!(
                err.to_string().contains(expected_fragment),
                "message {err} does not mention {expected_fragment:?}"
            );
        }
        other => panic!("expected an unexpected-EOF error, got {other:?}"),
    }
}

#[test]
fn one_message_is_decoded() {
    let frames = decode_ok(ContentLengthCodec::new(), &framed(b"{\"id\":1}"));
    assert_eq!(frames, vec![msg(b"{\"id\":1}")]);
}

#[test]
fn header_names_are_case_insensitive() {
    for name in [
        "Content-Length",
        "content-length",
        "CONTENT-LENGTH",
        "cOnTeNt-LeNgTh",
    ] {
        let input = format!("{name}: 2\r\n\r\n{{}}");
        assert_eq!(
            decode_ok(ContentLengthCodec::new(), input.as_bytes()),
            vec![msg(b"{}")]
        );
    }
}

#[test]
fn whitespace_around_header_values_is_trimmed() {
    let input =
        b"Content-Length:2\r\n\r\n{}Content-Length: \t 2 \t\r\n\r\n[]Content-Length :2\r\n\r\n\"\"";
    let frames = decode_ok(ContentLengthCodec::new(), input);
    assert_eq!(frames, vec![msg(b"{}"), msg(b"[]"), msg(b"\"\"")]);
}

#[test]
fn unknown_headers_are_ignored() {
    let input = b"X-Request: 7\r\nContent-Length: 2\r\nUser-Agent: test: yes\r\n\r\n{}";
    assert_eq!(
        decode_ok(ContentLengthCodec::new(), input),
        vec![msg(b"{}")]
    );
}

#[test]
fn utf8_content_type_is_accepted() {
    for content_type in [
        "application/vscode-jsonrpc; charset=utf-8",
        "application/vscode-jsonrpc; charset=utf8",
        "application/json;charset=\"UTF-8\"",
        "application/json; CHARSET = Utf8",
        "application/json",
    ] {
        let input = format!("Content-Type: {content_type}\r\nContent-Length: 2\r\n\r\n{{}}");
        assert_eq!(
            decode_ok(ContentLengthCodec::new(), input.as_bytes()),
            vec![msg(b"{}")],
            "{content_type}"
        );
    }
}

#[test]
fn latin1_content_type_is_refused_and_its_body_skipped() {
    let mut input =
        b"Content-Length: 3\r\nContent-Type: text/plain; charset=\"latin1\"\r\n\r\n\xe9\xe9\xe9"
            .to_vec();
    input.extend_from_slice(&framed(b"{\"id\":2}"));
    let frames = decode_ok(ContentLengthCodec::new(), &input);
    assert_eq!(frames, vec![charset("latin1"), msg(b"{\"id\":2}")]);

    let (chunked, _) = decode_chunked(ContentLengthCodec::new(), &input, || 1);
    assert_eq!(chunked, frames);
}

#[test]
fn lf_only_header_lines_are_tolerated() {
    let input = b"Content-Length: 2\n\n{}Content-Length: 2\r\nX: y\n\r\n[]Content-Length: 2\nX: y\r\n\n\"\"";
    let frames = decode_ok(ContentLengthCodec::new(), input);
    assert_eq!(frames, vec![msg(b"{}"), msg(b"[]"), msg(b"\"\"")]);
}

#[test]
fn blank_lines_before_and_between_frames_are_skipped() {
    let mut input = b"\r\n\n\r\n".to_vec();
    input.extend_from_slice(&framed(b"{}"));
    input.extend_from_slice(b"\r\n\r\n\n");
    input.extend_from_slice(&framed(b"[]"));
    input.extend_from_slice(b"\n");
    let frames = decode_ok(ContentLengthCodec::new(), &input);
    assert_eq!(frames, vec![msg(b"{}"), msg(b"[]")]);
}

#[test]
fn zero_length_message_is_an_empty_frame() {
    let frames = decode_ok(
        ContentLengthCodec::new(),
        b"Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}",
    );
    assert_eq!(frames, vec![msg(b""), msg(b"{}")]);
}

#[test]
fn duplicate_equal_lengths_are_accepted() {
    let input = b"Content-Length: 2\r\ncontent-length: 02\r\n\r\n{}";
    assert_eq!(
        decode_ok(ContentLengthCodec::new(), input),
        vec![msg(b"{}")]
    );
}

#[test]
fn body_is_split_out_of_the_buffer_without_copying() {
    let mut codec = ContentLengthCodec::new();
    let mut buf = BytesMut::from(&framed(b"{\"a\":1}")[..]);
    let start = buf.as_ptr() as usize;
    let Some(Frame::Message(body)) = codec.decode(&mut buf).unwrap() else {
        panic!("expected a message");
    };
    assert_eq!(
        body.as_ptr() as usize,
        start + "Content-Length: 7\r\n\r\n".len()
    );
}

#[test]
fn body_waits_until_every_byte_arrived() {
    let mut codec = ContentLengthCodec::new();
    let mut buf = BytesMut::from(&b"Content-Length: 8\r\n\r\n{\"id\""[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b":1");
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(b"}Content");
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(msg(b"{\"id\":1}")));
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert_eq!(&buf[..], b"Content");
}

#[test]
fn length_of_exactly_the_cap_is_accepted() {
    let body = vec![b'1'; 32];
    let frames = decode_ok(ContentLengthCodec::with_max_frame_len(32), &framed(&body));
    assert_eq!(frames, vec![msg(&body)]);
}

#[test]
fn declared_length_over_the_cap_is_refused_and_the_next_message_served() {
    let mut input = framed(b"{\"id\":1}");
    input.extend_from_slice(&framed(&[b'x'; 33]));
    input.extend_from_slice(&framed(b"{\"id\":2}"));
    let frames = decode_ok(ContentLengthCodec::with_max_frame_len(32), &input);
    assert_eq!(
        frames,
        vec![
            msg(b"{\"id\":1}"),
            too_long(32, &[b'x'; 33]),
            msg(b"{\"id\":2}")
        ]
    );
}

#[test]
fn over_cap_length_is_refused_once_its_head_is_in_before_the_rest() {
    let mut codec = ContentLengthCodec::with_max_frame_len(32);
    let mut buf = BytesMut::from(&b"Content-Length: 1000\r\n\r\n"[..]);
    // Nothing is refused before the body's first bytes are in.
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    let start = br#"{"jsonrpc":"2.0","id":7,"method":"m","params":["#;
    let mut body = start.to_vec();
    body.resize(300, b'1');
    buf.extend_from_slice(&body);
    assert_eq!(codec.decode(&mut buf).unwrap(), Some(too_long(32, &body)));
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    assert!(buf.is_empty(), "the rest is dropped as it arrives");
}

#[test]
fn over_cap_body_cut_short_before_its_head_is_refused_with_what_came() {
    let (frames, error) = decode_one_shot(
        ContentLengthCodec::with_max_frame_len(32),
        b"Content-Length: 1000\r\n\r\n[1,2,3",
    );
    assert_eq!(frames, vec![too_long(32, b"[1,2,3")]);
    assert!(error.is_none(), "{error:?}");
}

#[test]
fn huge_declared_length_reserves_no_memory_and_drops_what_arrives() {
    let mut codec = ContentLengthCodec::new();
    let mut buf = BytesMut::from(&b"Content-Length: 18446744073709551615\r\n\r\n{}"[..]);
    assert_eq!(codec.decode(&mut buf).unwrap(), None);
    buf.extend_from_slice(&[b'x'; 254]);
    let head = [&b"{}"[..], &[b'x'; 254]].concat();
    assert_eq!(
        codec.decode(&mut buf).unwrap(),
        Some(too_long(DEFAULT_MAX_FRAME_LEN, &head))
    );
    for _ in 0..100 {
        buf.extend_from_slice(&[b'x'; 512]);
        assert_eq!(codec.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty(), "a refused body's bytes are dropped");
    }
    assert!(buf.capacity() < 4096, "capacity grew to {}", buf.capacity());
}

#[test]
fn over_cap_body_in_chunks_is_dropped_as_it_arrives_and_the_next_served() {
    let cap = 1024;
    let mut input = framed(&vec![b'x'; 100 * cap]);
    input.extend_from_slice(&framed(b"{\"id\":3}"));
    for chunk in [1, 7, 100, 4096, 1 << 20] {
        let (frames, error) =
            decode_chunked_fallible(ContentLengthCodec::with_max_frame_len(cap), &input, || {
                chunk
            });
        assert_eq!(
            frames,
            vec![too_long(cap, &[b'x'; 256]), msg(b"{\"id\":3}")],
            "chunk {chunk}"
        );
        assert_eq!(error, None, "chunk {chunk}");
    }
}

#[test]
fn over_cap_body_cut_short_at_eof_ends_quietly() {
    let mut input = b"Content-Length: 100\r\n\r\n".to_vec();
    input.extend_from_slice(&[b'x'; 40]);
    let (frames, error) = decode_one_shot(ContentLengthCodec::with_max_frame_len(32), &input);
    assert_eq!(frames, vec![too_long(32, &[b'x'; 40])]);
    assert!(error.is_none(), "{error:?}");
}

#[test]
fn byte_by_byte_feeding_gives_the_same_frames_as_one_shot() {
    let input = mixed_input();
    let one_shot = decode_ok(ContentLengthCodec::with_max_frame_len(32), &input);
    assert_eq!(one_shot, mixed_frames());
    let (byte_by_byte, _) =
        decode_chunked(ContentLengthCodec::with_max_frame_len(32), &input, || 1);
    assert_eq!(byte_by_byte, one_shot);
}

#[test]
fn random_split_points_give_the_same_frames_as_one_shot() {
    let input = mixed_input();
    let expected = mixed_frames();
    for seed in [1, 2, 3, 0x9E37_79B9_7F4A_7C15, 0xDEAD_BEEF] {
        let mut rng = tests::XorShift(seed);
        for _ in 0..50 {
            let (frames, _) =
                decode_chunked(ContentLengthCodec::with_max_frame_len(32), &input, || {
                    1 + rng.below(40)
                });
            assert_eq!(frames, expected, "seed {seed}");
        }
    }
}

#[test]
fn unparsable_length_is_an_error() {
    for value in ["abc", "-1", "+5", "1 2", "0x10", "5.0", ""] {
        let input = format!("Content-Length: {value}\r\n\r\n{{}}");
        assert_invalid_header(input.as_bytes(), "Content-Length");
    }
}

#[test]
fn length_overflowing_usize_is_an_error() {
    assert_invalid_header(
        b"Content-Length: 99999999999999999999999\r\n\r\n",
        "too large",
    );
}

#[test]
fn missing_length_is_an_error() {
    assert_invalid_header(
        b"Content-Type: application/json\r\n\r\n{}",
        "no `Content-Length`",
    );
}

#[test]
fn header_line_without_colon_is_an_error() {
    assert_invalid_header(b"Content-Length 2\r\n\r\n{}", "no `:`");
    assert_invalid_header(b"[1,2,3]\n\n", "no `:`");
}

#[test]
fn conflicting_lengths_are_an_error() {
    assert_invalid_header(
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        "disagree",
    );
}

#[test]
fn oversize_header_block_is_an_error() {
    // Garbage with no newline at all.
    let mut garbage = vec![b'a'; 9000];
    assert_invalid_header(&garbage, "header block");
    // Many well-formed header lines, never ended by an empty line.
    garbage = b"Content-Length: 2\r\n".repeat(1000);
    assert_invalid_header(&garbage, "header block");
}

/// A header block of exactly `len` bytes (its empty line included) for a
/// body of `body` bytes, padded by a header the codec ignores.
fn header_block(len: usize, body: usize) -> Vec<u8> {
    let head = format!("Content-Length: {body}\r\nX-Pad: ");
    let mut block = head.into_bytes();
    block.resize(len - 4, b'p');
    block.extend_from_slice(b"\r\n\r\n");
    assert_eq!(block.len(), len);
    block
}

#[test]
fn a_header_block_at_the_8_kib_limit_is_read_and_one_byte_more_is_refused() {
    const LIMIT: usize = 8 * 1024;
    for len in [LIMIT - 1, LIMIT] {
        // A fresh codec, and one that has read messages before.
        for warm in [false, true] {
            let mut input = Vec::new();
            if warm {
                for body in [&b"{}"[..], &[b' '; 5000], b"[1]"] {
                    input.extend_from_slice(&framed(body));
                }
            }
            input.extend_from_slice(&header_block(len, 2));
            input.extend_from_slice(b"[]");
            let frames = decode_ok(ContentLengthCodec::new(), &input);
            assert_eq!(frames.last(), Some(&msg(b"[]")), "{len} bytes, warm {warm}");
            let bytewise = decode_chunked(ContentLengthCodec::new(), &input, || 1).0;
            assert_eq!(bytewise, frames, "{len} bytes, warm {warm}, byte by byte");
        }
    }
    for warm in [false, true] {
        let mut input = if warm { framed(b"{}") } else { Vec::new() };
        input.extend_from_slice(&header_block(LIMIT + 1, 2));
        input.extend_from_slice(b"[]");
        assert_invalid_header(&input, "header block");
    }
}

#[test]
fn oversize_header_block_is_reported_before_it_is_all_buffered() {
    let mut codec = ContentLengthCodec::new();
    let mut buf = BytesMut::new();
    let mut failed = false;
    for _ in 0..1000 {
        buf.extend_from_slice(b"X-Filler: 0123456789\r\n");
        if codec.decode(&mut buf).is_err() {
            failed = true;
            break;
        }
    }
    assert!(failed, "an unending header block must be an error");
    assert!(buf.len() < 8 * 1024 + 64, "buffered {} bytes", buf.len());
}

#[test]
fn partial_header_at_eof_is_an_error() {
    assert_unexpected_eof(b"Content-Length: 2\r\n", "header");
    assert_unexpected_eof(b"Content-Len", "header");
}

#[test]
fn partial_body_at_eof_is_an_error_naming_the_missing_bytes() {
    assert_unexpected_eof(
        b"Content-Length: 10\r\n\r\n{\"a\"",
        "6 bytes short of a 10-byte",
    );
    assert_unexpected_eof(b"Content-Length: 2\r\n\r\n", "2 bytes short");
}

#[test]
fn whitespace_at_eof_is_not_an_error() {
    let mut input = framed(b"{}");
    input.extend_from_slice(b"\r\n\n \t\r\n");
    assert_eq!(
        decode_ok(ContentLengthCodec::new(), &input),
        vec![msg(b"{}")]
    );
    assert_eq!(decode_ok(ContentLengthCodec::new(), b""), vec![]);
}

#[test]
fn refused_body_cut_short_at_eof_ends_quietly() {
    let input = b"Content-Type: a; charset=latin1\r\nContent-Length: 30\r\n\r\n0123456789";
    let frames = decode_ok(ContentLengthCodec::with_max_frame_len(32), input);
    assert_eq!(frames, vec![charset("latin1")]);
}

#[test]
fn encoder_writes_the_exact_header() {
    let mut codec = ContentLengthCodec::new();
    let mut out = BytesMut::new();
    codec
        .encode(
            Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}"),
            &mut out,
        )
        .unwrap();
    codec.encode(Bytes::new(), &mut out).unwrap();
    assert_eq!(
        &out[..],
        &b"Content-Length: 38\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}Content-Length: 0\r\n\r\n"[..]
    );
}

#[test]
fn encoder_does_not_apply_the_inbound_cap() {
    let mut out = BytesMut::new();
    ContentLengthCodec::with_max_frame_len(2)
        .encode(Bytes::from_static(b"[1,2,3]"), &mut out)
        .unwrap();
    assert_eq!(&out[..], b"Content-Length: 7\r\n\r\n[1,2,3]");
}

#[test]
fn encoded_messages_decode_to_themselves() {
    let messages: Vec<Vec<u8>> = vec![
        b"{}".to_vec(),
        b"{\n  \"pretty\": true\n}\r\n".to_vec(),
        Vec::new(),
        vec![b'7'; 12_345],
    ];
    let mut codec = ContentLengthCodec::new();
    let mut wire = BytesMut::new();
    for m in &messages {
        codec.encode(Bytes::copy_from_slice(m), &mut wire).unwrap();
    }
    let frames = decode_ok(ContentLengthCodec::new(), &wire);
    assert_eq!(frames, messages.iter().map(|m| msg(m)).collect::<Vec<_>>());
}

#[test]
fn default_cap_is_eight_mebibytes() {
    assert_eq!(
        ContentLengthCodec::new().max_frame_len(),
        DEFAULT_MAX_FRAME_LEN
    );
    assert_eq!(
        ContentLengthCodec::default().max_frame_len(),
        DEFAULT_MAX_FRAME_LEN
    );
    assert_eq!(
        ContentLengthCodec::with_max_frame_len(10).max_frame_len(),
        10
    );
}

#[tokio::test]
async fn framed_read_keeps_serving_after_a_refused_frame() {
    let (mut writer, reader) = tokio::io::duplex(64);
    let mut frames = FramedRead::new(reader, ContentLengthCodec::with_max_frame_len(100));
    let sender = tokio::spawn(async move {
        writer.write_all(&framed(b"{\"id\":1}")).await?;
        writer
            .write_all(b"Content-Type: application/json; charset=iso-8859-1\r\nContent-Length: 2\r\n\r\n{}")
            .await?;
        writer.write_all(&framed(b"{\"id\":2}")).await?;
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
            charset("iso-8859-1"),
            msg(b"{\"id\":2}"),
        ]
    );
}

#[tokio::test]
async fn framed_read_refuses_an_over_cap_body_and_keeps_serving() {
    let (mut writer, reader) = tokio::io::duplex(64);
    let mut frames = FramedRead::new(reader, ContentLengthCodec::with_max_frame_len(100));
    let sender = tokio::spawn(async move {
        writer.write_all(&framed(b"{}")).await?;
        writer.write_all(&framed(&[b'x'; 10_000])).await?;
        writer.write_all(&framed(b"[]")).await?;
        writer.shutdown().await
    });

    assert_eq!(frames.next().await.unwrap().unwrap(), msg(b"{}"));
    assert_eq!(
        frames.next().await.unwrap().unwrap(),
        too_long(100, &[b'x'; 256])
    );
    assert_eq!(frames.next().await.unwrap().unwrap(), msg(b"[]"));
    assert!(frames.next().await.is_none());
    sender.await.unwrap().unwrap();
}

#[tokio::test]
async fn framed_read_ends_with_an_error_on_a_bad_header() {
    let (mut writer, reader) = tokio::io::duplex(64);
    let mut frames = FramedRead::new(reader, ContentLengthCodec::new());
    writer.write_all(&framed(b"{}")).await.unwrap();
    writer
        .write_all(b"Content-Length: lots\r\n\r\n{}")
        .await
        .unwrap();
    drop(writer);

    assert_eq!(frames.next().await.unwrap().unwrap(), msg(b"{}"));
    assert!(matches!(
        frames.next().await,
        Some(Err(FramingError::InvalidHeader(_)))
    ));
    assert!(frames.next().await.is_none());
}

/// Decodes `input` delivered in chunks, stopping at the first error, which
/// is returned as its display text.
fn decode_chunked_fallible(
    mut codec: ContentLengthCodec,
    input: &[u8],
    mut chunk_len: impl FnMut() -> usize,
) -> (Vec<Frame>, Option<String>) {
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let n = chunk_len().clamp(1, rest.len());
        buf.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        loop {
            match codec.decode(&mut buf) {
                Ok(Some(frame)) => frames.push(frame),
                Ok(None) => break,
                Err(err) => return (frames, Some(err.to_string())),
            }
        }
    }
    loop {
        match codec.decode_eof(&mut buf) {
            Ok(Some(frame)) => frames.push(frame),
            Ok(None) => return (frames, None),
            Err(err) => return (frames, Some(err.to_string())),
        }
    }
}

/// Random, mostly well-formed traffic: header blocks with both line
/// endings, lengths around the cap, refused charsets, blank lines, and now
/// and then a stray or missing byte.
fn random_traffic(rng: &mut tests::XorShift) -> Vec<u8> {
    const EXTRA_HEADERS: &[&[u8]] = &[
        b"Content-Type: a; charset=latin1",
        b"content-type: a;charset=\"utf-8\"",
        b"X-Other: y",
        b"no colon here",
    ];
    const BODY: &[u8] = b"{}[]:\r\n ab";
    let mut input = Vec::new();
    for _ in 0..rng.below(6) {
        let eol: &[u8] = if rng.below(2) == 0 { b"\r\n" } else { b"\n" };
        for _ in 0..rng.below(3) {
            input.extend_from_slice(eol);
        }
        let len = rng.below(16);
        if rng.below(8) != 0 {
            input.extend_from_slice(format!("Content-Length: {len}").as_bytes());
            input.extend_from_slice(eol);
        }
        if rng.below(3) == 0 {
            input.extend_from_slice(EXTRA_HEADERS[rng.below(EXTRA_HEADERS.len())]);
            input.extend_from_slice(eol);
        }
        input.extend_from_slice(eol);
        for _ in 0..len {
            input.push(BODY[rng.below(BODY.len())]);
        }
        if rng.below(10) == 0 {
            // Corrupt the stream: drop a byte or add one.
            if rng.below(2) == 0 {
                input.pop();
            } else {
                input.push(BODY[rng.below(BODY.len())]);
            }
        }
    }
    input
}

#[test]
fn random_traffic_split_anywhere_decodes_like_one_shot() {
    let mut outcomes = [0usize; 3];
    for seed in 1..=500u64 {
        let mut rng = tests::XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let input = random_traffic(&mut rng);
        let cap = rng.below(16);
        let (frames, err) = decode_one_shot(ContentLengthCodec::with_max_frame_len(cap), &input);
        let err = err.map(|err| err.to_string());
        let chunked =
            decode_chunked_fallible(ContentLengthCodec::with_max_frame_len(cap), &input, || {
                1 + rng.below(9)
            });
        assert_eq!(
            chunked,
            (frames.clone(), err.clone()),
            "seed {seed}, cap {cap}"
        );
        for frame in &frames {
            match frame {
                Frame::Message(body) => {
                    assert!(body.len() <= cap, "seed {seed}: {body:?} is over the cap");
                    outcomes[0] += 1;
                }
                Frame::Refused(_) => outcomes[1] += 1,
                _ => {}
            }
        }
        outcomes[2] += usize::from(err.is_some());
    }
    // The generator exercises every path: messages, refusals and errors.
    assert!(outcomes.iter().all(|&n| n > 50), "outcomes {outcomes:?}");
}
