//! Protocol policies: how cancellation and progress are spelled on the
//! wire, the session lifecycle, and gates.
//!
//! LSP and MCP disagree on both. LSP cancels with `$/cancelRequest {id}` and
//! still answers the cancelled request, with -32800; MCP cancels with
//! `notifications/cancelled {requestId, reason}` and sends no answer at all.
//! LSP reports progress as `$/progress {token, value}` on a token the caller
//! put in `workDoneToken` (or `partialResultToken` for partial results); MCP
//! as `notifications/progress {progressToken, progress, total?, message?}`
//! on a token in `params._meta.progressToken`, with `progress` increasing.
//! Here those differences are data: [`CancellationPolicy::lsp`],
//! [`CancellationPolicy::mcp`], [`ProgressPolicy::lsp`] and
//! [`ProgressPolicy::mcp`], which the presets [`Config::lsp`](crate::Config::lsp)
//! and [`Config::mcp`](crate::Config::mcp) install. A [`Lifecycle`] (LSP's
//! and MCP's handshakes) and any user [`Gate`] decide which inbound messages
//! are served at all.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::id::Id;
use crate::message::RawJson;
use crate::message::{ErrorCode, ErrorObject};

mod budget;
mod gate;
mod lifecycle;

pub use self::budget::SharedBudget;
pub(crate) use self::budget::{overloaded, SharedPermit};
pub use self::gate::{Decision, Gate, GateInput};
pub use self::lifecycle::Lifecycle;
pub(crate) use self::lifecycle::LifecycleGate;

type Name = Cow<'static, str>;

/// How requests are cancelled on the wire.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::policy::CancellationPolicy;
/// use jsonrpc_runtime::{Config, ErrorObject};
///
/// // A custom protocol: `cancel {"id": ..}`, answered with a custom error.
/// let policy = CancellationPolicy::new("cancel", "id")
///     .answer_with(ErrorObject::new(-32050, "Cancelled"));
/// let config = Config::default().cancellation(policy);
/// # let _ = config;
/// ```
#[derive(Debug, Clone)]
pub struct CancellationPolicy {
    #[doc(hidden)]
    pub method: Name,
    pub(crate) id_member: Name,
    pub(crate) reason_member: Option<Name>,
    #[doc(hidden)]
    pub answer: Option<ErrorObject>,
    pub(crate) protected: Vec<Name>,
    pub(crate) abort_handler: bool,
    pub(crate) shape: Option<CancelShape>,
}

/// A custom spelling of the cancellation's params (see
/// [`CancellationPolicy::shape`]).
#[derive(Clone)]
pub(crate) struct CancelShape {
    encode: Arc<EncodeCancel>,
    decode: Arc<DecodeCancel>,
}

type EncodeCancel = dyn Fn(&Id, Option<&str>) -> Value + Send + Sync;
type DecodeCancel = dyn Fn(&Value) -> Option<Id> + Send + Sync;

impl std::fmt::Debug for CancelShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CancelShape(..)")
    }
}

impl CancellationPolicy {
    /// Cancellation by the notification `method`, whose params name the
    /// request in `id_member`. Cancelled requests get no answer and their
    /// handlers are stopped; change that with the builder methods.
    pub fn new(method: impl Into<Name>, id_member: impl Into<Name>) -> Self {
        CancellationPolicy {
            method: method.into(),
            id_member: id_member.into(),
            reason_member: None,
            answer: None,
            protected: Vec::new(),
            abort_handler: true,
            shape: None,
        }
    }

    /// LSP: `$/cancelRequest {"id": ..}`; a cancelled request is answered
    /// with -32800 "Request cancelled".
    pub fn lsp() -> Self {
        CancellationPolicy::new("$/cancelRequest", "id").answer_with(ErrorObject::new(
            ErrorCode::REQUEST_CANCELLED,
            "Request cancelled",
        ))
    }

    /// MCP: `notifications/cancelled {"requestId": .., "reason": ..}`; a
    /// cancelled request gets no answer, and `initialize` cannot be
    /// cancelled.
    pub fn mcp() -> Self {
        CancellationPolicy::new("notifications/cancelled", "requestId")
            .reason_member("reason")
            .protect("initialize")
    }

    /// The params member carrying a human-readable reason.
    pub fn reason_member(mut self, member: impl Into<Name>) -> Self {
        self.reason_member = Some(member.into());
        self
    }

    /// Answers a cancelled request with `error` (it still gets exactly one
    /// answer).
    pub fn answer_with(mut self, error: ErrorObject) -> Self {
        self.answer = Some(error);
        self
    }

