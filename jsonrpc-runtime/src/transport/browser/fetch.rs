//! JSON-RPC over HTTP from the browser: one `fetch` `POST` per message.

use bytes::Bytes;
use http::header::{HeaderMap, ACCEPT, CONTENT_TYPE};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReadableStreamDefaultReader, Request, RequestInit, Response,
};

use super::describe;
use crate::transport::connect::{kind, Connector};
use crate::transport::post::{
    answer, post_transport, Exchange, Exchanger, Failed, BODY_EXCERPT_LEN,
};
use crate::transport::{Transport, TransportError};

#[wasm_bindgen]
extern "C" {
    // The global `fetch` of a window and of a worker alike.
    #[wasm_bindgen(js_name = fetch)]
    fn fetch_request(request: &Request) -> js_sys::Promise;
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
    /// [`TransportError::Invalid`] when the browser refuses the URL or a
    /// header.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        self.check()?;
        let url = self.target.0;
        let headers = header_pairs(&self.headers)?;
        // Made once here, so a URL the browser refuses fails now.
        Request::new_with_str(&url)
            .map_err(|e| TransportError::Invalid(format!("`{url}`: {}", describe(&e))))?;
        Ok(post_transport(FetchExchanger {
            url,
            headers,
            max_answer_len: self.max_frame_len,
        }))
    }
}

fn header_pairs(headers: &HeaderMap) -> Result<Vec<(String, String)>, TransportError> {
    headers
        .iter()
        .map(|(name, value)| match value.to_str() {
            Ok(value) => Ok((name.as_str().to_owned(), value.to_owned())),
            Err(_) => Err(TransportError::Invalid(format!(
                "the header `{name}` is not text a browser can send"
            ))),
        })
        .collect()
}

/// What every `fetch` of one transport shares: plain data, no JavaScript
/// values (those live in each exchange).
struct FetchExchanger {
    url: String,
    headers: Vec<(String, String)>,
    max_answer_len: usize,
}

/// Aborts a `fetch` whose exchange was dropped (the peer went away).
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Exchanger for FetchExchanger {
    fn url(&self) -> &str {
        &self.url
    }

    async fn exchange(&self, message: Bytes) -> Exchange {
        let url = &self.url;
        let unsent = |e: JsValue| Exchange::Failed(Failed::unsent(url, describe(&e)));
        let abort = match AbortController::new() {
            Ok(controller) => AbortOnDrop(controller),
            Err(e) => return unsent(e),
        };
        let request = match self.request(&message, &abort.0) {
            Ok(request) => request,
            Err(e) => return unsent(e),
        };
        let response: Response = match JsFuture::from(fetch_request(&request)).await {
            Ok(response) => response.unchecked_into(),
            Err(e) => return unsent(e),
        };
        let status = response.status();
        if !response.ok() {
            let body = match read_body(&response, BODY_EXCERPT_LEN, Overflow::Truncate).await {
                Ok(body) => String::from_utf8_lossy(&body).into_owned(),
                Err(_) => String::new(),
            };
            return Exchange::Failed(Failed::status(url, status, body));
        }
        if status == 204 {
            return Exchange::Nothing { status };
        }
        let declared = response
            .headers()
            .get("content-length")
            .ok()
            .flatten()
            .and_then(|len| len.parse::<u64>().ok());
        if declared.is_some_and(|len| len > self.max_answer_len as u64) {
            return Exchange::Failed(Failed::too_large(url, status, self.max_answer_len));
        }
        match read_body(&response, self.max_answer_len, Overflow::Fail).await {
            Ok(body) => answer(url, status, Bytes::from(body)),
            Err(BodyError::TooLarge) => {
                Exchange::Failed(Failed::too_large(url, status, self.max_answer_len))
            }
            Err(BodyError::Failed(why)) => Exchange::Failed(Failed::unread(url, status, why)),
        }
    }
}

impl FetchExchanger {
    fn request(&self, message: &[u8], abort: &AbortController) -> Result<Request, JsValue> {
        let headers = Headers::new()?;
        for (name, value) in &self.headers {
            headers.append(name, value)?;
        }
        headers.set(CONTENT_TYPE.as_str(), "application/json")?;
        headers.set(ACCEPT.as_str(), "application/json")?;
        let init = RequestInit::new();
        init.set_method("POST");
        init.set_headers(&headers);
        init.set_body(&js_sys::Uint8Array::from(message));
        init.set_signal(Some(&abort.signal()));
        Request::new_with_str_and_init(&self.url, &init)
    }
}

/// What a body past the limit means.
#[derive(Clone, Copy)]
pub(crate) enum Overflow {
    /// The start is kept (an excerpt).
    Truncate,
    /// The body is refused.
    Fail,
}

pub(crate) enum BodyError {
    TooLarge,
    Failed(String),
}

/// A response's body, read chunk by chunk up to `limit` bytes; the rest is
/// cancelled.
pub(crate) async fn read_body(
    response: &Response,
    limit: usize,
    overflow: Overflow,
) -> Result<Vec<u8>, BodyError> {
    let Some(stream) = response.body() else {
        return Ok(Vec::new());
    };
    let failed = |e: JsValue| BodyError::Failed(describe(&e));
    let reader: ReadableStreamDefaultReader = stream.get_reader().unchecked_into();
    let mut body = Vec::new();
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(failed)?;
        let done = js_sys::Reflect::get(&chunk, &"done".into()).map_err(failed)?;
        if done.is_truthy() {
            return Ok(body);
        }
        let value = js_sys::Reflect::get(&chunk, &"value".into()).map_err(failed)?;
        let bytes: js_sys::Uint8Array = value.unchecked_into();
        let len = bytes.length() as usize;
        if body.len() + len > limit {
            let _ = reader.cancel();
            return match overflow {
                Overflow::Fail => Err(BodyError::TooLarge),
                Overflow::Truncate => {
                    let room = limit - body.len();
                    body.extend_from_slice(&bytes.subarray(0, room as u32).to_vec());
                    Ok(body)
                }
            };
        }
        let start = body.len();
        body.resize(start + len, 0);
        bytes.copy_to(&mut body[start..]);
    }
}
