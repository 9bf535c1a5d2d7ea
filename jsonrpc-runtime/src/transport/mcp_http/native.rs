//! The MCP client transport on hyper (feature `mcp-http`).

use super::oauth::Auth;
use super::{mcp_transport, McpSettings, OAuthClient};
use crate::transport::connect::{kind, Connector};
use crate::transport::http::PostClient;
use crate::transport::{Transport, TransportError};

/// A client transport for an MCP server over Streamable HTTP at an
/// `http://` or `https://` endpoint, such as `http://127.0.0.1:8080/mcp`
/// (see [`Connector`] for the settings).
///
/// Nothing is connected yet. Each message the peer sends is one `POST`
/// with `Accept: application/json, text/event-stream`; up to 64 travel
/// at once. The answer to `initialize` gives the session id
/// (`Mcp-Session-Id`) and the protocol version (its result's
/// `protocolVersion`), and every later request carries both as headers;
/// messages sent while the `initialize` `POST` waits for the server's
/// reply wait with it, so they carry the session id. Once the
/// server has taken `notifications/initialized`, a `GET` opens the
/// session's stream of the server's own requests and notifications
/// (`405` from the server means it offers none: fine). The peer answers
/// those requests (`roots/list`, `sampling/createMessage`) with its
/// routes, and each answer is posted back. Closing the transport sends
/// `DELETE` to end the session. An answer or an SSE event is accepted up
/// to [`max_frame_len`](Connector::max_frame_len) bytes; a request
/// cancelled with `notifications/cancelled` is owed no answer. Every
/// request carries the connector's [`header`](Connector::header)s.
///
/// A request whose params carry a revision in `_meta`
/// (`io.modelcontextprotocol/protocolVersion`: MCP's stateless
/// `2026-07-28`) is sent outside any session: no `Mcp-Session-Id`, that
/// revision in `MCP-Protocol-Version`, its method in `Mcp-Method` and the
/// tool, prompt or resource it is about in `Mcp-Name`; a `400` or `404`
/// with a JSON-RPC body is its error answer.
///
/// | answer to a `POST` | what the peer sees |
/// |---|---|
/// | `200` with `application/json` | the body: a response, or an array of them |
/// | `200` with `text/event-stream` | every message of the stream as it comes (progress, the server's requests, the answers); a stream that breaks before every answer arrived is resumed with `GET` and `Last-Event-ID` (three tries, waiting as the server's `retry:` says, else 100 ms doubling) |
/// | `202` or `204` | nothing: what was posted owed no answer |
/// | `404` for the session | the transport ends with [`TransportError::SessionEnded`]: every waiting call fails with [`CallError::Closed`](crate::CallError::Closed) |
/// | any other status, a connection that failed, an answer over the limit, a stream that cannot be resumed | for each request the `POST` carried (and that was not cancelled), an error response made up on this side: -32100 ([`ErrorCode::TRANSPORT_FAILED`](crate::ErrorCode::TRANSPORT_FAILED)) with an [`HttpFailure`](crate::transport::HttpFailure) as its data, as [`HttpConnector`](crate::transport::HttpConnector) does |
///
/// The `GET` stream is reopened the same way when it breaks (with
/// `Last-Event-ID`), and given up with a warning after three failures
/// in a row; `POST`s go on regardless. The server's messages on it wait
/// for the peer in a queue of 64: a server that floods the stream is
/// read no faster than the peer reads.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::transport::McpHttpConnector;
/// use jsonrpc_runtime::{Config, Peer};
/// use serde_json::{json, Value};
/// # use jsonrpc_runtime::{server::McpHttpListener, transport::TcpAcceptor, ErrorObject, Router};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let acceptor = TcpAcceptor::bind("127.0.0.1:0").await?;
/// # let url = format!("http://{}/mcp", acceptor.local_addr()?);
/// # let server = McpHttpListener::new(acceptor).spawn(Router::new()
/// #     .request("initialize", |_: Value, _| async move {
/// #         Ok::<_, ErrorObject>(json!({"protocolVersion": "2025-06-18", "capabilities": {}}))
/// #     })
/// #     .request("tools/list", |_: Value, _| async move { Ok::<_, ErrorObject>(json!({"tools": []})) }));
/// // url: "http://127.0.0.1:8080/mcp", say
/// let transport = McpHttpConnector::new(&url).connect().await?;
/// let client = Peer::builder().config(Config::mcp_client()).spawn(transport);
/// let init: Value = client
///     .call("initialize", json!({
///         "protocolVersion": "2025-06-18",
///         "capabilities": {},
///         "clientInfo": {"name": "example", "version": "1.0"},
///     }))
///     .await?;
/// client.notify("notifications/initialized", json!({})).await?;
/// let tools: Value = client.call("tools/list", json!({})).await?;
/// assert_eq!(init["protocolVersion"], "2025-06-18");
/// assert_eq!(tools, json!({"tools": []}));
/// client.close(std::time::Duration::from_secs(1)).await; // sends DELETE
/// # server.shutdown(std::time::Duration::from_secs(1)).await;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
pub type McpHttpConnector = Connector<kind::McpHttp>;

#[cfg_attr(docsrs, doc(cfg(feature = "mcp-http")))]
impl Connector<kind::McpHttp> {
    /// The transport. Nothing is connected yet (see [`McpHttpConnector`]).
    ///
    /// # Errors
    ///
    /// [`TransportError::Invalid`] when the URL is not an `http://` or
    /// `https://` URL with a host, or is `https://` without TLS settings.
    ///
    /// # Panics
    ///
    /// Sending through the transport panics outside a tokio runtime (each
    /// `POST` runs on a task of its own).
    pub async fn connect(self) -> Result<Transport, TransportError> {
        let (client, uri) = PostClient::new(&self, &self.target.0)?;
        let auth = self.oauth.as_ref().map(|client| {
            Auth::new(
                client,
                #[cfg(feature = "tls")]
                self.tls.clone(),
            )
        });
        let settings = McpSettings {
            uri,
            headers: self.headers,
            max_len: self.max_frame_len,
            auth,
        };
        Ok(mcp_transport(client, settings))
    }

    /// Gets tokens with `client` when the server asks for them (`401`, or
    /// `403` with `insufficient_scope`): see [`OAuthClient`]. A token set
    /// with [`bearer`](Self::bearer) is sent until then.
    pub fn oauth(mut self, client: OAuthClient) -> Self {
        self.oauth = Some(client);
        self
    }
}