    /// Sends no answer for a cancelled request.
    pub fn no_answer(mut self) -> Self {
        self.answer = None;
        self
    }

    /// Requests for `method` are never cancelled.
    pub fn protect(mut self, method: impl Into<Name>) -> Self {
        self.protected.push(method.into());
        self
    }

    /// Only fires the handler's cancellation token instead of stopping the
    /// handler: it decides itself when to stop, and its own answer is sent.
    pub fn keep_running(mut self) -> Self {
        self.abort_handler = false;
        self
    }

    #[doc(hidden)]
    pub fn is_protected(&self, method: &str) -> bool {
        self.protected.iter().any(|m| m == method)
    }

    /// The params of a cancellation for `id`.
    pub(crate) fn params(&self, id: &Id, reason: Option<&str>) -> Value {
        if let Some(shape) = &self.shape {
            return (shape.encode)(id, reason);
        }
        let mut params = serde_json::Map::new();
        params.insert(
            self.id_member.to_string(),
            serde_json::to_value(id).unwrap_or(Value::Null),
        );
        if let (Some(member), Some(reason)) = (&self.reason_member, reason) {
            params.insert(member.to_string(), Value::String(reason.to_owned()));
        }
        Value::Object(params)
    }

    /// The id a cancellation's params name.
    #[doc(hidden)]
    pub fn target(&self, params: Option<RawJson<'_>>) -> Option<Id> {
        let params: Value = serde_json::from_str(params?.get()).ok()?;
        if let Some(shape) = &self.shape {
            return (shape.decode)(&params);
        }
        serde_json::from_value(params.get(&*self.id_member)?.clone()).ok()
    }

    /// Spells the cancellation's params another way, for protocols whose
    /// cancellation is not `{id_member: id, reason_member?: reason}`:
    /// `encode` builds the params from the request's id and the reason, and
    /// `decode` finds the id in received params (`None`: not a cancellation
    /// of anything known).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::policy::CancellationPolicy;
    /// use jsonrpc_runtime::Id;
    /// use serde_json::json;
    ///
    /// // `abort {"target": {"request": id}, "why": reason}`
    /// let policy = CancellationPolicy::new("abort", "target").shape(
    ///     |id, reason| json!({"target": {"request": id}, "why": reason}),
    ///     |params| serde_json::from_value::<Id>(params["target"]["request"].clone()).ok(),
    /// );
    /// # let _ = policy;
    /// ```
    pub fn shape(
        mut self,
        encode: impl Fn(&Id, Option<&str>) -> Value + Send + Sync + 'static,
        decode: impl Fn(&Value) -> Option<Id> + Send + Sync + 'static,
    ) -> Self {
        self.shape = Some(CancelShape {
            encode: Arc::new(encode),
            decode: Arc::new(decode),
        });
        self
    }
}

/// How progress travels on the wire.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::policy::ProgressPolicy;
/// use jsonrpc_runtime::Config;
///
/// let config = Config::default().progress(ProgressPolicy::lsp());
/// # let _ = config;
/// ```
#[derive(Debug, Clone)]
pub struct ProgressPolicy {
    #[doc(hidden)]
    pub method: Name,
    pub(crate) token_member: Name,
    /// `Some`: the value sits under this member; `None`: the value's own
    /// members sit next to the token.
    pub(crate) value_member: Option<Name>,
    /// Where a request carries its progress token, as a path of members.
    pub(crate) token_path: Vec<Name>,
    /// Where a request carries its partial-result token, if the protocol has
    /// one.
    pub(crate) partial_path: Option<Vec<Name>>,
    /// A member of the value that must increase from one report to the next.
    pub(crate) increasing: Option<Name>,
}

impl ProgressPolicy {
    /// LSP: `$/progress {"token", "value"}`, tokens in `workDoneToken` and
    /// `partialResultToken`.
    pub fn lsp() -> Self {
        ProgressPolicy {
            method: "$/progress".into(),
            token_member: "token".into(),
            value_member: Some("value".into()),
            token_path: vec!["workDoneToken".into()],
            partial_path: Some(vec!["partialResultToken".into()]),
            increasing: None,
        }
    }

