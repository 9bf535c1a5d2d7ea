//! JSON-RPC over HTTP on one connection of an [`HttpListener`]: each `POST`
//! vetted by the listener's `on_connect` hook and answered through the router;
//! the metrics page.

use super::*;

/// What every connection of one [`HttpListener`] shares.
pub(super) struct RpcSetup {
    pub(super) parse: ParseOptions,
    pub(super) max_body: usize,
    pub(super) rpc_path: String,
    pub(super) routes: Arc<dyn MakeRouterDyn>,
    /// The `on_connect` hook.
    pub(super) open: OpenOptions,
    /// For its gate.
    pub(super) config: Config,
    /// Where the metrics are served, and the figures.
    #[cfg(feature = "tower")]
    pub(super) metrics: Option<(String, Metrics)>,
}

/// Answers JSON-RPC on one connection of an [`HttpListener`].
pub(super) struct RpcService {
    pub(super) router: Router,
    /// The connection's number in the `tracing` events.
    pub(super) number: u64,
    pub(super) addr: PeerAddr,
    pub(super) setup: Arc<RpcSetup>,
}

impl HttpService for RpcService {
    type Body = Body;

    async fn call(&self, request: Request<Incoming>) -> Response<Body> {
        let path = request.uri().path();
        if path == self.setup.rpc_path {
            self.rpc(request).await
        } else if let Some(response) = self.metrics(path, request.method()) {
            response
        } else {
            text(StatusCode::NOT_FOUND, "not found\n")
        }
    }
}

impl RpcService {
    /// The metrics page, if `path` is where it is served.
    #[cfg(feature = "tower")]
    fn metrics(&self, path: &str, method: &Method) -> Option<Response<Body>> {
        let (at, metrics) = self.setup.metrics.as_ref()?;
        if path != at {
            return None;
        }
        if method != Method::GET && method != Method::HEAD {
            return Some(not_allowed("GET, HEAD"));
        }
        let mut response = Response::new(Full::new(Bytes::from(metrics.render_prometheus())));
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        );
        Some(response)
    }

    #[cfg(not(feature = "tower"))]
    fn metrics(&self, _path: &str, _method: &Method) -> Option<Response<Body>> {
        None
    }

    async fn rpc(&self, request: Request<Incoming>) -> Response<Body> {
        if request.method() != Method::POST {
            return not_allowed("POST");
        }
        if !is_json(request.headers().get(header::CONTENT_TYPE)) {
            crate::trace::http_refused(
                self.number,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "not application/json",
            );
            return text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "send JSON-RPC messages as `Content-Type: application/json`\n",
            );
        }
        let (parts, body) = request.into_parts();
        let mut caller = ConnectionInfo::new()
            .with_addr(self.addr.clone())
            .with_request(parts.uri, parts.headers);
        if let Err(refusal) = self.setup.open.vet(&mut caller) {
            crate::trace::http_refused(self.number, refusal.status(), refusal.reason());
            return refused(&refusal);
        }
        let body = match read_body(body, self.setup.max_body).await {
            Ok(body) => body,
            Err(refused) => {
                crate::trace::http_refused(self.number, refused.status(), "the body");
                return refused;
            }
        };
        crate::trace::frame_in(self.number, &crate::codec::Frame::Message(body.clone()));
        let caller = Arc::new(caller);
        let gate = self.setup.config.gate.as_ref().map(|make| make());
        let answer = self
            .router
            .respond_in(
                &body,
                &self.setup.parse,
                Some(&caller),
                gate.as_deref(),
                self.number,
            )
            .await;
        match answer {
            Some(answer) => {
                crate::trace::frame_out(self.number, &answer);
                let mut response = Response::new(Full::new(answer));
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                response
            }
            None => {
                let mut response = Response::new(Body::default());
                *response.status_mut() = StatusCode::NO_CONTENT;
                response
            }
        }
    }
}
