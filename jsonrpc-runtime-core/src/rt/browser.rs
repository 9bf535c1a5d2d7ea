//! The browser's half of the seam (see the parent module): tasks on the
//! JavaScript event loop, timers on `setTimeout`, the clock from
//! `performance.now()`.
//!
//! Timers are kept here, in one table ordered by deadline, and one
//! JavaScript timeout is armed for the earliest: a [`Sleep`] holds only its
//! deadline and a key, so it is `Send` like tokio's and the peer's futures
//! stay `Send` on every target.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use futures_util::future::{AbortHandle, Abortable};
use tokio::sync::oneshot;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast as _, JsValue};

pub use web_time::Instant;

#[wasm_bindgen]
extern "C" {
    // Globals of a window, a worker, Node and Deno alike.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue);
}

/// Runs `future` as a task of its own on the event loop. Unlike tokio's,
/// `future` need not be `Send`: there is one thread.
#[inline]
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let (abort, registration) = AbortHandle::new_pair();
    let (done, result) = oneshot::channel();
    let task = Abortable::new(future, registration);
    wasm_bindgen_futures::spawn_local(async move {
        if let Ok(output) = task.await {
            let _ = done.send(output);
        }
    });
    JoinHandle { result, abort }
}

/// A spawned task: awaiting it gives its output, dropping it lets the task
/// run on (as tokio's does).
pub struct JoinHandle<T> {
    result: oneshot::Receiver<T>,
    abort: AbortHandle,
}

impl<T> JoinHandle<T> {
    /// Stops the task at its next await.
    pub fn abort(&self) {
        self.abort.abort();
    }

    /// A handle that stops the task, kept apart from this one.
    pub fn abort_handle(&self) -> AbortHandle {
        self.abort.clone()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = Result<T, JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.result).poll(cx).map_err(|_| JoinError)
    }
}

impl<T> fmt::Debug for JoinHandle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinHandle").finish_non_exhaustive()
    }
}

/// A task ended without an output: it was aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinError;

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the task was aborted")
    }
}

impl std::error::Error for JoinError {}

/// Always: the browser runs every task on one thread.
#[inline]
pub fn runs_on_one_thread() -> bool {
    true
}

/// Never (see [`runs_on_one_thread`]).
#[inline]
pub fn runs_on_many_threads() -> bool {
    false
}

/// The wall clock, as a duration since the Unix epoch.
#[inline]
pub fn since_epoch() -> Duration {
    Duration::from_secs_f64(js_sys::Date::now().max(0.0) / 1000.0)
}

/// A future that ends after `duration`.
#[inline]
pub fn sleep(duration: Duration) -> Sleep {
    sleep_until(Instant::now() + duration)
}

/// A future that ends at `deadline`.
#[inline]
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        registered: None,
    }
}

/// `future`, given up after `duration`.
#[inline]
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    timeout_at(Instant::now() + duration, future)
}

/// `future`, given up at `deadline`.
#[inline]
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

/// The future of [`sleep`] and [`sleep_until`].
#[derive(Debug)]
pub struct Sleep {
    deadline: Instant,
    /// Its entry in the timer table, while it waits.
    registered: Option<(Instant, u64)>,
}

impl Sleep {
    /// When it ends.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Makes it end at `deadline` instead.
    pub fn reset(self: Pin<&mut Self>, deadline: Instant) {
        self.get_mut().deadline = deadline;
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        if Instant::now() >= deadline {
            if let Some(entry) = self.registered.take() {
                TIMERS.with(|timers| timers.borrow_mut().remove(entry));
            }
            return Poll::Ready(());
        }
        let entry = TIMERS.with(|timers| {
            let mut timers = timers.borrow_mut();
            let entry = timers.register(self.registered.take(), deadline, cx.waker());
            timers.arm();
            entry
        });
        self.registered = Some(entry);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(entry) = self.registered.take() {
            // `try_with`: the table may be gone already at thread exit.
            let _ = TIMERS.try_with(|timers| timers.borrow_mut().remove(entry));
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`timeout`] and [`timeout_at`].
    #[derive(Debug)]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: Sleep,
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.future.poll(cx) {
            return Poll::Ready(Ok(output));
        }
        Pin::new(this.sleep).poll(cx).map(|()| Err(Elapsed))
    }
}

/// A [`Timeout`]'s deadline passed first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

thread_local! {
    static TIMERS: RefCell<Timers> = RefCell::new(Timers::default());
}

/// Every waiting [`Sleep`], by deadline, and the one JavaScript timeout
/// armed for the earliest.
#[derive(Default)]
struct Timers {
    next_key: u64,
    waiting: BTreeMap<(Instant, u64), Waker>,
    /// The deadline the JavaScript timeout is armed for, and its handle.
    armed: Option<(Instant, JsValue)>,
    /// What the JavaScript timeout calls: made once, kept for every arming.
    fire: Option<Closure<dyn FnMut()>>,
}

impl Timers {
    /// Puts a sleep's waker in the table at `deadline` (moving its entry if
    /// the deadline changed) and returns its entry.
    fn register(
        &mut self,
        entry: Option<(Instant, u64)>,
        deadline: Instant,
        waker: &Waker,
    ) -> (Instant, u64) {
        if let Some(entry) = entry {
            if entry.0 == deadline {
                if let Some(kept) = self.waiting.get_mut(&entry) {
                    if !kept.will_wake(waker) {
                        kept.clone_from(waker);
                    }
                    return entry;
                }
            }
            self.waiting.remove(&entry);
        }
        self.next_key += 1;
        let entry = (deadline, self.next_key);
        self.waiting.insert(entry, waker.clone());
        entry
    }

    fn remove(&mut self, entry: (Instant, u64)) {
        self.waiting.remove(&entry);
    }

    /// Arms the JavaScript timeout for the earliest deadline, unless it is
    /// armed for that one or an earlier one already.
    fn arm(&mut self) {
        let Some(&(earliest, _)) = self.waiting.keys().next() else {
            return;
        };
        if let Some((armed, handle)) = &self.armed {
            if *armed <= earliest {
                return;
            }
            clear_timeout(handle);
        }
        let fire = self.fire.get_or_insert_with(|| Closure::new(fire));
        let wait = earliest.saturating_duration_since(Instant::now());
        // Whole milliseconds, rounded up: a timeout that fires early only
        // arms again.
        let ms = (wait.as_secs_f64() * 1000.0).ceil();
        let handle = set_timeout(fire.as_ref().unchecked_ref(), ms);
        self.armed = Some((earliest, handle));
    }
}

/// The JavaScript timeout fired: wakes every sleep that is due and arms
/// the timeout for the next one.
fn fire() {
    let due = TIMERS.with(|timers| {
        let mut timers = timers.borrow_mut();
        timers.armed = None;
        let now = Instant::now();
        let later = timers.waiting.split_off(&(now, u64::MAX));
        let due = std::mem::replace(&mut timers.waiting, later);
        timers.arm();
        due
    });
    // Woken outside the borrow: a waker may poll a sleep at once.
    for waker in due.into_values() {
        waker.wake();
    }
}
