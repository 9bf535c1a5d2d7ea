//! The first half: jsonrpsee's WebSocket client (`WsClientBuilder`,
//! `SubscriptionClientT::subscribe`) against `spec_server --ws`, whose
//! `subscribe_ticks {interval_ms, count}` sends `ticks` 1, 2, 3, .. and
//! ends the subscription with a closing notification (`"error": null`).

use jsonrpsee_core::client::{
    ClientT, Error as ClientError, Subscription, SubscriptionClientT, SubscriptionCloseReason,
    SubscriptionKind,
};
use jsonrpsee_core::traits::ToRpcParams;
use jsonrpsee_core::DeserializeOwned;
use jsonrpsee_ws_client::types::SubscriptionId;
use jsonrpsee_ws_client::{WsClient, WsClientBuilder};
use serde_json::{json, Map, Value};

use crate::{expect_eq, within, Checks, Outcome};

/// Items of the finite subscription.
const FINITE: u64 = 1000;
/// Items read from the endless one before unsubscribing.
const ENDLESS_TAKEN: u64 = 100;
/// Subscriptions open at once on one client.
const CONCURRENT: u64 = 50;

/// `subscribe_ticks`'s params by name.
fn by_name(interval_ms: impl Into<Value>, count: u64) -> Map<String, Value> {
    let params = json!({"interval_ms": interval_ms.into(), "count": count});
    params.as_object().cloned().unwrap_or_default()
}

async fn subscribe(
    client: &WsClient,
    params: impl ToRpcParams + Send,
) -> Result<Subscription<u64>, String> {
    within(
        "subscribe_ticks",
        client.subscribe::<u64, _>("subscribe_ticks", params, "unsubscribe_ticks"),
    )
    .await?
    .map_err(|e| format!("subscribe_ticks: {e}"))
}

async fn request<T: DeserializeOwned>(
    client: &WsClient,
    method: &str,
    params: impl ToRpcParams + Send,
) -> Result<T, String> {
    within(method, client.request::<T, _>(method, params))
        .await?
        .map_err(|e| format!("{method}: {e}"))
}

/// The id spec_server gave the subscription.
fn id_of(sub: &Subscription<u64>) -> Result<SubscriptionId<'static>, String> {
    match sub.kind() {
        SubscriptionKind::Subscription(id) => Ok(id.clone()),
        other => Err(format!("not a subscription: {other:?}")),
    }
}

/// Reads the items `from..=to`, in order.
async fn expect_items(sub: &mut Subscription<u64>, from: u64, to: u64, what: &str) -> Outcome {
    for want in from..=to {
        match within(what, sub.next()).await? {
            Some(Ok(n)) => expect_eq(what, n, want)?,
            Some(Err(e)) => return Err(format!("{what}: item {want} did not decode: {e}")),
            None => {
                return Err(format!(
                    "{what}: the stream ended before item {want} ({:?})",
                    sub.close_reason()
                ))
            }
        }
    }
    Ok(())
}

/// The stream ends (`None`): jsonrpsee read the closing notification. Its
/// client tells no server's close from a lost connection (both are
/// `ConnectionClosed`), but a stream that could not keep up says `Lagged`.
async fn expect_end(sub: &mut Subscription<u64>, what: &str) -> Outcome {
    match within(what, sub.next()).await? {
        None => match sub.close_reason() {
            Some(SubscriptionCloseReason::ConnectionClosed) => Ok(()),
            other => Err(format!("{what}: the stream ended with {other:?}")),
        },
        Some(item) => Err(format!("{what}: expected the end, got {item:?}")),
    }
}

async fn finite(client: &WsClient) -> Outcome {
    let mut ticks = subscribe(client, (0, FINITE)).await?;
    let id = id_of(&ticks)?;
    expect_items(&mut ticks, 1, FINITE, "ticks [0, 1000]").await?;
    expect_end(&mut ticks, "after tick 1000").await?;
    // By name, with an interval.
    let mut named = subscribe(client, by_name(1, 3)).await?;
    expect_items(&mut named, 1, 3, "ticks {interval_ms: 1, count: 3}").await?;
    expect_end(&mut named, "after tick 3").await?;
    // The server has forgotten the finished one.
    let gone: bool = request(client, "unsubscribe_ticks", [id]).await?;
    expect_eq("unsubscribe_ticks of a finished subscription", gone, false)
}

