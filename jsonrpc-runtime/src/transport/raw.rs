//! A child process driven message by message, without a peer: the caller
//! decides what is sent and reads what comes back in wire order.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use serde::Serialize;
use tokio::process::Command;

use super::{ChildProcess, ProcessExit, TransportError};
use crate::codec::FrameRefusal;
use crate::config::Config;
use crate::message::ErrorObject;
use crate::message::{self, Dialect, Extras, Message, ParseOptions, RefusedMessage};
use crate::Id;

/// A JSON-RPC client for a child process, driven message by message: it
/// sends requests with ids from 1, notifications and answers, and yields
/// what the child writes, in order, typed. No peer, no background routing:
/// for tools that script a server (a conformance check, a test harness, a
/// proxy) and need the wire exactly as it is.
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::message::Message;
/// use jsonrpc_runtime::transport::RawClient;
/// use jsonrpc_runtime::Config;
/// use tokio::process::Command;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let mut client = RawClient::spawn(Command::new("my-server"), &Config::default())?;
/// let id = client.send_request("add", [2, 3]).await?;
/// while let Some(incoming) = client.next().await {
///     match incoming? {
///         Message::Response(response) if response.id == id => {
///             println!("{:?}", response.outcome);
///             break;
///         }
///         Message::Request(request) => client.respond(request.id, "ok").await?,
///         other => println!("{other:?}"),
///     }
/// }
/// let exit = client.shutdown(std::time::Duration::from_secs(1)).await?;
/// # let _ = exit;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct RawClient {
    child: ChildProcess,
    next_id: u64,
    options: ParseOptions,
}

/// What [`RawClient::next`] could not turn into a message. The stream stays
/// aligned after each: the next call reads the next message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RawError {
    /// A line the classifier refused: not JSON, not a JSON-RPC message (the
    /// refusal says why, with the id it could read).
    #[error("the child sent a malformed message: {}", .0.error)]
    Malformed(RefusedMessage),
    /// A frame the framer refused (longer than the cap, say).
    #[error("the child sent a frame that was refused: {0}")]
    Refused(FrameRefusal),
    /// A batch: this client reads one message at a time.
    #[error("the child sent a batch of {0} messages")]
    Batch(usize),
    /// The transport failed; the child's exit, if it exited, is inside.
    #[error(transparent)]
    Transport(#[from] TransportError),
}

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RawSendError {
    /// The params or result could not be encoded as JSON-RPC requires.
    #[error("the message could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
    /// Writing to the child failed.
    #[error(transparent)]
    Transport(#[from] TransportError),
}

impl RawClient {
    /// Spawns `command` as [`ChildProcess::spawn`] does, framed and read as
    /// `config` says.
    ///
    /// # Errors
    ///
    /// As [`ChildProcess::spawn`].
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime.
    pub fn spawn(command: Command, config: &Config) -> Result<RawClient, TransportError> {
        Ok(RawClient {
            child: ChildProcess::spawn(command, config)?,
            next_id: 1,
            options: config.parse_options(),
        })
    }

    fn dialect(&self) -> Dialect {
        self.options.dialect
    }

    async fn send(&mut self, body: Bytes) -> Result<(), RawSendError> {
        self.child.send(body).await?;
        Ok(())
    }

    /// Sends a request with the next id (1, 2, 3, ...) and returns the id.
    ///
    /// # Errors
    ///
    /// [`RawSendError::Encode`] when `params` is not an object, an array or
    /// `null`; [`RawSendError::Transport`] when the child is gone.
    ///
    /// # Cancel safety
    ///
    /// Not cancel safe: dropped mid-write, part of the message may be sent.
    pub async fn send_request(
        &mut self,
        method: &str,
        params: impl Serialize,
    ) -> Result<Id, RawSendError> {
        let id = Id::from(self.next_id);
        let body = message::call_body(
            self.dialect(),
            Some(&id),
            method,
            Some(&params),
            &Extras::new(),
        )?;
        self.send(body).await?;
        self.next_id += 1;
        Ok(id)
    }

    /// Sends a notification.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Self::send_request).
    ///
    /// # Cancel safety
    ///
    /// As [`send_request`](Self::send_request).
    pub async fn send_notification(
        &mut self,
        method: &str,
        params: impl Serialize,
    ) -> Result<(), RawSendError> {
        let body = message::call_body(self.dialect(), None, method, Some(&params), &Extras::new())?;
        self.send(body).await
    }

    /// Answers the child's request `id` with `result`.
    ///
    /// # Errors
    ///
    /// As [`send_request`](Self::send_request).
    ///
    /// # Cancel safety
    ///
    /// As [`send_request`](Self::send_request).
    pub async fn respond(&mut self, id: Id, result: impl Serialize) -> Result<(), RawSendError> {
        let value = serde_json::to_value(result)?;
        let body = match message::response(self.dialect(), &id, Ok(&value)) {
            Ok(body) | Err(body) => body,
        };
        self.send(body).await
    }

    /// Answers the child's request `id` with `error`.
    ///
    /// # Errors
    ///
    /// [`RawSendError::Transport`] when the child is gone.
    ///
    /// # Cancel safety
    ///
    /// As [`send_request`](Self::send_request).
    pub async fn respond_error(&mut self, id: Id, error: ErrorObject) -> Result<(), RawSendError> {
        let body = message::error_response(self.dialect(), &id, &error);
        self.send(body).await
    }

    /// The next message the child wrote: a response, a request or a
    /// notification; `None` once its stdout has ended cleanly.
    ///
    /// # Errors
    ///
    /// A malformed or refused line is a [`RawError`] of its own, and the
    /// next call reads on; a failed transport (with the child's exit status
    /// and stderr when it exited) ends the stream.
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: a message is only taken when it is returned.
    pub async fn next(&mut self) -> Option<Result<Message, RawError>> {
        let frame = match self.child.next().await? {
            Ok(frame) => frame,
            Err(e) => return Some(Err(RawError::Transport(e))),
        };
        let bytes = match frame.into_message() {
            Ok(bytes) => bytes,
            Err(why) => return Some(Err(RawError::Refused(why))),
        };
        Some(
            match Message::parse_bytes(&bytes, &self.options).into_single() {
                Ok(Message::Refused(refusal)) => Err(RawError::Malformed(refusal)),
                Ok(message) => Ok(message),
                Err(batch) => Err(RawError::Batch(batch.len())),
            },
        )
    }

    /// Closes the child's stdin, gives it `grace` to exit, then kills it;
    /// reaps it and returns its exit status and stderr.
    ///
    /// # Errors
    ///
    /// As [`ChildProcess::shutdown`].
    pub async fn shutdown(self, grace: Duration) -> io::Result<ProcessExit> {
        self.child.shutdown(grace).await
    }
}
