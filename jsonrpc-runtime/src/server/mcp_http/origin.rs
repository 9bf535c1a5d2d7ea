//! `Origin` checks against DNS rebinding: which origins may use the
//! endpoint (loopback ones by default).

use super::*;

/// Which `Origin`s may use the endpoint.
#[derive(Debug, Clone)]
pub(super) enum Origins {
    Loopback,
    List(Vec<String>),
    Any,
}

impl Origins {
    /// Whether a request with this `Origin` (or none) is let in.
    pub(super) fn allows(&self, origin: Option<&HeaderValue>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        let Ok(origin) = origin.to_str() else {
            return false;
        };
        let origin = origin.trim().trim_end_matches('/');
        match self {
            Origins::Any => true,
            Origins::Loopback => is_loopback_origin(origin),
            Origins::List(allowed) => allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)),
        }
    }
}

/// `http` or `https` on `localhost`, `127.0.0.1` or `[::1]`, any port.
pub(super) fn is_loopback_origin(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return false;
    }
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, rest)) => match rest.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return false,
            },
            None => return false,
        },
        None => match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        },
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.parse::<u16>().is_ok());
    port_ok && (host.eq_ignore_ascii_case("localhost") || host == "127.0.0.1" || host == "::1")
}
