//! The framers' unit tests, over `FramingCodec`.

use tokio_util::codec::Decoder;

use super::*;

fn line(fill: u8, len: usize) -> Vec<u8> {
    let mut line = vec![fill; len];
    line.push(b'\n');
    line
}

fn message(frame: Option<Frame>) -> Bytes {
    match frame {
        Some(Frame::Message(bytes)) => bytes,
        other => panic!("expected a message, got {other:?}"),
    }
}

/// Feeds one line of `len` bytes of `fill` to `codec` and returns the
/// frame it decodes.
fn decode_line(codec: &mut LineCodec, src: &mut BytesMut, fill: u8, len: usize) -> Bytes {
    src.extend_from_slice(&line(fill, len));
    message(codec.decode(src).unwrap())
}

#[test]
fn a_large_line_dropped_while_the_next_is_read_lends_its_buffer() {
    let mut codec = LineCodec::new();
    let mut src = BytesMut::new();
    let a = decode_line(&mut codec, &mut src, b'a', 3 * LARGE);
    assert!(a.iter().all(|&b| b == b'a') && a.len() == 3 * LARGE);
    let a_at = a.as_ptr() as usize;
    // The frame took its buffer; the framer goes on with a small one.
    assert!(src.capacity() < LARGE);

    // The next large line is coming when `a` is dropped: its buffer is
    // kept, and the line after the next is read into it.
    let b_line = line(b'b', 2 * LARGE);
    src.extend_from_slice(&b_line[..LARGE + 10]);
    assert!(codec.decode(&mut src).unwrap().is_none());
    drop(a);
    src.extend_from_slice(&b_line[LARGE + 10..]);
    let b = message(codec.decode(&mut src).unwrap());
    assert!(b.iter().all(|&x| x == b'b') && b.len() == 2 * LARGE);
    let c = decode_line(&mut codec, &mut src, b'c', 3 * LARGE);
    assert!(c.iter().all(|&x| x == b'c') && c.len() == 3 * LARGE);
    assert_eq!(c.as_ptr() as usize, a_at);
}

#[test]
fn a_large_line_dropped_between_frames_frees_its_buffer() {
    let mut codec = LineCodec::new();
    let mut src = BytesMut::new();
    drop(decode_line(&mut codec, &mut src, b'a', 2 * LARGE));
    assert!(codec.large.spare.take().is_none());
    assert!(src.capacity() < LARGE);
}

#[test]
fn a_partial_line_past_64_kib_grows_in_one_step() {
    let mut codec = LineCodec::with_max_frame_len(100 * LARGE);
    let mut src = BytesMut::new();
    src.extend_from_slice(&vec![b'x'; LARGE]);
    assert!(codec.decode(&mut src).unwrap().is_none());
    assert!(src.capacity() >= 16 * LARGE);
    // Never past the cap (and its terminator).
    let mut codec = LineCodec::with_max_frame_len(2 * LARGE);
    let mut src = BytesMut::new();
    src.extend_from_slice(&vec![b'x'; LARGE]);
    assert!(codec.decode(&mut src).unwrap().is_none());
    assert!(src.capacity() >= 2 * LARGE + 2 && src.capacity() < 4 * LARGE);
}

#[test]
fn a_small_line_after_large_ones_lets_the_large_buffers_go() {
    let mut codec = LineCodec::new();
    let mut src = BytesMut::new();
    let a = decode_line(&mut codec, &mut src, b'a', 2 * LARGE);
    let b_line = line(b'b', 2 * LARGE);
    src.extend_from_slice(&b_line[..LARGE]);
    assert!(codec.decode(&mut src).unwrap().is_none());
    drop(a);
    // `b` completes; `a`'s buffer, the spare, becomes the read buffer.
    src.extend_from_slice(&b_line[LARGE..]);
    drop(message(codec.decode(&mut src).unwrap()));
    assert!(src.capacity() >= 2 * LARGE);
    // A small line: the read buffer becomes small again.
    src.extend_from_slice(b"{}\n{\"x\":");
    assert_eq!(&message(codec.decode(&mut src).unwrap())[..], b"{}");
    assert!(src.capacity() < LARGE);
    assert_eq!(&src[..], b"{\"x\":");
    assert!(codec.large.spare.take().is_none());
}

