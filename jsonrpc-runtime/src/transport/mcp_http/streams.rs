//! The event streams of an MCP session as the client reads them: a `POST`'s
//! SSE answer, the server's own `GET` stream, and resuming either with
//! `Last-Event-ID` when it breaks.

use super::*;

impl<C: HttpClient> McpClient<C> {
    /// Reads a `POST`'s SSE stream until every request it carried is
    /// answered (or cancelled), resuming it when it breaks first.
    pub(super) async fn read_post_stream(
        self: &Arc<Self>,
        mut body: C::Body,
        mut pending: Vec<Id>,
        watch: Watch<'_>,
    ) -> (Vec<Id>, Option<Failed>) {
        let mut answered = Vec::new();
        let mut last_id: Option<String> = None;
        let mut retry: Option<u64> = None;
        let mut attempts = 0;
        loop {
            let broken = self
                .pump(
                    body,
                    Target::Answers,
                    watch,
                    &mut last_id,
                    &mut retry,
                    |ids| {
                        pending.retain(|id| !ids.contains(id));
                        answered.extend(ids);
                    },
                )
                .await;
            {
                let in_flight = self.in_flight();
                pending.retain(|id| in_flight.get(id) == Some(&false));
            }
            if pending.is_empty() || self.ended.load(Ordering::Acquire) {
                return (answered, None);
            }
            let why = broken.unwrap_or_else(|| "the stream ended".to_owned());
            let Some(last) = last_id.clone() else {
                return (answered, Some(Failed::new(
                    Some(200),
                    String::new(),
                    format!("{why} before every answer arrived, and it cannot be resumed (its events have no ids)"),
                )));
            };
            loop {
                attempts += 1;
                if attempts > MAX_RECONNECTS {
                    return (answered, Some(Failed::new(
                        None,
                        String::new(),
                        format!("{why} before every answer arrived, and resuming it failed {MAX_RECONNECTS} times"),
                    )));
                }
                if !self.pause(retry, attempts).await {
                    return (answered, None);
                }
                match self.open_stream(Some(&last)).await {
                    Ok(Opened::Stream(resumed)) => {
                        body = resumed;
                        break;
                    }
                    Ok(Opened::SessionGone) => return (answered, None),
                    Ok(Opened::Over | Opened::NotOffered) => {
                        return (answered, Some(Failed::new(
                            None,
                            String::new(),
                            format!("{why}, and the server has nothing more on it: the request was not answered"),
                        )))
                    }
                    Err(failed) => tracing::debug!(error = %failed.message, "resuming an SSE stream failed"),
                }
            }
        }
    }

    /// Reads one SSE body to its end, delivering each message; `answered`
    /// hears the ids each one answers. Returns why it broke, `None` when it
    /// ended cleanly.
    pub(super) async fn pump(
        &self,
        mut body: C::Body,
        target: Target,
        watch: Watch<'_>,
        last_id: &mut Option<String>,
        retry: &mut Option<u64>,
        mut answered: impl FnMut(Vec<Id>),
    ) -> Option<String> {
        let mut decoder = SseDecoder::new(self.max_len);
        loop {
            loop {
                let event = match decoder.next_event() {
                    Ok(Some(event)) => event,
                    Ok(None) => break,
                    Err(e) => return Some(e.to_string()),
                };
                if let Some(id) = decoder.last_id() {
                    *last_id = Some(id.to_owned());
                }
                if event.is_message() {
                    let ids = answered_ids(&event.data).unwrap_or_default();
                    answered(self.deliver(event.data, ids, target, watch).await);
                }
            }
            if let Some(id) = decoder.last_id() {
                *last_id = Some(id.to_owned());
            }
            if decoder.retry_ms().is_some() {
                *retry = decoder.retry_ms();
            }
            let chunk = tokio::select! {
                () = self.dropped.cancelled() => return None,
                chunk = body.chunk() => chunk,
            };
            match chunk {
                Some(Ok(data)) => decoder.push(&data),
                Some(Err(why)) => return Some(format!("the stream broke: {why}")),
                None => return None,
            }
        }
    }

