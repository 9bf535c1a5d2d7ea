//! The unknown-method policy and the id strategy.

use super::*;

/// What to do with a method that has no route.
///
/// Requests whose names start with `rpc.` are reserved by JSON-RPC 2.0 and
/// are answered -32601 unless a route claims them.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::config::UnknownMethod;
///
/// // LSP: notifications such as `$/setTrace` may be ignored silently.
/// let policy = UnknownMethod::strict().ignoring(|name| name.starts_with("$/"));
/// # let _ = policy;
/// ```
#[derive(Clone)]
pub struct UnknownMethod {
    pub(crate) refuse_notifications: bool,
    pub(crate) ignore: Option<MethodFilter>,
}

impl UnknownMethod {
    /// Requests get -32601; notifications are dropped. The default.
    pub fn minimal() -> Self {
        UnknownMethod {
            refuse_notifications: false,
            ignore: None,
        }
    }

    /// Requests get -32601; notifications are refused too, with a -32601
    /// error response carrying id `null` (JSON-RPC 2.0 never answers
    /// notifications, so use this only with peers that expect it).
    pub fn strict() -> Self {
        UnknownMethod {
            refuse_notifications: true,
            ignore: None,
        }
    }

    /// Unknown notifications whose name matches `predicate` are always
    /// dropped silently, whatever the policy says for the others.
    pub fn ignoring(mut self, predicate: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.ignore = Some(Arc::new(predicate));
        self
    }

    pub(crate) fn refuses_notification(&self, method: &str) -> bool {
        self.refuse_notifications && !self.ignore.as_ref().is_some_and(|ignore| ignore(method))
    }
}

impl fmt::Debug for UnknownMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UnknownMethod")
            .field("refuse_notifications", &self.refuse_notifications)
            .field("ignore", &self.ignore.as_ref().map(|_| ".."))
            .finish()
    }
}

/// How outbound request ids are made.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use jsonrpc_runtime::config::IdStrategy;
/// use jsonrpc_runtime::{Config, Id};
///
/// let next = AtomicU64::new(0);
/// let strategy = IdStrategy::custom(move || {
///     Id::from(format!("req-{}", next.fetch_add(1, Ordering::Relaxed)))
/// });
/// let config = Config::default().id_strategy(strategy);
/// # let _ = config;
/// ```
#[derive(Clone, Default)]
pub struct IdStrategy(pub(crate) IdKind);

#[derive(Clone, Default)]
pub(crate) enum IdKind {
    #[default]
    Sequential,
    SequentialI32,
    Custom(Arc<dyn Fn() -> Id + Send + Sync>),
}

impl IdStrategy {
    /// 1, 2, 3, … as integers (u64). The default.
    pub fn sequential() -> Self {
        IdStrategy(IdKind::Sequential)
    }

    /// 1, 2, 3, … up to `i32::MAX`, then 1 again, for peers that store ids
    /// in 32 bits.
    pub fn sequential_i32() -> Self {
        IdStrategy(IdKind::SequentialI32)
    }

    /// Ids from `generate`, for peers that want strings or their own scheme.
    /// An id still waiting for its answer is never reused: the call fails
    /// with [`CallError::DuplicateId`](crate::CallError::DuplicateId)
    /// instead.
    pub fn custom(generate: impl Fn() -> Id + Send + Sync + 'static) -> Self {
        IdStrategy(IdKind::Custom(Arc::new(generate)))
    }
}

impl fmt::Debug for IdStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            IdKind::Sequential => f.write_str("Sequential"),
            IdKind::SequentialI32 => f.write_str("SequentialI32"),
            IdKind::Custom(_) => f.write_str("Custom(..)"),
        }
    }
}
