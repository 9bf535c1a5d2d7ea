//! Run with: cargo run --example quickstart
//!
//! Two peers in one process over an in-memory pair: typed calls, a typed
//! domain error decoded on the calling side, a notification, and a server
//! handler that calls back into its client while it runs.

use jsonrpc_runtime::{
    peer::CallOptions, CallError, Context, ErrorObject, Peer, Router, RpcError, Transport,
};
use serde::Deserialize;

#[path = "support/logging.rs"]
mod logging;

#[derive(Deserialize)]
struct DivParams {
    a: f64,
    b: f64,
}

/// The calculator's domain error, sent as code -32010.
#[derive(Debug)]
struct DivisionByZero;

impl RpcError for DivisionByZero {
    fn into_error_object(self) -> ErrorObject {
        ErrorObject::new(-32010, "Division by zero")
    }
    fn from_error_object(error: &ErrorObject) -> Option<Self> {
        (error.code.0 == -32010).then_some(DivisionByZero)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let server_routes = Router::new()
        .request("add", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a + b)
        })
        .request("divide", |p: DivParams, _: Context| async move {
            if p.b == 0.0 {
                Err(DivisionByZero)
            } else {
                Ok(p.a / p.b)
            }
        })
        .notification("log", |(message,): (String,), _: Context| async move {
            println!("server log: {message}");
        })
        .request("greet", |(): (), ctx: Context| async move {
            // Ask the client for its name while handling this request.
            let name: String = ctx.peer().call("whoami", ()).await?;
            Ok::<_, ErrorObject>(format!("hello, {name}"))
        });
    let client_routes = Router::new().request("whoami", |(): (), _: Context| async {
        Ok::<_, ErrorObject>("quickstart client".to_owned())
    });

    let (client_side, server_side) = Transport::pair(64);
    let server = Peer::builder().router(server_routes).spawn(server_side);
    let client = Peer::builder().router(client_routes).spawn(client_side);

    let sum: i64 = client.call("add", (2, 3)).await?;
    println!("add(2, 3) = {sum}");

    let quotient: f64 = client
        .call("divide", serde_json::json!({"a": 7.0, "b": 2.0}))
        .await?;
    println!("divide(7, 2) = {quotient}");

    let options = CallOptions::default();
    match client
        .call_with::<f64, DivisionByZero>("divide", (1.0, 0.0), options)
        .await
    {
        Err(CallError::Domain(e)) => println!("divide(1, 0) failed with a typed error: {e:?}"),
        other => println!("divide(1, 0) unexpectedly gave {other:?}"),
    }

    client.notify("log", ("a notification",)).await?;
    let greeting: String = client.call("greet", ()).await?;
    println!("greet() = {greeting:?}");

    client.close(std::time::Duration::from_secs(1)).await;
    println!("server saw: {}", server.closed().await);
    Ok(())
}