#[test]
fn a_large_body_of_known_length_is_read_into_the_spare() {
    let mut codec = ContentLengthCodec::new();
    let body = vec![b'7'; 2 * LARGE];
    let head = format!("Content-Length: {}\r\n\r\n", body.len());
    let mut src = BytesMut::new();
    src.extend_from_slice(head.as_bytes());
    src.extend_from_slice(&body);
    let first = message(codec.decode(&mut src).unwrap());
    assert_eq!(first, body);
    let first_at = first.as_ptr() as usize;

    // The next body is coming when the first is dropped: the first one's
    // buffer is kept, and the body after the next is read into it (the
    // next already had its room made).
    src.extend_from_slice(head.as_bytes());
    src.extend_from_slice(&body[..LARGE]);
    assert!(codec.decode(&mut src).unwrap().is_none());
    drop(first);
    src.extend_from_slice(&body[LARGE..]);
    let second = message(codec.decode(&mut src).unwrap());
    assert_eq!(second, body);
    src.extend_from_slice(head.as_bytes());
    src.extend_from_slice(&body);
    let third = message(codec.decode(&mut src).unwrap());
    assert_eq!(third, body);
    // In the first one's buffer (where its header went too).
    let third_at = third.as_ptr() as usize;
    assert!((first_at..first_at + head.len() + 1).contains(&third_at));
}

#[test]
fn mixed_sizes_in_any_chunks_decode_to_what_was_sent() {
    // Lines of many sizes around the large threshold, each filled with
    // its own byte, fed in chunks of several sizes; frames are dropped
    // early, late or in between, so the spare is lent, kept and let go
    // at every point. Every frame must come back whole.
    let sizes = [
        10,
        70_000,
        200_000,
        3,
        LARGE - 1,
        LARGE,
        300_000,
        90_000,
        5,
        150_000,
    ];
    for (k, chunk) in [1_000usize, 4_096, 65_537, 1 << 20].into_iter().enumerate() {
        for line_codec in [true, false] {
            let mut stream = Vec::new();
            let mut sent = Vec::new();
            for (i, &size) in sizes.iter().enumerate() {
                let body = vec![b'a' + (i as u8); size];
                if line_codec {
                    stream.extend_from_slice(&body);
                    stream.push(b'\n');
                } else {
                    stream.extend_from_slice(format!("Content-Length: {size}\r\n\r\n").as_bytes());
                    stream.extend_from_slice(&body);
                }
                sent.push(body);
            }
            let mut lines = LineCodec::new();
            let mut bodies = ContentLengthCodec::new();
            let mut decode = |src: &mut BytesMut| {
                if line_codec {
                    lines.decode(src).unwrap()
                } else {
                    bodies.decode(src).unwrap()
                }
            };
            let mut src = BytesMut::new();
            let mut held: Vec<Bytes> = Vec::new();
            let mut got = Vec::new();
            for piece in stream.chunks(chunk) {
                src.extend_from_slice(piece);
                while let Some(frame) = decode(&mut src) {
                    let frame = message(Some(frame));
                    got.push(frame.to_vec());
                    held.push(frame);
                    // Drop some now, keep some for a while.
                    if (got.len() + k) % 3 != 0 {
                        held.remove(0);
                    }
                }
            }
            assert!(src.is_empty());
            assert_eq!(got, sent, "chunks of {chunk}, lines: {line_codec}");
            // What was still held is intact too.
            for frame in &held {
                assert!(sent.iter().any(|b| b[..] == frame[..]));
            }
        }
    }
}

