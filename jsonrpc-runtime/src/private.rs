//! Items the `#[rpc]` and `#[derive(RpcError)]` expansions call. Not part of
//! the public API: names and signatures change without notice.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use serde;
pub use serde_json;

pub use crate::router::{Route, RouteTable};
use crate::{CallError, CallOptions, ErrorObject, Peer, Router, RpcError, SendError};

/// A router serving one generated table.
pub fn router_from_table(table: impl RouteTable) -> Router {
    Router::from_table(table)
}

/// The generated client's request call.
pub async fn call<R, E>(
    peer: &Peer,
    method: &str,
    params: impl Serialize,
) -> Result<R, CallError<E>>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
{
    peer.call_with(method, params, CallOptions::default()).await
}

/// The generated client's notification.
pub async fn notify(peer: &Peer, method: &str, params: impl Serialize) -> Result<(), SendError> {
    peer.notify(method, params).await
}

/// A handler result that cannot fail.
pub fn infallible<T>(value: T) -> Result<T, core::convert::Infallible> {
    Ok(value)
}

/// An error object with no data.
pub fn error(code: i64, message: &'static str) -> ErrorObject {
    ErrorObject::new(code, message)
}

/// An error object whose data is `data`. Data that cannot be encoded is
/// left out rather than losing the error itself.
pub fn error_with_data(code: i64, message: &'static str, data: Value) -> ErrorObject {
    let object = ErrorObject::new(code, message);
    match object.clone().with_data(&data) {
        Ok(with_data) => with_data,
        Err(_) => object,
    }
}

/// One value as JSON for an error's data (`null` if it cannot be encoded).
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The error's data as JSON (`null` when absent or unreadable).
pub fn data(error: &ErrorObject) -> Value {
    error
        .data_as::<Value>()
        .ok()
        .flatten()
        .unwrap_or(Value::Null)
}

/// Decodes `value` (a missing member reads as `null`).
pub fn from_value<T: DeserializeOwned>(value: Option<&Value>) -> Option<T> {
    T::deserialize(value.unwrap_or(&Value::Null)).ok()
}

/// The generated client's call with a progress token.
pub fn call_with_progress<R, E, P>(
    peer: &Peer,
    method: &str,
    params: impl Serialize,
) -> Result<crate::ProgressCall<R, E, P>, CallError<E>>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
    P: DeserializeOwned,
{
    peer.call_with_progress(method, params, CallOptions::default())
}

/// The generated client's call asking for partial results.
pub fn call_partial_results<R, E, P>(
    peer: &Peer,
    method: &str,
    params: impl Serialize,
) -> Result<crate::ProgressCall<R, E, P>, CallError<E>>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
    P: DeserializeOwned,
{
    peer.call_partial_results(method, params, CallOptions::default())
}
