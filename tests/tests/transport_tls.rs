//! TLS: JSON-RPC over TLS with the `Listener`, HTTPS through `HttpListener`
//! (HTTP/1.1 and h2 through ALPN) and the HTTP client, `wss://`, typed
//! errors for untrusted certificates and bad PEM files, clients that never
//! shake hands (or speak plain TCP to a TLS port), and
//! `spec_server --tls-cert/--tls-key` end to end. Certificates are made at
//! test time.

use std::convert::Infallible;
use std::future::{Future, IntoFuture};
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::{header, Method, Request, Response, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use jsonrpc_runtime::server::{HttpListener, Listener};
use jsonrpc_runtime::tls::rustls::pki_types::ServerName;
use jsonrpc_runtime::tls::rustls::{self, CertificateError};
use jsonrpc_runtime::tls::{ClientTls, ServerTls, TlsConfigError};
use jsonrpc_runtime::transport::{
    HttpConnector, HttpFailure, McpHttpConnector, TcpConnector, TlsAcceptor, TlsError,
    TransportError, WebSocketAcceptor, WebSocketConnector,
};
use jsonrpc_runtime::{server::Server, Config, Context, ErrorObject, Peer, Router, Transport};
use serde_json::Value;
use tests::{example_path, TempDir, ANSWER_TIMEOUT};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::Command;

/// The handshake limit of the servers that meet a silent client: long
/// enough that another client is served well within it on a busy machine.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(2);

/// A self-signed certificate for `localhost` and 127.0.0.1, and its key,
/// as PEM.
struct Identity {
    cert: String,
    key: String,
}

/// A new identity, its certificate issued by (and to) a name of its own,
/// so that another identity's certificate is not mistaken for its issuer.
fn identity() -> Identity {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let mut params =
        rcgen::CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .unwrap();
    let name = format!(
        "transport_tls test {}",
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Identity {
        cert: cert.pem(),
        key: key.serialize_pem(),
    }
}

impl Identity {
    fn server(&self) -> ServerTls {
        ServerTls::from_pem(self.cert.as_bytes(), self.key.as_bytes()).unwrap()
    }

    /// A client that trusts this certificate.
    fn client(&self) -> ClientTls {
        ClientTls::from_roots_pem(self.cert.as_bytes()).unwrap()
    }
}

/// `subtract`, and `ask_back`, which calls the client's `whoami`.
fn router() -> Router {
    Router::new()
        .request("subtract", |(a, b): (i64, i64), _: Context| async move {
            Ok::<_, ErrorObject>(a - b)
        })
        .request("ask_back", |(): (), ctx: Context| async move {
            ctx.peer()
                .call::<String>("whoami", ())
                .await
                .map_err(|e| ErrorObject::internal_error(e.to_string()))
        })
}

/// A client peer that answers `whoami`.
fn client_peer(transport: Transport) -> Peer {
    let routes = Router::new().request("whoami", |(): (), _: Context| async {
        Ok::<_, ErrorObject>("a TLS client")
    });
    Peer::builder().router(routes).spawn(transport)
}

/// `f`, or a panic after [`ANSWER_TIMEOUT`].
async fn within<F: IntoFuture>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(ANSWER_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| panic!("{what} did not happen in time"))
}

async fn subtract(peer: &Peer, a: i64, b: i64) -> i64 {
    within("an answer", peer.call::<i64>("subtract", [a, b]))
        .await
        .unwrap()
}

/// A `Listener` over TLS, with `limit` as its handshake timeout.
async fn tls_server(id: &Identity, limit: Duration) -> (Server, SocketAddr) {
    let acceptor = TlsAcceptor::bind("127.0.0.1:0", id.server())
        .await
        .unwrap()
        .handshake_timeout(limit);
    let addr = acceptor.local_addr().unwrap();
    (Listener::new(acceptor).spawn(router()), addr)
}

/// An `HttpListener` over TLS, with `limit` as its handshake timeout.
async fn https_server(id: &Identity, limit: Duration) -> (Server, SocketAddr) {
    let acceptor = TlsAcceptor::bind("127.0.0.1:0", id.server())
        .await
        .unwrap()
        .handshake_timeout(limit);
    let addr = acceptor.local_addr().unwrap();
    (HttpListener::new(acceptor).spawn(router()), addr)
}

#[tokio::test]
async fn json_rpc_over_tls_round_trips_both_ways_with_the_listener() {
    let id = identity();
    let (server, addr) = tls_server(&id, HANDSHAKE_LIMIT).await;
    // The certificate names both; either is checked.
    for name in ["localhost", "127.0.0.1"] {
        let transport = TcpConnector::new(addr)
            .tls(id.client().clone())
            .server_name(name)
            .connect()
            .await
            .unwrap();
        let client = client_peer(transport);
        assert_eq!(subtract(&client, 42, 23).await, 19);
        let answer = within("an answer", client.call::<String>("ask_back", ())).await;
        assert_eq!(answer.unwrap(), "a TLS client");
        client.close(Duration::from_secs(1)).await;
    }
    within("the shutdown", server.shutdown(Duration::from_secs(1))).await;
}

#[tokio::test]
async fn a_client_that_leaves_without_close_notify_ends_its_connection_cleanly() {
    let id = identity();
    let acceptor = TlsAcceptor::bind("127.0.0.1:0", id.server()).await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let (closed_tx, mut closed) = tokio::sync::mpsc::unbounded_channel();
    let server = Listener::new(acceptor)
        .on_close(move |_, reason| {
            let _ = closed_tx.send(format!("{reason:?}"));
        })
        .spawn(router());

    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let mut stream = tokio_rustls::TlsConnector::from(id.client().config().clone())
        .connect(name, tcp)
        .await
        .unwrap();
    stream
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subtract\",\"params\":[3,1]}\n")
        .await
        .unwrap();
    stream.flush().await.unwrap();
    let mut answer = String::new();
    let mut reader = BufReader::new(&mut stream);
    within("an answer", reader.read_line(&mut answer))
        .await
        .unwrap();
    assert!(answer.contains("\"result\":2"), "{answer}");
    // Gone without a word: no close_notify, the TCP connection just ends.
    let (tcp, _) = stream.into_inner();
    drop(tcp);

    let reason = within("the connection closing", closed.recv())
        .await
        .unwrap();
    assert_eq!(reason, "RemoteClosed");
    server.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn content_length_framing_runs_inside_tls() {
    let id = identity();
    let acceptor = TlsAcceptor::bind("127.0.0.1:0", id.server()).await.unwrap();
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor)
        .config(Config::lsp())
        .spawn(
            Router::new().request("initialize", |_: Value, _: Context| async {
                Ok::<_, ErrorObject>(serde_json::json!({"capabilities": {}}))
            }),
        );
    let transport = TcpConnector::new(addr)
        .tls(id.client().clone())
        .server_name("localhost")
        .codec(&Config::lsp())
        .connect()
        .await
        .unwrap();
    let client = Peer::spawn(transport);
    let init = within(
        "an answer",
        client.call::<Value>("initialize", serde_json::json!({})),
    )
    .await
    .unwrap();
    assert_eq!(init["capabilities"], serde_json::json!({}));
    client.close(Duration::from_secs(1)).await;
    server.shutdown(Duration::from_secs(1)).await;
}

