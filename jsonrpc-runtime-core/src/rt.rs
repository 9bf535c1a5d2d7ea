//! The runtime seam: the one place the crate spawns tasks and reads the
//! clock. Everything else calls these, so a target whose tasks and timers
//! come from elsewhere (a browser's event loop on wasm32, where tokio has
//! no clock) replaces this file and nothing more. Today every function is
//! tokio's, which runs them on a current-thread or a multi-thread runtime
//! alike.

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
