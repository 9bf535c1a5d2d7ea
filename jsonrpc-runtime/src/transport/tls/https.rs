//! The HTTPS connector of the HTTP client transport (features `http` and
//! `tls`): hyper-util's TCP connector, then a TLS handshake that offers
//! `h2` and `http/1.1` through ALPN, and tells the client which one the
//! server chose.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tower_service::Service;

use super::EofIsEnd;
use crate::tls::{alpn, ClientTls};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Connects to `https://` URIs only.
#[derive(Clone)]
pub(crate) struct HttpsConnector {
    http: HttpConnector,
    config: Arc<ClientConfig>,
}

impl HttpsConnector {
    pub(crate) fn new(tls: &ClientTls) -> HttpsConnector {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        // The scheme is `https`; the TLS handshake follows the connect.
        http.enforce_http(false);
        HttpsConnector {
            http,
            config: tls.with_default_alpn(&[alpn::H2, alpn::HTTP_1_1]),
        }
    }
}

impl Service<Uri> for HttpsConnector {
    type Response = TokioIo<HttpsStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let name = super::server_name_of(uri.host().unwrap_or_default());
        let connecting = self.http.call(uri);
        let config = self.config.clone();
        Box::pin(async move {
            let name = name?;
            let tcp = connecting.await?.into_inner();
            let stream = super::connect(config, name, tcp).await?;
            Ok(TokioIo::new(HttpsStream(stream)))
        })
    }
}

/// A client TLS stream that tells hyper-util whether `h2` was agreed on.
pub(crate) struct HttpsStream(EofIsEnd<tokio_rustls::client::TlsStream<TcpStream>>);

impl Connection for HttpsStream {
    fn connected(&self) -> Connected {
        let (tcp, session) = self.0.get_ref().get_ref();
        let connected = tcp.connected();
        if session.alpn_protocol() == Some(alpn::H2) {
            connected.negotiated_h2()
        } else {
            connected
        }
    }
}

impl AsyncRead for HttpsStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for HttpsStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}
