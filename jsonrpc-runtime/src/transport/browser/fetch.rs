//! HTTP from the browser: `fetch` as the [`HttpClient`] under JSON-RPC
//! over HTTP ([`FetchConnector`], one `POST` per message) and MCP
//! Streamable HTTP (`McpFetchConnector`).

use bytes::Bytes;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use http::Uri;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, ReadableStreamDefaultReader, RequestInit};

use super::describe;
use crate::transport::connect::{kind, Connector};
use crate::transport::post::{post_transport, HttpClient, ResponseBody};
use crate::transport::{Transport, TransportError};

#[wasm_bindgen]
extern "C" {
    // The global `fetch` of a window and of a worker alike.
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_request(request: &web_sys::Request) -> js_sys::Promise;
}

/// A client transport that posts each message with the browser's `fetch`
/// (feature `browser`, on `wasm32-unknown-unknown`), to an `http://` or
/// `https://` URL or one relative to the page (see [`Connector`] for the
/// settings).
///
/// It behaves as [`HttpConnector`](https://docs.rs/jsonrpc-runtime/latest/jsonrpc_runtime/transport/type.HttpConnector.html)
/// does natively, answer for answer: each message is one `POST` with
/// `Content-Type: application/json` and the connector's
/// [`header`](Connector::header)s (a [`bearer`](Connector::bearer)
/// token, say); up to 64 are in flight. A `2xx` body is the answer, `204`
/// or an empty body is nothing, and any other status, a network failure or
/// a body that is not JSON-RPC fails each request the `POST` carried with
/// a -32100 error whose data is an [`HttpFailure`](crate::transport::HttpFailure).
/// A body is read as a stream and given up past
/// [`max_frame_len`](Connector::max_frame_len). A peer that is dropped
/// aborts the `fetch`es still in flight.
///
/// A page on another origin than the server's needs the server to allow
/// it (CORS): `server::HttpListener::allowed_origins`, or the proxy in front.
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::transport::FetchConnector;
/// use jsonrpc_runtime::Peer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = FetchConnector::new("http://127.0.0.1:9001/").bearer("secret").connect().await?;
/// let peer = Peer::spawn(transport);
/// let difference: i64 = peer.call("subtract", [42, 23]).await?;
/// # Ok(())
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(all(feature = "browser", target_arch = "wasm32"))))]
pub type FetchConnector = Connector<kind::Fetch>;

impl Connector<kind::Fetch> {
    /// The transport. Nothing is sent yet: a server that cannot be reached
    /// shows up as the first call's error.
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] when the URL is not one the browser can
    /// fetch, or a header is not text.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        self.check()?;
        let uri = resolve(&self.target.0)?;
        check_headers(&self.headers)?;
        Ok(post_transport(
            FetchClient,
            uri,
            self.headers,
            self.max_frame_len,
        ))
    }
}

/// `url` resolved against the page's (or the worker's) address, as `fetch`
/// would: a relative URL such as `/rpc` works.
pub(crate) fn resolve(url: &str) -> Result<Uri, TransportError> {
    let invalid = |why: String| TransportError::Invalid(format!("`{url}`: {why}"));
    let base = js_sys::Reflect::get(&js_sys::global(), &"location".into())
        .ok()
        .and_then(|location| js_sys::Reflect::get(&location, &"href".into()).ok())
        .and_then(|href| href.as_string());
    let resolved = match &base {
        Some(base) => web_sys::Url::new_with_base(url, base),
        None => web_sys::Url::new(url),
    }
    .map_err(|e| invalid(describe(&e)))?;
    let scheme = resolved.protocol();
    if scheme != "http:" && scheme != "https:" {
        return Err(invalid(format!("`{scheme}` is not http: or https:")));
    }
    resolved
        .href()
        .parse()
        .map_err(|e: http::uri::InvalidUri| invalid(e.to_string()))
}

