//! The floor of the child-process benchmarks: a blocking loop over stdin
//! and stdout, the two-phase hand-written dispatch, one write per burst
//! of input. Also answers `echo` (a `didOpen` whose text comes back), for
//! the peak-memory comparison.

use std::io::{BufRead as _, BufReader, Write as _};

use jsonrpc_benches::floor;
use jsonrpc_benches::large::{DidOpenParams, TypedRequest};

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut reader = BufReader::with_capacity(64 * 1024, stdin);
    let mut line = Vec::with_capacity(256);
    let mut out = Vec::with_capacity(64 * 1024);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        if line
            .windows(15)
            .take(64)
            .any(|w| w == br#""method":"echo""#)
        {
            echo(&mut line, &mut out);
        } else if floor::two_phase(&line, &mut out) {
            out.push(b'\n');
        }
        if reader.buffer().is_empty() && !out.is_empty() {
            stdout.write_all(&out)?;
            stdout.flush()?;
            out.clear();
            if out.capacity() > 1024 * 1024 {
                out = Vec::with_capacity(64 * 1024);
            }
        }
        if line.capacity() > 1024 * 1024 {
            line = Vec::with_capacity(256);
        }
    }
    Ok(())
}

/// Decodes the `didOpen`, frees the request bytes, then writes the text
/// back: at most two copies of the payload at any time.
fn echo(line: &mut Vec<u8>, out: &mut Vec<u8>) {
    let (id, text) = {
        let Ok(text) = std::str::from_utf8(line) else {
            return;
        };
        match serde_json::from_str::<TypedRequest<'_, DidOpenParams>>(text) {
            Ok(request) => (request.id, request.params.text_document.text),
            Err(e) => return eprintln!("raw-server: echo: {e}"),
        }
    };
    *line = Vec::new();
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(br#","result":"#);
    let _ = serde_json::to_writer(&mut *out, &text);
    out.extend_from_slice(b"}\n");
}
