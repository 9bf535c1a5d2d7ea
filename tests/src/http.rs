//! Raw HTTP for the server tests: a whole answer, read in time.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::AsHeaderName;
use hyper::{Request, Response, StatusCode, Version};
use hyper_util::rt::TokioIo;
use serde_json::Value;

use crate::ANSWER_TIMEOUT;

/// A response's status, version, headers and whole body.
#[derive(Debug)]
pub struct HttpAnswer {
    /// The status.
    pub status: StatusCode,
    /// The HTTP version it came in.
    pub version: Version,
    /// The headers.
    pub headers: hyper::HeaderMap,
    /// The whole body.
    pub body: Bytes,
}

impl HttpAnswer {
    /// Reads `response` to its end (within [`ANSWER_TIMEOUT`]).
    pub async fn read(response: Response<Incoming>) -> HttpAnswer {
        let (parts, body) = response.into_parts();
        let body = tokio::time::timeout(ANSWER_TIMEOUT, body.collect())
            .await
            .expect("the body in time")
            .expect("the body")
            .to_bytes();
        HttpAnswer {
            status: parts.status,
            version: parts.version,
            headers: parts.headers,
            body,
        }
    }

    /// The body as JSON; panics, showing it, when it is not.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", self.body))
    }

    /// The code of the JSON-RPC error answer the body holds; panics,
    /// showing the body, when it holds none.
    pub fn error_code(&self) -> i64 {
        self.json()["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error: {:?}", self.body))
    }

    /// One header as text.
    pub fn header(&self, name: impl AsHeaderName) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// Sends `request` on an HTTP/1.1 connection of its own; the response's
/// body is left to read (an SSE stream may not end).
pub async fn send_once(
    addr: std::net::SocketAddr,
    request: Request<Full<Bytes>>,
) -> Response<Incoming> {
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        send.send_request(request).await.expect("an answer")
    };
    tokio::time::timeout(ANSWER_TIMEOUT, exchange)
        .await
        .expect("an answer in time")
}

/// [`send_once`], and the whole answer.
pub async fn once(addr: std::net::SocketAddr, request: Request<Full<Bytes>>) -> HttpAnswer {
    HttpAnswer::read(send_once(addr, request).await).await
}

/// A hand-written HTTP/1.1 server on a loopback port, each request
/// answered by `answer` (a test's stand-in for a server of another kind:
/// an authorization server, one that records what it was sent); its
/// address.
pub async fn serve_fn<F, Fut, B>(answer: F) -> std::net::SocketAddr
where
    F: Fn(Request<Incoming>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Response<B>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = answer.clone();
            let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                let answer = answer(request);
                async move { Ok::<_, std::convert::Infallible>(answer.await) }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service),
            );
        }
    });
    addr
}
