//! Session lifecycles: a handshake first, an orderly shutdown, an exit.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};

use super::{Decision, Gate, GateInput};
use crate::message::{ErrorCode, ErrorObject};

type Name = Cow<'static, str>;

/// A session lifecycle: a handshake before anything else, an orderly
/// shutdown, and an exit notification that ends the connection.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::policy::Lifecycle;
/// use jsonrpc_runtime::Config;
///
/// let config = Config::default().lifecycle(Lifecycle::lsp());
/// # let _ = config;
/// ```
#[derive(Debug, Clone)]
pub struct Lifecycle {
    pub(crate) initialize: Name,
    pub(crate) not_initialized: ErrorObject,
    pub(crate) allowed_before: Vec<Name>,
    pub(crate) initialize_once: bool,
    pub(crate) shutdown: Option<Name>,
    pub(crate) after_shutdown: ErrorObject,
    pub(crate) exit: Option<Name>,
    pub(crate) stateless_meta: Option<Name>,
}

impl Lifecycle {
    /// A handshake on `initialize`: until a request for it has been answered
    /// successfully, other requests are refused with `not_initialized` and
    /// notifications are dropped.
    pub fn new(initialize: impl Into<Name>, not_initialized: ErrorObject) -> Self {
        Lifecycle {
            initialize: initialize.into(),
            not_initialized,
            allowed_before: Vec::new(),
            initialize_once: false,
            shutdown: None,
            after_shutdown: ErrorObject::invalid_request("the session is shutting down"),
            exit: None,
            stateless_meta: None,
        }
    }

    /// LSP: `initialize` first and only once (requests before it get -32002,
    /// notifications before it are dropped, except `exit`), `shutdown` then
    /// refuses further requests with -32600, and `exit` ends the connection
    /// with [`CloseReason::Exit`](crate::CloseReason::Exit) code 0 after
    /// `shutdown`, 1 otherwise.
    pub fn lsp() -> Self {
        Lifecycle::new(
            "initialize",
            ErrorObject::new(ErrorCode::SERVER_NOT_INITIALIZED, "Server not initialized"),
        )
        .allow_before("exit")
        .initialize_once()
        .shutdown(
            "shutdown",
            ErrorObject::invalid_request("the server is shutting down"),
        )
        .exit("exit")
    }

    /// MCP: `initialize` first (requests before it get -32002), except
    /// `ping`, which is always answered, and the requests of the stateless
    /// revision (2026-07-28), which have no handshake: `server/discover`,
    /// and any request whose `_meta` names its revision
    /// (`io.modelcontextprotocol/protocolVersion`).
    pub fn mcp() -> Self {
        Lifecycle::new(
            "initialize",
            ErrorObject::new(
                ErrorCode::SERVER_NOT_INITIALIZED,
                "Session not initialized: send `initialize` first",
            ),
        )
        .allow_before("ping")
        .allow_before("server/discover")
        .allow_with_meta("io.modelcontextprotocol/protocolVersion")
        .initialize_once()
    }

    /// Lets a request through at any stage when its params' `_meta` has
    /// `key`: a request that needs no handshake says so itself.
    pub fn allow_with_meta(mut self, key: impl Into<Name>) -> Self {
        self.stateless_meta = Some(key.into());
        self
    }

    /// Lets `method` through before the handshake.
    pub fn allow_before(mut self, method: impl Into<Name>) -> Self {
        self.allowed_before.push(method.into());
        self
    }

    /// Refuses a second handshake with -32600.
    pub fn initialize_once(mut self) -> Self {
        self.initialize_once = true;
        self
    }

    /// After a successful answer to `method`, refuses requests with `error`.
    pub fn shutdown(mut self, method: impl Into<Name>, error: ErrorObject) -> Self {
        self.shutdown = Some(method.into());
        self.after_shutdown = error;
        self
    }

    /// The notification `method` ends the connection (after its route, if
    /// any, has run), with exit code 0 after a shutdown and 1 otherwise.
    pub fn exit(mut self, method: impl Into<Name>) -> Self {
        self.exit = Some(method.into());
        self
    }
}

/// One connection's place in its [`Lifecycle`], checked as a gate: the only
/// implementation of the handshake rules.
#[derive(Debug)]
pub(crate) struct LifecycleGate {
    rules: Lifecycle,
    stage: AtomicU8,
}

const NEW: u8 = 0;
const READY: u8 = 1;
const SHUT_DOWN: u8 = 2;

impl LifecycleGate {
    pub(crate) fn new(rules: Lifecycle) -> Self {
        LifecycleGate {
            rules,
            stage: AtomicU8::new(NEW),
        }
    }

    fn allowed_before(&self, method: &str) -> bool {
        self.rules.allowed_before.iter().any(|m| m == method)
    }

    /// Whether a request's params let it through whatever the stage (see
    /// [`Lifecycle::allow_with_meta`]).
    pub(crate) fn lets_through(&self, params: Option<&str>) -> bool {
        #[derive(serde::Deserialize)]
        struct Params<'a> {
            #[serde(default, rename = "_meta", borrow)]
            meta: Option<std::collections::HashMap<Cow<'a, str>, serde::de::IgnoredAny>>,
        }
        let (Some(key), Some(params)) = (&self.rules.stateless_meta, params) else {
            return false;
        };
        serde_json::from_str::<Params<'_>>(params)
            .ok()
            .and_then(|p| p.meta)
            .is_some_and(|meta| meta.contains_key(key.as_ref()))
    }

    /// The exit code when `method` is the lifecycle's exit notification: 0
    /// after a shutdown, 1 otherwise.
    pub(crate) fn exit_code(&self, method: &str) -> Option<i32> {
        (self.rules.exit.as_deref() == Some(method)).then(|| {
            if self.stage.load(Ordering::Acquire) == SHUT_DOWN {
                0
            } else {
                1
            }
        })
    }
}

impl Gate for LifecycleGate {
    fn check(&self, input: GateInput<'_>) -> Decision {
        let method = input.method;
        let refusal = match self.stage.load(Ordering::Acquire) {
            NEW if *self.rules.initialize != *method && !self.allowed_before(method) => {
                self.rules.not_initialized.clone()
            }
            READY if self.rules.initialize_once && *self.rules.initialize == *method => {
                ErrorObject::invalid_request(format!(
                    "`{method}` may only be sent once per session"
                ))
            }
            SHUT_DOWN if !self.allowed_before(method) => self.rules.after_shutdown.clone(),
            _ => return Decision::Allow,
        };
        match input.id {
            Some(_) => Decision::Reject(refusal),
            // Notifications are held back only until the handshake.
            None if self.stage.load(Ordering::Acquire) == NEW => Decision::Drop,
            None => Decision::Allow,
        }
    }

    fn answered(&self, method: &str, success: bool) {
        if !success {
            return;
        }
        if *self.rules.initialize == *method {
            let _ = self
                .stage
                .compare_exchange(NEW, READY, Ordering::AcqRel, Ordering::Acquire);
        } else if self.rules.shutdown.as_deref() == Some(method) {
            self.stage.store(SHUT_DOWN, Ordering::Release);
        }
    }
}
