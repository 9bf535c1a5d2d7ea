//! Where the load goes: the kinds of connection, the settings some of them
//! take (TLS roots, request headers), and how a connection is opened and
//! its child process, if any, stopped.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use jsonrpc_runtime::codec::Framing;
use jsonrpc_runtime::http::{HeaderName, HeaderValue};
use jsonrpc_runtime::tls::ClientTls;
use jsonrpc_runtime::transport::{
    kind, ChildHandle, ChildProcess, Connector, HttpConnector, TcpConnector, TransportError,
    UnixConnector, WebSocketConnector,
};
use jsonrpc_runtime::{Config, Transport};
use tokio::process::Command;

/// How long a child is given to exit once its stdin is closed.
const CHILD_GRACE: Duration = Duration::from_secs(5);

/// The kind of connection and its address. Everything that depends on the
/// kind is in this type: the option that picks it, its label and how it is
/// opened.
#[derive(Debug)]
pub(crate) enum Target {
    Tcp(String),
    /// TCP with TLS: `--tcp` with `--ca`.
    Tls(String),
    Unix(PathBuf),
    Ws(String),
    Http(String),
    Child(Vec<String>),
}

impl Target {
    /// The target an option names, or `None` when `flag` picks no transport.
    pub(crate) fn from_option(flag: &str, value: String) -> Option<Result<Target, String>> {
        let target = match flag {
            "--tcp" => Ok(Target::Tcp(value)),
            "--unix" => Ok(Target::Unix(PathBuf::from(value))),
            "--ws" if value.starts_with("ws://") || value.starts_with("wss://") => {
                Ok(Target::Ws(value))
            }
            "--ws" => Ok(Target::Ws(format!("ws://{value}/"))),
            "--http" if value.starts_with("http://") || value.starts_with("https://") => {
                Ok(Target::Http(value))
            }
            "--http" => Ok(Target::Http(format!("http://{value}/"))),
            "--child" => {
                let words: Vec<String> = value.split_whitespace().map(str::to_owned).collect();
                if words.is_empty() {
                    Err("`--child` needs a command".to_owned())
                } else {
                    Ok(Target::Child(words))
                }
            }
            _ => return None,
        };
        Some(target)
    }

    /// Whether the connection is framed by one of the runtime's framers
    /// (so `--content-length` applies), rather than by its own protocol.
    pub(crate) fn uses_framer(&self) -> bool {
        match self {
            Target::Tcp(_) | Target::Tls(_) | Target::Unix(_) | Target::Child(_) => true,
            Target::Ws(_) | Target::Http(_) => false,
        }
    }

    /// Whether requests carry HTTP headers (`--header`, `--bearer`).
    pub(crate) fn takes_headers(&self) -> bool {
        matches!(self, Target::Ws(_) | Target::Http(_))
    }

    /// Whether the server can send notifications outside an answer: plain
    /// HTTP carries only the answers to what was posted.
    pub(crate) fn carries_notifications(&self) -> bool {
        !matches!(self, Target::Http(_))
    }

    /// Whether the server closes the connection once the client has closed
    /// its side. An HTTP transport is no connection of its own: each
    /// request is a `POST`, answered once, and nothing is left to close.
    pub(crate) fn server_closes(&self) -> bool {
        !matches!(self, Target::Http(_))
    }

    /// Whether the connection is secured with TLS.
    pub(crate) fn is_secure(&self) -> bool {
        match self {
            Target::Tls(_) => true,
            Target::Ws(url) => url.starts_with("wss://"),
            Target::Http(url) => url.starts_with("https://"),
            Target::Tcp(_) | Target::Unix(_) | Target::Child(_) => false,
        }
    }

    /// `tcp 127.0.0.1:9000`, `child spec_server`, ...
    pub(crate) fn label(&self) -> String {
        match self {
            Target::Tcp(addr) => format!("tcp {addr}"),
            Target::Tls(addr) => format!("tls {addr}"),
            Target::Unix(path) => format!("unix {}", path.display()),
            Target::Ws(url) => format!("ws {url}"),
            Target::Http(url) => format!("http {url}"),
            Target::Child(words) => format!("child {}", words.join(" ")),
        }
    }

