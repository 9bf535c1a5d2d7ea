//! One `POST` of the MCP HTTP client and what comes back: the wait for an
//! `initialize` or a standalone stream under way, the session's or a
//! stateless request's headers, a token got when the server asks for one,
//! and the answer (JSON, a stream, or a failure made up for each request
//! it carried).

use super::*;

/// Lets later `POST`s go once the standalone stream is open, was refused,
/// or will not be opened.
pub(super) struct Opening<C>(Arc<McpClient<C>>);

impl<C> Drop for Opening<C> {
    fn drop(&mut self) {
        self.0.opening.send_replace(false);
    }
}

/// Lets later `POST`s go once the `initialize` one has its answer's
/// headers (or failed).
struct InitializeDone<'a>(&'a watch::Sender<bool>);

impl Drop for InitializeDone<'_> {
    fn drop(&mut self) {
        self.0.send_replace(false);
    }
}

impl<C: HttpClient> McpClient<C> {
    /// Posts `message` and delivers what comes back; every request it
    /// carried is answered, by the server or by a made-up error.
    pub(super) async fn post(self: &Arc<Self>, message: Bytes, outgoing: Outgoing) {
        if outgoing.initialize.is_none() {
            let mut initializing = self.initializing.subscribe();
            let _ = initializing.wait_for(|busy| !busy).await;
        }
        if !outgoing.initialized {
            let mut opening = self.opening.subscribe();
            let _ = opening.wait_for(|busy| !busy).await;
        }
        let (answered, failed) = self.exchange(message, &outgoing).await;
        let unanswered: Vec<Id> = {
            let mut in_flight = self.in_flight();
            outgoing
                .requests
                .iter()
                .filter(|id| in_flight.remove(id) == Some(false) && !answered.contains(id))
                .cloned()
                .collect()
        };
        if self.ended.load(Ordering::Acquire) {
            return;
        }
        let failed = match failed {
            Some(failed) => failed,
            None if unanswered.is_empty() => return,
            None => Failed::new(
                None,
                String::new(),
                format!("{} sent no answer to this request", self.url),
            ),
        };
        if outgoing.requests.is_empty() {
            tracing::warn!(error = %failed.message, "a message sent over MCP HTTP was lost");
        }
        let error = failed.failure.into_error(failed.message);
        for id in &unanswered {
            let body = message::error_response(Dialect::Strict, id, &error);
            let _ = self.answers.send(Ok(Frame::Message(body)));
        }
    }

    /// One `POST` and its answer, resumed if its stream breaks; returns the
    /// ids answered.
    async fn exchange(
        self: &Arc<Self>,
        message: Bytes,
        outgoing: &Outgoing,
    ) -> (Vec<Id>, Option<Failed>) {
        match self.try_exchange(message, outgoing).await {
            Ok(answered) => answered,
            Err(failed) => (Vec::new(), Some(failed)),
        }
    }

    async fn try_exchange(
        self: &Arc<Self>,
        message: Bytes,
        outgoing: &Outgoing,
    ) -> Result<(Vec<Id>, Option<Failed>), Failed> {
        // Whatever happens, later requests stop waiting once this is done.
        let _initialized = outgoing
            .initialize
            .as_ref()
            .map(|_| InitializeDone(&self.initializing));
        // Likewise once the standalone stream is open, or will not be.
        let opening = outgoing.initialized.then(|| Opening(self.clone()));
        let stateless = outgoing.stateless.as_ref();
        let sent_session = self.session().id.is_some() && stateless.is_none();
        let response = self.post_authorized(message, stateless).await?;
        if outgoing.initialize.is_some() {
            if let Some(id) = response.headers().get(MCP_SESSION_ID) {
                self.session().id = Some(id.clone());
            }
        }
        drop(_initialized);
        let status = response.status();
        if status == StatusCode::NOT_FOUND && sent_session {
            self.session_ended();
            return Ok((Vec::new(), None));
        }
        // A stateless request's error answer is a JSON-RPC body with 400 or
        // 404: the answer, not a failure.
        let json = media_type(response.headers()).as_deref() == Some("application/json");
        let answered = status.is_success() || (stateless.is_some() && json);
        if !answered {
            return Err(self.failed_status(response).await);
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            if outgoing.initialized {
                self.start_server_stream(opening);
            }
            return Ok((Vec::new(), None));
        }
        let watch = outgoing.watch();
        match media_type(response.headers()).as_deref() {
            Some("text/event-stream") => {
                let pending = outgoing.requests.clone();
                Ok(self
                    .read_post_stream(response.into_body(), pending, watch)
                    .await)
            }
            _ => {
                let body = self.read_json(response).await?;
                if body.iter().all(u8::is_ascii_whitespace) {
                    return Ok((Vec::new(), None));
                }
                let Some(answered) = answered_ids(&body) else {
                    return Err(Failed::not_json_rpc(&self.url, status.as_u16(), &body));
                };
                Ok((
                    self.deliver(body, answered, Target::Answers, watch).await,
                    None,
                ))
            }
        }
    }

    /// Posts `message`; with [`OAuthClient`](super::OAuthClient) settings,
    /// when the server wants a token, gets one and posts it again, at most
    /// [`MAX_AUTHORIZATIONS`](super::MAX_AUTHORIZATIONS) times.
    async fn post_authorized(
        &self,
        message: Bytes,
        stateless: Option<&Stateless>,
    ) -> Result<Response<C::Body>, Failed> {
        #[cfg(feature = "mcp-http")]
        if let Some(auth) = &self.auth {
            return self.post_with_auth(auth, message, stateless).await;
        }
        self.send(self.post_request(message, stateless)).await
    }

    /// A `POST` of `message`, with a stateless request's headers.
    fn post_request(&self, message: Bytes, stateless: Option<&Stateless>) -> Request<Bytes> {
        let mut request = self.request(Method::POST, message);
        let headers = request.headers_mut();
        if let Some(stateless) = stateless {
            stateless.apply(headers);
        }
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        headers.insert(
            header::ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        request
    }

    #[cfg(feature = "mcp-http")]
    async fn post_with_auth(
        &self,
        auth: &Auth,
        message: Bytes,
        stateless: Option<&Stateless>,
    ) -> Result<Response<C::Body>, Failed> {
        let mut authorizations = 0;
        loop {
            let sent = auth.header();
            let response = self
                .send(self.post_request(message.clone(), stateless))
                .await?;
            let status = response.status();
            let challenge = response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let wants_token = status == StatusCode::UNAUTHORIZED
                || (status == StatusCode::FORBIDDEN && oauth::is_step_up(challenge.as_deref()));
            if !wants_token || authorizations == MAX_AUTHORIZATIONS {
                return Ok(response);
            }
            authorizations += 1;
            if let Err(why) = auth
                .reauthorize(challenge.as_deref(), sent.as_ref(), &self.uri)
                .await
            {
                let message = format!(
                    "HTTP {status} from {}, and authorizing failed: {why}",
                    self.url
                );
                return Err(Failed::new(Some(status.as_u16()), String::new(), message));
            }
        }
    }

    pub(super) async fn send(&self, request: Request<Bytes>) -> Result<Response<C::Body>, Failed> {
        self.client
            .send(request)
            .await
            .map_err(|why| Failed::unsent(&self.url, why))
    }

    pub(super) async fn failed_status(&self, response: Response<C::Body>) -> Failed {
        failed_status(&self.url, response).await
    }

    /// A whole body, within the size limit.
    pub(super) async fn read_json(&self, response: Response<C::Body>) -> Result<Bytes, Failed> {
        read_whole(&self.url, response, self.max_len).await
    }
}
