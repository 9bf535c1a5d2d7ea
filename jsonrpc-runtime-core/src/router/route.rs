//! Routes: one method's typed handler behind a type-erased seam, and the
//! decoding and encoding around it.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::Serialize;
use serde_json::value::RawValue;

use super::task::{Answer, BoxFuture, RequestTask};
use super::{IntoReply, Reply};
use crate::context::Context;
use crate::id::Id;
use crate::message::{self, DecodedParams, Dialect, RawJson};
use crate::message::{ErrorObject, RpcError};
use crate::rt::Instant;

/// The kind of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteKind {
    Request,
    Notification,
}

/// A type-erased route: decodes params synchronously, then runs the handler.
pub(crate) trait ErasedRoute: Send + Sync + 'static {
    /// Decodes the params and starts the handler; the future yields the
    /// complete response envelope (requests) or nothing useful
    /// (notifications: the bytes are empty).
    fn start(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject>;

    /// Decodes the params at the start of `text` into the handler's own
    /// type, while a large frame is classified (`message::DecodeParams`):
    /// the value and the length of its text. By default, a route does not.
    fn decode(&self, text: &str) -> Option<(DecodedParams, usize)> {
        let _ = text;
        None
    }

    /// Decodes the params and spawns the handler as `task`'s task, without
    /// boxing its future; on a decoding error, gives the task back.
    // The large `Err` is the task handed back by value on the rare error
    // path, which keeps the common path free of allocations.
    ///
    /// By default, [`start`](Self::start)s it and spawns the boxed future.
    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        dialect: Dialect,
        task: RequestTask,
    ) -> Result<(), (ErrorObject, RequestTask)> {
        match self.start(params, ctx, dialect) {
            Ok(fut) => {
                task.spawn(fut);
                Ok(())
            }
            Err(error) => Err((error, task)),
        }
    }

    /// Whether the route opens a subscription (tower layers leave it as
    /// it is).
    #[cfg_attr(not(feature = "tower"), allow(dead_code))]
    fn is_subscription(&self) -> bool {
        false
    }

    /// Decodes the params and runs the handler, yielding the raw result.
    fn invoke(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject>;
}

/// One method's route: its kind, its name and its type-erased handler.
#[doc(hidden)]
#[derive(Clone)]
pub struct Route {
    pub(crate) kind: RouteKind,
    pub(crate) name: Arc<str>,
    pub(crate) handler: Arc<dyn ErasedRoute>,
    /// How long its handlers' first steps have been taking.
    pub(crate) pace: Arc<Pace>,
}

/// How a route's handlers take their first step on a multi-thread runtime.
///
/// A request whose handler is done at once is cheapest answered on the
/// connection's reader, without a task of its own; a handler that computes
/// or blocks there would hold up every message behind it. So a route's
/// requests start on tasks of their own, where their first steps are
/// timed, and take them on the reader only once [`Pace::TRUST`] first steps
/// in a row took at most [`Pace::SLOW`]; one that takes longer, on the
/// reader or on a task, sends the route's requests back to tasks until they
/// earn it again. A route whose handlers block never reaches the reader.
/// (On a current-thread runtime every first step runs on the reader: a task
/// of its own would buy no parallelism there.)
#[derive(Debug, Default)]
pub(crate) struct Pace {
    /// Quick first steps in a row, up to about [`Pace::TRUST`].
    quick: AtomicU32,
}

impl Pace {
    /// A first step longer than this is slow.
    pub(crate) const SLOW: Duration = Duration::from_micros(100);
    /// Quick first steps in a row that let the route's next ones run on the
    /// reader.
    pub(crate) const TRUST: u32 = 16;

    /// Whether the route's next first step may run on the reader.
    pub(crate) fn on_reader(&self) -> bool {
        self.quick.load(Ordering::Relaxed) >= Self::TRUST
    }

    /// Polls `fut` once on the caller's task ([`first_step`](super::first_step)),
    /// timed for `pace` when there is one.
    #[inline]
    pub(crate) fn first_step<F: Future + ?Sized>(
        pace: Option<&Self>,
        fut: Pin<&mut F>,
    ) -> Poll<Result<F::Output, String>> {
        match pace {
            Some(pace) => pace.time(|| super::first_step(fut)),
            None => super::first_step(fut),
        }
    }

