//! Items the `#[rpc]` and `#[derive(RpcError)]` expansions call. Not part of
//! the public API: names and signatures change without notice.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

pub use serde;
pub use serde_json;

pub use crate::router::{Route, RouteTable};
use crate::{
    peer::{CallOptions, SendError},
    CallError, ErrorObject, Peer, Router, RpcError,
};

/// A router serving one generated table.
pub fn router_from_table(table: impl RouteTable) -> Router {
    Router::from_table(table)
}

/// What a trait's hidden `__jsonrpc_router` returns, its `#[rpc]`
/// supertraits' included: its router when given the implementation
/// (`into_router`), its method descriptions when not (`openrpc_methods`).
/// One function does both so that a supertrait that is not `#[rpc]` is one
/// error, at the supertrait.
pub type Served = (Router, Vec<crate::openrpc::MethodDoc>);

/// `Trait<A, B>` from the trait's name and its type arguments' names.
pub fn service_name(name: &str, args: &[&str]) -> String {
    if args.is_empty() {
        name.to_owned()
    } else {
        format!("{name}<{}>", args.join(", "))
    }
}

/// A trait's own part with each supertrait's added: routes through
/// `Router::merge_supertrait` (a trait reached twice is served once),
/// descriptions skipping a method already listed.
#[track_caller]
pub fn with_supertraits<const N: usize>(own: Served, supertraits: [Served; N]) -> Served {
    let (mut router, mut methods) = own;
    for (sub_router, sub_methods) in supertraits {
        router = router.merge_supertrait(sub_router);
        for method in sub_methods {
            if !methods.iter().any(|m| m.name() == method.name()) {
                methods.push(method);
            }
        }
    }
    (router, methods)
}

/// The generated client's notification.
pub async fn notify(peer: &Peer, method: &str, params: impl Serialize) -> Result<(), SendError> {
    peer.notify(method, params).await
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

/// The marker of [`Field`]'s impl through serde.
#[derive(Debug)]
pub enum Serde {}

/// The marker of [`Field`]'s second impl, which no type meets (nothing
/// implements [`Never`]): with two candidates and the marker left to be
/// inferred, rustc reports a type that meets neither as one unmet
/// `Field`, with the message below, instead of each of serde's traits it
/// lacks (it reports an impl's bounds when exactly one impl can apply).
#[derive(Debug)]
pub enum Unreachable {}

/// Implemented by no type.
pub trait Never {}

/// An error field's way to and from JSON: through serde, reported once
/// when the type has neither (see [`Unreachable`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an error's data: it must implement serde's `Serialize` and `Deserialize`",
    label = "derive `Serialize` and `Deserialize` for this type, or keep it out of the error enum",
    note = "a variant's fields are sent as the error object's `data` and read back on the calling side"
)]
pub trait Field<M>: Sized {
    /// The value as JSON (`null` if it cannot be encoded).
    fn to_json(&self) -> Value;
    /// The value from JSON (a missing member reads as `null`).
    fn from_json(value: Option<&Value>) -> Option<Self>;
}

impl<T: Serialize + DeserializeOwned> Field<Serde> for T {
    fn to_json(&self) -> Value {
        to_value(self)
    }
    fn from_json(value: Option<&Value>) -> Option<Self> {
        from_value(value)
    }
}

// Never used: no type implements `Never`.
impl<T: Never> Field<Unreachable> for T {
    fn to_json(&self) -> Value {
        Value::Null
    }
    fn from_json(_: Option<&Value>) -> Option<Self> {
        None
    }
}

/// The codec of an error field of type `T`: one call per field, at its
/// type, in both directions, so that a field without serde is one error
/// (rustc reports identical errors once). Its methods have no bounds, so
/// their calls add none.
pub fn field<T: Field<M>, M>() -> FieldCodec<T> {
    FieldCodec {
        encode: T::to_json,
        decode: T::from_json,
    }
}

/// See [`field`].
#[derive(Debug)]
pub struct FieldCodec<T> {
    encode: fn(&T) -> Value,
    decode: fn(Option<&Value>) -> Option<T>,
}

impl<T> FieldCodec<T> {
    /// The field as JSON.
    pub fn encode(&self, value: &T) -> Value {
        (self.encode)(value)
    }
    /// The field from JSON.
    pub fn decode(&self, value: Option<&Value>) -> Option<T> {
        (self.decode)(value)
    }
}

