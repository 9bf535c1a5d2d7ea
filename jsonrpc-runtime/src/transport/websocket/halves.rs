//! The transport's two halves over one WebSocket: the inbound stream of
//! text messages as frames (refusing binary and oversized ones), and the
//! outbound sink with its close handshake. They share the WebSocket behind
//! a mutex held only for the length of one poll.

use super::*;

pub(super) fn websocket_transport<S>(ws: WebSocketStream<S>) -> Transport
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let shared = Arc::new(Mutex::new(Conn {
        ws,
        close_with: None,
        out_of_step: false,
    }));
    Transport::new(
        Inbound {
            conn: shared.clone(),
            pending: None,
            done: false,
        },
        Outbound {
            conn: shared,
            gone: false,
            closing: Closing::Open,
        },
    )
}

/// The WebSocket both halves share.
struct Conn<S> {
    ws: WebSocketStream<S>,
    /// The close frame to send instead of a normal close, when the other
    /// side broke the rules.
    close_with: Option<CloseFrame>,
    /// Bytes of a refused frame are still unread: the rest of the stream
    /// cannot be parsed.
    out_of_step: bool,
}

fn lock<S>(conn: &Mutex<Conn<S>>) -> MutexGuard<'_, Conn<S>> {
    // Every update is a single assignment: a panic cannot leave it torn.
    conn.lock().unwrap_or_else(|p| p.into_inner())
}

/// Inbound messages as frames.
struct Inbound<S> {
    conn: Arc<Mutex<Conn<S>>>,
    /// An error to yield after a refusal.
    pending: Option<TransportError>,
    done: bool,
}

impl<S> Stream for Inbound<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    type Item = Result<Frame, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if let Some(error) = this.pending.take() {
            return Poll::Ready(Some(Err(error)));
        }
        if this.done {
            return Poll::Ready(None);
        }
        let mut conn = lock(&this.conn);
        loop {
            let message = match std::task::ready!(conn.ws.poll_next_unpin(cx)) {
                None => {
                    this.done = true;
                    return Poll::Ready(None);
                }
                Some(Ok(message)) => message,
                Some(Err(e)) => {
                    this.done = true;
                    let (refusal, error) = read_failure(&mut conn, e);
                    return Poll::Ready(Some(match refusal {
                        Some(refusal) => {
                            this.pending = Some(error);
                            Ok(Frame::Refused(refusal))
                        }
                        None => Err(error),
                    }));
                }
            };
            match message {
                Message::Text(text) => return Poll::Ready(Some(Ok(Frame::Message(text.into())))),
                Message::Binary(_) => {
                    return Poll::Ready(Some(Ok(Frame::Refused(FrameRefusal::Binary))))
                }
                Message::Close(frame) => {
                    // Reading on flushes tungstenite's reply and ends the
                    // stream.
                    tracing::debug!(?frame, "the other side closed the WebSocket");
                }
                // Pongs go out on the next read; nothing else concerns us.
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }
}

/// What a read error means: a refusal to answer first (for a message over
/// the limit), and the error that ends the connection.
fn read_failure<S>(conn: &mut Conn<S>, e: WsError) -> (Option<FrameRefusal>, TransportError) {
    let close = |code: CloseCode, reason: String| CloseFrame {
        code,
        reason: Utf8Bytes::from(reason),
    };
    match e {
        WsError::Capacity(CapacityError::MessageTooLong { size, max_size }) => {
            conn.close_with = Some(close(
                CloseCode::Size,
                format!("message too big: {size} bytes, the limit is {max_size}"),
            ));
            conn.out_of_step = true;
            let error = ws_error(
                format!(
                    "the other side sent a {size}-byte message, over the {max_size}-byte limit; \
                     the connection was closed with code 1009 (message too big)"
                ),
                Some(1009),
                Some(WsError::Capacity(CapacityError::MessageTooLong {
                    size,
                    max_size,
                })),
            );
            let head = bytes::Bytes::new();
            (
                Some(FrameRefusal::TooLong {
                    limit: max_size,
                    head,
                }),
                error,
            )
        }
        WsError::Utf8(detail) => {
            conn.close_with = Some(close(
                CloseCode::Invalid,
                "text message is not UTF-8".into(),
            ));
            let error = ws_error(
                format!(
                    "the other side sent a text message that is not UTF-8 ({detail}); the \
                     connection was closed with code 1007 (invalid payload)"
                ),
                Some(1007),
                None,
            );
            (None, error)
        }
        WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => (
            None,
            ws_error(
                "the other side dropped the connection without a close frame",
                None,
                Some(WsError::Protocol(
                    ProtocolError::ResetWithoutClosingHandshake,
                )),
            ),
        ),
        WsError::Protocol(p) => {
            conn.close_with = Some(close(CloseCode::Protocol, "protocol error".into()));
            conn.out_of_step = true;
            let error = ws_error(
                format!(
                    "the other side broke the WebSocket protocol ({p}); the connection was \
                     closed with code 1002 (protocol error)"
                ),
                Some(1002),
                Some(WsError::Protocol(p)),
            );
            (None, error)
        }
        WsError::Io(e) => (None, TransportError::from(e)),
        e => (
            None,
            ws_error(format!("reading failed: {e}"), None, Some(e)),
        ),
    }
}

enum Closing {
    Open,
    /// The close frame is queued; flushing it.
    Flushing,
    /// Waiting for the other side's reply, until the deadline.
    Lingering(Pin<Box<Sleep>>),
    Closed,
}

/// Outbound messages as text messages.
struct Outbound<S> {
    conn: Arc<Mutex<Conn<S>>>,
    /// The other side has closed: what is still sent is dropped.
    gone: bool,
    closing: Closing,
}

