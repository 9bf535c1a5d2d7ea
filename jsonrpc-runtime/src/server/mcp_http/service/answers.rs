//! The answers of the MCP endpoint: refusals with a status and a JSON-RPC
//! error, JSON and SSE bodies, and the body type that is either.

use super::*;

/// A request refused at the HTTP level: its status, and what to tell the
/// client.
pub(super) struct HttpRefusal(pub(super) StatusCode, pub(super) String);

impl HttpRefusal {
    pub(super) fn no_session() -> Self {
        HttpRefusal(
            StatusCode::NOT_FOUND,
            "no such session: it ended or never existed; start a new one with `initialize`"
                .to_owned(),
        )
    }

    pub(super) fn into_response(self) -> Response<McpBody> {
        refuse(self.0, self.1)
    }
}

/// An error answer with no id (`{"jsonrpc":"2.0","id":null,"error":…}`,
/// code -32000) at an HTTP status: what every MCP refusal carries.
pub(super) fn refuse(status: StatusCode, message: String) -> Response<McpBody> {
    let error = ErrorObject::new(-32000, message);
    json(
        status,
        message::error_response(Dialect::Strict, &Id::NULL, &error),
    )
}

pub(super) fn session_not_found() -> Response<McpBody> {
    HttpRefusal::no_session().into_response()
}

pub(super) fn json(status: StatusCode, body: Bytes) -> Response<McpBody> {
    let mut response = Response::new(McpBody::Full(Full::new(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn empty(status: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody::Full(Full::default()));
    *response.status_mut() = status;
    response
}

pub(super) fn sse(body: SseBody) -> Response<McpBody> {
    let mut response = Response::new(McpBody::Sse(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    // nginx: pass events on as they come instead of buffering the answer.
    headers.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    response
}

/// A response body: whole, or an SSE stream.
pub(in crate::server::mcp_http) enum McpBody {
    Full(Full<Bytes>),
    Sse(SseBody),
}

impl From<Full<Bytes>> for McpBody {
    fn from(body: Full<Bytes>) -> Self {
        McpBody::Full(body)
    }
}

impl hyper::body::Body for McpBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match self.get_mut() {
            McpBody::Full(body) => Pin::new(body).poll_frame(cx),
            McpBody::Sse(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            McpBody::Full(body) => body.is_end_stream(),
            McpBody::Sse(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            McpBody::Full(body) => body.size_hint(),
            McpBody::Sse(body) => body.size_hint(),
        }
    }
}