/// The generated client's call with a progress token.
pub fn call_with_progress<R, E, P>(
    peer: &Peer,
    method: &str,
    params: impl Serialize,
) -> Result<crate::peer::ProgressCall<R, E, P>, CallError<E>>
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
) -> Result<crate::peer::ProgressCall<R, E, P>, CallError<E>>
where
    R: DeserializeOwned + Send + 'static,
    E: RpcError + Send + 'static,
    P: DeserializeOwned,
{
    peer.call_partial_results(method, params, CallOptions::default())
}

/// A client's request: the [`Call`](crate::peer::Call) builder, with no bounds so
/// that unmet ones are reported once, at the trait.
pub fn request<'a, R, E, P>(
    peer: &'a Peer,
    method: &'a str,
    params: P,
) -> crate::peer::Call<'a, R, E, P> {
    crate::peer::Call::new(peer, method, params)
}

/// A client's subscription: subscribes with the default options.
pub async fn subscribe<T, E>(
    peer: &Peer,
    method: &str,
    params: impl serde::Serialize,
    unsubscribe: &str,
) -> Result<crate::peer::Subscription<T>, CallError<E>>
where
    E: RpcError + Send + 'static,
{
    peer.subscribe_with(method, params, unsubscribe, Default::default())
        .await
}

/// What a method's return type means on the wire, decided by the compiler:
/// `Split<true>` for a `Result` (however it is written: an alias works),
/// `Split<false>` for any other value, which cannot fail.
pub trait Split<const RESULT: bool> {
    /// The result type.
    type Ok;
    /// The domain error type.
    type Err;
    /// The value as a result.
    fn split(self) -> Result<Self::Ok, Self::Err>;
}

impl<T, E> Split<true> for Result<T, E> {
    type Ok = T;
    type Err = E;
    fn split(self) -> Result<T, E> {
        self
    }
}

impl<T> Split<false> for T {
    type Ok = T;
    type Err = core::convert::Infallible;
    fn split(self) -> Result<T, core::convert::Infallible> {
        Ok(self)
    }
}

/// `Probe::<T>::IS_RESULT` is true exactly when `T` is a `Result`: the
/// inherent constant below is preferred to [`NotResult`]'s where it
/// applies.
#[derive(Debug)]
pub struct Probe<T>(core::marker::PhantomData<T>);

impl<T, E> Probe<Result<T, E>> {
    /// A `Result`.
    pub const IS_RESULT: bool = true;
}

/// The fallback for [`Probe`]: not a `Result`.
pub trait NotResult {
    /// Not a `Result`.
    const IS_RESULT: bool = false;
}

impl<T> NotResult for Probe<T> {}

/// Checks at compile time that `R`, written `Result<T, E>`, is the
/// `Result` it looks like.
pub fn assert_split<R, T, E, const RESULT: bool>()
where
    R: Split<RESULT, Ok = T, Err = E>,
{
}

/// A route's reply from the handler's return value.
pub fn split<R: Split<RESULT>, const RESULT: bool>(value: R) -> Result<R::Ok, R::Err> {
    value.split()
}

/// The value of an optional argument left out.
pub trait Absent {
    /// The value when absent.
    fn absent() -> Self;
}

impl<T> Absent for Option<T> {
    fn absent() -> Self {
        None
    }
}

/// `serde(default = ...)` for optional arguments: `None`, with no
/// `Default` bound on what the option holds.
pub fn absent<T: Absent>() -> T {
    T::absent()
}

/// The params of a generated method without arguments: absent, `null`,
/// `[]`, or an object whose members are ignored, as a method with
/// arguments ignores members it does not name (a client's progress token,
/// `_meta` or `workDoneToken`, travels in them).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoParams;

impl<'de> serde::Deserialize<'de> for NoParams {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoParams)
    }
}

impl<'de> serde::de::Visitor<'de> for NoParams {
    type Value = NoParams;