/// Every header must be text a browser can send.
pub(crate) fn check_headers(headers: &HeaderMap) -> Result<(), TransportError> {
    match headers.iter().find(|(_, value)| value.to_str().is_err()) {
        Some((name, _)) => Err(TransportError::Invalid(format!(
            "the header `{name}` is not text a browser can send"
        ))),
        None => Ok(()),
    }
}

/// The browser's `fetch`, as the HTTP client of a transport. It holds no
/// JavaScript values (each request makes its own), so it is `Send` like
/// hyper's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FetchClient;

impl HttpClient for FetchClient {
    type Body = FetchBody;

    async fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> Result<http::Response<FetchBody>, String> {
        let abort = AbortController::new().map_err(|e| describe(&e))?;
        let abort = AbortOnDrop(abort);
        let request = js_request(request, &abort.0).map_err(|e| describe(&e))?;
        let response: web_sys::Response = JsFuture::from(fetch_request(&request))
            .await
            .map_err(|e| describe(&e))?
            .unchecked_into();
        let mut head = http::Response::new(());
        *head.status_mut() = http::StatusCode::from_u16(response.status())
            .map_err(|_| format!("a status the browser reported, {}", response.status()))?;
        read_headers(&response.headers(), head.headers_mut());
        let reader = response
            .body()
            .map(|stream| stream.get_reader().unchecked_into());
        Ok(head.map(|()| FetchBody {
            reader,
            _abort: abort,
        }))
    }
}

/// The JavaScript request for `request`, aborted through `abort`.
fn js_request(
    request: http::Request<Bytes>,
    abort: &AbortController,
) -> Result<web_sys::Request, JsValue> {
    let (parts, body) = request.into_parts();
    let headers = Headers::new()?;
    for (name, value) in &parts.headers {
        // Checked as text when the transport was made.
        if let Ok(value) = value.to_str() {
            headers.append(name.as_str(), value)?;
        }
    }
    let init = RequestInit::new();
    init.set_method(parts.method.as_str());
    init.set_headers(&headers);
    if !body.is_empty() {
        init.set_body(&js_sys::Uint8Array::from(&body[..]));
    }
    init.set_signal(Some(&abort.signal()));
    web_sys::Request::new_with_str_and_init(&parts.uri.to_string(), &init)
}

/// The response headers a page may read (the CORS-safelisted ones, and
/// those the server exposes).
fn read_headers(from: &Headers, into: &mut HeaderMap) {
    let Ok(Some(entries)) = js_sys::try_iter(from) else {
        return;
    };
    for entry in entries.flatten() {
        let pair: js_sys::Array = entry.unchecked_into();
        let (Some(name), Some(value)) = (pair.get(0).as_string(), pair.get(1).as_string()) else {
            continue;
        };
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            into.append(name, value);
        }
    }
}

/// Aborts a `fetch` (and the reading of its body) when dropped: the
/// exchange was given up, or the peer went away.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A `fetch` response's body, read chunk by chunk from its stream.
pub(crate) struct FetchBody {
    reader: Option<ReadableStreamDefaultReader>,
    _abort: AbortOnDrop,
}

impl ResponseBody for FetchBody {
    async fn chunk(&mut self) -> Option<Result<Bytes, String>> {
        let reader = self.reader.as_ref()?;
        let failed = |e: JsValue| Some(Err(describe(&e)));
        let chunk = match JsFuture::from(reader.read()).await {
            Ok(chunk) => chunk,
            Err(e) => return failed(e),
        };
        let done = match js_sys::Reflect::get(&chunk, &"done".into()) {
            Ok(done) => done,
            Err(e) => return failed(e),
        };
        if done.is_truthy() {
            self.reader = None;
            return None;
        }
        match js_sys::Reflect::get(&chunk, &"value".into()) {
            Ok(value) => {
                let bytes: js_sys::Uint8Array = value.unchecked_into();
                Some(Ok(Bytes::from(bytes.to_vec())))
            }
            Err(e) => failed(e),
        }
    }
}
