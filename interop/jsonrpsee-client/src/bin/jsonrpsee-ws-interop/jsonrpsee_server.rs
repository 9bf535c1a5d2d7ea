//! The jsonrpsee server the second half's client subscribes to, written as
//! jsonrpsee's examples write one: an `RpcModule` with `register_method`
//! and `register_subscription`, served over WebSocket by `Server`.
//!
//! * `add [a, b]` (or `{a, b}`): `a + b`.
//! * `sub_count [n]` (or `{n}`): `count` items 1..=n, then the closing
//!   notification with `"error": null` (the handler returns
//!   `SubscriptionCloseResponse::NotifErr` of a JSON `null`).
//! * `sub_count_failing [n]`: the same items, then the handler returns
//!   `Err(..)` of a string, jsonrpsee's usual way to end a subscription:
//!   the closing notification's `error` is that string.
//! * `sub_count_quiet [n]`: the same items, then the handler returns
//!   `Ok(())`, which jsonrpsee ends with no notification at all.
//! * `sub_endless`: `endless` items 1, 2, 3, .., one a millisecond, until
//!   the subscription closes; it then reports its id and how it closed on
//!   the channel [`start`] hands back.
//!
//! Params are taken by position or by name, as the servers jsonrpsee's
//! `#[rpc(server)]` generates take them.

use std::time::Duration;

use jsonrpsee_core::SubscriptionError;
use jsonrpsee_server::types::error::{INVALID_PARAMS_CODE, INVALID_PARAMS_MSG};
use jsonrpsee_server::types::{ErrorObjectOwned, Params};
use jsonrpsee_server::{
    PendingSubscriptionSink, RandomStringIdProvider, RpcModule, Server, ServerConfigBuilder,
    ServerHandle, SubscriptionCloseResponse, SubscriptionSink,
};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

/// How a `sub_endless` subscription ended on the server.
#[derive(Debug, PartialEq)]
pub(crate) enum Closed {
    /// `sink.closed()` resolved: unsubscribed, or the connection closed.
    Closed,
    /// A send failed: the connection was gone.
    SendFailed,
}

/// A `sub_endless` subscription's id (as JSON) and how it ended.
pub(crate) type Ended = (Value, Closed);

/// A running jsonrpsee server.
pub(crate) struct Running {
    pub(crate) url: String,
    pub(crate) handle: ServerHandle,
    /// One message per `sub_endless` subscription, as it ends.
    pub(crate) endless: mpsc::UnboundedReceiver<Ended>,
}

impl Running {
    /// Stops the server and waits until it has.
    pub(crate) async fn stop(self) -> Result<(), String> {
        self.handle
            .stop()
            .map_err(|e| format!("stopping the jsonrpsee server: {e}"))?;
        crate::within("the jsonrpsee server stopping", self.handle.stopped()).await
    }
}

/// Starts a jsonrpsee WebSocket server on a loopback port, giving
/// subscriptions jsonrpsee's default ids (random integers) or, with
/// `string_ids`, random strings (`RandomStringIdProvider`).
pub(crate) async fn start(string_ids: bool) -> Result<Running, String> {
    let (tx, endless) = mpsc::unbounded_channel();
    let config = ServerConfigBuilder::default();
    let config = if string_ids {
        config.set_id_provider(RandomStringIdProvider::new(16))
    } else {
        config
    };
    let server = Server::builder()
        .set_config(config.build())
        .build("127.0.0.1:0")
        .await
        .map_err(|e| format!("jsonrpsee server: cannot bind: {e}"))?;
    let addr = server
        .local_addr()
        .map_err(|e| format!("jsonrpsee server: {e}"))?;
    let handle = server.start(module(tx)?);
    Ok(Running {
        url: format!("ws://{addr}/"),
        handle,
        endless,
    })
}

fn invalid_params(detail: &str) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(INVALID_PARAMS_CODE, INVALID_PARAMS_MSG, Some(detail))
}

