//! The plain answers an HTTP server gives outside JSON-RPC (status texts,
//! `405`, `413`, a refusal), reading a capped body, and the JSON content
//! type check; shared by JSON-RPC over HTTP and MCP.

use super::*;
use crate::transport::post::{read_within, Unread};

/// Reads a request's whole body, up to `limit` bytes: `413` over it (by
/// its `Content-Length`, or while a chunked body is read), `400` when it
/// cannot be read. A body that arrives in one chunk is taken as it is.
pub(crate) async fn read_body(mut body: Incoming, limit: usize) -> Result<Bytes, Response<Body>> {
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large(limit));
    }
    match read_within(&mut body, limit).await {
        Ok(body) => Ok(body),
        Err(Unread::TooLarge) => Err(too_large(limit)),
        Err(Unread::Broken(why)) => {
            tracing::debug!(error = %why, "reading a request body failed");
            Err(text(
                StatusCode::BAD_REQUEST,
                "the body could not be read\n",
            ))
        }
    }
}

/// Whether a `Content-Type` is JSON in UTF-8: `application/json`, with any
/// parameters, but a `charset` only if it is UTF-8.
pub(crate) fn is_json(content_type: Option<&HeaderValue>) -> bool {
    let Some(value) = content_type else {
        return false;
    };
    // What nearly every client sends, without splitting it.
    if value.as_bytes().eq_ignore_ascii_case(b"application/json") {
        return true;
    }
    let Ok(value) = value.to_str() else {
        return false;
    };
    let mut parts = value.split(';');
    let essence = parts.next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("application/json") {
        return false;
    }
    parts.all(|parameter| match parameter.split_once('=') {
        Some((name, charset)) if name.trim().eq_ignore_ascii_case("charset") => {
            let charset = charset.trim().trim_matches('"');
            charset.eq_ignore_ascii_case("utf-8") || charset.eq_ignore_ascii_case("utf8")
        }
        _ => true,
    })
}

pub(crate) fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The answer to a request the config's `on_connect` hook refused.
pub(crate) fn refused(refusal: &Refusal) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{}\n", refusal.reason()))));
    *response.status_mut() = refusal.status();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.extend(refusal.headers().clone());
    response
}

pub(crate) fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

/// `413`; the rest of the body is not read, so an HTTP/1 connection is
/// closed after it, lingering (see [`HttpConnection::handle`] and
/// `linger`).
fn too_large(limit: usize) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(format!(
        "the body is over the {limit}-byte limit\n"
    ))));
    *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