    /// Progress by the notification `method`, whose params carry the token
    /// in `token_member` and the value in `"value"` (change that with
    /// [`value_member`](Self::value_member) or
    /// [`value_inline`](Self::value_inline)); requests carry their token in
    /// a top-level `"progressToken"` member of their params (change that with
    /// [`token_path`](Self::token_path)). No partial results and no order
    /// is enforced until asked for.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::policy::ProgressPolicy;
    /// use jsonrpc_runtime::Config;
    ///
    /// // `progress {"task": t, "done": n, "of": m}`, token in `meta.task`,
    /// // `done` increasing both ways.
    /// let policy = ProgressPolicy::new("progress", "task")
    ///     .value_inline()
    ///     .token_path(["meta", "task"])
    ///     .increasing("done");
    /// let config = Config::default().progress(policy);
    /// # let _ = config;
    /// ```
    pub fn new(method: impl Into<Name>, token_member: impl Into<Name>) -> Self {
        ProgressPolicy {
            method: method.into(),
            token_member: token_member.into(),
            value_member: Some("value".into()),
            token_path: vec!["progressToken".into()],
            partial_path: None,
            increasing: None,
        }
    }

    /// The value travels under this member of the notification's params.
    pub fn value_member(mut self, member: impl Into<Name>) -> Self {
        self.value_member = Some(member.into());
        self
    }

    /// The value's own members sit next to the token in the notification's
    /// params (MCP's shape); a value must then be an object.
    pub fn value_inline(mut self) -> Self {
        self.value_member = None;
        self
    }

