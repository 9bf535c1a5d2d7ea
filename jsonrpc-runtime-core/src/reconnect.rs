//! A client that survives its server's restarts: [`ReconnectingPeer`].
//!
//! One task (the supervisor) owns the connection: it connects, hands the
//! live [`Peer`] to every handle, waits for it to close, and connects again
//! after a backoff with jitter ([`Backoff`]). What happens to calls:
//!
//! - a call made while connected goes out on the live connection; if that
//!   connection is lost before the answer, the call fails with
//!   [`CallError::Interrupted`]: it may or may not have run, and it is
//!   never sent again by the library;
//! - a call made while reconnecting fails at once with
//!   [`CallError::NotConnected`], or waits up to
//!   [`queue_for`](ReconnectBuilder::queue_for) for the next connection;
//! - a subscription opened through [`ReconnectingPeer::subscribe`] is
//!   opened again on the next connection, and its stream says so with
//!   [`SubscriptionError::Reconnected`] (items sent meanwhile are missing).
//!
//! Each connect, loss and retry is an [`ReconnectEvent`] for the
//! [`on_event`](ReconnectBuilder::on_event) hook and a `tracing` record.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::message::ErrorObject;
use crate::peer::{
    CallError, CloseReason, Peer, SubscribeOptions, Subscription, SubscriptionError,
};
use crate::router::Router;
use crate::transport::{Transport, TransportError};

type Connect = Arc<
    dyn Fn() -> Pin<Box<dyn Future<Output = Result<Transport, TransportError>> + Send>>
        + Send
        + Sync,
>;
type OnEvent = Arc<dyn Fn(&ReconnectEvent) + Send + Sync>;

/// How long to wait between attempts to connect: `initial`, doubled after
/// each failure up to `max`, each delay shortened by a random part of up
/// to `jitter` of it so that many clients do not retry in step.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::reconnect::Backoff;
///
/// let backoff = Backoff::new(Duration::from_millis(50), Duration::from_secs(5)).jitter(0.3);
/// assert!(backoff.delay(0) <= Duration::from_millis(50));
/// assert!(backoff.delay(20) <= Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    jitter: f64,
}

impl Default for Backoff {
    /// 100 ms, doubling up to 10 s, with a jitter of half.
    fn default() -> Self {
        Backoff::new(Duration::from_millis(100), Duration::from_secs(10))
    }
}

impl Backoff {
    /// `initial`, doubling up to `max`, with a jitter of half.
    pub fn new(initial: Duration, max: Duration) -> Self {
        Backoff {
            initial,
            max: max.max(initial),
            jitter: 0.5,
        }
    }

    /// Shortens each delay by a random part of up to `fraction` of it
    /// (clamped to 0..=1; 0 turns the jitter off).
    #[must_use]
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.jitter = fraction.clamp(0.0, 1.0);
        self
    }

    /// The delay before retry `n` (from 0), never more than the cap.
    pub fn delay(&self, n: u32) -> Duration {
        let full = self
            .initial
            .saturating_mul(1u32.checked_shl(n.min(31)).unwrap_or(u32::MAX))
            .min(self.max);
        full.mul_f64(1.0 - self.jitter * random_unit())
    }
}

/// A number in 0..1, different on each call (xorshift over a counter and
/// the clock: jitter needs spread, not secrecy).
fn random_unit() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    let nanos = crate::rt::since_epoch().subsec_nanos() as u64;
    let mut x = STATE.fetch_add(nanos | 1, Ordering::Relaxed) ^ nanos.rotate_left(32);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    (x >> 11) as f64 / (1u64 << 53) as f64
}

/// What happened to a [`ReconnectingPeer`]'s connection.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ReconnectEvent {
    /// Connected, after `attempts` tries; `again` when an earlier
    /// connection was lost.
    Connected {
        /// Tries it took, this one included.
        attempts: u32,
        /// Whether this replaces a connection that was lost.
        again: bool,
    },
    /// The connection was lost.
    Disconnected {
        /// Why.
        reason: CloseReason,
    },
    /// Connecting failed; the next try comes after `delay`.
    Retrying {
        /// Tries so far.
        attempt: u32,
        /// The wait before the next.
        delay: Duration,
        /// Why this one failed.
        error: Arc<TransportError>,
    },
    /// The tries allowed ([`ReconnectBuilder::max_attempts`]) all failed:
    /// the peer is closed.
    GaveUp {
        /// Tries made.
        attempts: u32,
    },
}

/// The state every handle sees.
#[derive(Clone)]
enum Link {
    Connecting(Option<Arc<TransportError>>),
    Up(Peer),
    Closed(Option<Arc<TransportError>>),
}