    /// Runs `step`, a first step, and notes how long it took.
    #[inline(never)]
    fn time<T>(&self, step: impl FnOnce() -> T) -> T {
        let started = Instant::now();
        let out = step();
        let elapsed = started.elapsed();
        if elapsed > Self::SLOW {
            self.quick.store(0, Ordering::Relaxed);
        } else if self.quick.load(Ordering::Relaxed) < Self::TRUST {
            // Racing counts may pass `TRUST` by a few: no harm.
            self.quick.fetch_add(1, Ordering::Relaxed);
        }
        out
    }
}

/// A handler's future whose first poll is timed for its route's [`Pace`].
pub(crate) struct Timed<F> {
    pub(crate) fut: F,
    pub(crate) pace: Option<Arc<Pace>>,
}

impl<F: Future + Unpin> Future for Timed<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        match this.pace.take() {
            None => Pin::new(&mut this.fut).poll(cx),
            Some(pace) => pace.time(|| Pin::new(&mut this.fut).poll(cx)),
        }
    }
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("kind", &self.kind)
            .field("name", &self.name)
            .finish()
    }
}

impl Route {
    /// A route of `kind` for `name`, run by `handler`.
    pub(crate) fn new(kind: RouteKind, name: Arc<str>, handler: Arc<dyn ErasedRoute>) -> Self {
        Route {
            kind,
            name,
            handler,
            pace: Arc::default(),
        }
    }

    /// A request route, as [`Router::request`] registers it.
    pub fn request<P, R, F, Fut>(method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        R: IntoReply,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
    {
        let handler = Arc::new(RequestRoute {
            handler,
            _marker: PhantomData,
        });
        Route::new(RouteKind::Request, method.into(), handler)
    }

    /// A notification route, as [`Router::notification`] registers it.
    pub fn notification<P, F, Fut>(method: &str, handler: F) -> Self
    where
        P: DeserializeOwned + Send + 'static,
        F: Fn(P, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(NotificationRoute {
            handler,
            _marker: PhantomData,
        });
        Route::new(RouteKind::Notification, method.into(), handler)
    }
}

pub(super) struct RequestRoute<F, P> {
    pub(super) handler: F,
    pub(super) _marker: PhantomData<fn(P)>,
}

pub(super) struct NotificationRoute<F, P> {
    pub(super) handler: F,
    pub(super) _marker: PhantomData<fn(P)>,
}

impl<P, R, F, Fut> ErasedRoute for RequestRoute<F, P>
where
    P: DeserializeOwned + Send + 'static,
    R: IntoReply,
    F: Fn(P, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    fn start(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let id = ctx.id.clone().unwrap_or(Id::NULL);
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            encode_reply(dialect, &id, fut.await.into_reply())
        }))
    }

    fn decode(&self, text: &str) -> Option<(DecodedParams, usize)> {
        message::decode_prefix::<P>(text)
    }

    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        dialect: Dialect,
        task: RequestTask,
    ) -> Result<(), (ErrorObject, RequestTask)> {
        let params = match decode_params::<P>(params) {
            Ok(params) => params,
            Err(error) => return Err((error, task)),
        };
        let id = task.job.id.clone();
        let fut = (self.handler)(params, ctx);
        task.spawn(async move { encode_reply(dialect, &id, fut.await.into_reply()) });
        Ok(())
    }

    fn invoke(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            match fut.await.into_reply() {
                Reply::Ok(v) => serde_json::value::to_raw_value(&v).map_err(|e| {
                    ErrorObject::internal_error(format!("the result could not be encoded: {e}"))
                }),
                Reply::Err(e) => Err(e.into_error_object()),
                Reply::Raw(outcome) => outcome,
            }
        }))
    }
}

impl<P, F, Fut> ErasedRoute for NotificationRoute<F, P>
where
    P: DeserializeOwned + Send + 'static,
    F: Fn(P, Context) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    fn start(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
        _dialect: Dialect,
    ) -> Result<BoxFuture<Answer>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            fut.await;
            Answer {
                body: bytes::Bytes::new(),
                success: true,
            }
        }))
    }

    fn decode(&self, text: &str) -> Option<(DecodedParams, usize)> {
        message::decode_prefix::<P>(text)
    }

    #[allow(clippy::result_large_err)]
    fn spawn(
        &self,
        _params: Option<RawJson<'_>>,
        ctx: Context,
        _dialect: Dialect,
        task: RequestTask,
    ) -> Result<(), (ErrorObject, RequestTask)> {
        // The pipeline never sends a request to a notification route; refuse
        // like it would, should that change.
        Err((ErrorObject::method_not_found(ctx.method()), task))
    }

    fn invoke(
        &self,
        params: Option<RawJson<'_>>,
        ctx: Context,
    ) -> Result<BoxFuture<Result<Box<RawValue>, ErrorObject>>, ErrorObject> {
        let params = decode_params::<P>(params)?;
        let fut = (self.handler)(params, ctx);
        Ok(Box::pin(async move {
            fut.await;
            Ok(RawValue::NULL.to_owned())
        }))
    }
}