/// Reads `burst` into `src` as a socket would: each read brings at most
/// the room `src` has, and the framer decodes after each. Returns the
/// frames and the number of reads.
fn read_burst(
    codec: &mut impl Decoder<Item = Frame, Error = FramingError>,
    src: &mut BytesMut,
    burst: &[u8],
) -> (Vec<Bytes>, usize) {
    let (mut frames, mut reads, mut at) = (Vec::new(), 0, 0);
    while at < burst.len() {
        if src.capacity() == src.len() {
            src.reserve(1); // what `FramedRead` does before reading
        }
        let n = (src.capacity() - src.len()).min(burst.len() - at);
        src.extend_from_slice(&burst[at..at + n]);
        at += n;
        reads += 1;
        while let Some(frame) = codec.decode(src).unwrap() {
            frames.push(message(Some(frame)));
        }
    }
    (frames, reads)
}

fn lines(count: usize, len: usize) -> Vec<u8> {
    (0..count)
        .flat_map(|i| line(b'a' + (i % 26) as u8, len))
        .collect()
}

#[test]
fn reads_that_fill_their_room_get_more_up_to_32_kib() {
    let mut codec = LineCodec::new();
    let mut src = BytesMut::with_capacity(READ_ROOM.0);
    // 64 lines of 64 bytes, 4 KiB a burst: the room doubles while reads
    // fill it, then a burst is one read.
    let burst = lines(64, 63);
    let (frames, reads) = read_burst(&mut codec, &mut src, &burst);
    assert_eq!(frames.len(), 64);
    assert!(reads > 1, "the first burst comes a kilobyte at a time");
    for _ in 0..3 {
        let (frames, reads) = read_burst(&mut codec, &mut src, &burst);
        assert_eq!(frames.len(), 64);
        assert!(frames.iter().all(|f| f.len() == 63));
        assert_eq!(reads, 1);
    }
    // Never more room than 32 KiB a read, however large the bursts.
    let big = lines(2048, 63);
    let (frames, reads) = read_burst(&mut codec, &mut src, &big);
    assert_eq!(frames.len(), 2048);
    assert!(reads >= big.len() / READ_ROOM.1);
    assert!(src.capacity() < 2 * READ_ROOM.1);
}

#[test]
fn short_reads_shrink_the_room_and_a_quiet_connection_lets_its_buffer_go() {
    let mut codec = LineCodec::new();
    let mut src = BytesMut::with_capacity(READ_ROOM.0);
    for _ in 0..8 {
        read_burst(&mut codec, &mut src, &lines(512, 63));
    }
    assert!(src.capacity() >= READ_ROOM.1);
    // One message at a time: two short reads halve the room, and an
    // empty buffer four times the room is let go.
    for _ in 0..32 {
        let (frames, reads) = read_burst(&mut codec, &mut src, &lines(1, 63));
        assert_eq!((frames.len(), reads), (1, 1));
    }
    assert_eq!(codec.large.read.next, READ_ROOM.0);
    assert!(src.capacity() < 4 * READ_ROOM.0, "{}", src.capacity());
}

#[test]
fn content_length_bodies_get_the_same_room() {
    let mut codec = ContentLengthCodec::new();
    let mut src = BytesMut::with_capacity(READ_ROOM.0);
    let mut burst = Vec::new();
    for i in 0..64 {
        let body = format!("{{\"id\":{i:03},\"pad\":\"{}\"}}", "x".repeat(40));
        burst.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        burst.extend_from_slice(body.as_bytes());
    }
    read_burst(&mut codec, &mut src, &burst);
    read_burst(&mut codec, &mut src, &burst);
    let (frames, reads) = read_burst(&mut codec, &mut src, &burst);
    assert_eq!(frames.len(), 64);
    assert!(frames[7].starts_with(b"{\"id\":007,"));
    assert_eq!(reads, 1);
}

#[test]
fn a_frame_outliving_its_framer_frees_its_own_buffer() {
    let mut codec = LineCodec::new();
    let mut src = BytesMut::new();
    let frame = decode_line(&mut codec, &mut src, b'z', LARGE);
    drop(codec);
    // Nothing to give the buffer back to: it goes with the frame.
    assert_eq!(frame.len(), LARGE);
    drop(frame);
}
