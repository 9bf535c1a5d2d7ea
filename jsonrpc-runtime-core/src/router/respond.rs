//! Answering frames in process: bytes in, bytes out, no transport and no
//! task. What an HTTP server, a serverless function or a test needs.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use super::panic::{catch_panic, panic_answer};
use super::Router;
use crate::config::DEFAULT_OUTBOUND_BUDGET;
use crate::connection::ConnectionInfo;
use crate::context::Context;
use crate::id::Id;
use crate::message::ErrorObject;
use crate::message::{self, BatchAnswers, Classified, ClassifiedFrame, ParseOptions, RawExtras};
use crate::policy::{Decision, Gate, GateInput};

impl Router {
    /// Answers one frame (a message or a batch) in process: classifies it,
    /// runs its handlers, and returns the answer's bytes, or `None` when
    /// nothing is owed (notifications only). The frame is read with the
    /// default rules ([`ParseOptions::default`]); see
    /// [`respond_with`](Router::respond_with) for others.
    ///
    /// Handlers run on the caller's task, one after another in a batch,
    /// with a [`Context`] that has no connection behind it: calls through
    /// [`Context::peer`] fail with [`CallError::Closed`](crate::CallError::Closed),
    /// and the cancellation never fires. Protocol state that belongs to a
    /// connection (a lifecycle, gates, progress, cancellation) does not
    /// apply; use a [`Peer`](crate::Peer) for those.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Router};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let router = Router::new()
    ///     .request("add", |(a, b): (i64, i64), _: Context| async move { Ok::<_, ErrorObject>(a + b) });
    /// let answer = router.respond(br#"{"jsonrpc":"2.0","id":1,"method":"add","params":[2,3]}"#).await;
    /// assert_eq!(&answer.unwrap()[..], br#"{"jsonrpc":"2.0","id":1,"result":5}"#);
    ///
    /// let nothing = router.respond(br#"{"jsonrpc":"2.0","method":"add","params":[2,3]}"#).await;
    /// assert!(nothing.is_none());
    /// # });
    /// ```
    pub async fn respond(&self, frame: &[u8]) -> Option<Bytes> {
        self.respond_with(frame, &ParseOptions::default()).await
    }

    /// Answers one frame in process as [`respond`](Router::respond) does,
    /// reading it with `options` (a config's are
    /// [`Config::parse_options`](crate::Config::parse_options)).
    pub async fn respond_with(&self, frame: &[u8], options: &ParseOptions) -> Option<Bytes> {
        self.respond_in(frame, options, None, None, 0).await
    }

    /// Answers one frame in process as [`respond_with`](Router::respond_with)
    /// does, for a caller described by `connection`: handlers read it from
    /// [`Context::connection`]. What an HTTP server does with each request's
    /// address and headers.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use jsonrpc_runtime::message::ParseOptions;
    /// use jsonrpc_runtime::{Context, ErrorObject, Router, connection::ConnectionInfo};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let router = Router::new().request("tenant", |(): (), cx: Context| async move {
    ///     Ok::<_, ErrorObject>(cx.connection().header("x-tenant").map(str::to_owned))
    /// });
    /// let mut headers = jsonrpc_runtime::http::HeaderMap::new();
    /// headers.insert("x-tenant", "blue".parse().unwrap());
    /// let caller = Arc::new(ConnectionInfo::new().with_request("/".parse().unwrap(), headers));
    /// let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tenant"}"#;
    /// let answer = router.respond_to(&caller, frame, &ParseOptions::default()).await;
    /// assert_eq!(&answer.unwrap()[..], br#"{"jsonrpc":"2.0","id":1,"result":"blue"}"#);
    /// # });
    /// ```
    pub async fn respond_to(
        &self,
        connection: &Arc<ConnectionInfo>,
        frame: &[u8],
        options: &ParseOptions,
    ) -> Option<Bytes> {
        self.respond_in(frame, options, Some(connection), None, 0)
            .await
    }