/// Writes a handler's reply as a complete response envelope.
pub(crate) fn encode_reply<T: Serialize, E: RpcError>(
    dialect: Dialect,
    id: &Id,
    reply: Reply<T, E>,
) -> Answer {
    let encoded = match reply {
        Reply::Ok(value) => message::response(dialect, id, Ok(&value)),
        Reply::Err(e) => message::response::<()>(dialect, id, Err(&e.into_error_object())),
        Reply::Raw(outcome) => message::response(dialect, id, outcome.as_deref()),
    };
    let (body, success) = match encoded {
        Ok(body) => (body, true),
        Err(body) => (body, false),
    };
    Answer { body, success }
}

/// Decodes params into `P`.
///
/// Absent params decode as nothing: `()` and `Option<T>` accept them, a
/// struct gets its defaults or a "missing field" error. `{}` and `[]` are
/// also accepted where `()` is expected.
pub(crate) fn decode_params<P: DeserializeOwned + 'static>(
    params: Option<RawJson<'_>>,
) -> Result<P, ErrorObject> {
    match params {
        None => P::deserialize(Absent).map_err(ErrorObject::invalid_params),
        Some(raw) => {
            // Decoded as the frame was classified (by this route, if the
            // type matches).
            if let RawJson::Decoded(_, decoded) = raw {
                if let Some(params) = decoded.take::<P>() {
                    return Ok(params);
                }
            }
            serde_json::from_str::<P>(raw.get()).or_else(|e| {
                if is_empty_container(raw.get()) {
                    P::deserialize(Absent).map_err(|_| ErrorObject::invalid_params(e))
                } else {
                    Err(ErrorObject::invalid_params(e))
                }
            })
        }
    }
}

fn is_empty_container(text: &str) -> bool {
    let text = text.trim();
    let inner = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .or_else(|| text.strip_prefix('[').and_then(|t| t.strip_suffix(']')));
    inner.is_some_and(|inner| inner.trim().is_empty())
}

/// A deserializer for params that were not sent.
struct Absent;

impl<'de> serde::Deserializer<'de> for Absent {
    type Error = serde_json::Error;

    fn deserialize_any<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_none()
    }

    fn deserialize_map<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let empty: HashMap<String, ()> = HashMap::new();
        visitor
            .visit_map(serde::de::value::MapDeserializer::new(
                empty
                    .into_iter()
                    .map(|(k, v)| (k.into_deserializer(), v.into_deserializer())),
            ))
            .map_err(|e: serde::de::value::Error| serde::de::Error::custom(e))
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_map(visitor)
    }

    fn deserialize_seq<V: serde::de::Visitor<'de>>(
        self,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let empty: Vec<()> = Vec::new();
        visitor
            .visit_seq(serde::de::value::SeqDeserializer::new(
                empty.into_iter().map(|v| v.into_deserializer()),
            ))
            .map_err(|e: serde::de::value::Error| serde::de::Error::custom(e))
    }

    fn deserialize_tuple<V: serde::de::Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.deserialize_seq(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn unit_params_accept_every_empty_form() {
        decode_params::<()>(None).unwrap();
        for text in ["null", "{}", "[]", "{ }", "[\n]"] {
            decode_params::<()>(Some(RawJson::from(&*raw(text)))).unwrap();
        }
        assert!(decode_params::<()>(Some(RawJson::from(&*raw("[1]")))).is_err());
    }

    #[test]
    fn absent_params_fill_options_and_report_missing_fields() {
        #[derive(serde::Deserialize)]
        struct Opt {
            #[allow(dead_code)]
            a: Option<i32>,
        }
        #[derive(serde::Deserialize, Debug)]
        struct Req {
            #[allow(dead_code)]
            a: i32,
        }
        decode_params::<Opt>(None).unwrap();
        assert_eq!(decode_params::<Option<i32>>(None).unwrap(), None);
        let err = decode_params::<Req>(None).unwrap_err();
        assert!(err.message.contains("missing field `a`"), "{}", err.message);
    }
}
