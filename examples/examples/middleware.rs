//! Run with: cargo run --example middleware
//!
//! Middleware on routes is tower's: `Router::layer` wraps every route
//! registered so far in any tower layer. Here a timeout (tower's own), a
//! layer of our own that logs each request and its outcome, and the
//! runtime's `Metrics` layer, whose Prometheus text is printed at the end.
//! Outbound calls take layers too (`Peer::builder().outbound_layer(..)`).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use jsonrpc_runtime::router::{Metrics, RpcRequest};
use jsonrpc_runtime::{CallError, Context, ErrorObject, Peer, Router, Transport};
use tower::{Layer, Service};

#[path = "support/logging.rs"]
mod logging;

/// A layer that prints each request's method, outcome and time.
#[derive(Clone)]
struct LogLayer;

impl<S> Layer<S> for LogLayer {
    type Service = Log<S>;
    fn layer(&self, inner: S) -> Log<S> {
        Log(inner)
    }
}

#[derive(Clone)]
struct Log<S>(S);

impl<S> Service<RpcRequest> for Log<S>
where
    S: Service<RpcRequest> + Send,
    S::Future: Send + 'static,
    S::Error: std::fmt::Display,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: RpcRequest) -> Self::Future {
        let method = request.method.clone();
        let started = Instant::now();
        let answer = self.0.call(request);
        Box::pin(async move {
            let outcome = answer.await;
            let how = match &outcome {
                Ok(_) => "answered".to_owned(),
                Err(e) => format!("failed: {e}"),
            };
            println!("[log] {method}: {how} in {:?}", started.elapsed());
            outcome
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let metrics = Metrics::new();
    let router = Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("slow", |(): (), _: Context| async move {
            tokio::time::sleep(Duration::from_secs(10)).await;
            Ok::<_, ErrorObject>("done")
        })
        // The first layer added is the innermost.
        .layer(tower::timeout::TimeoutLayer::new(Duration::from_millis(
            200,
        )))
        .layer(LogLayer)
        .layer(metrics.clone());

    let (client_side, server_side) = Transport::pair(64);
    let _server = Peer::builder().router(router).spawn(server_side);
    let client = Peer::spawn(client_side);

    let sum: i64 = client.call("add", [2, 3]).await?;
    println!("add(2, 3) = {sum}");
    match client.call::<String>("slow", ()).await {
        Err(CallError::Rpc(error)) => println!("slow: the timeout answered {error}"),
        other => return Err(format!("slow should time out, got {other:?}").into()),
    }

    // The counters of the Prometheus text (the histograms follow them).
    let text = metrics.render_prometheus();
    for line in text
        .lines()
        .filter(|l| l.starts_with("jsonrpc_requests_total"))
    {
        println!("{line}");
    }
    Ok(())
}
