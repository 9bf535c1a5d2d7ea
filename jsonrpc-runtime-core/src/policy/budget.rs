//! Budgets shared by many connections: requests in flight and the bytes
//! their params hold, counted across every connection a budget is given to.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::message::{ErrorCode, ErrorObject};

/// A cap on inbound requests admitted and not yet answered, and on the bytes
/// of params they hold, across every connection whose
/// [`Config`](crate::Config) carries it ([`Config::shared_budget`](crate::Config::shared_budget)).
///
/// Per-connection caps ([`max_queued`](crate::Config::max_queued),
/// [`max_parked_bytes`](crate::Config::max_parked_bytes)) bound what one
/// client holds; a shared budget bounds what all of them hold together, so
/// many connections at their own caps cannot take the process's memory.
/// A request over either cap is answered at once with -32000 and never
/// runs. A request's bytes are the length of its params as received; they
/// are counted from admission until its answer is decided.
///
/// Cloning gives another handle on the same counters.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::policy::SharedBudget;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::TcpAcceptor;
/// use jsonrpc_runtime::{Config, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // At most 10,000 requests and 256 MiB of params across every connection.
/// let budget = SharedBudget::new(10_000, 256 << 20);
/// let config = Config::default().shared_budget(budget.clone());
/// let server = Listener::new(TcpAcceptor::bind("127.0.0.1:0").await?)
///     .config(config)
///     .spawn(Router::new());
/// assert_eq!(budget.requests(), 0);
/// # drop(server);
/// # Ok::<(), std::io::Error>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct SharedBudget(Arc<Counters>);

struct Counters {
    max_requests: usize,
    max_bytes: usize,
    requests: AtomicUsize,
    bytes: AtomicUsize,
}

impl SharedBudget {
    /// A budget of at most `max_requests` requests and `max_bytes` bytes of
    /// params at once.
    ///
    /// # Panics
    ///
    /// Panics if `max_requests` is zero.
    #[track_caller]
    pub fn new(max_requests: usize, max_bytes: usize) -> Self {
        assert!(max_requests > 0, "a shared budget needs room for a request");
        SharedBudget(Arc::new(Counters {
            max_requests,
            max_bytes,
            requests: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }))
    }

    /// Requests admitted and not yet answered, across every connection.
    pub fn requests(&self) -> usize {
        self.0.requests.load(Ordering::Acquire)
    }

    /// Bytes of params those requests hold.
    pub fn bytes(&self) -> usize {
        self.0.bytes.load(Ordering::Acquire)
    }

    /// Takes room for one request holding `bytes`, or says why there is
    /// none. The room comes back when the permit drops.
    pub(crate) fn take(&self, bytes: usize) -> Result<SharedPermit, ErrorObject> {
        let counters = &*self.0;
        let requests = counters.requests.fetch_add(1, Ordering::AcqRel);
        if requests >= counters.max_requests {
            counters.requests.fetch_sub(1, Ordering::AcqRel);
            return Err(overloaded(format_args!(
                "{requests} requests are in flight across the server (limit {})",
                counters.max_requests
            )));
        }
        let held = counters.bytes.fetch_add(bytes, Ordering::AcqRel);
        // One request on its own is always let through, so a budget smaller
        // than the frame cap cannot refuse everything.
        if held > 0 && held.saturating_add(bytes) > counters.max_bytes {
            counters.bytes.fetch_sub(bytes, Ordering::AcqRel);
            counters.requests.fetch_sub(1, Ordering::AcqRel);
            return Err(overloaded(format_args!(
                "requests in flight across the server hold {held} bytes of params (limit {})",
                counters.max_bytes
            )));
        }
        Ok(SharedPermit {
            budget: self.clone(),
            bytes,
        })
    }
}

impl fmt::Debug for SharedBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBudget")
            .field("requests", &self.requests())
            .field("max_requests", &self.0.max_requests)
            .field("bytes", &self.bytes())
            .field("max_bytes", &self.0.max_bytes)
            .finish()
    }
}

/// -32000 "server overloaded" with why.
pub(crate) fn overloaded(why: fmt::Arguments<'_>) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::SERVER_OVERLOADED,
        format!("server overloaded: {why}; retry later"),
    )
}

/// One request's room in a [`SharedBudget`], given back on drop (however
/// the request ends, even if its task is dropped).
pub(crate) struct SharedPermit {
    budget: SharedBudget,
    bytes: usize,
}

impl Drop for SharedPermit {
    fn drop(&mut self) {
        let counters = &*self.budget.0;
        counters.bytes.fetch_sub(self.bytes, Ordering::AcqRel);
        counters.requests.fetch_sub(1, Ordering::AcqRel);
    }
}
