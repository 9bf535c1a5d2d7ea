//! A transport over a connected Unix stream (feature `unix`, on Unix); the
//! connector and the acceptor that make the streams are `jsonrpc-runtime`'s.

use super::Transport;
use crate::codec::FramingCodec;
use tokio::net::UnixStream;

impl Transport {
    /// A transport over a connected Unix stream, framed by `codec` (a
    /// `&Config` converts).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::codec::LineCodec;
    /// use jsonrpc_runtime::{ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let (a, b) = tokio::net::UnixStream::pair()?;
    /// let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
    /// let _server = Peer::builder().router(router).spawn(Transport::from_unix(b, LineCodec::new()));
    /// let client = Peer::spawn(Transport::from_unix(a, LineCodec::new()));
    /// assert_eq!(client.call::<String>("ping", ()).await?, "pong");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn from_unix(stream: UnixStream, codec: impl Into<FramingCodec>) -> Transport {
        let (read, write) = stream.into_split();
        Transport::from_io(read, write, codec.into())
    }
}
