//! Work-done progress: `begin`, `report`s and `end` on the request's own
//! token or on one the server creates.

use std::sync::atomic::{AtomicU64, Ordering};

use jsonrpc_runtime::{Context, Peer};
use serde::Serialize;

use crate::client::{Client, ClientResult};
use crate::types::{
    ProgressParams, ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd,
    WorkDoneProgressReport,
};

/// One piece of work-done progress the client shows: begun when made,
/// [`report`](WorkDone::report)ed on, and [`end`](WorkDone::end)ed, or ended
/// when dropped (a cancelled request's handler is dropped, so its progress
/// never stays open in the editor).
///
/// # Examples
///
/// ```
/// use jsonrpc_lsp::types::{ExecuteCommandParams, LspAny};
/// use jsonrpc_lsp::{Client, Context, LanguageServer, Result, WorkDone};
///
/// struct Backend {
///     client: Client,
/// }
///
/// impl LanguageServer for Backend {
///     async fn execute_command(&self, ctx: Context, _: ExecuteCommandParams) -> Result<Option<LspAny>> {
///         let progress = WorkDone::begin(&ctx, &self.client, "Indexing").await;
///         for step in 1..=4u32 {
///             progress.report(Some(format!("step {step}")), Some(step * 25)).await;
///         }
///         progress.end(Some("done".into())).await;
///         Ok(None)
///     }
/// }
/// ```
#[derive(Debug)]
pub struct WorkDone {
    channel: Channel,
    ended: bool,
    /// The request the progress is for, whose cancellation the `end` a
    /// drop sends tells of.
    request: Option<Context>,
}

#[derive(Debug)]
enum Channel {
    /// Neither a token of the request's nor one the client can create.
    Nowhere,
    /// The request's `workDoneToken`, reported through its context.
    Request(Context),
    /// A token this server created.
    Created { peer: Peer, token: ProgressToken },
}

impl WorkDone {
    /// Begins progress for the request `ctx` belongs to: on its
    /// `workDoneToken` when it has one; else on a token created with
    /// `window/workDoneProgress/create` when the client supports that
    /// (`window.workDoneProgress`) and accepts it; else nowhere (the
    /// reports go nowhere, so a handler need not ask first).
    pub async fn begin(ctx: &Context, client: &Client, title: impl Into<String>) -> WorkDone {
        let title = title.into();
        if ctx.progress_token().is_some() {
            let progress = WorkDone {
                channel: Channel::Request(ctx.clone()),
                ended: false,
                request: Some(ctx.clone()),
            };
            progress.send(begin(title)).await;
            return progress;
        }
        let may_create = client
            .capabilities()
            .and_then(|c| c.window.as_ref())
            .and_then(|w| w.work_done_progress)
            .unwrap_or(false);
        if may_create {
            match WorkDone::create_for(client, title, Some(ctx)).await {
                Ok(progress) => return progress,
                Err(e) => tracing::debug!("window/workDoneProgress/create failed: {e}"),
            }
        }
        WorkDone {
            channel: Channel::Nowhere,
            ended: false,
            request: None,
        }
    }

    /// Creates a token (`window/workDoneProgress/create`) and begins on it:
    /// progress that belongs to no request.
    ///
    /// # Errors
    ///
    /// Why the client did not create the token (a token it refused must
    /// not be used).
    pub async fn create(client: &Client, title: impl Into<String>) -> ClientResult<WorkDone> {
        WorkDone::create_for(client, title.into(), None).await
    }

    async fn create_for(
        client: &Client,
        title: String,
        request: Option<&Context>,
    ) -> ClientResult<WorkDone> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let token = ProgressToken::String(format!("jsonrpc-lsp/{n}"));
        client.create_work_done_progress(token.clone()).await?;
        let Some(peer) = client.peer() else {
            return Err(crate::ClientError::NotConnected);
        };
        let progress = WorkDone {
            channel: Channel::Created {
                peer: peer.clone(),
                token,
            },
            ended: false,
            request: request.cloned(),
        };
        progress.send(begin(title)).await;
        Ok(progress)
    }

    /// Whether the reports reach the client.
    pub fn is_reporting(&self) -> bool {
        !matches!(self.channel, Channel::Nowhere)
    }

    /// The token the reports go on.
    pub fn token(&self) -> Option<ProgressToken> {
        match &self.channel {
            Channel::Nowhere => None,
            Channel::Request(ctx) => ctx.progress_token().map(|id| {
                match id.as_i64().and_then(|n| i32::try_from(n).ok()) {
                    Some(n) => ProgressToken::Int(n),
                    None => ProgressToken::String(
                        id.as_str().map_or_else(|| id.to_string(), str::to_owned),
                    ),
                }
            }),
            Channel::Created { token, .. } => Some(token.clone()),
        }
    }

    /// Reports how far the work is (`percentage` from 0 to 100).
    pub async fn report(&self, message: Option<String>, percentage: Option<u32>) {
        let report = WorkDoneProgressReport {
            cancellable: None,
            message,
            percentage,
        };
        self.send(report).await;
    }

    /// Ends the progress.
    pub async fn end(mut self, message: Option<String>) {
        self.ended = true;
        self.send(WorkDoneProgressEnd { message }).await;
    }

    async fn send(&self, value: impl Serialize) {
        let sent = match &self.channel {
            Channel::Nowhere => return,
            Channel::Request(ctx) => ctx.progress(value),
            Channel::Created { peer, token } => {
                let params = ProgressParams {
                    token: token.clone(),
                    value: serde_json::to_value(value).unwrap_or_default(),
                };
                peer.notify("$/progress", params).await
            }
        };
        if let Err(e) = sent {
            // Progress is advisory: a report that finds no room is dropped.
            tracing::debug!("a work-done progress report was not sent: {e}");
        }
    }
}

fn begin(title: String) -> WorkDoneProgressBegin {
    WorkDoneProgressBegin {
        title,
        cancellable: None,
        message: None,
        percentage: None,
    }
}

impl Drop for WorkDone {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // Most often the request was cancelled and its handler dropped.
        let cancelled = self
            .request
            .as_ref()
            .is_some_and(|ctx| ctx.cancellation().is_cancelled());
        let end = WorkDoneProgressEnd {
            message: cancelled.then(|| "cancelled".to_owned()),
        };
        match &self.channel {
            Channel::Nowhere => {}
            Channel::Request(ctx) => {
                let _ = ctx.progress(end);
            }
            // Drop cannot wait for room in the outbound budget: a task does.
            Channel::Created { peer, token } => {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    return;
                };
                let peer = peer.clone();
                let params = ProgressParams {
                    token: token.clone(),
                    value: serde_json::to_value(end).unwrap_or_default(),
                };
                runtime.spawn(async move { peer.notify("$/progress", params).await });
            }
        }
    }
}
