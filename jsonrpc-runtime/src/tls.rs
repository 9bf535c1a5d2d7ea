//! TLS settings (feature `tls`): who this side is, and whom it trusts.
//!
//! A server needs its certificate chain and private key: [`ServerTls`],
//! read from PEM files with [`ServerTls::from_pem_files`]. A client needs
//! the root certificates it trusts: [`ClientTls`], read from a PEM file with
//! [`ClientTls::from_roots_pem_file`] (or, with the `tls-webpki-roots`
//! feature, Mozilla's roots with [`ClientTls::webpki_roots`]). Either one
//! can also wrap a `rustls` config built by hand (client certificates,
//! other protocol versions, a custom verifier): [`ServerTls::from_config`],
//! [`ClientTls::from_config`]. The `rustls` crate is re-exported as
//! [`tls::rustls`](rustls), so such a config is built with the same version
//! the runtime uses.
//!
//! The settings are then handed to a transport:
//!
//! | transport | server | client |
//! |---|---|---|
//! | TLS over TCP | [`TlsAcceptor`](crate::transport::TlsAcceptor) with a [`Listener`](crate::server::Listener) | [`TcpConnector`](crate::transport::TcpConnector) with [`tls`](crate::transport::Connector::tls) |
//! | HTTPS (feature `http`) | `HttpListener` over a [`TlsAcceptor`](crate::transport::TlsAcceptor) | `HttpConnector` with `tls`, `https://` |
//! | WebSocket over TLS, `wss://` (feature `websocket`) | `WebSocketAcceptor::tls` | `WebSocketConnector` with `tls`, `wss://` |
//!
//! # ALPN
//!
//! A config made here announces no application protocol of its own; each
//! transport fills in the one it speaks: `h2` and `http/1.1` for HTTPS,
//! `http/1.1` for WebSocket, none for JSON-RPC straight over TLS. A config
//! given through `from_config` whose ALPN list is not empty is used as it
//! is, for every transport.
//!
//! # Crypto provider
//!
//! Configs made here use rustls' `ring` provider with its safe defaults
//! (TLS 1.2 and 1.3), whatever process-wide default is installed.
//!
//! # Examples
//!
//! A server and a client over TLS, with a certificate for `localhost` made
//! on the spot:
//!
//! ```
//! use std::time::Duration;
//! use jsonrpc_runtime::server::Listener;
//! use jsonrpc_runtime::tls::{ClientTls, ServerTls};
//! use jsonrpc_runtime::transport::{TcpConnector, TlsAcceptor};
//! use jsonrpc_runtime::{ErrorObject, Peer, Router};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
//! let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
//!
//! let server_tls = ServerTls::from_pem(cert_pem.as_bytes(), key_pem.as_bytes())?;
//! let acceptor = TlsAcceptor::bind("127.0.0.1:0", server_tls).await?;
//! let addr = acceptor.local_addr()?;
//! let router = Router::new().request("ping", |(): (), _| async { Ok::<_, ErrorObject>("pong") });
//! let server = Listener::new(acceptor).spawn(router);
//!
//! let client_tls = ClientTls::from_roots_pem(cert_pem.as_bytes())?;
//! let transport = TcpConnector::new(addr).tls(client_tls).server_name("localhost").connect().await?;
//! let client = Peer::spawn(transport);
//! assert_eq!(client.call::<String>("ping", ()).await?, "pong");
//!
//! client.close(Duration::from_secs(1)).await;
//! server.shutdown(Duration::from_secs(1)).await;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::pki_types::pem::{self, PemObject as _};
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore, ServerConfig};

/// The rustls crate the runtime is built on, for configs built by hand
/// ([`ServerTls::from_config`], [`ClientTls::from_config`]) and for reading
/// handshake errors ([`TlsError::Handshake`](crate::transport::TlsError::Handshake)).
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use jsonrpc_runtime::tls::{rustls, ClientTls};
///
/// let provider = Arc::new(rustls::crypto::ring::default_provider());
/// let config = rustls::ClientConfig::builder_with_provider(provider)
///     .with_protocol_versions(&[&rustls::version::TLS13])?
///     .with_root_certificates(rustls::RootCertStore::empty())
///     .with_no_client_auth();
/// let tls = ClientTls::from_config(config);
/// # let _ = tls;
/// # Ok::<(), rustls::Error>(())
/// ```
pub use rustls;