    /// The transport's name in the JSON summary.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Target::Tcp(_) => "tcp",
            Target::Tls(_) => "tls",
            Target::Unix(_) => "unix",
            Target::Ws(_) => "ws",
            Target::Http(_) => "http",
            Target::Child(_) => "child",
        }
    }
}

/// The settings of the connectors that take them: the roots of `--ca`,
/// and the request headers of `--header` and `--bearer`.
#[derive(Debug, Default)]
pub(crate) struct ClientSettings {
    pub(crate) tls: Option<ClientTls>,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) bearer: Option<String>,
}

impl ClientSettings {
    /// A WebSocket or HTTP connector with these settings.
    fn web<K: kind::Web + kind::Secure>(&self, mut connector: Connector<K>) -> Connector<K> {
        if let Some(tls) = &self.tls {
            connector = connector.tls(tls.clone());
        }
        for (name, value) in &self.headers {
            connector = connector.header(name.clone(), value.clone());
        }
        if let Some(token) = &self.bearer {
            connector = connector.bearer(token);
        }
        connector
    }
}

/// How to reach the server: the target, its settings and the framing.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) target: Target,
    pub(crate) settings: ClientSettings,
    pub(crate) content_length: bool,
}

/// An open connection: the transport, and the child process behind it.
pub(crate) struct Connection {
    pub(crate) transport: Transport,
    pub(crate) child: Option<ChildHandle>,
}

impl Link {
    fn config(&self) -> Config {
        let framing = if self.content_length {
            Framing::ContentLength
        } else {
            Framing::NewlineDelimited
        };
        Config::default().framing(framing)
    }

    /// Opens the connection, or says why it could not be opened.
    pub(crate) async fn connect(&self) -> Result<Connection, String> {
        let config = self.config();
        let transport = match &self.target {
            Target::Tcp(addr) => {
                TcpConnector::new(addr.as_str())
                    .codec(&config)
                    .connect()
                    .await
            }
            Target::Tls(addr) => {
                let mut connector = TcpConnector::new(addr.as_str()).codec(&config);
                if let Some(tls) = &self.settings.tls {
                    connector = connector.tls(tls.clone());
                }
                connector.connect().await
            }
            Target::Unix(path) => UnixConnector::new(path).codec(&config).connect().await,
            Target::Ws(url) => {
                let connector = self.settings.web(WebSocketConnector::new(url));
                connector.connect().await
            }
            Target::Http(url) => self.settings.web(HttpConnector::new(url)).connect().await,
            Target::Child(words) => {
                let mut command = Command::new(&words[0]);
                command.args(&words[1..]);
                let child = ChildProcess::spawn(command, &config).map_err(|e| self.failed(&e))?;
                let (transport, handle) = child.into_parts();
                return Ok(Connection {
                    transport,
                    child: Some(handle),
                });
            }
        };
        let transport = transport.map_err(|e| self.connect_failed(&e))?;
        Ok(Connection {
            transport,
            child: None,
        })
    }

    fn failed(&self, e: &dyn fmt::Display) -> String {
        format!("cannot connect to {}: {e}", self.target.label())
    }

    /// The connector's error; for a secure URL refused for want of TLS
    /// settings, the flag that gives them.
    fn connect_failed(&self, e: &TransportError) -> String {
        let mut message = self.failed(e);
        let no_roots = self.settings.tls.is_none() && self.target.is_secure();
        if no_roots && matches!(e, TransportError::Invalid(_)) {
            message.push_str(" (give the roots to trust with `--ca FILE`)");
        }
        message
    }
}

/// Waits for the child to exit (its stdin is closed once the transport is
/// dropped); an unclean exit goes to `problems`, once.
pub(crate) async fn stop_child(child: Option<ChildHandle>, problems: &mut Vec<String>) {
    let Some(child) = child else { return };
    match child.shutdown(CHILD_GRACE).await {
        Ok(exit) if exit.status.success() => {}
        Ok(exit) => {
            // The stream may have reported the same exit already.
            let exit = exit.to_string();
            if !problems.contains(&exit) {
                problems.push(exit);
            }
        }
        Err(e) => problems.push(format!("waiting for the child failed: {e}")),
    }
}

/// A child that exited 0 after we closed its stdin ended cleanly.
pub(crate) fn clean_exit(e: &TransportError) -> bool {
    matches!(e, TransportError::ProcessExited(exit) if exit.status.success())
}
