//! CORS: the answers that let a page on another origin call the server from
//! a browser (its `fetch` asks first with an `OPTIONS` preflight, then
//! reads a response only if it names the page's origin).

use super::*;

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: &str = "600";

/// The methods a page may use: JSON-RPC's `POST`, and MCP's `GET` stream
/// and `DELETE` of a session.
const ALLOWED_METHODS: &str = "GET, POST, DELETE, OPTIONS";

/// The headers a page may send when its preflight names none.
const ALLOWED_HEADERS: &str = "content-type, authorization, accept, last-event-id, \
     mcp-session-id, mcp-protocol-version";

/// The response headers a page's script may read: MCP's session and
/// protocol headers, and a bearer challenge.
const EXPOSED_HEADERS: &str = "mcp-session-id, mcp-protocol-version, www-authenticate";

/// The origin a request comes from, if the server lets it call from a
/// browser.
pub(super) fn allowed_origin(
    cors: Option<&Origins>,
    request: &Request<Incoming>,
) -> Option<HeaderValue> {
    let origin = request.headers().get(header::ORIGIN)?;
    cors?.allows(Some(origin)).then(|| origin.clone())
}

/// A preflight (`OPTIONS` with `Access-Control-Request-Method`) from an
/// allowed origin: answered here, before any route sees it.
pub(super) fn preflight(request: &Request<Incoming>) -> Option<Response<Body>> {
    let headers = request.headers();
    if request.method() != Method::OPTIONS
        || !headers.contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
    {
        return None;
    }
    let mut response = Response::new(Body::default());
    *response.status_mut() = StatusCode::NO_CONTENT;
    let out = response.headers_mut();
    out.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOWED_METHODS),
    );
    let asked = headers.get(header::ACCESS_CONTROL_REQUEST_HEADERS).cloned();
    out.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        asked.unwrap_or_else(|| HeaderValue::from_static(ALLOWED_HEADERS)),
    );
    out.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(PREFLIGHT_MAX_AGE),
    );
    Some(response)
}

/// Names `origin` in a response, so the page may read it.
pub(super) fn allow<B>(origin: HeaderValue, response: &mut Response<B>) {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
    headers.append(header::VARY, HeaderValue::from_static("origin"));
}