    /// Waits before reopening a stream; false if the transport is gone.
    pub(super) async fn pause(&self, retry: Option<u64>, attempt: u32) -> bool {
        let delay = match retry {
            Some(ms) => Duration::from_millis(ms),
            None => FIRST_RECONNECT_DELAY * 2u32.saturating_pow(attempt.saturating_sub(1)),
        }
        .min(MAX_RECONNECT_DELAY);
        tokio::select! {
            () = self.dropped.cancelled() => false,
            () = crate::rt::sleep(delay) => true,
        }
    }

    /// Opens a `GET` stream: the standalone one, or, with `last`, the one
    /// that event was on.
    pub(super) async fn open_stream(&self, last: Option<&str>) -> Result<Opened<C::Body>, Failed> {
        let mut request = self.request(Method::GET, Bytes::new());
        let headers = request.headers_mut();
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("text/event-stream"),
        );
        if let Some(last) = last.and_then(|l| HeaderValue::from_str(l).ok()) {
            headers.insert(LAST_EVENT_ID, last);
        }
        let sent_session = self.session().id.is_some();
        let response = self.send(request).await?;
        match response.status() {
            StatusCode::NOT_FOUND if sent_session => {
                self.session_ended();
                Ok(Opened::SessionGone)
            }
            // A server without sessions may have no `GET` at all.
            StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => Ok(Opened::NotOffered),
            StatusCode::NO_CONTENT => Ok(Opened::Over),
            status
                if status.is_success()
                    && media_type(response.headers()).as_deref() == Some("text/event-stream") =>
            {
                Ok(Opened::Stream(response.into_body()))
            }
            _ => Err(self.failed_status(response).await),
        }
    }

    /// Opens the session's standalone stream, once.
    /// Opens the standalone stream, once; `opening` (held back `POST`s)
    /// is let go when the first attempt is answered.
    pub(super) fn start_server_stream(self: &Arc<Self>, opening: Option<Opening<C>>) {
        if self.get_started.swap(true, Ordering::AcqRel) {
            return;
        }
        let this = self.clone();
        crate::rt::spawn(async move {
            tokio::select! {
                () = this.dropped.cancelled() => {}
                () = this.server_stream(opening) => {}
            }
        });
    }

    /// Reads the standalone stream for as long as the session lives,
    /// reopening it when it breaks.
    pub(super) async fn server_stream(&self, mut opening: Option<Opening<C>>) {
        let mut last_id: Option<String> = None;
        let mut retry = None;
        let mut failures = 0;
        loop {
            let opened = self.open_stream(last_id.as_deref()).await;
            drop(opening.take());
            match opened {
                Ok(Opened::Stream(body)) => {
                    let mut delivered = false;
                    let broken = self
                        .pump(
                            body,
                            Target::Server,
                            Watch::default(),
                            &mut last_id,
                            &mut retry,
                            |_| {
                                delivered = true;
                            },
                        )
                        .await;
                    if delivered {
                        failures = 0;
                    }
                    tracing::debug!(
                        why = broken.as_deref().unwrap_or("it ended"),
                        "the MCP server's stream closed; reopening it"
                    );
                }
                Ok(Opened::NotOffered) => {
                    return tracing::debug!("the MCP server offers no stream of its own (405)");
                }
                Ok(Opened::Over | Opened::SessionGone) => return,
                Err(failed) => {
                    tracing::debug!(error = %failed.message, "opening the MCP server's stream failed");
                }
            }
            failures += 1;
            if failures > MAX_RECONNECTS {
                return tracing::warn!(
                    "the MCP server's stream failed {MAX_RECONNECTS} times in a row; \
                     its requests and notifications no longer arrive"
                );
            }
            if !self.pause(retry, failures).await {
                return;
            }
        }
    }
}