/// Settings for a [`ReconnectingPeer`]; [`spawn`](ReconnectBuilder::spawn)
/// starts it.
#[must_use = "a builder does nothing until it is spawned"]
pub struct ReconnectBuilder {
    connect: Connect,
    config: Config,
    router: Router,
    backoff: Backoff,
    queue_for: Option<Duration>,
    connect_timeout: Duration,
    max_attempts: Option<u32>,
    on_event: Option<OnEvent>,
}

impl fmt::Debug for ReconnectBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectBuilder")
            .field("backoff", &self.backoff)
            .field("queue_for", &self.queue_for)
            .field("max_attempts", &self.max_attempts)
            .finish_non_exhaustive()
    }
}

impl ReconnectBuilder {
    /// The config of each connection's peer.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The routes each connection serves (the other side's calls back).
    pub fn router(mut self, router: Router) -> Self {
        self.router = router;
        self
    }

    /// The waits between tries (default [`Backoff::default`]).
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Calls made while reconnecting wait up to `limit` for the next
    /// connection instead of failing at once with
    /// [`CallError::NotConnected`].
    pub fn queue_for(mut self, limit: Duration) -> Self {
        self.queue_for = Some(limit);
        self
    }

    /// How long one try may take (default 10 s).
    pub fn connect_timeout(mut self, limit: Duration) -> Self {
        self.connect_timeout = limit;
        self
    }

    /// Gives up after `n` tries in a row fail (default: never).
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = Some(n.max(1));
        self
    }

    /// Called with each [`ReconnectEvent`], on the supervisor's task: keep
    /// it short.
    pub fn on_event(mut self, hook: impl Fn(&ReconnectEvent) + Send + Sync + 'static) -> Self {
        self.on_event = Some(Arc::new(hook));
        self
    }

    /// Starts connecting, and returns the first handle at once.
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime.
    pub fn spawn(self) -> ReconnectingPeer {
        let (link, watching) = watch::channel(Link::Connecting(None));
        let stop = CancellationToken::new();
        let done = CancellationToken::new();
        let queue_for = self.queue_for;
        crate::rt::spawn(supervise(self, link, stop.clone(), done.clone()));
        ReconnectingPeer {
            shared: Arc::new(Handles {
                link: watching,
                stop,
                done,
                queue_for,
            }),
        }
    }
}

/// What the handles share; the last one dropped stops the supervisor.
struct Handles {
    link: watch::Receiver<Link>,
    stop: CancellationToken,
    done: CancellationToken,
    queue_for: Option<Duration>,
}

impl Drop for Handles {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A client that reconnects: see the [module docs](self).
///
/// Handles are cheap to clone; the connection closes when the last one is
/// dropped or [`close`](ReconnectingPeer::close) is called.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use jsonrpc_runtime::reconnect::ReconnectingPeer;
/// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let router = Router::new()
///     .request("add", |(a, b): (i64, i64), _: Context| async move { Ok::<_, ErrorObject>(a + b) });
/// // A "server" that a connect makes anew each time (a TcpConnector in real use).
/// let connect = move || {
///     let router = router.clone();
///     async move {
///         let (client, server) = Transport::pair(16);
///         let server = Peer::builder().router(router).spawn(server);
///         tokio::spawn(async move { server.closed().await });
///         Ok(client)
///     }
/// };
/// let client = ReconnectingPeer::builder(connect).queue_for(Duration::from_secs(5)).spawn();
/// let sum: i64 = client.call("add", [2, 3]).await?;
/// assert_eq!(sum, 5);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct ReconnectingPeer {
    shared: Arc<Handles>,
}

impl fmt::Debug for ReconnectingPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectingPeer")
            .field("connected", &self.is_connected())
            .finish_non_exhaustive()
    }
}

impl ReconnectingPeer {
    /// A builder around `connect`, which opens one connection each time it
    /// is called (`TcpConnector::connect`, `UnixConnector::connect`,
    /// `WebSocketConnector::connect`, ...).
    pub fn builder<C, Fut>(connect: C) -> ReconnectBuilder
    where
        C: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Transport, TransportError>> + Send + 'static,
    {
        ReconnectBuilder {
            connect: Arc::new(move || Box::pin(connect())),
            config: Config::default(),
            router: Router::new(),
            backoff: Backoff::default(),
            queue_for: None,
            connect_timeout: Duration::from_secs(10),
            max_attempts: None,
            on_event: None,
        }
    }

