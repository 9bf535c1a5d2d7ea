//! What the runtime tells `tracing`, on targets of its own so a filter can
//! pick them (see the crate docs, "Observability"):
//!
//! * `jsonrpc_runtime::wire` (`trace`): every frame in and out, with the
//!   connection's number and the direction;
//! * `jsonrpc_runtime::request` (`debug`): a span per inbound request
//!   (method, id, connection) that the handler runs in, and an event when it
//!   is answered (outcome, error code, time taken);
//! * `jsonrpc_runtime::protocol` (`debug`): every message refused at
//!   admission (the error code and message sent back), and every HTTP
//!   request an HTTP server refuses (the status and why);
//! * `jsonrpc_runtime::call` (`debug`): a span per outbound call (method,
//!   id, connection), with an event when it is sent and one when it ends:
//!   its answer (result, or the error code) or why there was none, with the
//!   time taken;
//! * `jsonrpc_runtime` (`debug`/`warn`): connections failing or closing.
//!
//! With no subscriber (or these targets filtered out) each call site costs
//! one check of a cached flag: no clock is read and nothing is formatted.

use crate::rt::Instant;

use crate::codec::Frame;
use crate::id::Id;
use crate::message::ErrorObject;

/// A frame read from the other side.
pub fn frame_in(connection: u64, frame: &Frame) {
    match frame {
        Frame::Message(bytes) => tracing::trace!(
            target: "jsonrpc_runtime::wire",
            connection,
            direction = "in",
            frame = %String::from_utf8_lossy(bytes),
        ),
        Frame::Refused(why) => tracing::trace!(
            target: "jsonrpc_runtime::wire",
            connection,
            direction = "in",
            refused = %why,
        ),
    }
}

/// A frame handed to the transport.
pub fn frame_out(connection: u64, frame: &[u8]) {
    tracing::trace!(
        target: "jsonrpc_runtime::wire",
        connection,
        direction = "out",
        frame = %String::from_utf8_lossy(frame),
    );
}

/// The span an inbound request's handler runs in, and when it started
/// (only when the span is enabled: no clock is read otherwise).
pub(crate) fn request_span(connection: u64, method: &str, id: &Id) -> RequestSpan {
    let span = tracing::debug_span!(
        target: "jsonrpc_runtime::request",
        "request",
        method,
        %id,
        connection,
    );
    if span.is_disabled() {
        return RequestSpan(None);
    }
    RequestSpan(Some(Box::new(Traced {
        span,
        started: Instant::now(),
    })))
}

/// An inbound request's span and start, when a subscriber wants them: one
/// pointer in every request's job, boxed only when enabled.
#[derive(Debug)]
pub(crate) struct RequestSpan(Option<Box<Traced>>);

#[derive(Debug)]
struct Traced {
    span: tracing::Span,
    started: Instant,
}

impl RequestSpan {
    /// The span to run the handler in, if it is enabled.
    pub(crate) fn span(&self) -> Option<&tracing::Span> {
        self.0.as_ref().map(|traced| &traced.span)
    }

    /// The request was answered with `body` (or, `None`, not at all: a
    /// cancelled MCP request).
    pub(crate) fn answered(&self, body: Option<&[u8]>, success: bool) {
        let Some(traced) = &self.0 else {
            return;
        };
        let started = traced.started;
        let _in = traced.span.enter();
        let elapsed_us = started.elapsed().as_micros() as u64;
        match body {
            Some(_) if success => tracing::debug!(
                target: "jsonrpc_runtime::request",
                elapsed_us,
                "answered with a result"
            ),
            Some(body) => tracing::debug!(
                target: "jsonrpc_runtime::request",
                elapsed_us,
                code = error_code(body),
                "answered with an error"
            ),
            None => tracing::debug!(
                target: "jsonrpc_runtime::request",
                elapsed_us,
                "not answered (cancelled)"
            ),
        }
    }
}

/// The `code` of an error response's body, for the log.
fn error_code(body: &[u8]) -> i64 {
    #[derive(serde::Deserialize)]
    struct Body {
        error: Code,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    serde_json::from_slice::<Body>(body).map_or(0, |b| b.error.code)
}

/// The span of one outbound call: opened when the call is registered (with
/// a `call sent` event), closed with its outcome and the time it took.
/// Boxed only when a subscriber wants it.
pub(crate) fn call_span(connection: u64, method: &str, id: &Id) -> CallSpan {
    let span = tracing::debug_span!(
        target: "jsonrpc_runtime::call",
        "call",
        method,
        %id,
        connection,
    );
    if span.is_disabled() {
        return CallSpan(None);
    }
    span.in_scope(|| tracing::debug!(target: "jsonrpc_runtime::call", "call sent"));
    CallSpan(Some(Box::new(Traced {
        span,
        started: Instant::now(),
    })))
}

/// An outbound call's span and start, kept with its entry in the table of
/// waiting calls.
#[derive(Debug)]
pub(crate) struct CallSpan(Option<Box<Traced>>);

impl CallSpan {
    /// The answer arrived: a result, or an error with `code`.
    pub(crate) fn answered(self, code: Option<i64>) {
        let Some(traced) = self.0 else {
            return;
        };
        let _in = traced.span.enter();
        let elapsed_us = traced.started.elapsed().as_micros() as u64;
        match code {
            None => tracing::debug!(
                target: "jsonrpc_runtime::call",
                elapsed_us,
                "answered with a result"
            ),
            Some(code) => tracing::debug!(
                target: "jsonrpc_runtime::call",
                elapsed_us,
                code,
                "answered with an error"
            ),
        }
    }

    /// The call ended without an answer: `how` says why (timed out or
    /// given up, cancelled, the connection closed, not sent).
    pub(crate) fn ended(self, how: &'static str) {
        let Some(traced) = self.0 else {
            return;
        };
        let _in = traced.span.enter();
        let elapsed_us = traced.started.elapsed().as_micros() as u64;
        tracing::debug!(target: "jsonrpc_runtime::call", elapsed_us, outcome = how, "not answered");
    }
}

/// A message refused at admission, with what was sent back.
pub(crate) fn refused(connection: u64, id: &Id, error: &ErrorObject) {
    tracing::debug!(
        target: "jsonrpc_runtime::protocol",
        connection,
        %id,
        code = error.code.0,
        message = %error.message,
        "refused"
    );
}

/// An HTTP request refused before any of its messages was read: by the
/// config's `on_connect` hook (`401`, `403`), or for its body (`413`,
/// `415`).
pub fn http_refused(connection: u64, status: http::StatusCode, reason: &str) {
    tracing::debug!(
        target: "jsonrpc_runtime::protocol",
        connection,
        status = status.as_u16(),
        reason,
        "HTTP request refused"
    );
}
