//! The floors: `add` dispatched by hand with serde_json, no framework.
//!
//! * [`typed`]: one typed parse of the whole envelope (params included),
//!   call, serialize. Knows only `add`; the fastest anyone can go with
//!   serde_json.
//! * [`two_phase`]: the envelope with params kept raw, a `match` on the
//!   method, then the params decoded into the method's type. What a
//!   framework has to do at least, since it learns the params type from the
//!   method name.
//!
//! Both append the answer to `out` and return whether they wrote one.

use std::sync::atomic::{AtomicI64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::AddParams;

/// What `note` notifications handled by the floors add up to, so the
/// optimizer cannot drop them.
pub static NOTES: AtomicI64 = AtomicI64::new(0);

#[derive(Deserialize)]
struct TypedRequest<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    id: u64,
    #[serde(borrow)]
    method: &'a str,
    params: AddParams,
}

#[derive(Serialize)]
struct TypedResponse {
    jsonrpc: &'static str,
    id: u64,
    result: i64,
}

/// The typed floor: parse, add, serialize.
pub fn typed(line: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let Ok(request) = serde_json::from_str::<TypedRequest<'_>>(text) else {
        return false;
    };
    if request.jsonrpc != "2.0" || request.method != "add" {
        return false;
    }
    let response = TypedResponse {
        jsonrpc: "2.0",
        id: request.id,
        result: request.params.a + request.params.b,
    };
    serde_json::to_writer(&mut *out, &response).is_ok()
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    jsonrpc: &'a str,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: &'a str,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

/// The two-phase floor: envelope with raw params, `match` on the method,
/// decode the params, call, write the answer around the raw id.
///
/// Serves `add` (request) and `note` (notification); any other request is
/// answered -32601.
pub fn two_phase(line: &[u8], out: &mut Vec<u8>) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(text) else {
        return false;
    };
    if envelope.jsonrpc != "2.0" {
        return false;
    }
    match (envelope.method, envelope.id) {
        ("add", Some(id)) => {
            let Some(Ok(p)) = envelope
                .params
                .map(|p| serde_json::from_str::<AddParams>(p.get()))
            else {
                return false;
            };
            write_result(out, id, &(p.a + p.b))
        }
        ("note", None) => {
            if let Some(Ok(p)) = envelope
                .params
                .map(|p| serde_json::from_str::<AddParams>(p.get()))
            {
                NOTES.fetch_add(p.a + p.b, Ordering::Relaxed);
            }
            false
        }
        (_, Some(id)) => {
            out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
            out.extend_from_slice(id.get().as_bytes());
            out.extend_from_slice(br#","error":{"code":-32601,"message":"Method not found"}}"#);
            true
        }
        (_, None) => false,
    }
}

/// Writes `{"jsonrpc":"2.0","id":<id>,"result":<result>}`.
pub fn write_result<T: Serialize>(out: &mut Vec<u8>, id: &RawValue, result: &T) -> bool {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.get().as_bytes());
    out.extend_from_slice(br#","result":"#);
    if serde_json::to_writer(&mut *out, result).is_err() {
        return false;
    }
    out.push(b'}');
    true
}

// ---------------------------------------------------------------------------
// The client side of the floors.

#[derive(Serialize)]
struct OutRequest<'a, P> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    method: &'a str,
    params: P,
}

/// Appends one request (or, without `id`, notification) line to `out`,
/// newline included.
pub fn write_call<P: Serialize>(out: &mut Vec<u8>, id: Option<u64>, method: &str, params: P) {
    let request = OutRequest {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    serde_json::to_writer(&mut *out, &request).expect("a request serializes");
    out.push(b'\n');
}

#[derive(Deserialize)]
struct InResponse<R> {
    id: u64,
    result: R,
}

/// Reads one answer line: its id and typed result.
pub fn read_answer<R: serde::de::DeserializeOwned>(line: &[u8]) -> (u64, R) {
    let text = std::str::from_utf8(line).expect("UTF-8");
    let response: InResponse<R> = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("not an answer ({e}): {}", &text[..text.len().min(200)]));
    (response.id, response.result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ADD_REQUEST, ADD_RESPONSE, NOTE, UNKNOWN_REQUEST};

    #[test]
    fn floors_answer_like_the_runtime() {
        let mut out = Vec::new();
        assert!(typed(ADD_REQUEST, &mut out));
        assert_eq!(out, ADD_RESPONSE);
        out.clear();
        assert!(two_phase(ADD_REQUEST, &mut out));
        assert_eq!(out, ADD_RESPONSE);
        out.clear();
        assert!(!two_phase(NOTE, &mut out));
        assert!(out.is_empty());
        assert!(two_phase(UNKNOWN_REQUEST, &mut out));
    }
}