    /// Whether a connection is up now.
    pub fn is_connected(&self) -> bool {
        matches!(*self.shared.link.borrow(), Link::Up(_))
    }

    /// The live connection; while reconnecting, waits for the next one up
    /// to the builder's [`queue_for`](ReconnectBuilder::queue_for) (or not
    /// at all).
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`] with the last failure to connect.
    pub async fn peer<E>(&self) -> Result<Peer, CallError<E>> {
        let mut link = self.shared.link.clone();
        let up = |link: &Link| !matches!(link, Link::Connecting(_));
        let wait = async {
            let _ = link.wait_for(up).await;
        };
        if let Some(limit) = self.shared.queue_for {
            let _ = crate::rt::timeout(limit, wait).await;
        }
        let state = self.shared.link.borrow().clone();
        match state {
            Link::Up(peer) => Ok(peer),
            Link::Connecting(error) | Link::Closed(error) => Err(CallError::NotConnected(error)),
        }
    }

    /// Runs `calls` on the live connection (see [`peer`](Self::peer)):
    /// the way to use a client `#[rpc]` generated. A call that fails
    /// because the connection was lost fails with
    /// [`CallError::Interrupted`].
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`], [`CallError::Interrupted`], or the
    /// calls' own.
    pub async fn run<T, E, F, Fut>(&self, calls: F) -> Result<T, CallError<E>>
    where
        F: FnOnce(Peer) -> Fut,
        Fut: Future<Output = Result<T, CallError<E>>>,
    {
        let peer = self.peer().await?;
        match calls(peer).await {
            Err(CallError::Closed(reason)) => Err(CallError::Interrupted(reason)),
            other => other,
        }
    }

    /// Calls `method` on the live connection (see [`run`](Self::run)).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub async fn call<R>(&self, method: &str, params: impl Serialize) -> Result<R, CallError>
    where
        R: DeserializeOwned + Send + 'static,
    {
        self.run(|peer| async move { peer.call(method, params).await })
            .await
    }

    /// Sends a notification on the live connection.
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`], or [`CallError::NotSent`].
    pub async fn notify(&self, method: &str, params: impl Serialize) -> Result<(), CallError> {
        let peer = self.peer().await?;
        peer.notify(method, params)
            .await
            .map_err(CallError::NotSent)
    }

    /// Subscribes (as [`Peer::subscribe`]), and subscribes again on each
    /// new connection; see [`ReconnectingSubscription`].
    ///
    /// # Errors
    ///
    /// As [`Peer::subscribe`] on the first connection.
    pub async fn subscribe<T: DeserializeOwned>(
        &self,
        method: &str,
        params: impl Serialize,
        unsubscribe: &str,
    ) -> Result<ReconnectingSubscription<T>, CallError> {
        let params = serde_json::value::to_raw_value(&params).map_err(CallError::InvalidParams)?;
        let mut sub = ReconnectingSubscription {
            client: self.clone(),
            method: method.into(),
            params,
            unsubscribe: unsubscribe.into(),
            current: None,
            gap: false,
            finished: false,
        };
        sub.open().await?;
        Ok(sub)
    }

    /// Waits until a connection is up, or the peer has given up.
    ///
    /// # Errors
    ///
    /// [`CallError::NotConnected`] once it has given up or is closed.
    pub async fn connected(&self) -> Result<(), CallError> {
        let mut link = self.shared.link.clone();
        let _ = link
            .wait_for(|link| !matches!(link, Link::Connecting(_)))
            .await;
        self.peer().await.map(drop)
    }

    /// Closes the connection and stops reconnecting; returns once the
    /// connection is closed.
    pub async fn close(&self) {
        self.shared.stop.cancel();
        self.shared.done.cancelled().await;
    }
}