/// ALPN protocol ids the transports announce when the config has none.
pub(crate) mod alpn {
    /// HTTP/2 over TLS.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) const H2: &[u8] = b"h2";
    /// HTTP/1.1 (and WebSocket, which starts as HTTP/1.1).
    #[cfg_attr(not(any(feature = "http", feature = "websocket")), allow(dead_code))]
    pub(crate) const HTTP_1_1: &[u8] = b"http/1.1";
}

/// A TLS server's settings: its certificate chain and private key, as a
/// rustls [`ServerConfig`]. Cheap to clone.
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::tls::ServerTls;
/// use jsonrpc_runtime::transport::TlsAcceptor;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tls = ServerTls::from_pem_files("cert.pem", "key.pem")?;
/// let acceptor = TlsAcceptor::bind("0.0.0.0:9443", tls).await?;
/// # let _ = acceptor;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
}

impl ServerTls {
    /// Reads the certificate chain (the server's certificate first, then
    /// the intermediates, each a `-----BEGIN CERTIFICATE-----` section) and
    /// the private key (PKCS#8 `PRIVATE KEY`, PKCS#1 `RSA PRIVATE KEY` or
    /// SEC1 `EC PRIVATE KEY`, unencrypted) from two PEM files. Both may be
    /// the same file.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::{ServerTls, TlsConfigError};
    ///
    /// # let dir = std::env::temp_dir().join(format!("server-tls-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// std::fs::write(dir.join("cert.pem"), cert.cert.pem())?;
    /// std::fs::write(dir.join("key.pem"), cert.signing_key.serialize_pem())?;
    ///
    /// let tls = ServerTls::from_pem_files(dir.join("cert.pem"), dir.join("key.pem"))?;
    /// # let _ = tls;
    ///
    /// // The key file given as the certificate file:
    /// let swapped = ServerTls::from_pem_files(dir.join("key.pem"), dir.join("key.pem"));
    /// assert!(matches!(swapped, Err(TlsConfigError::NoCertificate { .. })));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`TlsConfigError::Read`] when a file cannot be read,
    /// [`TlsConfigError::Pem`] when it is not PEM,
    /// [`TlsConfigError::NoCertificate`] or [`TlsConfigError::NoPrivateKey`]
    /// when the section is missing, [`TlsConfigError::EncryptedPrivateKey`]
    /// for a key protected by a passphrase, and [`TlsConfigError::Rejected`]
    /// when rustls cannot use them (a key that does not match the
    /// certificate, a key type it does not support).
    pub fn from_pem_files(
        cert_chain: impl AsRef<Path>,
        private_key: impl AsRef<Path>,
    ) -> Result<ServerTls, TlsConfigError> {
        let (cert_path, key_path) = (cert_chain.as_ref(), private_key.as_ref());
        let certs = read_certificates(&read(cert_path)?, Some(cert_path))?;
        let key = read_private_key(&read(key_path)?, Some(key_path))?;
        ServerTls::from_parts(certs, key)
    }

    /// [`from_pem_files`](Self::from_pem_files) from PEM text already in
    /// memory (from a secret store, say).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::ServerTls;
    ///
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// let tls = ServerTls::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())?;
    /// # let _ = tls;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`from_pem_files`](Self::from_pem_files), without
    /// [`TlsConfigError::Read`].
    pub fn from_pem(cert_chain: &[u8], private_key: &[u8]) -> Result<ServerTls, TlsConfigError> {
        let certs = read_certificates(cert_chain, None)?;
        let key = read_private_key(private_key, None)?;
        ServerTls::from_parts(certs, key)
    }

