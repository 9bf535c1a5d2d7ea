//! `Origin` checks against DNS rebinding: which origins may use the
//! endpoint (loopback ones by default).

use super::*;

/// Which `Origin`s may use the endpoint.
#[derive(Debug, Clone)]
pub(crate) enum Origins {
    /// The MCP listener's default.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    Loopback,
    List(Vec<String>),
    Any,
}

impl Origins {
    /// Exactly these origins (a trailing `/` and surrounding space dropped).
    pub(crate) fn list<I, S>(origins: I) -> Origins
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let origins = origins
            .into_iter()
            .map(|o| o.into().trim().trim_end_matches('/').to_owned())
            .collect();
        Origins::List(origins)
    }

    /// Whether a request with this `Origin` (or none) is let in.
    pub(crate) fn allows(&self, origin: Option<&HeaderValue>) -> bool {
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
pub(crate) fn is_loopback_origin(origin: &str) -> bool {
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