/// The supervisor: connect, serve, lose, wait, again.
async fn supervise(
    builder: ReconnectBuilder,
    link: watch::Sender<Link>,
    stop: CancellationToken,
    done: CancellationToken,
) {
    let emit = |event: ReconnectEvent| {
        if let Some(hook) = &builder.on_event {
            hook(&event);
        }
    };
    let mut attempts = 0u32;
    let mut again = false;
    loop {
        attempts += 1;
        let attempt = crate::rt::timeout(builder.connect_timeout, (builder.connect)());
        let outcome = tokio::select! {
            outcome = attempt => outcome,
            _ = stop.cancelled() => break,
        };
        let error = match outcome {
            Ok(Ok(transport)) => {
                let peer = Peer::builder()
                    .config(builder.config.clone())
                    .router(builder.router.clone())
                    .spawn(transport);
                tracing::info!(attempts, again, "connected");
                emit(ReconnectEvent::Connected { attempts, again });
                link.send_replace(Link::Up(peer.clone()));
                let reason = tokio::select! {
                    reason = peer.closed() => reason,
                    _ = stop.cancelled() => {
                        link.send_replace(Link::Closed(None));
                        peer.close(Duration::from_secs(1)).await;
                        break;
                    }
                };
                link.send_replace(Link::Connecting(None));
                tracing::warn!(%reason, "the connection was lost; reconnecting");
                emit(ReconnectEvent::Disconnected { reason });
                (attempts, again) = (0, true);
                None
            }
            Ok(Err(error)) => Some(Arc::new(error)),
            Err(_) => Some(Arc::new(TransportError::Invalid(format!(
                "connecting took longer than {:?}",
                builder.connect_timeout
            )))),
        };
        if let Some(error) = &error {
            if builder.max_attempts.is_some_and(|max| attempts >= max) {
                tracing::warn!(attempts, %error, "giving up connecting");
                emit(ReconnectEvent::GaveUp { attempts });
                link.send_replace(Link::Closed(Some(error.clone())));
                done.cancel();
                return;
            }
            link.send_replace(Link::Connecting(Some(error.clone())));
        }
        let delay = builder.backoff.delay(attempts.saturating_sub(1));
        if let Some(error) = error {
            tracing::info!(attempt = attempts, ?delay, %error, "connecting failed; retrying");
            emit(ReconnectEvent::Retrying {
                attempt: attempts,
                delay,
                error,
            });
        }
        tokio::select! {
            _ = crate::rt::sleep(delay) => {}
            _ = stop.cancelled() => break,
        }
    }
    link.send_replace(Link::Closed(None));
    done.cancel();
}

/// A subscription of a [`ReconnectingPeer`]: opened again on each new
/// connection, as soon as the stream is read there. After a reconnect it
/// yields [`SubscriptionError::Reconnected`] once (items sent while there
/// was no connection are missing), then the items of the new
/// subscription. It ends as a [`Subscription`] does, or with the
/// subscribe call's error on a new connection, or when the peer gives up.
pub struct ReconnectingSubscription<T> {
    client: ReconnectingPeer,
    method: String,
    params: Box<RawValue>,
    unsubscribe: String,
    current: Option<Subscription<T>>,
    gap: bool,
    finished: bool,
}

impl<T> fmt::Debug for ReconnectingSubscription<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconnectingSubscription")
            .field("method", &self.method)
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

impl<T: DeserializeOwned> ReconnectingSubscription<T> {
    async fn open(&mut self) -> Result<(), CallError> {
        let peer = self.client.peer::<std::convert::Infallible>().await?;
        let sub = peer
            .subscribe_with(
                &self.method,
                &*self.params,
                &self.unsubscribe,
                SubscribeOptions::default(),
            )
            .await?;
        self.current = Some(sub);
        Ok(())
    }

    /// The next item; `None` once the subscription has ended.
    pub async fn next(&mut self) -> Option<Result<T, SubscriptionError>> {
        if self.finished {
            return None;
        }
        loop {
            if let Some(sub) = &mut self.current {
                match sub.next().await {
                    Some(Err(SubscriptionError::Closed(_))) => {
                        self.current = None;
                        self.gap = true;
                    }
                    Some(item) => return Some(item),
                    None => {
                        self.finished = true;
                        return None;
                    }
                }
                continue;
            }
            // Wait for the next connection, however long it takes.
            if self.client.connected().await.is_err() {
                return self.end(SubscriptionError::Closed(CloseReason::Local));
            }
            match self.open().await {
                Ok(()) if self.gap => {
                    self.gap = false;
                    return Some(Err(SubscriptionError::Reconnected));
                }
                Ok(()) => {}
                // Lost again before it was open: try on the next one.
                Err(CallError::Closed(_) | CallError::NotConnected(_)) => {}
                Err(error) => {
                    let error = ErrorObject::from(error);
                    return self.end(SubscriptionError::Ended(error));
                }
            }
        }
    }

    /// Yields `error` once; nothing follows.
    fn end(&mut self, error: SubscriptionError) -> Option<Result<T, SubscriptionError>> {
        self.finished = true;
        self.current = None;
        Some(Err(error))
    }

    /// Ends the subscription (see [`Subscription::unsubscribe`]).
    ///
    /// # Errors
    ///
    /// As [`Subscription::unsubscribe`].
    pub async fn unsubscribe(self) -> Result<bool, CallError> {
        match self.current {
            Some(sub) => sub.unsubscribe().await,
            None => Ok(false),
        }
    }
}
