//! `LineCodec` fed one stream three ways (whole, in chunks chosen by the
//! input, byte by byte when short): the frames must be the same each time,
//! and the ones a plain split on `\n` predicts. Decoding never fails.

#![no_main]

use bytes::Bytes;
use jsonrpc_runtime::codec::{Frame, FrameRefusal, LineCodec};
use jsonrpc_runtime_fuzz::{decode_in_chunks, ChunkedInput};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(input) = ChunkedInput::parse(data) else {
        return;
    };
    let skip_blank = input.flags & 8 != 0;
    let codec = || LineCodec::with_max_frame_len(input.max_frame_len).skip_blank_lines(skip_blank);

    let whole = decode_in_chunks(codec(), input.stream, &[]);
    assert_eq!(whole.error, None, "line decoding never fails");
    let chunked = decode_in_chunks(codec(), input.stream, &input.chunk_lens);
    assert_eq!(whole, chunked, "chunks {:?}", input.chunk_lens);
    if input.stream.len() <= 512 {
        let bytewise = decode_in_chunks(codec(), input.stream, &[1]);
        assert_eq!(whole, bytewise, "byte by byte");
    }

    let expected = model(input.stream, input.max_frame_len, skip_blank);
    assert_eq!(whole.frames, expected);
});

/// The frames of `stream` as the codec's docs describe them, from a plain
/// split on `\n`.
fn model(stream: &[u8], max: usize, skip_blank: bool) -> Vec<Frame> {
    let mut frames = Vec::new();
    let mut parts: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    // The part after the last `\n`: an unterminated last line.
    let last = parts.pop().unwrap_or_default();
    let blank = |line: &[u8]| skip_blank && line.iter().all(u8::is_ascii_whitespace);
    let mut push = |raw: &[u8], terminated: bool| {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.len() > max {
            // Its head: the first bytes, as many as the cap plus one, at
            // most 256.
            let head = Bytes::copy_from_slice(&raw[..(max + 1).min(256)]);
            frames.push(Frame::Refused(FrameRefusal::TooLong { limit: max, head }));
        } else if (!terminated && line.is_empty()) || blank(line) {
        } else {
            frames.push(Frame::Message(Bytes::copy_from_slice(line)));
        }
    };
    for line in parts {
        push(line, true);
    }
    push(last, false);
    frames
}
