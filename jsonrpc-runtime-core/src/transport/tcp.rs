//! A transport over a connected TCP stream (feature `tcp`); the
//! connector and the acceptor that make the streams are `jsonrpc-runtime`'s.

use super::Transport;
use crate::codec::FramingCodec;
use tokio::net::TcpStream;

use crate::connection::{ConnectionInfo, PeerAddr};

impl Transport {
    /// A transport over a connected TCP stream, framed by `codec` (a
    /// `&Config` converts).
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::codec::LineCodec;
    /// use jsonrpc_runtime::Transport;
    ///
    /// # async fn run() -> std::io::Result<()> {
    /// let stream = tokio::net::TcpStream::connect("127.0.0.1:9000").await?;
    /// let transport = Transport::from_tcp(stream, LineCodec::new());
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_tcp(stream: TcpStream, codec: impl Into<FramingCodec>) -> Transport {
        set_nodelay(&stream);
        let peer = stream.peer_addr();
        let (read, write) = stream.into_split();
        let transport = Transport::from_io(read, write, codec.into());
        match peer {
            Ok(addr) => {
                transport.with_connection(ConnectionInfo::new().with_addr(PeerAddr::Tcp(addr)))
            }
            Err(_) => transport,
        }
    }
}

/// Turns off Nagle's algorithm: the peer already batches a burst of
/// messages into one write, and a lone request must not wait for the
/// previous one to be acknowledged.
pub fn set_nodelay(stream: &TcpStream) {
    if let Err(e) = stream.set_nodelay(true) {
        tracing::debug!(error = %e, "could not turn off Nagle's algorithm");
    }
}
