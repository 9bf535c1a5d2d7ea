//! Panicking handlers: caught where a handler runs, and answered in one
//! way, by [`panic_answer`].

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use crate::message::ErrorObject;

/// Awaits `fut`, turning a panic into its message.
pub(crate) async fn catch_panic<T>(fut: impl Future<Output = T>) -> Result<T, String> {
    use futures_util::FutureExt as _;
    std::panic::AssertUnwindSafe(fut)
        .catch_unwind()
        .await
        .map_err(panic_message)
}

/// Polls `fut` once with no waker, as the first step of work that goes to a
/// task only if it is not done at once. A panic counts as done, with its
/// message.
pub(crate) fn first_step<F: Future + ?Sized>(fut: Pin<&mut F>) -> Poll<Result<F::Output, String>> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fut.poll(&mut cx))) {
        Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(payload) => Poll::Ready(Err(panic_message(payload))),
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}

/// The answer to a request whose handler panicked, with the panic logged
/// (at `error`, with the method): an internal error that tells the caller
/// nothing of the panic's message, which may hold what it should not see.
pub(crate) fn panic_answer(method: &str, panic: &str) -> ErrorObject {
    tracing::error!(method, %panic, "a request handler panicked");
    ErrorObject::internal_error("the handler panicked")
}