    fn expecting(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("no params: absent, null, [] or an object")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<NoParams, E> {
        Ok(NoParams)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<NoParams, E> {
        Ok(NoParams)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<NoParams, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(NoParams)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<NoParams, A::Error> {
        match seq.next_element::<serde::de::IgnoredAny>()? {
            None => Ok(NoParams),
            Some(_) => Err(serde::de::Error::invalid_length(1, &self)),
        }
    }
}

/// Marks a method declared without `progress = T`.
#[derive(Debug)]
pub enum NoProgress {}

/// The context argument a handler takes: `Context`, or `TypedContext<P>`
/// for a method declared with `progress = P`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the context argument of this method",
    label = "a method declared with `progress = T` takes `TypedContext<T>`, any other takes `Context`",
    note = "`TypedContext<T>` checks the type of each progress report against the method's `progress = T`"
)]
pub trait Inject<P> {
    /// The argument, from the route's context.
    fn inject(ctx: crate::Context) -> Self;
}

impl Inject<NoProgress> for crate::Context {
    fn inject(ctx: crate::Context) -> Self {
        ctx
    }
}

impl<P> Inject<P> for crate::context::TypedContext<P> {
    fn inject(ctx: crate::Context) -> Self {
        crate::context::TypedContext::new(ctx)
    }
}

/// One size at which the runtime changes how it handles a message: a fast
/// path starts or stops, a buffer is kept or let go, a limit applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeThreshold {
    /// Where the constant lives.
    pub name: &'static str,
    /// The size, in bytes.
    pub bytes: usize,
    /// What is measured against it.
    pub measures: &'static str,
}

/// A [`SizeThreshold`] of the constant at `path` (from the invoking
/// crate's root), named by its path: `size_threshold!(codec::LARGE,
/// "inbound frame")`; `size_threshold!("name", path, "what")` for a
/// constant whose path is not its name (one field of a pair).
#[macro_export]
#[doc(hidden)]
// `crate::` is the invoking crate's on purpose: each crate lists its own.
#[allow(clippy::crate_in_macro_def)]
macro_rules! size_threshold {
    ($first:ident $(:: $segment:ident)*, $measures:literal) => {
        $crate::__private::SizeThreshold {
            name: concat!(stringify!($first) $(, "::", stringify!($segment))*),
            bytes: crate::$first $(:: $segment)*,
            measures: $measures,
        }
    };
    ($name:literal, $($segment:ident)::+ $(. $field:tt)?, $measures:literal) => {
        $crate::__private::SizeThreshold {
            name: $name,
            bytes: crate::$($segment)::+ $(. $field)?,
            measures: $measures,
        }
    };
}

/// Every size threshold of the core, each named once where it is defined
/// and listed here; `jsonrpc-runtime` adds its transports' and servers'
/// to the list the size sweep walks. A new threshold of the core belongs
/// here.
pub const SIZE_THRESHOLDS: &[SizeThreshold] = &[
    size_threshold!(message::encode::FRESH, "encoded message"),
    size_threshold!(message::encode::CHUNK, "encoded message"),
    size_threshold!(message::encode::KEEP, "encoded message"),
    size_threshold!(message::scan::SCAN_MAX, "inbound frame"),
    size_threshold!(codec::LARGE, "inbound frame"),
    size_threshold!(
        codec::SMALL_AFTER_LARGE,
        "inbound bytes after a large frame"
    ),
    size_threshold!("codec::READ_ROOM (least)", codec::READ_ROOM.0, "one read"),
    size_threshold!("codec::READ_ROOM (most)", codec::READ_ROOM.1, "one read"),
    size_threshold!(codec::content_length::MAX_HEADER_LEN, "header block"),
    size_threshold!(dispatch::admit::INLINE_PARAMS_MAX, "request params"),
    size_threshold!(transport::INITIAL_BUFFER, "read and write buffers"),
    size_threshold!(transport::WRITE_GATHER, "gathered outbound frames"),
    size_threshold!(transport::write::LARGE_FRAME, "outbound frame"),
    size_threshold!(transport::write::RETAINED_BUFFER, "write buffer"),
    size_threshold!(config::DEFAULT_OUTBOUND_BUDGET, "queued outbound frames"),
    size_threshold!(codec::DEFAULT_MAX_FRAME_LEN, "the frame cap"),
];

#[cfg(test)]
mod tests {
    use super::SIZE_THRESHOLDS;

    #[test]
    fn each_threshold_is_named_by_its_path() {
        for threshold in SIZE_THRESHOLDS {
            let path = threshold.name.split(" (").next().unwrap_or_default();
            assert!(
                !path.is_empty() && path.split("::").all(|s| !s.is_empty() && !s.contains(' ')),
                "{threshold:?}"
            );
        }
        assert_eq!(SIZE_THRESHOLDS[0].name, "message::encode::FRESH");
    }
}