    /// Settings from a rustls config built by hand (to ask clients for
    /// certificates, pick protocol versions, resolve certificates by SNI).
    /// Its ALPN list, if not empty, is kept for every transport (see the
    /// [module docs](self#alpn)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use jsonrpc_runtime::tls::{rustls, ServerTls};
    /// use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    ///
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));
    /// let config = rustls::ServerConfig::builder_with_provider(Arc::new(
    ///     rustls::crypto::ring::default_provider(),
    /// ))
    /// .with_protocol_versions(&[&rustls::version::TLS13])?
    /// .with_no_client_auth()
    /// .with_single_cert(vec![CertificateDer::from(cert.cert.der().to_vec())], key)?;
    /// let tls = ServerTls::from_config(config);
    /// # let _ = tls;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_config(config: impl Into<Arc<ServerConfig>>) -> ServerTls {
        ServerTls {
            config: config.into(),
        }
    }

    /// The rustls config.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::ServerTls;
    ///
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// let tls = ServerTls::from_pem(cert.cert.pem().as_bytes(), cert.signing_key.serialize_pem().as_bytes())?;
    /// assert!(tls.config().alpn_protocols.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(&self) -> &Arc<ServerConfig> {
        &self.config
    }

    /// The config with `protocols` as its ALPN list, unless it has one.
    pub(crate) fn with_default_alpn(&self, protocols: &[&[u8]]) -> Arc<ServerConfig> {
        if protocols.is_empty() || !self.config.alpn_protocols.is_empty() {
            return self.config.clone();
        }
        let mut config = ServerConfig::clone(&self.config);
        config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    fn from_parts(
        certs: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
    ) -> Result<ServerTls, TlsConfigError> {
        let config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|source| TlsConfigError::Rejected { source })?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|source| TlsConfigError::Rejected { source })?;
        Ok(ServerTls::from_config(config))
    }
}

/// A TLS client's settings: the root certificates it trusts, as a rustls
/// [`ClientConfig`]. Cheap to clone.
///
/// Servers are checked the usual way: their certificate must chain up to
/// one of the roots and name the host connected to (a DNS name or an IP
/// address in its subject alternative names).
///
/// # Examples
///
/// ```no_run
/// use jsonrpc_runtime::tls::ClientTls;
/// use jsonrpc_runtime::transport::TcpConnector;
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let tls = ClientTls::from_roots_pem_file("ca.pem")?;
/// let transport = TcpConnector::new("rpc.example.com:9443").tls(tls).connect().await?;
/// # let _ = transport;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ClientTls {
    config: Arc<ClientConfig>,
}