    /// The one implementation behind the `respond` methods; `gate` checks
    /// each message first (the HTTP server builds one per `POST`), and
    /// `number` is the connection's in the `tracing` events (0 when there
    /// is none, as for the public `respond` methods).
    #[doc(hidden)]
    pub async fn respond_in(
        &self,
        frame: &[u8],
        options: &ParseOptions,
        connection: Option<&Arc<ConnectionInfo>>,
        gate: Option<&dyn Gate>,
        number: u64,
    ) -> Option<Bytes> {
        let dialect = options.dialect;
        let text = match std::str::from_utf8(frame) {
            Ok(text) => text,
            Err(e) => {
                let error = ErrorObject::parse_error(format!("invalid UTF-8: {e}"));
                crate::trace::refused(number, &Id::NULL, &error);
                return Some(message::error_response(dialect, &Id::NULL, &error));
            }
        };
        let mut decoded = None;
        match message::classify_frame_decoding(text, options, self, &mut decoded) {
            ClassifiedFrame::Single(m) => self.answer(m, options, connection, gate, number).await,
            ClassifiedFrame::Batch(messages) => {
                let answers = BatchAnswers::new(DEFAULT_OUTBOUND_BUDGET, dialect);
                for m in messages {
                    let id = match &m {
                        Classified::Request { id, .. } => id.clone(),
                        Classified::Refused(refusal) => refusal.id.clone(),
                        _ => Id::NULL,
                    };
                    if let Some(body) = self.answer(m, options, connection, gate, number).await {
                        answers.add(&id, body);
                    }
                    tokio::task::consume_budget().await;
                }
                answers.release(None)
            }
        }
    }

    /// The answer to one classified message, if one is owed.
    async fn answer(
        &self,
        message: Classified<'_>,
        options: &ParseOptions,
        connection: Option<&Arc<ConnectionInfo>>,
        gate: Option<&dyn Gate>,
        number: u64,
    ) -> Option<Bytes> {
        let dialect = options.dialect;
        let (id, method, params, extras) = match message {
            Classified::Request {
                id,
                method,
                params,
                extras,
            } => (Some(id), method, params, extras),
            Classified::Notification {
                method,
                params,
                extras,
            } => (None, method, params, extras),
            Classified::Refused(refusal) => {
                crate::trace::refused(number, &refusal.id, &refusal.error);
                return Some(message::error_response(
                    dialect,
                    &refusal.id,
                    &refusal.error,
                ));
            }
            Classified::BadResponse { error, .. } => {
                crate::trace::refused(number, &Id::NULL, &error);
                return Some(message::error_response(dialect, &Id::NULL, &error));
            }
            // Nothing waits for answers here.
            Classified::Response { .. } | Classified::Ignored { .. } => return None,
        };
        let refuse = |error: ErrorObject| {
            id.as_ref().map(|id| {
                crate::trace::refused(number, id, &error);
                message::error_response(dialect, id, &error)
            })
        };
        if let Some(gate) = gate {
            match check(gate, &method, id.as_ref(), connection) {
                Decision::Allow => {}
                Decision::Reject(error) => return refuse(error),
                Decision::Drop => return None,
            }
        }
        let route = match &id {
            Some(_) => match self.request_route(&method) {
                Ok(route) => route,
                Err(error) => return refuse(error),
            },
            None => self.get(&method)?,
        };
        let ctx = Context::in_process(
            id.clone(),
            Arc::clone(&route.name),
            owned(&extras),
            connection.cloned(),
        );
        let fut = match route.handler.start(params, ctx, dialect) {
            Ok(fut) => fut,
            Err(error) => return refuse(error),
        };
        // The HTTP server's requests are traced (`number` is its
        // connection's); in-process calls of the public `respond` methods
        // are not, as a function call is not.
        let trace = id
            .as_ref()
            .filter(|_| number != 0)
            .map(|id| crate::trace::request_span(number, &route.name, id));
        let run = catch_panic(fut);
        let ran = match trace.as_ref().and_then(|t| t.span()) {
            Some(span) => tracing::Instrument::instrument(run, span.clone()).await,
            None => run.await,
        };
        let answer = match ran {
            Ok(answer) => {
                if let (Some(gate), Some(_)) = (gate, &id) {
                    gate.answered(&method, answer.success);
                }
                if let Some(trace) = &trace {
                    trace.answered(Some(&answer.body), answer.success);
                }
                answer.body
            }
            Err(panic) => return refuse(panic_answer(&route.name, &panic)),
        };
        id.map(|_| answer)
    }
}

fn owned(extras: &RawExtras<'_>) -> Option<crate::message::Extras> {
    (!extras.is_empty()).then(|| extras.to_owned_extras())
}

/// The gate's decision on one message from `connection` (nobody, in
/// process).
fn check(
    gate: &dyn Gate,
    method: &str,
    id: Option<&Id>,
    connection: Option<&Arc<ConnectionInfo>>,
) -> Decision {
    static NOBODY: OnceLock<ConnectionInfo> = OnceLock::new();
    gate.check(GateInput {
        method,
        id,
        connection: match connection {
            Some(info) => info,
            None => NOBODY.get_or_init(ConnectionInfo::new),
        },
    })
}