/// Posts `body` over a TLS connection that offers only `alpn`, and returns
/// the HTTP version of the answer and its JSON.
async fn post_offering(
    addr: SocketAddr,
    tls: &ClientTls,
    alpn: &[u8],
    body: &str,
) -> (Version, Value) {
    let mut config = rustls::ClientConfig::clone(tls.config());
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = TcpStream::connect(addr).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let stream = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .unwrap();
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(alpn));
    let io = TokioIo::new(stream);
    let body = Full::new(Bytes::from(body.to_owned()));
    let response = if alpn == b"h2" {
        let (mut send, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
                .await
                .unwrap();
        tokio::spawn(connection);
        let request = Request::builder()
            .method(Method::POST)
            .uri("https://localhost/")
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap();
        send.send_request(request).await.unwrap()
    } else {
        let (mut send, connection) = hyper::client::conn::http1::handshake(io).await.unwrap();
        tokio::spawn(connection);
        let request = Request::builder()
            .method(Method::POST)
            .uri("/")
            .header(header::HOST, "localhost")
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .unwrap();
        send.send_request(request).await.unwrap()
    };
    assert_eq!(response.status(), StatusCode::OK);
    let version = response.version();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (version, serde_json::from_slice(&body).unwrap())
}

#[tokio::test]
async fn https_serves_http1_and_h2_as_agreed_through_alpn() {
    let id = identity();
    let (server, addr) = https_server(&id, HANDSHAKE_LIMIT).await;
    let request = r#"{"jsonrpc":"2.0","id":7,"method":"subtract","params":[42,23]}"#;
    for (alpn, version) in [
        (&b"http/1.1"[..], Version::HTTP_11),
        (&b"h2"[..], Version::HTTP_2),
    ] {
        let (answered_in, answer) = within(
            "an answer",
            post_offering(addr, &id.client(), alpn, request),
        )
        .await;
        assert_eq!(answered_in, version);
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"], 19);
    }

    // The client transport, by name and by address.
    for host in ["localhost", "127.0.0.1"] {
        let url = format!("https://{host}:{}/", addr.port());
        let client = Peer::spawn(
            HttpConnector::new(&url)
                .tls(id.client().clone())
                .connect()
                .await
                .unwrap(),
        );
        assert_eq!(subtract(&client, 5, 8).await, -3);
        client.close(Duration::from_secs(1)).await;
    }
    within("the shutdown", server.shutdown(Duration::from_secs(1))).await;
}