impl ClientTls {
    /// Trusts the certificates of a PEM file (one or more
    /// `-----BEGIN CERTIFICATE-----` sections): a private CA, or a
    /// self-signed server certificate.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::{ClientTls, TlsConfigError};
    ///
    /// # let dir = std::env::temp_dir().join(format!("client-tls-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir)?;
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// std::fs::write(dir.join("cert.pem"), cert.cert.pem())?;
    /// let tls = ClientTls::from_roots_pem_file(dir.join("cert.pem"))?;
    /// # let _ = tls;
    ///
    /// let missing = ClientTls::from_roots_pem_file(dir.join("missing.pem"));
    /// assert!(matches!(missing, Err(TlsConfigError::Read { .. })));
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`TlsConfigError::Read`] when the file cannot be read,
    /// [`TlsConfigError::Pem`] when it is not PEM,
    /// [`TlsConfigError::NoCertificate`] when it holds no certificate, and
    /// [`TlsConfigError::InvalidRoot`] for a certificate that cannot be a
    /// root.
    pub fn from_roots_pem_file(roots: impl AsRef<Path>) -> Result<ClientTls, TlsConfigError> {
        let path = roots.as_ref();
        ClientTls::from_roots(&read(path)?, Some(path))
    }

    /// [`from_roots_pem_file`](Self::from_roots_pem_file) from PEM text
    /// already in memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::{ClientTls, TlsConfigError};
    ///
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// let tls = ClientTls::from_roots_pem(cert.cert.pem().as_bytes())?;
    /// # let _ = tls;
    /// let empty = ClientTls::from_roots_pem(b"");
    /// assert!(matches!(empty, Err(TlsConfigError::NoCertificate { path: None })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`from_roots_pem_file`](Self::from_roots_pem_file), without
    /// [`TlsConfigError::Read`].
    pub fn from_roots_pem(roots: &[u8]) -> Result<ClientTls, TlsConfigError> {
        ClientTls::from_roots(roots, None)
    }

    /// Trusts Mozilla's root certificates (the `webpki-roots` crate,
    /// compiled in): what a client of public servers needs, without reading
    /// the platform's store.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use jsonrpc_runtime::tls::ClientTls;
    /// use jsonrpc_runtime::transport::TcpConnector;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let tls = ClientTls::webpki_roots();
    /// let transport = TcpConnector::new("rpc.example.com:443").tls(tls).connect().await?;
    /// # let _ = transport;
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "tls-webpki-roots")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls-webpki-roots")))]
    pub fn webpki_roots() -> ClientTls {
        let roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        ClientTls::from_root_store(roots)
            .unwrap_or_else(|_| unreachable!("the ring provider's defaults are valid"))
    }

    /// Settings from a rustls config built by hand (a client certificate,
    /// other protocol versions, a custom verifier). Its ALPN list, if not
    /// empty, is kept for every transport (see the [module docs](self#alpn)).
    ///
    /// # Examples
    ///
    /// See [`rustls`].
    pub fn from_config(config: impl Into<Arc<ClientConfig>>) -> ClientTls {
        ClientTls {
            config: config.into(),
        }
    }

    /// The rustls config.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::tls::ClientTls;
    ///
    /// let cert = rcgen::generate_simple_self_signed(["localhost".to_owned()])?;
    /// let tls = ClientTls::from_roots_pem(cert.cert.pem().as_bytes())?;
    /// assert!(tls.config().alpn_protocols.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn config(&self) -> &Arc<ClientConfig> {
        &self.config
    }

    /// The config with `protocols` as its ALPN list, unless it has one.
    pub(crate) fn with_default_alpn(&self, protocols: &[&[u8]]) -> Arc<ClientConfig> {
        if protocols.is_empty() || !self.config.alpn_protocols.is_empty() {
            return self.config.clone();
        }
        let mut config = ClientConfig::clone(&self.config);
        config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
        Arc::new(config)
    }

    fn from_roots(pem: &[u8], path: Option<&Path>) -> Result<ClientTls, TlsConfigError> {
        let mut roots = RootCertStore::empty();
        for cert in read_certificates(pem, path)? {
            roots
                .add(cert)
                .map_err(|source| TlsConfigError::InvalidRoot {
                    path: path.map(Path::to_path_buf),
                    source,
                })?;
        }
        ClientTls::from_root_store(roots)
    }

    fn from_root_store(roots: RootCertStore) -> Result<ClientTls, TlsConfigError> {
        let config = ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|source| TlsConfigError::Rejected { source })?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(ClientTls::from_config(config))
    }
}

