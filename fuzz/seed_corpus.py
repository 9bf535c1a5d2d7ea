#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/corpus/<target>/ from the test vectors.

The frames come from the raw string literals (r#"..."#) and byte string
literals (b"...") of the integration tests; each target gets a few dozen
seeds laid out as its input format requires (see each target's docs).
Run from anywhere; it rewrites the seed-* files and leaves others alone.
Name targets to write only theirs.

    python3 fuzz/seed_corpus.py
    python3 fuzz/seed_corpus.py encode_roundtrip
"""

import hashlib
import json
import re
import struct
import sys
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
TESTS = FUZZ.parent / "tests" / "tests"
PER_TARGET = 40


def rust_strings(path):
    """Raw strings r#"..."# and byte strings b"..." of one test file, unescaped."""
    text = path.read_text()
    found = [m.group(1).encode() for m in re.finditer(r'br?#"(.*?)"#', text, re.S)]
    found += [m.group(1).encode() for m in re.finditer(r'(?<![b#])r#"(.*?)"#', text, re.S)]
    for m in re.finditer(r'\bb"((?:[^"\\]|\\.)*)"', text):
        found.append(unescape(m.group(1)))
    return found


def unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        nxt = s[i + 1]
        simple = {"n": b"\n", "r": b"\r", "t": b"\t", "0": b"\0", "\\": b"\\", '"': b'"', "'": b"'"}
        if nxt in simple:
            out += simple[nxt]
            i += 2
        elif nxt == "x":
            out.append(int(s[i + 2 : i + 4], 16))
            i += 4
        else:
            out += b"\\" + nxt.encode()
            i += 2
    return bytes(out)


def frames(files):
    """JSON-looking frames from `files`, deduplicated, in a stable order."""
    seen = []
    for name in files:
        for s in rust_strings(TESTS / name):
            s = s.strip()
            if s[:1] in (b"{", b"[") and b"\n" not in s and s not in seen and len(s) < 400:
                seen.append(s)
    return seen


def spread(items, n):
    """At most n items, spread over the whole list."""
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


ONLY = set(sys.argv[1:])


def write(target, seeds):
    if ONLY and target not in ONLY:
        return
    out = FUZZ / "corpus" / target
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("seed-*"):
        old.unlink()
    for seed in seeds:
        name = "seed-" + hashlib.sha1(seed).hexdigest()[:16]
        (out / name).write_bytes(seed)
    print(f"{target}: {len(set(seeds))} seeds")


def content_length(body):
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def ws_frame(head, payload):
    return bytes([head]) + struct.pack(">H", len(payload)) + payload


# encode_roundtrip: values in the target's own layout (see its docs).
def er_short(bs):
    return bytes([len(bs)]) + bs


def er_count(count):
    """A repeat count: 16 bits and a shift."""
    shift = 0
    while count > 0xFFFF:
        count >>= 1
        shift += 1
    return struct.pack("<HB", count, shift)


def er_int(n):
    return b"\x02" + struct.pack("<q", n)


def er_u64(n):
    return b"\x03" + struct.pack("<Q", n)


def er_f64(x):
    return b"\x04" + struct.pack("<d", x)


def er_str(bs):
    return b"\x05" + er_short(bs)


def er_array(items):
    return b"\x06" + bytes([len(items)]) + b"".join(items)


def er_object(members):
    return b"\x07" + bytes([len(members)]) + b"".join(er_short(k) + v for k, v in members)


def er_repeat_str(bs, count):
    return b"\x08" + er_short(bs) + er_count(count)


def er_repeat_value(value, count):
    return b"\x09" + value + er_count(count)


def er_repeat_char(byte, count):
    return b"\x0b" + bytes([byte]) + er_count(count)


def er_message(kind, value, id_byte=0x04, suffix=None):
    head = bytes([kind, id_byte | (1 if suffix is not None else 0)])
    return head + (er_short(suffix) if suffix is not None else b"") + value


def fnv1a(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def er_tier(seed, large):
    """`seed` with a last message of a small integer appended, chosen so the
    input's hash puts it in the medium or the large tier."""
    for kind in range(0, 256, 9):
        for id_byte in range(0, 256, 4):
            for tag in range(10, 256, 12):
                salted = seed + bytes([kind, id_byte, tag])
                h = fnv1a(salted)
                if (h % 1024 == 0) if large else (h % 1024 != 0 and h % 64 == 1):
                    return salted
    raise ValueError("no salt puts the seed in its tier")


def encode_seeds():
    escapes = er_str(b'"\\\n\r\t\x00\x1f\x7f/\x80\x84\x85\xc0\xff')
    nested = er_object([
        (b"a\"b", er_array([b"\x00", b"\x01", b"\x81", b"\x0a", escapes])),
        (b"\xe9", er_object([(b"", er_array([er_array([er_int(-1)])]))])),
        (b"n", er_array([er_int(-2**63), er_u64(2**64 - 1), er_f64(0.1), er_f64(-1.5e308)])),
    ])
    small = b"\x00" + b"".join(er_message(k, nested, 4 * k) for k in range(9))
    # A message over KEEP, then ones of 32-64 KiB (the lost-frame sizes),
    # through each encoding path.
    lost = er_tier(b"\x00" + b"".join([
        er_message(1, er_repeat_char(ord("b"), 70_000)),
        er_message(0, er_repeat_char(ord("a"), 33_000)),
        er_message(5, er_repeat_char(ord("c"), 40_000)),
        er_message(2, er_repeat_char(0x80, 20_000)),
        er_message(6, er_repeat_char(ord("d"), 60_000)),
    ]), large=True)
    # The lost-frame sizes alone, in the medium tier.
    medium = er_tier(b"\x00" + er_message(0, er_repeat_char(ord("a"), 33_000))
                     + er_message(5, er_repeat_char(ord("c"), 40_000)), large=False)
    # Around CHUNK, and a large escaped string after them, decoded in chunks.
    chunk = er_tier(b"\x07" + b"".join([
        er_message(6, er_repeat_char(ord("e"), 16_380)),
        er_message(3, er_repeat_char(ord("f"), 16_390)),
        er_message(7, er_repeat_str(b'"\\\n', 8_000), 2, b"x"),
        er_message(0, er_str(b"tail")),
    ]), large=False)
    # Large arrays and objects, pretty raw values, extras.
    arrays = er_tier(b"\x40" + b"".join([
        er_message(4, er_repeat_value(nested, 1_500)),
        er_message(0x81, er_repeat_value(er_array([er_int(1), escapes]), 3_000)),
        er_message(0x83, nested, 3, b"\xc3"),
        er_message(0xC7, nested, 1, b"k"),
        er_message(0xC8, er_repeat_char(0xD0, 9_000)),
    ]), large=True)
    numbers = b"\x00" + b"".join(
        er_message(k, er_array([er_f64(x) for x in (0.0, -0.0, 1e-310, 2.5e-8, float("nan"), float("inf"), 1.52222222222222222)]))
        for k in (0, 2, 5, 6)
    )
    controls = b"\x01" + er_message(0, er_str(bytes(range(32)) + b"\x7f")) + er_message(8, er_str(bytes(range(0x80, 0xA0))))
    return [small, lost, medium, chunk, arrays, numbers, controls, b"", b"\x00\x06\x00\x00"]


def main():
    json_frames = frames(["spec_conformance.rs", "message_classify.rs", "router_respond.rs"])
    codec_bytes = [s for s in rust_strings(TESTS / "codec_content_length.rs") if s]
    line_bytes = [s for s in rust_strings(TESTS / "codec_lines.rs") if s]
    picked = spread(json_frames, PER_TARGET - 8)

    # classify: one byte of parse options, then the frame.
    options = [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x7F, 0x35]
    write("classify", [bytes([options[i % len(options)]]) + f for i, f in enumerate(picked)]
          + [b"\x00", b"\x00[]", b"\x00\xff\xfe", b"\x01{\"id\":1,\"method\":\"m\"}"])

    # router_params: the same, plus one request per route of the target's router.
    routes = [
        ("add", [2, 3]), ("concat", ["a\\u00e9", "b"]), ("point", {"x": 1, "y": -2, "label": None}),
        ("shape", {"name": "s", "points": [{"x": 0, "y": 0}], "closed": True, "tags": ["t"]}),
        ("page", {"limit": 5}), ("page", None), ("sum", [1, 18446744073709551615]),
        ("kind", {"struct": {"x": 1, "nested": "unit"}}), ("kind", {"tuple": [7, "c"]}),
        ("double", [1.5e308]), ("unit", []), ("fail", [-32001, {"why": "x"}]),
        ("raw", {"any": [1, "two"]}), ("mapped", [False, "no"]), ("whoami", None),
        ("calc.divide", {"a": 7, "b": 0}), ("calc.greet", ["Ada", "Dr"]),
        ("calc.log", {"message": "hi"}), ("note", ["n"]),
    ]
    requests = []
    for i, (method, params) in enumerate(routes):
        message = {"jsonrpc": "2.0", "id": i, "method": method}
        if params is not None:
            message["params"] = params
        requests.append(json.dumps(message, separators=(",", ":")).encode())
    batch = b"[" + b",".join(requests[:6]) + b",{\"jsonrpc\":\"2.0\",\"method\":\"note\",\"params\":[\"x\"]}]"
    router_seeds = [b"\x00" + r for r in requests] + [b"\x00" + batch, b"\x01" + requests[0].replace(b'"jsonrpc":"2.0",', b"")]
    router_seeds += [bytes([options[i % len(options)]]) + f for i, f in enumerate(spread(json_frames, PER_TARGET - len(router_seeds)))]
    write("router_params", router_seeds)

    # line_decoder: cap index, k, k chunk lengths, then the stream.
    def chunked(flags, lens, stream):
        return bytes([flags, len(lens)]) + bytes(lens) + stream

    line_seeds = []
    for i in range(0, len(picked) - 2, 2):
        stream = picked[i] + b"\n" + picked[i + 1] + b"\r\n\n" + picked[i + 2]
        line_seeds.append(chunked(7 - (i // 2) % 8, [i % 5, 3, 17][: 1 + i % 3], stream))
    line_seeds += [chunked(i % 16, [1], s) for i, s in enumerate(line_bytes[:12])]
    write("line_decoder", line_seeds[:PER_TARGET])

    # content_length_decoder: the same layout; encoded frames and the codec tests' headers.
    cl_seeds = []
    for i in range(0, len(picked) - 1, 2):
        stream = content_length(picked[i]) + b"\r\n" + content_length(picked[i + 1])
        cl_seeds.append(chunked(7 - (i // 2) % 8, [i % 7, 19][: 1 + i % 2], stream))
    cl_seeds = cl_seeds[: PER_TARGET - 20] + [chunked(i % 8, [2], s) for i, s in enumerate(codec_bytes[:20])]
    write("content_length_decoder", cl_seeds)

    # websocket_message: cap index, then frames (head, 16-bit length, payload).
    fin_text, fin_binary = 0x81, 0x82
    ws_seeds = []
    for i, f in enumerate(picked[:24]):
        seed = bytes([i % 4]) + ws_frame(fin_text, f)
        if i % 3 == 1:
            half = len(f) // 2
            seed = bytes([i % 4]) + ws_frame(0x01, f[:half]) + ws_frame(0x89, b"ping") + ws_frame(0x80, f[half:])
        if i % 4 == 2:
            seed += ws_frame(fin_binary, b"\x00\x01") + ws_frame(0x88, b"\x03\xe8bye")
        ws_seeds.append(seed)
    ws_seeds += [
        b"\x00" + ws_frame(fin_text, b"x" * 17),
        b"\x01" + ws_frame(0x89, b"p" * 126),
        b"\x02" + ws_frame(0xC1, b"{}"),
        b"\x02" + ws_frame(0xA1, b"{}"),
        b"\x02" + ws_frame(0x80, b"{}"),
        b"\x02" + ws_frame(0x83, b"{}"),
        b"\x02" + ws_frame(0x81, b"\xc3\x28"),
        b"\x02" + ws_frame(0x88, b"\x03"),
        b"\x03" + ws_frame(0x91, b"[1,2]"),
        b"\x02" + ws_frame(fin_text, b"{}") + b"\x00\xff\xff" + b"\x81\x02{}",
    ]
    write("websocket_message", ws_seeds)

    write("encode_roundtrip", encode_seeds())


if __name__ == "__main__":
    main()
