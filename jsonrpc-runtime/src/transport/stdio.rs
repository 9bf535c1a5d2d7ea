//! Standard input and output as a transport.
//!
//! When fd 0 and fd 1 are pipes (the normal case for a server spawned by an
//! editor or an MCP client), they are read and written as non-blocking
//! pipes registered with tokio's reactor: measured about twice as fast as
//! `tokio::io::stdin()`, and no blocking read is left behind to hold up
//! process exit once the connection ends. When a descriptor is something
//! else (a file, a terminal), tokio's blocking stdio is used instead.

use std::io;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

use super::Transport;
use crate::codec::Framing;
use crate::config::Config;

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

impl Transport {
    /// Standard input and output, framed as `config` says (newline-delimited
    /// by default; `Config::lsp()`-style configs use `Content-Length`).
    ///
    /// Only one stdio transport should exist per process: it reads the
    /// process's one standard input.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::{Config, ErrorObject, Peer, Router, Transport};
    ///
    /// #[tokio::main(flavor = "current_thread")]
    /// async fn main() -> std::io::Result<()> {
    ///     let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
    ///     let config = Config::default();
    ///     let transport = Transport::stdio(&config)?;
    ///     // Serves until stdin ends, then flushes every answer owed.
    ///     Peer::builder().config(config).router(router).serve(transport).await;
    ///     Ok(())
    /// }
    /// ```
    ///
    /// # Errors
    ///
    /// Fails when fd 0 or fd 1 cannot be duplicated or registered with the
    /// reactor.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub fn stdio(config: &Config) -> io::Result<Transport> {
        Transport::stdio_with(config.framing, config.max_frame_len)
    }

    /// Standard input and output with an explicit framing and frame cap.
    ///
    /// # Errors
    ///
    /// As [`Transport::stdio`].
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub fn stdio_with(framing: Framing, max_frame_len: usize) -> io::Result<Transport> {
        let (read, write) = (stdin()?, stdout()?);
        Ok(Transport::from_io(
            read,
            write,
            framing.codec(max_frame_len),
        ))
    }
}

#[cfg(unix)]
fn stdin() -> io::Result<Reader> {
    use std::os::fd::AsFd as _;
    use tokio::net::unix::pipe;

    let fd = io::stdin().as_fd().try_clone_to_owned()?;
    match pipe::Receiver::from_owned_fd(fd) {
        Ok(pipe) => Ok(Box::pin(pipe)),
        Err(_) => Ok(Box::pin(tokio::io::stdin())),
    }
}

#[cfg(unix)]
fn stdout() -> io::Result<Writer> {
    use std::os::fd::AsFd as _;
    use tokio::net::unix::pipe;

    let fd = io::stdout().as_fd().try_clone_to_owned()?;
    match pipe::Sender::from_owned_fd(fd) {
        Ok(pipe) => Ok(Box::pin(pipe)),
        Err(_) => Ok(Box::pin(tokio::io::stdout())),
    }
}

#[cfg(not(unix))]
fn stdin() -> io::Result<Reader> {
    Ok(Box::pin(tokio::io::stdin()))
}

#[cfg(not(unix))]
fn stdout() -> io::Result<Writer> {
    Ok(Box::pin(tokio::io::stdout()))
}
