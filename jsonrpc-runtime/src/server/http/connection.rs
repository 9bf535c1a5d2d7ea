//! One HTTP server's connections: accepting them, answering each request
//! (the health endpoint, CORS, then the service: JSON-RPC or MCP sessions)
//! and the drain, as [`HttpListener`] documents it.

use super::*;

/// What answers the requests of an HTTP server's connections on every path
/// but the health endpoint's: JSON-RPC ([`HttpListener`]), or MCP sessions.
pub(crate) trait HttpService: Send + Sync + 'static {
    /// The bodies of its responses.
    type Body: hyper::body::Body<Data = Bytes, Error = Infallible> + From<Body> + Send + 'static;

    /// Answers one request.
    fn call(&self, request: Request<Incoming>)
        -> impl Future<Output = Response<Self::Body>> + Send;
}

/// Starts an HTTP server on `acceptor`: at most `limit` connections, the
/// health endpoint at `health_path`, every other request answered by the
/// service `make` builds for each connection, drained as [`HttpListener`]
/// documents.
pub(crate) fn serve_http<A, S>(
    acceptor: A,
    limit: Option<usize>,
    health_path: String,
    cors: Option<Origins>,
    shared: Arc<ServerShared>,
    make: impl Fn(&PeerAddr) -> S + Send + 'static,
) -> Server
where
    A: Acceptor,
    A::Connection: AsyncRead + AsyncWrite + Unpin,
    S: HttpService,
{
    let setup = Arc::new(HttpSetup {
        health_path,
        cors,
        requests: TaskTracker::new(),
    });
    let mut builder = auto::Builder::new(TrackedExecutor(shared.tracker.clone()));
    // The timer turns on HTTP/1's header read timeout (30 seconds): a
    // client that opens a connection and sends nothing cannot hold it.
    builder.http1().timer(TokioTimer::new());
    builder.http2().timer(TokioTimer::new());
    let serve = {
        let shared = shared.clone();
        move |_: &A, io: A::Connection, addr: PeerAddr, admission: Admission| {
            let connection = Arc::new(HttpConnection {
                service: make(&addr),
                setup: setup.clone(),
                server: shared.clone(),
                http2: AtomicBool::new(false),
                linger: Arc::new(AtomicBool::new(false)),
                cut_off: CancellationToken::new(),
            });
            shared
                .tracker
                .spawn(connection.run(io, builder.clone(), admission));
        }
    };
    Server::start(acceptor, limit, shared, serve)
}

/// What every connection of one HTTP server shares.
struct HttpSetup {
    health_path: String,
    /// The origins whose pages may call from a browser (CORS); `None`: only
    /// pages of the server's own origin.
    cors: Option<Origins>,
    /// Requests in flight across every connection; closed when the drain
    /// begins, so waiting on it waits for the last of them.
    requests: TaskTracker,
}

/// Runs hyper's background work (HTTP/2 streams) on the server's tracker, so
/// a shutdown waits for it too.
#[derive(Clone)]
struct TrackedExecutor(TaskTracker);

impl<F> hyper::rt::Executor<F> for TrackedExecutor
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    fn execute(&self, future: F) {
        self.0.spawn(future);
    }
}

/// One accepted connection: its service and its part in the drain.
struct HttpConnection<S> {
    service: S,
    setup: Arc<HttpSetup>,
    server: Arc<ServerShared>,
    /// Set once a request arrived over HTTP/2.
    http2: AtomicBool,
    /// Set while the last HTTP/1 request's body may be left unread: closing
    /// then lingers (see `linger`).
    linger: Arc<AtomicBool>,
    /// Fired when the grace period is over: handlers still running stop.
    cut_off: CancellationToken,
}

/// A whole body: what the health endpoint and JSON-RPC answer with.
pub(crate) type Body = Full<Bytes>;

