//! tokio's half of the seam (see the parent module).

use std::future::Future;
use std::time::Duration;

pub use tokio::task::JoinHandle;
pub use tokio::time::{Instant, Sleep, Timeout};

/// Runs `future` as a task of its own.
///
/// # Panics
///
/// Outside a runtime.
#[inline]
#[track_caller]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    tokio::spawn(future)
}

/// A future that ends after `duration`.
#[inline]
pub fn sleep(duration: Duration) -> Sleep {
    tokio::time::sleep(duration)
}

/// A future that ends at `deadline`.
#[inline]
pub fn sleep_until(deadline: Instant) -> Sleep {
    tokio::time::sleep_until(deadline)
}

/// `future`, given up after `duration`.
#[inline]
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    tokio::time::timeout(duration, future)
}

/// `future`, given up at `deadline`.
#[inline]
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    tokio::time::timeout_at(deadline, future)
}

/// Whether the current runtime runs every task on this one thread (a
/// current-thread runtime): work can then be done inline, without waking
/// another task. `false` outside a runtime.
#[inline]
pub fn runs_on_one_thread() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread)
}

/// Whether the current runtime spreads tasks over several threads (a
/// multi-thread runtime). `false` outside a runtime.
#[inline]
pub fn runs_on_many_threads() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() != tokio::runtime::RuntimeFlavor::CurrentThread)
}

/// The wall clock, as a duration since the Unix epoch (zero if the clock is
/// set before it).
#[inline]
pub fn since_epoch() -> Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}