/// What the fake HTTPS server saw of each connection: the protocol agreed
/// through ALPN and the HTTP version of its requests.
type Seen = Arc<Mutex<Vec<(Option<Vec<u8>>, Version)>>>;

/// An HTTPS server that offers `h2` and `http/1.1`, answers JSON-RPC with
/// `router`, and records what each client agreed on and spoke.
async fn recording_https_server(id: &Identity) -> (SocketAddr, Seen) {
    let mut config = rustls::ServerConfig::clone(id.server().config());
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Seen::default();
    let recorded = seen.clone();
    tokio::spawn(async move {
        let routes = router();
        while let Ok((tcp, _)) = listener.accept().await {
            let Ok(stream) = acceptor.accept(tcp).await else {
                continue;
            };
            let agreed = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
            let (routes, recorded) = (routes.clone(), recorded.clone());
            let service =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let (routes, recorded, agreed) =
                        (routes.clone(), recorded.clone(), agreed.clone());
                    async move {
                        recorded.lock().unwrap().push((agreed, request.version()));
                        let body = request.into_body().collect().await.unwrap().to_bytes();
                        let answer = routes.respond(&body).await.unwrap_or_default();
                        let mut response = Response::new(Full::new(answer));
                        response.headers_mut().insert(
                            header::CONTENT_TYPE,
                            header::HeaderValue::from_static("application/json"),
                        );
                        Ok::<_, Infallible>(response)
                    }
                });
            tokio::spawn(async move {
                let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, seen)
}

#[tokio::test]
async fn the_https_client_speaks_h2_when_agreed_and_keeps_an_alpn_list_it_is_given() {
    let id = identity();
    let (addr, seen) = recording_https_server(&id).await;
    let url = format!("https://localhost:{}/", addr.port());

    let client = Peer::spawn(
        HttpConnector::new(&url)
            .tls(id.client().clone())
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(subtract(&client, 2, 1).await, 1);
    client.close(Duration::from_secs(1)).await;
    assert_eq!(
        seen.lock().unwrap().pop(),
        Some((Some(b"h2".to_vec()), Version::HTTP_2))
    );

    // A config with its own ALPN list is used as it is.
    let mut config = rustls::ClientConfig::clone(id.client().config());
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let http1_only = ClientTls::from_config(config);
    let client = Peer::spawn(
        HttpConnector::new(&url)
            .tls(http1_only.clone())
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(subtract(&client, 2, 1).await, 1);
    client.close(Duration::from_secs(1)).await;
    assert_eq!(
        seen.lock().unwrap().pop(),
        Some((Some(b"http/1.1".to_vec()), Version::HTTP_11))
    );
}

#[tokio::test]
async fn settings_that_cannot_be_used_are_refused_before_anything_is_connected() {
    let invalid = |e: TransportError| match e {
        TransportError::Invalid(why) => why,
        other => panic!("expected an invalid setting, got {other:?}"),
    };
    let refusals = [
        (
            HttpConnector::new("ws://localhost:1/").connect().await,
            "`http://` or `https://`",
        ),
        (
            WebSocketConnector::new("https://localhost:1/")
                .connect()
                .await,
            "`ws://` or `wss://`",
        ),
        (
            McpHttpConnector::new("http:///mcp").connect().await,
            "http:///mcp",
        ),
        (
            HttpConnector::new("http://localhost:1/")
                .bearer("two\nlines")
                .connect()
                .await,
            "bearer token",
        ),
    ];
    for (connected, expected) in refusals {
        let why = invalid(connected.unwrap_err());
        assert!(why.contains(expected), "{why}");
    }
    // TLS settings on a plain URL are not used, and not an error.
    let id = identity();
    assert!(HttpConnector::new("http://localhost:1/")
        .tls(id.client().clone())
        .connect()
        .await
        .is_ok());
}

#[tokio::test]
async fn wss_round_trips_both_ways() {
    let id = identity();
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0")
        .await
        .unwrap()
        .tls(id.server());
    let addr = acceptor.local_addr().unwrap();
    let server = Listener::new(acceptor).spawn(router());
    let url = format!("wss://localhost:{}/rpc", addr.port());
    let transport = WebSocketConnector::new(&url)
        .tls(id.client().clone())
        .connect()
        .await
        .unwrap();
    let client = client_peer(transport);
    assert_eq!(subtract(&client, 42, 23).await, 19);
    let answer = within("an answer", client.call::<String>("ask_back", ())).await;
    assert_eq!(answer.unwrap(), "a TLS client");
    client.close(Duration::from_secs(1)).await;
    within("the shutdown", server.shutdown(Duration::from_secs(1))).await;
}

/// Whether a connection failed because the client did not trust the
/// server's certificate.
fn untrusted(e: &TransportError) -> bool {
    matches!(
        e,
        TransportError::Tls(TlsError::Handshake(rustls::Error::InvalidCertificate(
            CertificateError::UnknownIssuer
        )))
    )
}

#[tokio::test]
async fn a_client_that_does_not_trust_the_certificate_gets_a_typed_error() {
    let id = identity();
    let stranger = identity();
    let (server, addr) = tls_server(&id, HANDSHAKE_LIMIT).await;
    let config = Config::default();

    let error = TcpConnector::new(addr)
        .tls(stranger.client().clone())
        .server_name("localhost")
        .codec(&config)
        .connect()
        .await
        .unwrap_err();
    assert!(untrusted(&error), "{error:?}");
    assert!(error.to_string().contains("ClientTls"), "{error}");

    // Mozilla's roots do not know a self-signed certificate either.
    let error = TcpConnector::new(addr)
        .tls(ClientTls::webpki_roots().clone())
        .server_name("localhost")
        .codec(&config)
        .connect()
        .await
        .unwrap_err();
    assert!(untrusted(&error), "{error:?}");

    // Trusted, but not for this name.
    let error = TcpConnector::new(addr)
        .tls(id.client().clone())
        .server_name("example.com")
        .codec(&config)
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            TransportError::Tls(TlsError::Handshake(rustls::Error::InvalidCertificate(_)))
        ),
        "{error:?}"
    );
    let error = TcpConnector::new(addr)
        .tls(id.client().clone())
        .server_name("not a host name")
        .codec(&config)
        .connect()
        .await
        .unwrap_err();
    assert!(
        matches!(&error, TransportError::Tls(TlsError::InvalidServerName(name)) if name == "not a host name"),
        "{error:?}"
    );

    // The server keeps serving those who trust it.
    let client = client_peer(
        TcpConnector::new(addr)
            .tls(id.client().clone())
            .server_name("localhost")
            .codec(&config)
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(subtract(&client, 1, 1).await, 0);
    client.close(Duration::from_secs(1)).await;
    server.shutdown(Duration::from_secs(1)).await;

    // wss:// and https:// say the same.
    let acceptor = WebSocketAcceptor::bind("127.0.0.1:0")
        .await
        .unwrap()
        .tls(id.server());
    let url = format!("wss://localhost:{}/", acceptor.local_addr().unwrap().port());
    let ws_server = Listener::new(acceptor).spawn(router());
    let error = WebSocketConnector::new(&url)
        .tls(stranger.client().clone())
        .connect()
        .await
        .unwrap_err();
    assert!(untrusted(&error), "{error:?}");
    ws_server.shutdown(Duration::from_secs(1)).await;

    let (https, addr) = https_server(&id, HANDSHAKE_LIMIT).await;
    let url = format!("https://localhost:{}/", addr.port());
    let client = Peer::spawn(
        HttpConnector::new(&url)
            .tls(stranger.client().clone())
            .connect()
            .await
            .unwrap(),
    );
    let error = within("the failure", client.call::<i64>("subtract", [1, 1]))
        .await
        .unwrap_err();
    let failure = error
        .as_rpc()
        .and_then(HttpFailure::from_error)
        .unwrap_or_else(|| panic!("an HTTP failure, got {error}"));
    assert_eq!(failure.status, None);
    assert!(
        error.to_string().contains("invalid peer certificate"),
        "{error}"
    );
    client.close(Duration::ZERO).await;
    https.shutdown(Duration::from_secs(1)).await;
}

#[tokio::test]
async fn a_plain_client_on_a_tls_port_is_dropped_and_others_are_served() {
    let id = identity();
    let (tls, tls_addr) = tls_server(&id, HANDSHAKE_LIMIT).await;
    let (https, https_addr) = https_server(&id, HANDSHAKE_LIMIT).await;
    let plain_messages: [(SocketAddr, &[u8]); 2] = [
        (
            tls_addr,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subtract\",\"params\":[1,2]}\n",
        ),
        (
            https_addr,
            b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
        ),
    ];
    for (addr, message) in plain_messages {
        let mut plain = TcpStream::connect(addr).await.unwrap();
        plain.write_all(message).await.unwrap();

        // Served while the plain connection is still being refused.
        let client = if addr == tls_addr {
            client_peer(
                TcpConnector::new(addr)
                    .tls(id.client().clone())
                    .server_name("localhost")
                    .connect()
                    .await
                    .unwrap(),
            )
        } else {
            let url = format!("https://localhost:{}/", addr.port());
            Peer::spawn(
                HttpConnector::new(&url)
                    .tls(id.client().clone())
                    .connect()
                    .await
                    .unwrap(),
            )
        };
        assert_eq!(subtract(&client, 10, 3).await, 7);
        client.close(Duration::from_secs(1)).await;

        // The plain client gets at most a TLS alert, then the end.
        let mut got = Vec::new();
        let read = within(
            "the server closing the plain connection",
            plain.read_to_end(&mut got),
        )
        .await;
        if let Err(e) = read {
            assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}");
        }
        assert!(
            !String::from_utf8_lossy(&got).contains("jsonrpc"),
            "{got:?}"
        );
    }
    tls.shutdown(Duration::from_secs(1)).await;
    https.shutdown(Duration::from_secs(1)).await;
}

/// Connects a client that never says a word, lets `served` run another
/// client to completion, then waits for the server to drop the silent one:
/// not before its handshake limit, and not before the other client was
/// served (so the handshake never held up accepting).
async fn silent_client_is_dropped_after<F: Future<Output = ()>>(addr: SocketAddr, served: F) {
    let connected = Instant::now();
    let mut silent = TcpStream::connect(addr).await.unwrap();
    within("the other client being served", served).await;
    let mut buf = [0u8; 64];
    match silent.try_read(&mut buf) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        other => panic!(
            "the silent client was dropped before the other client was served ({other:?}): \
             the handshake limit is {HANDSHAKE_LIMIT:?}"
        ),
    }
    let n = within("the silent client being dropped", silent.read(&mut buf))
        .await
        .unwrap_or(0);
    assert_eq!(n, 0, "the server wrote to a client that never shook hands");
    assert!(
        connected.elapsed() >= HANDSHAKE_LIMIT,
        "dropped after {:?}, before the {HANDSHAKE_LIMIT:?} limit",
        connected.elapsed()
    );
}

#[tokio::test]
async fn a_silent_client_holds_up_no_one_and_is_dropped_after_the_handshake_timeout() {
    let id = identity();
    let (tls, tls_addr) = tls_server(&id, HANDSHAKE_LIMIT).await;
    let (https, https_addr) = https_server(&id, HANDSHAKE_LIMIT).await;
    let client_tls = id.client();
    let over_tls = silent_client_is_dropped_after(tls_addr, async {
        let transport = TcpConnector::new(tls_addr)
            .tls(client_tls.clone())
            .server_name("localhost")
            .connect()
            .await
            .unwrap();
        let client = client_peer(transport);
        assert_eq!(subtract(&client, 3, 2).await, 1);
        client.close(Duration::from_secs(1)).await;
    });
    let over_https = silent_client_is_dropped_after(https_addr, async {
        let url = format!("https://localhost:{}/", https_addr.port());
        let client = Peer::spawn(
            HttpConnector::new(&url)
                .tls(client_tls.clone())
                .connect()
                .await
                .unwrap(),
        );
        assert_eq!(subtract(&client, 3, 2).await, 1);
        client.close(Duration::from_secs(1)).await;
    });
    tokio::join!(over_tls, over_https);
    tls.shutdown(Duration::from_secs(1)).await;
    https.shutdown(Duration::from_secs(1)).await;
}

fn path_of(error: &TlsConfigError) -> Option<&Path> {
    match error {
        TlsConfigError::Read { path, .. } => Some(path),
        TlsConfigError::Pem { path, .. }
        | TlsConfigError::NoCertificate { path }
        | TlsConfigError::NoPrivateKey { path }
        | TlsConfigError::EncryptedPrivateKey { path }
        | TlsConfigError::InvalidRoot { path, .. } => path.as_deref(),
        _ => None,
    }
}

#[test]
fn pem_files_that_cannot_be_used_are_typed_errors_naming_the_file() {
    let dir = TempDir::new("transport-tls-pem");
    let id = identity();
    let cert = dir.write("cert.pem", &id.cert);
    let key = dir.write("key.pem", &id.key);
    let both = dir.write("both.pem", &format!("{}{}", id.cert, id.key));
    assert!(ServerTls::from_pem_files(&cert, &key).is_ok());
    assert!(ServerTls::from_pem_files(&both, &both).is_ok());
    assert!(ClientTls::from_roots_pem_file(&both).is_ok());

    let missing = dir.path("missing.pem");
    let error = ServerTls::from_pem_files(&missing, &key).unwrap_err();
    assert!(
        matches!(&error, TlsConfigError::Read { source, .. } if source.kind() == io::ErrorKind::NotFound),
        "{error:?}"
    );
    assert_eq!(path_of(&error), Some(missing.as_path()));
    assert!(error.to_string().contains("missing.pem"), "{error}");
    let error = ServerTls::from_pem_files(&cert, &missing).unwrap_err();
    assert_eq!(path_of(&error), Some(missing.as_path()));

    let error = ServerTls::from_pem_files(&key, &key).unwrap_err();
    assert!(
        matches!(error, TlsConfigError::NoCertificate { .. }),
        "{error:?}"
    );
    assert_eq!(path_of(&error), Some(key.as_path()));
    assert!(error.to_string().contains("BEGIN CERTIFICATE"), "{error}");

    let error = ServerTls::from_pem_files(&cert, &cert).unwrap_err();
    assert!(
        matches!(error, TlsConfigError::NoPrivateKey { .. }),
        "{error:?}"
    );
    assert_eq!(path_of(&error), Some(cert.as_path()));

    let truncated = dir.write("truncated.pem", &id.cert[..id.cert.len() / 2]);
    let error = ServerTls::from_pem_files(&truncated, &key).unwrap_err();
    assert!(matches!(error, TlsConfigError::Pem { .. }), "{error:?}");
    assert_eq!(path_of(&error), Some(truncated.as_path()));

    let encrypted = dir.write(
        "encrypted.pem",
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIBvTBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----\n",
    );
    let error = ServerTls::from_pem_files(&cert, &encrypted).unwrap_err();
    assert!(
        matches!(error, TlsConfigError::EncryptedPrivateKey { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("decrypt"), "{error}");

    // A key that is not the certificate's.
    let other_key = dir.write("other-key.pem", &identity().key);
    let error = ServerTls::from_pem_files(&cert, &other_key).unwrap_err();
    assert!(
        matches!(
            error,
            TlsConfigError::Rejected {
                source: rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)
            }
        ),
        "{error:?}"
    );
    // A key section whose contents are not a key.
    let junk_key = dir.write(
        "junk-key.pem",
        "-----BEGIN PRIVATE KEY-----\nAAECAwQFBgcICQ==\n-----END PRIVATE KEY-----\n",
    );
    let error = ServerTls::from_pem_files(&cert, &junk_key).unwrap_err();
    assert!(
        matches!(error, TlsConfigError::Rejected { .. }),
        "{error:?}"
    );

    // Roots.
    let error = ClientTls::from_roots_pem_file(&key).unwrap_err();
    assert!(
        matches!(error, TlsConfigError::NoCertificate { .. }),
        "{error:?}"
    );
    let error = ClientTls::from_roots_pem_file(&missing).unwrap_err();
    assert!(matches!(error, TlsConfigError::Read { .. }), "{error:?}");
    let junk_cert = dir.write(
        "junk-cert.pem",
        "-----BEGIN CERTIFICATE-----\nAAECAwQFBgcICQ==\n-----END CERTIFICATE-----\n",
    );
    let error = ClientTls::from_roots_pem_file(&junk_cert).unwrap_err();
    assert!(
        matches!(error, TlsConfigError::InvalidRoot { .. }),
        "{error:?}"
    );
    assert_eq!(path_of(&error), Some(junk_cert.as_path()));

    // PEM in memory says where it came from too.
    let error = ClientTls::from_roots_pem(b"no pem here").unwrap_err();
    assert!(
        matches!(error, TlsConfigError::NoCertificate { path: None }),
        "{error:?}"
    );
    assert!(error.to_string().contains("the PEM given"), "{error}");
}

#[cfg(unix)]
#[tokio::test]
async fn spec_server_serves_tls_wss_and_https_with_a_certificate_and_key() {
    let dir = TempDir::new("transport-tls-spec-server");
    let id = identity();
    let cert = dir.write("cert.pem", &id.cert);
    let key = dir.write("key.pem", &id.key);
    let mut child = Command::new(example_path("spec_server"))
        .args([
            "--tcp",
            "127.0.0.1:0",
            "--ws",
            "127.0.0.1:0",
            "--http",
            "127.0.0.1:0",
        ])
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let lines = tests::listening_lines(&mut stderr, 3).await;
    let find = |prefix: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("a `{prefix}` line in {lines:?}"))
            .clone()
    };
    let (tls_line, wss, https) = (find("tls "), find("wss://"), find("https://"));
    let config = Config::default();

    // The certificate names 127.0.0.1, the address the server prints.
    let tls_addr = tls_line.trim_start_matches("tls ");
    let transport = TcpConnector::new(tls_addr)
        .tls(id.client().clone())
        .server_name("127.0.0.1")
        .codec(&config)
        .connect()
        .await
        .unwrap();
    let over_tls = Peer::spawn(transport);
    assert_eq!(subtract(&over_tls, 42, 23).await, 19);
    let transport = WebSocketConnector::new(&wss)
        .tls(id.client().clone())
        .connect()
        .await
        .unwrap();
    let over_wss = Peer::spawn(transport);
    assert_eq!(subtract(&over_wss, 5, 8).await, -3);
    let over_https = Peer::spawn(
        HttpConnector::new(&https)
            .tls(id.client().clone())
            .connect()
            .await
            .unwrap(),
    );
    assert_eq!(subtract(&over_https, 1, 1).await, 0);
    // A plain client on the TLS port is refused; the server goes on.
    assert!(WebSocketConnector::new(wss.replace("wss://", "ws://"))
        .connect()
        .await
        .is_err());
    assert_eq!(subtract(&over_wss, 2, 1).await, 1);

    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
    over_https.close(Duration::ZERO).await;
}