/// Whether a write error only means the connection is already closing;
/// the reader reports how it ended.
fn is_closed_error(e: &WsError) -> bool {
    matches!(
        e,
        WsError::ConnectionClosed
            | WsError::AlreadyClosed
            | WsError::Protocol(ProtocolError::SendAfterClosing)
    )
}

/// One of the socket sink's polls: `poll_ready` or `poll_flush`.
type SinkPoll<S> = fn(Pin<&mut WebSocketStream<S>>, &mut Context<'_>) -> Poll<Result<(), WsError>>;

impl<S> Outbound<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    /// Polls the socket's sink with `poll` (ready or flush), unless the
    /// connection is already going.
    fn poll_ws(
        &mut self,
        cx: &mut Context<'_>,
        poll: SinkPoll<S>,
    ) -> Poll<Result<(), TransportError>> {
        if self.gone {
            return Poll::Ready(Ok(()));
        }
        let result = {
            let mut conn = lock(&self.conn);
            std::task::ready!(poll(Pin::new(&mut conn.ws), cx))
        };
        Poll::Ready(self.write_result(result))
    }
}

impl<S> Outbound<S> {
    fn write_result(&mut self, result: Result<(), WsError>) -> Result<(), TransportError> {
        match result {
            Ok(()) => Ok(()),
            Err(e) if is_closed_error(&e) => {
                if !self.gone {
                    tracing::debug!("the WebSocket is closing; dropping outbound messages");
                    self.gone = true;
                }
                Ok(())
            }
            Err(WsError::Io(e)) => Err(TransportError::from(e)),
            Err(e) => Err(ws_error(format!("writing failed: {e}"), None, Some(e))),
        }
    }
}

impl<S> Sink<Bytes> for Outbound<S>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    type Error = TransportError;

    fn poll_ready(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.poll_ws(cx, |ws, cx| ws.poll_ready(cx))
    }

    fn start_send(mut self: Pin<&mut Self>, item: Bytes) -> Result<(), TransportError> {
        if self.gone {
            return Ok(());
        }
        let text = Utf8Bytes::try_from(item).map_err(|e| {
            ws_error(
                format!(
                    "an outbound message is not UTF-8 text ({e}); JSON-RPC messages travel as text"
                ),
                None,
                None,
            )
        })?;
        let result = {
            let mut conn = lock(&self.conn);
            Pin::new(&mut conn.ws).start_send(Message::Text(text))
        };
        self.write_result(result)
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        self.poll_ws(cx, |ws, cx| ws.poll_flush(cx))
    }

    fn poll_close(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), TransportError>> {
        let this = &mut *self;
        let mut conn = lock(&this.conn);
        loop {
            match &mut this.closing {
                Closing::Open => {
                    let frame = conn.close_with.take().unwrap_or(CloseFrame {
                        code: CloseCode::Normal,
                        reason: Utf8Bytes::from_static(""),
                    });
                    let ws = Pin::new(&mut conn.ws);
                    // A connection already closing (the other side sent
                    // its close frame) just flushes tungstenite's reply.
                    match std::task::ready!(ws.poll_ready(cx)) {
                        Ok(()) => {
                            let ws = Pin::new(&mut conn.ws);
                            if let Err(e) = ws.start_send(Message::Close(Some(frame))) {
                                if !is_closed_error(&e) {
                                    tracing::debug!(error = %e, "could not send the close frame");
                                }
                            }
                        }
                        Err(e) => tracing::debug!(error = %e, "could not send the close frame"),
                    }
                    this.closing = Closing::Flushing;
                }
                Closing::Flushing => {
                    if let Err(e) = std::task::ready!(Pin::new(&mut conn.ws).poll_flush(cx)) {
                        if !is_closed_error(&e) {
                            tracing::debug!(error = %e, "could not flush the close frame");
                        }
                    }
                    this.closing = Closing::Lingering(Box::pin(crate::rt::sleep(CLOSE_LINGER)));
                }
                Closing::Lingering(deadline) => {
                    if deadline.as_mut().poll(cx).is_ready() {
                        this.closing = Closing::Closed;
                        continue;
                    }
                    if conn.out_of_step {
                        // The stream cannot be parsed: say we are done
                        // (FIN), and drop raw bytes until the other side
                        // closes too.
                        if drain_raw(conn.ws.get_mut(), cx).is_ready() {
                            this.closing = Closing::Closed;
                        } else {
                            return Poll::Pending;
                        }
                    } else {
                        match conn.ws.poll_next_unpin(cx) {
                            Poll::Pending => return Poll::Pending,
                            // The reply (or anything still in flight,
                            // dropped): keep reading until the end.
                            Poll::Ready(Some(Ok(_))) => {}
                            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => {
                                this.closing = Closing::Closed;
                            }
                        }
                    }
                }
                Closing::Closed => return Poll::Ready(Ok(())),
            }
        }
    }
}

/// Shuts down the write side, then reads and drops bytes until the other
/// side ends the stream. Ready when it has (or on an error).
fn drain_raw<S>(stream: &mut S, cx: &mut Context<'_>) -> Poll<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    if let Poll::Ready(Err(e)) = Pin::new(&mut *stream).poll_shutdown(cx) {
        tracing::debug!(error = %e, "could not shut down the write side");
    }
    let mut scratch = [0u8; 8 * 1024];
    loop {
        let mut buf = ReadBuf::new(&mut scratch);
        match Pin::new(&mut *stream).poll_read(cx, &mut buf) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(()),
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(_)) => return Poll::Ready(()),
        }
    }
}
