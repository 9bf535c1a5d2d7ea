//! Standard input and output as a transport.
//!
//! When fd 0 and fd 1 are pipes or sockets (the normal case for a server
//! spawned by an editor or an MCP client: Node.js, and so VS Code and most
//! MCP clients, spawns children with socket pairs rather than pipes), they
//! are read and written as non-blocking descriptors registered with tokio's
//! reactor: measured about twice as fast as `tokio::io::stdin()`, and no
//! blocking read is left behind to hold up process exit once the connection
//! ends. When a descriptor is something else (a file, a terminal), tokio's
//! blocking stdio is used instead.

use std::io;
use std::pin::Pin;

use tokio::io::{AsyncRead, AsyncWrite};

use super::{Transport, TransportError};
use crate::codec::FramingCodec;

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

impl Transport {
    /// Standard input and output, framed by `codec` (a `&Config` converts:
    /// `Config::lsp()` frames with `Content-Length`).
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
    /// async fn main() -> Result<(), jsonrpc_runtime::transport::TransportError> {
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
    /// reactor, and with [`io::ErrorKind::AlreadyExists`] when stdio is
    /// already open as a transport in this process: two readers of one
    /// stdin would split its messages between them.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub fn stdio(codec: impl Into<FramingCodec>) -> Result<Transport, TransportError> {
        Ok(stdio_framed(codec.into())?)
    }
}

/// Stdin and stdout framed by `codec`, once per process.
fn stdio_framed(codec: FramingCodec) -> io::Result<Transport> {
    static OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if OPEN.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "stdio is already open as a transport in this process; open it once and \
             share the peer",
        ));
    }
    let (read, write) = (stdin()?, stdout()?);
    Ok(Transport::from_io(read, write, codec))
}

#[cfg(unix)]
fn stdin() -> io::Result<Reader> {
    use std::os::fd::AsFd as _;
    use tokio::net::unix::pipe;

    let fd = io::stdin().as_fd().try_clone_to_owned()?;
    let fd = match socket(fd)? {
        Ok(socket) => return Ok(Box::pin(socket)),
        Err(fd) => fd,
    };
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
    let fd = match socket(fd)? {
        Ok(socket) => return Ok(Box::pin(socket)),
        Err(fd) => fd,
    };
    match pipe::Sender::from_owned_fd(fd) {
        Ok(pipe) => Ok(Box::pin(pipe)),
        Err(_) => Ok(Box::pin(tokio::io::stdout())),
    }
}

/// `fd` registered with the reactor when it is a socket; `fd` itself back
/// when it is not.
///
/// Without this, a socket on fd 0 would be read by tokio's blocking stdin,
/// whose read cannot be interrupted: after an LSP `exit` the process would
/// hang until the client closed its end.
#[cfg(unix)]
fn socket(
    fd: std::os::fd::OwnedFd,
) -> io::Result<Result<tokio::net::UnixStream, std::os::fd::OwnedFd>> {
    use std::os::unix::fs::FileTypeExt as _;

    let file = std::fs::File::from(fd);
    let is_socket = file
        .metadata()
        .is_ok_and(|meta| meta.file_type().is_socket());
    let fd = std::os::fd::OwnedFd::from(file);
    if !is_socket {
        return Ok(Err(fd));
    }
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream).map(Ok)
}

#[cfg(not(unix))]
fn stdin() -> io::Result<Reader> {
    Ok(Box::pin(tokio::io::stdin()))
}

#[cfg(not(unix))]
fn stdout() -> io::Result<Writer> {
    Ok(Box::pin(tokio::io::stdout()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::LineCodec;

    #[tokio::test]
    async fn stdio_opens_once_per_process() {
        let first = Transport::stdio(LineCodec::with_max_frame_len(1024));
        let second = Transport::stdio(LineCodec::with_max_frame_len(1024)).unwrap_err();
        assert_eq!(io::Error::from(second).kind(), io::ErrorKind::AlreadyExists);
        drop(first);
    }
}