#[tokio::test]
async fn spec_server_refuses_a_certificate_without_its_key_or_one_it_cannot_read() {
    let dir = TempDir::new("transport-tls-spec-server-refuses");
    let id = identity();
    let cert = dir.write("cert.pem", &id.cert);
    let run = |args: Vec<String>| async move {
        let output = within(
            "spec_server exiting",
            Command::new(example_path("spec_server"))
                .args(&args)
                .stdin(Stdio::null())
                .kill_on_drop(true)
                .output(),
        )
        .await
        .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let cert_arg = cert.display().to_string();

    let (code, stderr) = run(vec![
        "--tcp".into(),
        "127.0.0.1:0".into(),
        "--tls-cert".into(),
        cert_arg.clone(),
    ])
    .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--tls-key"), "{stderr}");

    let missing = dir.path("missing-key.pem").display().to_string();
    let (code, stderr) = run(vec![
        "--tcp".into(),
        "127.0.0.1:0".into(),
        "--tls-cert".into(),
        cert_arg,
        "--tls-key".into(),
        missing,
    ])
    .await;
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("missing-key.pem"), "{stderr}");
}

#[tokio::test]
async fn mcp_server_serves_streamable_https_with_its_instance_tag() {
    use serde_json::{json, Value};

    let dir = TempDir::new("transport-tls-mcp-server");
    let id = identity();
    let cert = dir.write("cert.pem", &id.cert);
    let key = dir.write("key.pem", &id.key);
    let mut child = Command::new(example_path("mcp_server"))
        .args(["--http", "127.0.0.1:0", "--instance-tag", "a7"])
        .arg("--tls-cert")
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = within("mcp_server says where it listens", stderr.next_line())
            .await
            .unwrap()
            .expect("mcp_server is still running");
        if let Some(url) = line.strip_prefix("mcp_server: listening on ") {
            break url.to_owned();
        }
    };
    assert!(url.starts_with("https://"), "{url}");

    let config = Config::mcp_client();
    let client = Peer::builder().config(config.clone()).spawn(
        McpHttpConnector::new(&url)
            .tls(id.client().clone())
            .connect()
            .await
            .unwrap(),
    );
    let init: Value = within(
        "initialize",
        client.call(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tests", "version": "0"}}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(init["protocolVersion"], "2025-06-18");
    client
        .notify("notifications/initialized", json!({}))
        .await
        .unwrap();
    let sum: Value = within(
        "tools/call",
        client.call(
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ),
    )
    .await
    .unwrap();
    assert_eq!(sum["content"][0]["text"], "5", "{sum}");

    client.close(Duration::from_secs(1)).await;
    // The session's id carried the instance tag: the server logs its end.
    let ended = loop {
        let line = within("the session ends", stderr.next_line())
            .await
            .unwrap()
            .expect("mcp_server is still running");
        if line.contains("session ") && line.contains(" ended") {
            break line;
        }
    };
    assert!(ended.contains("session a7."), "{ended}");

    let status = tests::terminate(&mut child).await;
    assert!(status.success(), "{status}");
}