impl<S: HttpService> HttpConnection<S> {
    /// Serves the connection until the client leaves or the server's drain
    /// closes it (see [`HttpListener`]'s docs).
    async fn run<I>(
        self: Arc<Self>,
        io: I,
        builder: auto::Builder<TrackedExecutor>,
        _admission: Admission,
    ) where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let service = {
            let this = self.clone();
            hyper::service::service_fn(move |request| {
                let this = this.clone();
                async move { Ok::<_, Infallible>(this.handle(request).await) }
            })
        };
        let io = TokioIo::new(Linger::new(io, self.linger.clone()));
        let connection = builder.serve_connection(io, service);
        tokio::pin!(connection);
        let server = &self.server;
        // One token to watch while serving: `stop` fires for a shutdown and
        // for a drop of the server (which fires `abort` first).
        tokio::select! {
            biased;
            ended = connection.as_mut() => return log_end(ended),
            () = server.stop.cancelled() => {}
        }
        if server.abort.is_cancelled() {
            return self.cut_off.cancel();
        }
        self.setup.requests.close();
        let now = Instant::now();
        let deadline = now + server.grace();
        if !self.http2.load(Ordering::Acquire) {
            // HTTP/1: open while the server drains, for one last request
            // (its response says `Connection: close`), and at least a
            // moment: a request already on its way (on a connection taken
            // from the backlog, or a balancer's on a kept-alive one) is
            // answered rather than cut off.
            let linger = (now + DRAIN_LINGER).min(deadline);
            tokio::select! {
                biased;
                () = server.abort.cancelled() => return self.cut_off.cancel(),
                ended = connection.as_mut() => return log_end(ended),
                () = crate::rt::sleep_until(deadline) => return self.cut_off.cancel(),
                () = async {
                    self.setup.requests.wait().await;
                    crate::rt::sleep_until(linger).await;
                } => {}
            }
        }
        connection.as_mut().graceful_shutdown();
        tokio::select! {
            biased;
            () = server.abort.cancelled() => {}
            ended = connection.as_mut() => log_end(ended),
            () = crate::rt::sleep_until(deadline) => {}
        }
        self.cut_off.cancel();
    }

    /// Answers one request; the server's drain adds `Connection: close`
    /// (HTTP/1) and its end cuts a running handler off: with `503` on
    /// HTTP/2, by closing the connection on HTTP/1.
    async fn handle(&self, request: Request<Incoming>) -> Response<S::Body> {
        let _in_flight = self.setup.requests.token();
        let version = request.version();
        let has_body = !request.body().is_end_stream();
        if version == Version::HTTP_2 {
            self.http2.store(true, Ordering::Release);
        }
        let mut response = if version == Version::HTTP_2 {
            // HTTP/2 streams run on tasks of their own: each watches the
            // cut-off.
            tokio::select! {
                biased;
                () = self.cut_off.cancelled() => text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server stopped before the request was answered\n",
                ).map(S::Body::from),
                response = self.route(request) => response,
            }
        } else {
            // An HTTP/1 request runs inside its connection's future, which
            // `run` drops at the cut-off: no token to register with.
            self.route(request).await
        };
        // A body left unread (413) leaves the connection out of step.
        let last =
            self.server.stop.is_cancelled() || response.status() == StatusCode::PAYLOAD_TOO_LARGE;
        if version < Version::HTTP_2 {
            if last {
                response
                    .headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            // Refusals (413, 401, 415, ...) answer before the body is read:
            // if the connection closes after one, it lingers.
            let unread = has_body && response.status().as_u16() >= 400;
            self.linger.store(unread, Ordering::Release);
        }
        response
    }

    async fn route(&self, request: Request<Incoming>) -> Response<S::Body> {
        let Some(origin) = cors::allowed_origin(self.setup.cors.as_ref(), &request) else {
            return self.answer(request).await;
        };
        let mut response = match cors::preflight(&request) {
            Some(preflight) => preflight.map(S::Body::from),
            None => self.answer(request).await,
        };
        cors::allow(origin, &mut response);
        response
    }

    async fn answer(&self, request: Request<Incoming>) -> Response<S::Body> {
        if request.uri().path() == self.setup.health_path {
            self.health(request.method()).map(S::Body::from)
        } else {
            self.service.call(request).await
        }
    }

    fn health(&self, method: &Method) -> Response<Body> {
        if method != Method::GET && method != Method::HEAD {
            return not_allowed("GET, HEAD");
        }
        if self.server.stop.is_cancelled() {
            text(StatusCode::SERVICE_UNAVAILABLE, "draining\n")
        } else {
            text(StatusCode::OK, "ok\n")
        }
    }
}

fn log_end(ended: Result<(), Box<dyn std::error::Error + Send + Sync>>) {
    if let Err(e) = ended {
        tracing::debug!(error = %e, "an HTTP connection failed");
    }
}