/// Why TLS settings could not be made from PEM files.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::tls::{ServerTls, TlsConfigError};
///
/// match ServerTls::from_pem_files("/no/such/cert.pem", "/no/such/key.pem") {
///     Err(TlsConfigError::Read { path, source }) => {
///         assert_eq!(path, std::path::Path::new("/no/such/cert.pem"));
///         assert_eq!(source.kind(), std::io::ErrorKind::NotFound);
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsConfigError {
    /// A file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: io::Error,
    },
    /// The text is not PEM (a section without its end line, bad base64).
    #[error("{} is not valid PEM: {source}", Origin(path))]
    Pem {
        /// The file, or `None` for PEM given in memory.
        path: Option<PathBuf>,
        /// What the PEM parser found.
        source: pem::Error,
    },
    /// No `-----BEGIN CERTIFICATE-----` section where certificates were
    /// expected.
    #[error(
        "{} holds no certificate: expected at least one `-----BEGIN CERTIFICATE-----` section",
        Origin(path)
    )]
    NoCertificate {
        /// The file, or `None` for PEM given in memory.
        path: Option<PathBuf>,
    },
    /// No private key section where the key was expected.
    #[error(
        "{} holds no private key: expected a `-----BEGIN PRIVATE KEY-----` (PKCS#8), \
         `-----BEGIN RSA PRIVATE KEY-----` or `-----BEGIN EC PRIVATE KEY-----` section",
        Origin(path)
    )]
    NoPrivateKey {
        /// The file, or `None` for PEM given in memory.
        path: Option<PathBuf>,
    },
    /// The private key is encrypted with a passphrase, which is not
    /// supported.
    #[error(
        "the private key in {} is encrypted; decrypt it first \
         (`openssl pkey -in KEY -out PLAIN_KEY`) and keep the file private",
        Origin(path)
    )]
    EncryptedPrivateKey {
        /// The file, or `None` for PEM given in memory.
        path: Option<PathBuf>,
    },
    /// A certificate cannot be trusted as a root (it does not parse as
    /// X.509).
    #[error(
        "{} holds a certificate that cannot be used as a root: {source}",
        Origin(path)
    )]
    InvalidRoot {
        /// The file, or `None` for PEM given in memory.
        path: Option<PathBuf>,
        /// rustls' reason.
        source: rustls::Error,
    },
    /// rustls refused the settings: most often a private key that does not
    /// belong to the certificate, or of a type it does not support.
    #[error("the TLS settings were refused: {source}")]
    Rejected {
        /// rustls' reason.
        source: rustls::Error,
    },
}

/// Where PEM came from, for messages.
struct Origin<'a>(&'a Option<PathBuf>);

impl fmt::Display for Origin<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(path) => write!(f, "`{}`", path.display()),
            None => f.write_str("the PEM given"),
        }
    }
}

/// The crypto provider every config made here uses.
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn read(path: &Path) -> Result<Vec<u8>, TlsConfigError> {
    std::fs::read(path).map_err(|source| TlsConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Every certificate in `pem`, in order; at least one.
fn read_certificates(
    pem: &[u8],
    path: Option<&Path>,
) -> Result<Vec<CertificateDer<'static>>, TlsConfigError> {
    let path = path.map(Path::to_path_buf);
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| pem_error(source, &path))?;
    if certs.is_empty() {
        return Err(TlsConfigError::NoCertificate { path });
    }
    Ok(certs)
}

/// The first private key in `pem`.
fn read_private_key(
    pem: &[u8],
    path: Option<&Path>,
) -> Result<PrivateKeyDer<'static>, TlsConfigError> {
    let path = path.map(Path::to_path_buf);
    match PrivateKeyDer::from_pem_slice(pem) {
        Ok(key) => Ok(key),
        // Skipped as an unknown section, or headers the parser refuses.
        Err(_) if holds_encrypted_key(pem) => Err(TlsConfigError::EncryptedPrivateKey { path }),
        Err(pem::Error::NoItemsFound) => Err(TlsConfigError::NoPrivateKey { path }),
        Err(source) => Err(pem_error(source, &path)),
    }
}

fn pem_error(source: pem::Error, path: &Option<PathBuf>) -> TlsConfigError {
    TlsConfigError::Pem {
        path: path.clone(),
        source,
    }
}

/// Whether `pem` has an `ENCRYPTED PRIVATE KEY` section (PKCS#8 with a
/// passphrase) or a traditional key with an encryption header.
fn holds_encrypted_key(pem: &[u8]) -> bool {
    let has = |needle: &[u8]| pem.windows(needle.len()).any(|w| w == needle);
    has(b"-----BEGIN ENCRYPTED PRIVATE KEY-----") || has(b"Proc-Type: 4,ENCRYPTED")
}