    /// Where a request carries its progress token: a path of members from
    /// the top of its params (created when sending).
    pub fn token_path<I, S>(mut self, path: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Name>,
    {
        self.token_path = path.into_iter().map(Into::into).collect();
        self
    }

    /// Where a request carries its partial-result token, for protocols that
    /// have partial results (LSP's `partialResultToken`).
    pub fn partial_path<I, S>(mut self, path: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<Name>,
    {
        self.partial_path = Some(path.into_iter().map(Into::into).collect());
        self
    }

    /// `member` of each value must increase from one report to the next:
    /// [`Context::progress`](crate::Context::progress) refuses a report that
    /// does not, and a received one that does not is dropped.
    pub fn increasing(mut self, member: impl Into<Name>) -> Self {
        self.increasing = Some(member.into());
        self
    }

    /// MCP: `notifications/progress {"progressToken", "progress", "total"?,
    /// "message"?}`, token in `_meta.progressToken`, `progress` increasing.
    pub fn mcp() -> Self {
        ProgressPolicy {
            method: "notifications/progress".into(),
            token_member: "progressToken".into(),
            value_member: None,
            token_path: vec!["_meta".into(), "progressToken".into()],
            partial_path: None,
            increasing: Some("progress".into()),
        }
    }

    /// The notification's params for one report.
    pub(crate) fn params(&self, token: &Id, value: Value) -> Result<Value, ErrorObject> {
        let mut params = serde_json::Map::new();
        params.insert(
            self.token_member.to_string(),
            serde_json::to_value(token).unwrap_or(Value::Null),
        );
        match &self.value_member {
            Some(member) => {
                params.insert(member.to_string(), value);
            }
            None => {
                match value {
                    Value::Object(members) => params.extend(members),
                    _ => return Err(ErrorObject::invalid_params(
                        "this protocol's progress value must be an object, like {\"progress\": 1}",
                    )),
                }
            }
        }
        Ok(Value::Object(params))
    }

    /// Splits a progress notification into its token and value.
    #[doc(hidden)]
    pub fn parse(&self, params: Option<RawJson<'_>>) -> Option<(Id, Value)> {
        let Value::Object(mut members) = serde_json::from_str(params?.get()).ok()? else {
            return None;
        };
        let token: Id = serde_json::from_value(members.remove(&*self.token_member)?).ok()?;
        let value = match &self.value_member {
            Some(member) => members.remove(&**member).unwrap_or(Value::Null),
            None => Value::Object(members),
        };
        Some((token, value))
    }

    /// The progress and partial-result tokens an inbound request carries.
    #[doc(hidden)]
    pub fn tokens(&self, params: Option<RawJson<'_>>) -> (Option<Id>, Option<Id>) {
        let Some(raw) = params else {
            return (None, None);
        };
        let wanted = |path: &[Name]| path.last().is_some_and(|last| raw.get().contains(&**last));
        if !wanted(&self.token_path) && !self.partial_path.as_deref().is_some_and(wanted) {
            return (None, None);
        }
        let Ok(value) = serde_json::from_str::<Value>(raw.get()) else {
            return (None, None);
        };
        let find = |path: &[Name]| {
            let mut at = &value;
            for member in path {
                at = at.get(&**member)?;
            }
            serde_json::from_value::<Id>(at.clone())
                .ok()
                .filter(|id| !id.is_null())
        };
        (
            find(&self.token_path),
            self.partial_path.as_deref().and_then(find),
        )
    }

    /// Puts `token` into outbound params at `path`, creating objects on the
    /// way.
    pub(crate) fn attach(path: &[Name], params: &mut Value, token: &Id) -> Result<(), ErrorObject> {
        if params.is_null() {
            *params = Value::Object(serde_json::Map::new());
        }
        let mut at = params;
        let Some((last, parents)) = path.split_last() else {
            return Ok(());
        };
        for member in parents {
            let Value::Object(members) = at else { break };
            at = members
                .entry(member.to_string())
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
        }
        match at {
            Value::Object(members) => {
                members.insert(
                    last.to_string(),
                    serde_json::to_value(token).unwrap_or(Value::Null),
                );
                Ok(())
            }
            _ => Err(ErrorObject::invalid_params(
                "params must be an object to carry a progress token",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn raw(v: Value) -> Box<serde_json::value::RawValue> {
        serde_json::value::to_raw_value(&v).unwrap()
    }

    #[test]
    fn lsp_and_mcp_progress_shapes() {
        let lsp = ProgressPolicy::lsp();
        assert_eq!(
            lsp.params(&Id::from(1), json!({"kind": "report"})).unwrap(),
            json!({"token": 1, "value": {"kind": "report"}})
        );
        let mcp = ProgressPolicy::mcp();
        assert_eq!(
            mcp.params(&Id::from("t"), json!({"progress": 2, "total": 5}))
                .unwrap(),
            json!({"progressToken": "t", "progress": 2, "total": 5})
        );
        assert!(mcp.params(&Id::from("t"), json!(3)).is_err());
        let (token, value) = mcp
            .parse(Some(RawJson::from(&*raw(
                json!({"progressToken": "t", "progress": 2}),
            ))))
            .unwrap();
        assert_eq!((token, value), (Id::from("t"), json!({"progress": 2})));
    }

    #[test]
    fn tokens_are_found_where_each_protocol_puts_them() {
        let lsp = ProgressPolicy::lsp();
        let params = raw(json!({"workDoneToken": "w", "partialResultToken": 7, "x": 1}));
        assert_eq!(
            lsp.tokens(Some(RawJson::from(&*params))),
            (Some(Id::from("w")), Some(Id::from(7)))
        );
        let mcp = ProgressPolicy::mcp();
        let params = raw(json!({"_meta": {"progressToken": 3}}));
        assert_eq!(
            mcp.tokens(Some(RawJson::from(&*params))),
            (Some(Id::from(3)), None)
        );
        assert_eq!(
            mcp.tokens(Some(RawJson::from(&*raw(json!({"name": "x"}))))),
            (None, None)
        );
    }

    #[test]
    fn attach_creates_the_path() {
        let mut params = json!({"name": "sleep"});
        ProgressPolicy::attach(&ProgressPolicy::mcp().token_path, &mut params, &Id::from(9))
            .unwrap();
        assert_eq!(
            params,
            json!({"name": "sleep", "_meta": {"progressToken": 9}})
        );
        let mut positional = json!([1]);
        assert!(ProgressPolicy::attach(
            &ProgressPolicy::lsp().token_path,
            &mut positional,
            &Id::from(1)
        )
        .is_err());
    }

    #[test]
    fn a_custom_cancellation_shape_both_ways() {
        let policy = CancellationPolicy::new("abort", "unused").shape(
            |id, reason| json!({"target": {"request": id}, "why": reason}),
            |params| {
                serde_json::from_value::<Id>(params["target"]["request"].clone())
                    .ok()
                    .filter(|id| !id.is_null())
            },
        );
        let params = policy.params(&Id::from("r7"), Some("user"));
        assert_eq!(params, json!({"target": {"request": "r7"}, "why": "user"}));
        assert_eq!(
            policy.target(Some(RawJson::from(&*raw(params)))),
            Some(Id::from("r7"))
        );
        assert_eq!(
            policy.target(Some(RawJson::from(&*raw(json!({"unused": 1}))))),
            None
        );
    }

    #[test]
    fn cancellation_params_both_ways() {
        let mcp = CancellationPolicy::mcp();
        let params = mcp.params(&Id::from(4), Some("user"));
        assert_eq!(params, json!({"requestId": 4, "reason": "user"}));
        assert_eq!(
            mcp.target(Some(RawJson::from(&*raw(params)))),
            Some(Id::from(4))
        );
        assert!(mcp.is_protected("initialize"));
        let lsp = CancellationPolicy::lsp();
        assert_eq!(
            lsp.params(&Id::from("a"), Some("ignored")),
            json!({"id": "a"})
        );
    }
}
