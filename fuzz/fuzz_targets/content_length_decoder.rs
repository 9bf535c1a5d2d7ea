//! `ContentLengthCodec` fed one stream three ways (whole, in chunks chosen
//! by the input, byte by byte when short): the frames and the error that
//! ends the stream, if any, must be the same each time. Then the bodies the
//! input splits into are encoded and must decode back, in chunks, as they
//! were: each one over the cap refused, and the ones after it served.

#![no_main]

use bytes::{Bytes, BytesMut};
use jsonrpc_runtime::codec::{ContentLengthCodec, Frame, FrameRefusal};
use jsonrpc_runtime_fuzz::{decode_in_chunks, ChunkedInput};
use libfuzzer_sys::fuzz_target;
use tokio_util::codec::Encoder;

fuzz_target!(|data: &[u8]| {
    let Some(input) = ChunkedInput::parse(data) else {
        return;
    };
    let max = input.max_frame_len;
    let codec = || ContentLengthCodec::with_max_frame_len(max);

    // Raw bytes: headers as the input writes them.
    let whole = decode_in_chunks(codec(), input.stream, &[]);
    let chunked = decode_in_chunks(codec(), input.stream, &input.chunk_lens);
    assert_eq!(whole, chunked, "chunks {:?}", input.chunk_lens);
    if input.stream.len() <= 512 {
        let bytewise = decode_in_chunks(codec(), input.stream, &[1]);
        assert_eq!(whole, bytewise, "byte by byte");
    }
    for frame in &whole.frames {
        if let Frame::Message(body) = frame {
            assert!(body.len() <= max, "a body over the cap came out");
        }
    }

    // Encoded bodies: whatever they hold, they come back whole; one over the
    // cap is refused, its body skipped, and the next one served.
    let bodies: Vec<&[u8]> = input.stream.split(|&b| b == b'\n').collect();
    let mut encoded = BytesMut::new();
    let mut encoder = codec();
    for body in &bodies {
        encoder
            .encode(Bytes::copy_from_slice(body), &mut encoded)
            .expect("encoding never fails");
    }
    let expected: Vec<Frame> = bodies
        .iter()
        .map(|body| {
            if body.len() > max {
                let head = Bytes::copy_from_slice(&body[..body.len().min(256)]);
                Frame::Refused(FrameRefusal::TooLong { limit: max, head })
            } else {
                Frame::Message(Bytes::copy_from_slice(body))
            }
        })
        .collect();
    let decoded = decode_in_chunks(codec(), &encoded, &input.chunk_lens);
    assert_eq!(decoded.error, None);
    assert_eq!(decoded.frames, expected);
});
