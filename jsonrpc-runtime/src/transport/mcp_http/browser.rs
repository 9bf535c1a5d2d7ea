//! The MCP client transport in the browser (feature `browser`, on
//! `wasm32-unknown-unknown`): the same transport as natively, on `fetch`.

use super::{mcp_transport, McpSettings};
use crate::transport::browser::{check_headers, resolve, FetchClient};
use crate::transport::connect::{kind, Connector};
use crate::transport::{Transport, TransportError};

/// A client transport for an MCP server over Streamable HTTP from the
/// browser (feature `browser`, on `wasm32-unknown-unknown`), at an
/// `http://` or `https://` endpoint or one relative to the page, such as
/// `/mcp` (see [`Connector`] for the settings).
///
/// It is the native `McpHttpConnector`'s transport on the browser's
/// `fetch`, and behaves as that one does: each message one `POST` (up to
/// 64 at once), the session's id and protocol version from the answer to
/// `initialize` sent with every later request, answers as JSON or as an
/// SSE stream read as it arrives (progress, the server's requests, then the
/// answer; a broken stream resumed with `Last-Event-ID`), the session's
/// `GET` stream for the server's own messages, `DELETE` on close, the
/// stateless revision's headers (2026-07-28), and every failure a -32100
/// error with an [`HttpFailure`](crate::transport::HttpFailure) for the
/// requests it carried. OAuth flows are the page's to run: pass the token
/// with [`bearer`](Connector::bearer).
///
/// A page on another origin than the server's needs the server to allow
/// it (CORS) and to expose `Mcp-Session-Id`:
/// `server::McpHttpListener::allowed_origins` does both.
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::transport::McpFetchConnector;
/// use jsonrpc_runtime::{Config, Peer};
/// use serde_json::{json, Value};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = McpFetchConnector::new("http://127.0.0.1:8080/mcp").connect().await?;
/// let client = Peer::builder().config(Config::mcp_client()).spawn(transport);
/// let init: Value = client
///     .call("initialize", json!({
///         "protocolVersion": "2025-11-25",
///         "capabilities": {},
///         "clientInfo": {"name": "a page", "version": "1.0"},
///     }))
///     .await?;
/// # Ok(())
/// # }
/// ```
///
/// `jsonrpc_mcp::client::McpClient` takes this transport too, for typed
/// calls.
#[cfg_attr(docsrs, doc(cfg(all(feature = "browser", target_arch = "wasm32"))))]
pub type McpFetchConnector = Connector<kind::McpFetch>;

impl Connector<kind::McpFetch> {
    /// The transport. Nothing is sent yet (see [`McpFetchConnector`]).
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] when the URL is not one the browser can
    /// fetch, or a header is not text.
    pub async fn connect(self) -> Result<Transport, TransportError> {
        self.check()?;
        let uri = resolve(&self.target.0)?;
        check_headers(&self.headers)?;
        let settings = McpSettings {
            uri,
            headers: self.headers,
            max_len: self.max_frame_len,
        };
        Ok(mcp_transport(FetchClient, settings))
    }
}