/// The members `names` of the params, by position or by name.
fn numbers<T: jsonrpsee_core::DeserializeOwned>(
    params: &Params<'_>,
    names: &[&str],
) -> Result<Vec<T>, ErrorObjectOwned> {
    let values: Vec<Value> = if params.is_object() {
        let mut object: Map<String, Value> = params.parse()?;
        names
            .iter()
            .map(|name| object.remove(*name).unwrap_or(Value::Null))
            .collect()
    } else {
        params.parse()?
    };
    if values.len() != names.len() {
        return Err(invalid_params(&format!("expected {names:?}")));
    }
    values
        .into_iter()
        .map(|v| serde_json::from_value(v).map_err(|e| invalid_params(&e.to_string())))
        .collect()
}

fn raw(n: u64) -> Box<RawValue> {
    RawValue::from_string(n.to_string()).expect("a number is JSON")
}

/// `[n]` or `{n}`, or the subscribe call refused with -32602 (as jsonrpsee's
/// generated servers refuse it).
async fn accept_count(
    params: &Params<'_>,
    pending: PendingSubscriptionSink,
) -> Option<(u64, SubscriptionSink)> {
    match numbers::<u64>(params, &["n"]) {
        Ok(n) => Some((n[0], pending.accept().await.ok()?)),
        Err(e) => {
            pending.reject(e).await;
            None
        }
    }
}

/// Sends 1..=n; false if the subscription closed first.
async fn send_count(sink: &SubscriptionSink, n: u64) -> bool {
    for i in 1..=n {
        if sink.send(raw(i)).await.is_err() {
            return false;
        }
    }
    true
}

/// Until the subscription closes, an item a millisecond.
async fn send_endless(sink: SubscriptionSink, tx: &mpsc::UnboundedSender<Ended>) {
    let mut n = 0;
    let closed = loop {
        n += 1;
        tokio::select! {
            biased;
            () = sink.closed() => break Closed::Closed,
            sent = sink.send(raw(n)) => {
                if sent.is_err() {
                    break Closed::SendFailed;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let id = serde_json::to_value(sink.subscription_id()).unwrap_or_default();
    let _ = tx.send((id, closed));
}

fn module(
    tx: mpsc::UnboundedSender<Ended>,
) -> Result<RpcModule<mpsc::UnboundedSender<Ended>>, String> {
    let mut module = RpcModule::new(tx);
    let fail = |e: jsonrpsee_core::RegisterMethodError| format!("jsonrpsee module: {e}");
    module
        .register_method("add", |params, _, _| {
            numbers::<i64>(&params, &["a", "b"]).map(|ab| ab[0] + ab[1])
        })
        .map_err(fail)?;
    module
        .register_subscription(
            "sub_count",
            "count",
            "unsub_count",
            |params, pending, _, _| async move {
                let Some((n, sink)) = accept_count(&params, pending).await else {
                    return SubscriptionCloseResponse::None;
                };
                if !send_count(&sink, n).await {
                    return SubscriptionCloseResponse::None;
                }
                let null = RawValue::from_string("null".into()).expect("null is JSON");
                SubscriptionCloseResponse::NotifErr(SubscriptionError::from_json(null))
            },
        )
        .map_err(fail)?;
    module
        .register_subscription(
            "sub_count_failing",
            "count",
            "unsub_count_failing",
            |params, pending, _, _| async move {
                let Some((n, sink)) = accept_count(&params, pending).await else {
                    return Ok(());
                };
                send_count(&sink, n).await;
                Err::<(), SubscriptionError>(format!("counted to {n}").into())
            },
        )
        .map_err(fail)?;
    module
        .register_subscription(
            "sub_count_quiet",
            "count",
            "unsub_count_quiet",
            |params, pending, _, _| async move {
                if let Some((n, sink)) = accept_count(&params, pending).await {
                    send_count(&sink, n).await;
                }
                Ok::<(), SubscriptionError>(())
            },
        )
        .map_err(fail)?;
    module
        .register_subscription(
            "sub_endless",
            "endless",
            "unsub_endless",
            |_, pending, tx, _| async move {
                if let Ok(sink) = pending.accept().await {
                    send_endless(sink, &tx).await;
                }
                Ok::<(), SubscriptionError>(())
            },
        )
        .map_err(fail)?;
    Ok(module)
}