async fn endless(client: &WsClient) -> Outcome {
    let mut ticks = subscribe(client, (1, 0)).await?;
    let id = id_of(&ticks)?;
    expect_items(&mut ticks, 1, ENDLESS_TAKEN, "endless ticks").await?;
    within("unsubscribe", ticks.unsubscribe())
        .await?
        .map_err(|e| format!("unsubscribe: {e}"))?;
    // jsonrpsee sent `unsubscribe_ticks [id]` without reading the answer;
    // asked again, the server no longer has the subscription.
    let again: bool = request(client, "unsubscribe_ticks", [id]).await?;
    expect_eq(
        "unsubscribe_ticks after jsonrpsee's unsubscribe",
        again,
        false,
    )?;
    let difference: i64 = request(client, "subtract", (42, 23)).await?;
    expect_eq("subtract [42, 23] after unsubscribing", difference, 19)
}

/// One of the concurrent subscriptions: `100 + i` items, a call after
/// every 25th.
async fn one_of_many(client: &WsClient, i: u64) -> Outcome {
    let count = 100 + i;
    let mut ticks = if i.is_multiple_of(2) {
        subscribe(client, (0, count)).await?
    } else {
        subscribe(client, by_name(0, count)).await?
    };
    let what = format!("subscription {i}");
    for want in 1..=count {
        expect_items(&mut ticks, want, want, &what).await?;
        if want % 25 == 0 {
            let difference: i64 = request(client, "subtract", (want, i)).await?;
            expect_eq(
                &format!("{what}: subtract"),
                difference,
                want as i64 - i as i64,
            )?;
        }
    }
    expect_end(&mut ticks, &what).await
}

async fn concurrent(client: &WsClient) -> Outcome {
    let all = (0..CONCURRENT).map(|i| one_of_many(client, i));
    for outcome in futures_util::future::join_all(all).await {
        outcome?;
    }
    Ok(())
}

/// A subscribe call answered with an error, as jsonrpsee's `Error::Call`.
async fn refused(client: &WsClient, params: impl ToRpcParams + Send, what: &str) -> Outcome {
    let answer = within(
        what,
        client.subscribe::<u64, _>("subscribe_ticks", params, "unsubscribe_ticks"),
    )
    .await?;
    match answer {
        Err(ClientError::Call(error)) => {
            expect_eq(&format!("{what}: code"), error.code(), -32602)?;
            if error.message().starts_with("Invalid params") {
                Ok(())
            } else {
                Err(format!("{what}: message {:?}", error.message()))
            }
        }
        other => Err(format!("{what}: expected Error::Call, got {other:?}")),
    }
}

async fn bad_params(client: &WsClient) -> Outcome {
    refused(client, ("x", 1), "subscribe_ticks [\"x\", 1]").await?;
    refused(
        client,
        by_name("x", 1),
        "subscribe_ticks {interval_ms: \"x\"}",
    )
    .await?;
    let difference: i64 = request(client, "subtract", (23, 42)).await?;
    expect_eq("subtract [23, 42] after the errors", difference, -19)
}

pub(crate) async fn check_all(bin: &str, checks: &mut Checks) -> Outcome {
    let (child, url) = crate::common::start_server(bin, "--ws").await?;
    let client = within(
        "connecting jsonrpsee's client",
        WsClientBuilder::default()
            .request_timeout(crate::WAIT)
            .build(&url),
    )
    .await?
    .map_err(|e| format!("cannot connect to {url}: {e}"))?;
    checks
        .run(
            "jsonrpsee client: a finite subscription (1000 ticks) in order, then the stream ends on spec_server's close; by name too",
            finite(&client),
        )
        .await?;
    checks
        .run(
            "jsonrpsee client: an endless subscription unsubscribed (spec_server drops it), calls still answered",
            endless(&client),
        )
        .await?;
    checks
        .run(
            &format!("jsonrpsee client: {CONCURRENT} concurrent subscriptions on one client, each in order, calls interleaved"),
            concurrent(&client),
        )
        .await?;
    checks
        .run(
            "jsonrpsee client: a subscribe with bad params is Error::Call -32602 (by position and by name)",
            bad_params(&client),
        )
        .await?;
    drop(client);
    checks
        .run(
            "SIGTERM: spec_server drained and exited 0",
            crate::common::stop_server(child),
        )
        .await
}
