//! The small pieces of OAuth's wire: `WWW-Authenticate` challenges (RFC
//! 6750 §3), `application/x-www-form-urlencoded` text, PKCE (RFC 7636) and
//! the well-known URLs of RFC 9728 and RFC 8414.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hyper::Uri;
use sha2::{Digest as _, Sha256};

/// A `Bearer` challenge's parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) resource_metadata: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) error: Option<String>,
}

impl Challenge {
    /// The `Bearer` challenge of a `WWW-Authenticate` value, if it has one.
    pub(crate) fn parse(header: &str) -> Option<Challenge> {
        let at = find_scheme(header, "bearer")?;
        let mut rest = &header[at + "bearer".len()..];
        let mut challenge = Challenge::default();
        loop {
            rest = rest.trim_start_matches([' ', ',', '\t']);
            let Some(eq) = rest.find('=') else { break };
            let name = rest[..eq].trim();
            if name.contains(' ') {
                // The next challenge's scheme.
                break;
            }
            let (value, after) = parse_value(&rest[eq + 1..]);
            match name.to_ascii_lowercase().as_str() {
                "resource_metadata" => challenge.resource_metadata = Some(value),
                "scope" => challenge.scope = Some(value),
                "error" => challenge.error = Some(value),
                _ => {}
            }
            rest = after;
        }
        Some(challenge)
    }
}

/// Where the scheme `scheme` (lower case) starts in `header`.
fn find_scheme(header: &str, scheme: &str) -> Option<usize> {
    let lower = header.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find(scheme) {
        let at = from + found;
        let before_ok = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',');
        let after = lower.as_bytes().get(at + scheme.len());
        if before_ok && after.is_none_or(|b| *b == b' ') {
            return Some(at);
        }
        from = at + scheme.len();
    }
    None
}

/// A token or a quoted string, and what follows it.
fn parse_value(text: &str) -> (String, &str) {
    let text = text.trim_start();
    let Some(quoted) = text.strip_prefix('"') else {
        let end = text.find([',', ' ']).unwrap_or(text.len());
        return (text[..end].to_owned(), &text[end..]);
    };
    let mut value = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => value.extend(chars.next().map(|(_, c)| c)),
            '"' => return (value, &quoted[i + 1..]),
            c => value.push(c),
        }
    }
    (value, "")
}

/// `pairs` as `application/x-www-form-urlencoded` text.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode_into(&mut out, name);
        out.push('=');
        encode_into(&mut out, value);
    }
    out
}

fn encode_into(out: &mut String, text: &str) {
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
}

/// The value of `name` in a URL's query, decoded.
pub(crate) fn query_param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1.split('#').next()?;
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (decode(key)? == name).then(|| decode(value)).flatten()
    })
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// A random value of `n` bytes in URL-safe base64 (a PKCE verifier, a
/// `state`).
pub(crate) fn random(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// PKCE's S256 challenge of `verifier`.
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// HTTP Basic credentials.
pub(crate) fn basic(id: &str, secret: &str) -> String {
    let encoded = |t: &str| {
        let mut out = String::new();
        encode_into(&mut out, t);
        out
    };
    // RFC 6749 §2.3.1: each part form-encoded, then base64.
    let pair = format!("{}:{}", encoded(id), encoded(secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// `scheme://authority` of a URL.
pub(crate) fn origin(uri: &Uri) -> String {
    let scheme = uri.scheme_str().unwrap_or("http");
    let authority = uri.authority().map_or("", |a| a.as_str());
    format!("{scheme}://{authority}")
}

/// The protected resource metadata URLs of the MCP endpoint `uri`, in the
/// order to try (RFC 9728 §3.1: the path's own, then the root's).
pub(crate) fn resource_metadata_urls(uri: &Uri) -> Vec<String> {
    let origin = origin(uri);
    let path = uri.path().trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    urls
}

/// The metadata URLs of the authorization server `issuer`, in the order to
/// try (RFC 8414 §3.1, then OpenID Connect Discovery, each with the path
/// inserted after the well-known prefix, and OIDC's own appended form).
pub(crate) fn authorization_server_urls(issuer: &str) -> Option<Vec<String>> {
    let uri: Uri = issuer.parse().ok()?;
    uri.authority()?;
    let origin = origin(&uri);
    let path = uri.path().trim_end_matches('/');
    Some(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// Whether `resource` (from the metadata) names the MCP endpoint `uri`: the
/// same origin, and a path that is the endpoint's or one of its parents.
pub(crate) fn resource_covers(resource: &str, uri: &Uri) -> bool {
    let Ok(resource) = resource.parse::<Uri>() else {
        return false;
    };
    if resource.authority().is_none() || origin(&resource) != origin(uri) {
        return false;
    }
    let parent = resource.path().trim_end_matches('/');
    let path = uri.path();
    path == parent || path.starts_with(&format!("{parent}/")) || parent.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_quoted_or_not_among_other_schemes() {
        let header = r#"Basic realm="x", Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#;
        let challenge = Challenge::parse(header).unwrap();
        assert_eq!(challenge.scope.as_deref(), Some("a b"));
        assert_eq!(challenge.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(
            challenge.resource_metadata.as_deref(),
            Some("http://h/.well-known/oauth-protected-resource/mcp")
        );
        let plain =
            Challenge::parse(r#"bearer scope=mcp, error_description="say \"no\"""#).unwrap();
        assert_eq!(plain.scope.as_deref(), Some("mcp"));
        assert_eq!(Challenge::parse("Basic realm=\"x\""), None);
        assert_eq!(Challenge::parse("Bearer"), Some(Challenge::default()));
    }

    #[test]
    fn forms_and_queries_round_trip() {
        let text = form(&[("redirect_uri", "http://l:3/cb?x=1"), ("scope", "a b")]);
        assert_eq!(
            text,
            "redirect_uri=http%3A%2F%2Fl%3A3%2Fcb%3Fx%3D1&scope=a%20b"
        );
        let url = format!("http://h/cb?{text}&code=c%2B1&empty");
        assert_eq!(query_param(&url, "scope").as_deref(), Some("a b"));
        assert_eq!(query_param(&url, "code").as_deref(), Some("c+1"));
        assert_eq!(query_param(&url, "empty").as_deref(), Some(""));
        assert_eq!(query_param(&url, "none"), None);
    }

    #[test]
    fn pkce_s256_is_the_rfc_7636_example() {
        // RFC 7636 Appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            s256(verifier),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(
            basic("a b", "c:d"),
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode("a%20b:c%3Ad")
            )
        );
    }

    #[test]
    fn well_known_urls_are_tried_in_order_and_resources_must_cover_the_endpoint() {
        let uri: Uri = "http://h:8/mcp".parse().unwrap();
        assert_eq!(
            resource_metadata_urls(&uri),
            [
                "http://h:8/.well-known/oauth-protected-resource/mcp",
                "http://h:8/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            authorization_server_urls("http://a/tenant1").unwrap(),
            [
                "http://a/.well-known/oauth-authorization-server/tenant1",
                "http://a/.well-known/openid-configuration/tenant1",
                "http://a/tenant1/.well-known/openid-configuration"
            ]
        );
        assert_eq!(authorization_server_urls("http://a").unwrap().len(), 2);
        assert!(resource_covers("http://h:8/mcp", &uri));
        assert!(resource_covers("http://h:8", &uri));
        assert!(!resource_covers("http://h:8/other", &uri));
        assert!(!resource_covers("https://evil.example.com/mcp", &uri));
        assert!(!resource_covers("http://h:9/mcp", &uri));
    }
}
