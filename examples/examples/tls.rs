//! Run with: cargo run --example tls [-- CERT.pem KEY.pem ADDR]
//!
//! JSON-RPC over TLS (rustls, the `ring` provider): a `TlsAcceptor` behind a
//! `Listener`, and a `TcpConnector` with `tls(..)`. Certificates and keys
//! are PEM files; the client trusts the roots it is given (or, with the
//! `tls-webpki-roots` feature, Mozilla's).
//!
//! With no arguments it makes a self-signed certificate for `localhost`,
//! serves on a free port, calls itself over TLS, and shows that a client
//! which does not trust the certificate is refused. With a certificate, a
//! key and an address it serves until Ctrl-C.

use std::time::Duration;

use jsonrpc_runtime::server::Listener;
use jsonrpc_runtime::tls::{ClientTls, ServerTls};
use jsonrpc_runtime::transport::{TcpConnector, TlsAcceptor, TransportError};
use jsonrpc_runtime::{Context, ErrorObject, Peer, Router};

#[path = "support/logging.rs"]
mod logging;

fn router() -> Router {
    Router::new().request("add", |(a, b): (i64, i64), _: Context| async move {
        Ok::<_, ErrorObject>(a + b)
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    logging::init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [cert, key, addr] = &args[..] {
        let acceptor = TlsAcceptor::bind(addr, ServerTls::from_pem_files(cert, key)?).await?;
        eprintln!("serving JSON-RPC over TLS on {}", acceptor.local_addr()?);
        let server = Listener::new(acceptor).spawn(router());
        tokio::signal::ctrl_c().await?;
        server.shutdown(Duration::from_secs(5)).await;
        return Ok(());
    }
    if !args.is_empty() {
        return Err("usage: tls [CERT.pem KEY.pem ADDR]".into());
    }

    // A certificate for `localhost`, in PEM as it would be on disk.
    let made = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    let (cert, key) = (made.cert.pem(), made.signing_key.serialize_pem());
    let tls = ServerTls::from_pem(cert.as_bytes(), key.as_bytes())?;
    let acceptor = TlsAcceptor::bind("127.0.0.1:0", tls).await?;
    let addr = acceptor.local_addr()?;
    let server = Listener::new(acceptor).spawn(router());

    // Trusts the certificate; checks it against `localhost`.
    let trusted = ClientTls::from_roots_pem(cert.as_bytes())?;
    let client = Peer::spawn(
        TcpConnector::new(addr)
            .tls(trusted)
            .server_name("localhost")
            .connect()
            .await?,
    );
    let sum: i64 = client.call("add", [2, 3]).await?;
    println!("over TLS: add(2, 3) = {sum}");
    client.close(Duration::from_secs(1)).await;

    // Trusts another certificate: the handshake fails, with rustls' reason.
    let other = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    let untrusted = ClientTls::from_roots_pem(other.cert.pem().as_bytes())?;
    match TcpConnector::new(addr)
        .tls(untrusted)
        .server_name("localhost")
        .connect()
        .await
    {
        Err(TransportError::Tls(error)) => println!("an untrusting client is refused: {error}"),
        Err(other) => return Err(other.into()),
        Ok(_) => return Err("a client that trusts another certificate connected".into()),
    }

    server.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
