//! Unix domain sockets: a connector and an acceptor for
//! [`Listener`](crate::server::Listener).
//!
//! The acceptor owns its socket file: binding replaces a stale file left by
//! a process that died (only when nothing answers on it), and the file is
//! removed when the acceptor is dropped, which a server does when it shuts
//! down or is dropped.

use std::future::Future;
use std::io;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};

use super::connect::{kind, Connector};
use super::{Acceptor, OpenOptions, Transport, TransportError};
use crate::connection::PeerAddr;

/// Connects to a Unix-socket server (see [`Connector`] for the settings).
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::transport::UnixConnector;
/// use jsonrpc_runtime::Peer;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let peer = Peer::spawn(UnixConnector::new("/run/my-server.sock").connect().await?);
/// let sum: i64 = peer.call("add", [2, 3]).await?;
/// # Ok(())
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(unix)))]
pub type UnixConnector = Connector<kind::Unix>;

#[cfg_attr(docsrs, doc(cfg(unix)))]
impl Connector<kind::Unix> {
    /// A client that connects through this connector, and again each
    /// time the connection is lost: see
    /// [`ReconnectingPeer`](crate::reconnect::ReconnectingPeer).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use jsonrpc_runtime::transport::UnixConnector;
    ///
    /// # async fn demo() -> Result<(), jsonrpc_runtime::CallError> {
    /// let client = UnixConnector::new("/tmp/rpc.sock")
    ///     .reconnecting()
    ///     .queue_for(Duration::from_secs(5))
    ///     .spawn();
    /// let sum: i64 = client.call("add", [2, 3]).await?;
    /// # Ok(()) }
    /// ```
    pub fn reconnecting(self) -> crate::reconnect::ReconnectBuilder {
        crate::reconnect::ReconnectingPeer::builder(move || self.clone().connect())
    }

    /// A connector to the socket at `path`, framed newline-delimited unless
    /// [`codec`](Self::codec) says otherwise.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Connector::with_target(kind::Unix(path.as_ref().to_path_buf()))
    }

    /// Connects.
    ///
    /// # Errors
    ///
    /// Fails when there is no socket at the path
    /// ([`NotFound`](io::ErrorKind::NotFound)) or nothing listens on it
    /// ([`ConnectionRefused`](io::ErrorKind::ConnectionRefused)).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe: dropping the future abandons the connection attempt.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        self.check()?;
        let stream = UnixStream::connect(&self.target.0).await?;
        Ok(Transport::from_unix(stream, self.codec))
    }
}

/// A bound Unix domain socket that a [`Listener`](crate::server::Listener) accepts
/// connections from. It removes its socket file when dropped.
///
/// # Examples
///
/// ```no_run
/// use std::time::Duration;
/// use jsonrpc_runtime::server::Listener;
/// use jsonrpc_runtime::transport::UnixAcceptor;
/// use jsonrpc_runtime::Router;
///
/// # async fn run() -> std::io::Result<()> {
/// let acceptor = UnixAcceptor::bind("/run/my-server.sock").await?;
/// let server = Listener::new(acceptor).spawn(Router::new());
/// // ... until it is time to stop:
/// tokio::time::sleep(Duration::from_secs(60)).await;
/// server.shutdown(Duration::from_secs(5)).await; // removes the socket file
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct UnixAcceptor {
    listener: UnixListener,
    path: PathBuf,
    /// The socket file's device and inode, so that drop never removes a
    /// file someone else bound at the same path later.
    identity: Option<(u64, u64)>,
}

impl UnixAcceptor {
    /// Binds a Unix domain socket at `path`.
    ///
    /// When a socket file is already there, it is connected to first: if
    /// nothing answers (its server died without cleaning up), the stale
    /// file is replaced; if a server answers, binding fails with
    /// [`AddrInUse`](io::ErrorKind::AddrInUse). A file at `path` that is not
    /// a socket is never removed. (Two servers starting at the same moment
    /// on the same stale path can still race; give each its own path.)
    ///
    /// # Errors
    ///
    /// [`AddrInUse`](io::ErrorKind::AddrInUse) when a server listens at
    /// `path` or a file that is not a socket is there; otherwise the
    /// operating system's error (the directory does not exist, permission
    /// denied, the path is too long for a socket address).
    ///
    /// # Cancel safety
    ///
    /// Cancel safe, except that a stale file found before the future is
    /// dropped may already be removed.
    ///
    /// # Panics
    ///
    /// Panics outside a tokio runtime with I/O enabled.
    pub async fn bind(path: impl AsRef<Path>) -> io::Result<UnixAcceptor> {
        let path = path.as_ref().to_path_buf();
        let listener = match UnixListener::bind(&path) {
            Ok(listener) => listener,
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                replace_stale(&path).await?;
                UnixListener::bind(&path)?
            }
            Err(e) => return Err(e),
        };
        let identity = std::fs::symlink_metadata(&path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        Ok(UnixAcceptor {
            listener,
            path,
            identity,
        })
    }

    /// The path of the socket file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Removes the socket file at `path` if nothing listens on it.
async fn replace_stale(path: &Path) -> io::Result<()> {
    let in_use = |why: String| {
        io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("cannot bind a Unix socket at {}: {why}", path.display()),
        )
    };
    let metadata = std::fs::symlink_metadata(path)?;
    if !metadata.file_type().is_socket() {
        return Err(in_use(
            "a file that is not a socket is there; remove it or choose another path".into(),
        ));
    }
    match UnixStream::connect(path).await {
        Ok(_) => Err(in_use(
            "a server is already listening on it; stop it or choose another path".into(),
        )),
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
            tracing::debug!(path = %path.display(), "replacing a stale socket file");
            match std::fs::remove_file(path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            }
        }
        // Gone meanwhile: the path is free.
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(in_use(format!(
            "the socket there could not be checked for a live server ({e})"
        ))),
    }
}

impl Drop for UnixAcceptor {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        if ours.is_some() && ours == self.identity {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::debug!(path = %self.path.display(), error = %e, "could not remove the socket file");
            }
        }
    }
}

impl Acceptor for UnixAcceptor {
    type Connection = UnixStream;

    async fn accept(&mut self) -> io::Result<(UnixStream, PeerAddr)> {
        let (stream, addr) = self.listener.accept().await?;
        Ok((
            stream,
            PeerAddr::Unix(addr.as_pathname().map(Path::to_path_buf)),
        ))
    }

    fn open(
        &self,
        stream: UnixStream,
        options: &OpenOptions,
    ) -> impl Future<Output = Result<Transport, TransportError>> + Send + 'static {
        std::future::ready(Ok(Transport::from_unix(stream, options.codec().clone())))
    }
}
