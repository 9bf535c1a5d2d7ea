//! Tool arguments mirrored into HTTP headers (MCP 2026-07-28, the
//! "custom headers" of Streamable HTTP): a tool may mark properties of its
//! input schema with `x-mcp-header: "Name"`, and a client then sends that
//! argument of each `tools/call` in an `Mcp-Param-Name` header too, so a
//! gateway can route on it without reading the body. The server refuses a
//! call whose headers and arguments disagree (`400`, -32020).
//!
//! The rules both sides share are here: which declarations are valid, how
//! a value is written into a header (plain when it is printable ASCII
//! without surrounding whitespace, else `=?base64?…?=`), and how a header
//! is compared with the argument.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use http::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Number, Value};

/// What starts a value sent in base64.
const SENTINEL_START: &str = "=?base64?";
/// What ends a value sent in base64.
const SENTINEL_END: &str = "?=";
/// The start of every mirrored argument's header name.
const PREFIX: &str = "Mcp-Param-";
/// The largest integer JSON numbers carry exactly everywhere (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
/// How deep in nested objects declarations are looked for.
const MAX_DEPTH: usize = 32;

/// The arguments one tool mirrors into `Mcp-Param-*` headers, read from
/// its input schema.
///
/// A client builds the headers of a call with [`headers`](Self::headers)
/// (the MCP HTTP transport does this itself for the tools it saw listed);
/// a server checks a call's headers with [`check`](Self::check).
///
/// ```
/// use jsonrpc_runtime::http::HeaderMap;
/// use jsonrpc_runtime::transport::ParamHeaders;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "region": {"type": "string", "x-mcp-header": "Region"},
///         "query": {"type": "string"}
///     }
/// });
/// let params = ParamHeaders::from_schema(&schema).unwrap();
/// let arguments = json!({"region": "eu-west1", "query": "SELECT 1"});
///
/// let mut headers = HeaderMap::new();
/// headers.extend(params.headers(&arguments));
/// assert_eq!(headers["mcp-param-region"], "eu-west1");
/// assert!(params.check(&arguments, &headers).is_ok());
///
/// // A header that says something else is refused.
/// headers.insert("mcp-param-region", "us-east1".parse().unwrap());
/// assert!(params.check(&arguments, &headers).is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamHeaders {
    params: Vec<Param>,
}

/// One declared argument.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Param {
    /// The property names from the arguments' top down to it.
    path: Vec<String>,
    /// `mcp-param-{name}`.
    header: HeaderName,
    /// `Mcp-Param-{Name}`, as declared: for messages.
    label: String,
}

/// An input schema whose `x-mcp-header` declarations break the rules: an
/// empty name, one that is not an HTTP token, two names that differ only
/// in case, or one on a property that is not a string, integer or
/// boolean. A client leaves such a tool out of what `tools/list` gave.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidParamHeader(String);

/// A call whose `Mcp-Param-*` headers disagree with its arguments: what
/// to answer with -32020 (`HeaderMismatch`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ParamHeaderMismatch(String);

impl ParamHeaders {
    /// The declarations of a tool's input schema, at any depth of its
    /// `properties`; empty when it has none.
    ///
    /// # Errors
    ///
    /// [`InvalidParamHeader`] saying which property breaks which rule.
    pub fn from_schema(schema: &Value) -> Result<ParamHeaders, InvalidParamHeader> {
        let mut params = Vec::new();
        collect(schema, &mut Vec::new(), &mut params, 0)?;
        for (i, param) in params.iter().enumerate() {
            if let Some(first) = params[..i].iter().find(|p| p.header == param.header) {
                return Err(InvalidParamHeader(format!(
                    "`{}` and `{}` both declare the header `{}` (header names ignore case)",
                    first.path.join("."),
                    param.path.join("."),
                    param.label
                )));
            }
        }
        Ok(ParamHeaders { params })
    }

    /// Whether the tool declares no argument to mirror.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// The headers a call with `arguments` carries: one per declared
    /// argument that is there and not `null`, its value written plain or
    /// in base64.
    pub fn headers(&self, arguments: &Value) -> Vec<(HeaderName, HeaderValue)> {
        self.params
            .iter()
            .filter_map(|param| {
                let text = render(argument(arguments, &param.path)?)?;
                let value = HeaderValue::from_str(&encode(&text)).ok()?;
                Some((param.header.clone(), value))
            })
            .collect()
    }

    /// Whether a call's headers say what its `arguments` say: each
    /// declared argument that is there (and not `null`) has its header,
    /// once, with the same value (base64 decoded; numbers compared as
    /// numbers), and no header stands for an argument that is not there.
    ///
    /// # Errors
    ///
    /// [`ParamHeaderMismatch`] naming the header and what is wrong.
    pub fn check(&self, arguments: &Value, headers: &HeaderMap) -> Result<(), ParamHeaderMismatch> {
        for param in &self.params {
            let mut sent = headers.get_all(&param.header).iter();
            let (header, again) = (sent.next(), sent.next());
            let label = &param.label;
            let path = param.path.join(".");
            if again.is_some() {
                return Err(ParamHeaderMismatch(format!(
                    "`{label}` is sent more than once"
                )));
            }
            match (argument(arguments, &param.path), header) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(ParamHeaderMismatch(format!(
                        "the header `{label}` is missing; it must carry the argument `{path}`"
                    )))
                }
                (None, Some(_)) => {
                    return Err(ParamHeaderMismatch(format!(
                        "the header `{label}` is sent, but the arguments have no `{path}`"
                    )))
                }
                (Some(value), Some(header)) => {
                    let text = decode(header).map_err(|why| {
                        ParamHeaderMismatch(format!("the header `{label}` {why}"))
                    })?;
                    if !same(value, &text) {
                        return Err(ParamHeaderMismatch(format!(
                            "the header `{label}` does not match the argument `{path}`"
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Reads the declarations under `schema`'s `properties`, depth first.
fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<Param>,
    depth: usize,
) -> Result<(), InvalidParamHeader> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    if depth == MAX_DEPTH {
        return Ok(());
    }
    for (name, property) in properties {
        path.push(name.clone());
        if let Some(declared) = property.get("x-mcp-header") {
            let invalid =
                |why: &str| InvalidParamHeader(format!("property `{}`: {why}", path.join(".")));
            let name = declared
                .as_str()
                .ok_or_else(|| invalid("`x-mcp-header` must be a string"))?;
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(invalid(&format!(
                    "`x-mcp-header` {name:?} is not an HTTP header name (letters, digits and !#$%&'*+-.^_`|~)"
                )));
            }
            if !is_primitive(property) {
                return Err(invalid(
                    "`x-mcp-header` is only for string, integer and boolean properties",
                ));
            }
            let label = format!("{PREFIX}{name}");
            let header = HeaderName::from_bytes(label.as_bytes())
                .map_err(|_| invalid("`x-mcp-header` is not an HTTP header name"))?;
            out.push(Param {
                path: path.clone(),
                header,
                label,
            });
        }
        collect(property, path, out, depth + 1)?;
        path.pop();
    }
    Ok(())
}

/// RFC 9110's `tchar`: what a header name is made of.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether a property may be declared: its type is a string, an integer
/// or a boolean, possibly with `null` beside it; anything else (`number`,
/// objects, arrays, no type) may not.
fn is_primitive(property: &Value) -> bool {
    let primitive = |name: &Value| matches!(name.as_str(), Some("string" | "integer" | "boolean"));
    match property.get("type") {
        Some(name @ Value::String(_)) => primitive(name),
        Some(Value::Array(names)) => {
            let mut types = names.iter().filter(|n| n.as_str() != Some("null"));
            types.next().is_some_and(primitive) && types.next().is_none()
        }
        _ => false,
    }
}

/// The argument at `path`; `None` when it is not there or is `null`.
fn argument<'a>(arguments: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(arguments, |value, name| value.get(name))
        .filter(|value| !value.is_null())
}

/// An argument as header text: strings as they are, numbers in decimal,
/// booleans as `true`/`false`; `None` for objects and arrays.
fn render(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(integral(n).map_or_else(|| n.to_string(), |i| i.to_string())),
        _ => None,
    }
}

/// A number's integer value, when it has one (`42` and `42.0` alike).
fn integral(n: &Number) -> Option<i64> {
    if let Some(i) = n.as_i64() {
        return Some(i);
    }
    let f = n.as_f64()?;
    // The bound keeps the cast exact.
    #[allow(clippy::cast_possible_truncation)]
    (f.fract() == 0.0 && f.abs() <= MAX_SAFE_INTEGER).then_some(f as i64)
}

/// `text` as a header value: plain when it is printable ASCII, has no
/// whitespace at either end and cannot be read as base64; else
/// `=?base64?…?=`.
fn encode(text: &str) -> String {
    let printable = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = text.starts_with([' ', '\t']) || text.ends_with([' ', '\t']);
    if printable && !padded && !looks_encoded(text) {
        text.to_owned()
    } else {
        format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(text))
    }
}

/// Whether a value would be read as base64 (the sentinel in any case).
fn looks_encoded(text: &str) -> bool {
    text.len() >= SENTINEL_START.len() + SENTINEL_END.len()
        && text.as_bytes()[..SENTINEL_START.len()].eq_ignore_ascii_case(SENTINEL_START.as_bytes())
        && text.ends_with(SENTINEL_END)
}

/// A header's text: whitespace around it dropped, base64 decoded when it
/// is in the sentinel.
fn decode(header: &HeaderValue) -> Result<String, &'static str> {
    let text = header
        .to_str()
        .map_err(|_| "is not ASCII (other text is sent as =?base64?…?=)")?
        .trim_matches([' ', '\t']);
    if !looks_encoded(text) {
        return Ok(text.to_owned());
    }
    let inner = &text[SENTINEL_START.len()..text.len() - SENTINEL_END.len()];
    let bytes = STANDARD
        .decode(inner)
        .map_err(|_| "is not valid base64 (padded, of the standard alphabet)")?;
    String::from_utf8(bytes).map_err(|_| "does not decode to UTF-8 text")
}

/// Whether a header's text says what the argument says (numbers as
/// numbers: `42` and `42.0` are one).
fn same(value: &Value, text: &str) -> bool {
    match value {
        Value::String(s) => s == text,
        Value::Bool(b) => text == if *b { "true" } else { "false" },
        Value::Number(n) => match (integral(n), text.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => n.as_f64().is_some_and(|a| text.parse::<f64>() == Ok(a)),
        },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(properties: Value) -> Value {
        json!({"type": "object", "properties": properties})
    }

    fn headers_of(params: &ParamHeaders, arguments: &Value) -> HeaderMap {
        params.headers(arguments).into_iter().collect()
    }

    #[test]
    fn values_are_plain_or_base64_as_the_rules_say() {
        let cases = [
            ("us-west1", "us-west1"),
            ("", ""),
            ("us west 1", "us west 1"),
            ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            (" padded ", "=?base64?IHBhZGRlZCA=?="),
            (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
            ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
            ("\tindented", "=?base64?CWluZGVudGVk?="),
            ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
            ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
            // A plain value that reads as base64 is sent in base64.
            ("=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="),
            ("=?BASE64?SGk=?=", "=?base64?PT9CQVNFNjQ/U0drPT89?="),
            ("=?base64?SGk=", "=?base64?SGk="),
        ];
        for (text, header) in cases {
            assert_eq!(encode(text), header, "{text:?}");
            let value = HeaderValue::from_str(header).unwrap();
            assert_eq!(decode(&value).as_deref(), Ok(text), "{text:?}");
        }
    }

    #[test]
    fn a_call_mirrors_what_is_declared_and_there() {
        let params = ParamHeaders::from_schema(&schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "method_val": {"type": "string", "x-mcp-header": "Method"},
            "options": {"type": "object", "properties": {
                "limit": {"type": ["integer", "null"], "x-mcp-header": "Limit"}
            }},
            "query": {"type": "string"},
            "score": {"type": "number"}
        })))
        .unwrap();
        let arguments = json!({
            "region": "us-west1", "priority": 42, "verbose": null, "method_val": "m",
            "options": {"limit": 10}, "query": "SELECT 1", "score": 3.5
        });
        let headers = headers_of(&params, &arguments);
        let mut sent: Vec<_> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.to_str().unwrap()))
            .collect();
        sent.sort_unstable();
        assert_eq!(
            sent,
            [
                ("mcp-param-limit", "10"),
                ("mcp-param-method", "m"),
                ("mcp-param-priority", "42"),
                ("mcp-param-region", "us-west1"),
            ]
        );
        assert_eq!(params.check(&arguments, &headers), Ok(()));
    }

    #[test]
    fn invalid_declarations_are_refused() {
        let invalid = [
            json!({"v": {"type": "string", "x-mcp-header": ""}}),
            json!({"v": {"type": "string", "x-mcp-header": "My Region"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Region\t1"}}),
            json!({"v": {"type": "string", "x-mcp-header": 7}}),
            json!({"v": {"type": "number", "x-mcp-header": "Score"}}),
            json!({"v": {"type": "object", "x-mcp-header": "Data"}}),
            json!({"v": {"type": "array", "x-mcp-header": "Items"}}),
            json!({"v": {"type": "null", "x-mcp-header": "Nil"}}),
            json!({"v": {"x-mcp-header": "Untyped"}}),
            json!({"v": {"type": ["string", "integer"], "x-mcp-header": "Either"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Region"},
                   "b": {"type": "string", "x-mcp-header": "Region"}}),
            json!({"a": {"type": "string", "x-mcp-header": "MyField"},
                   "b": {"type": "object", "properties": {
                       "c": {"type": "string", "x-mcp-header": "myfield"}}}}),
        ];
        for properties in invalid {
            let result = ParamHeaders::from_schema(&schema(properties.clone()));
            assert!(result.is_err(), "{properties}");
        }
        let none = ParamHeaders::from_schema(&schema(json!({"a": {"type": "string"}}))).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn headers_that_disagree_are_refused() {
        let params = ParamHeaders::from_schema(&schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "debug": {"type": "boolean", "x-mcp-header": "Debug"}
        })))
        .unwrap();
        let arguments = json!({"region": "Hello", "priority": 42, "debug": true});
        let with = |region: &str, priority: &str, debug: &str| {
            let mut headers = HeaderMap::new();
            for (name, value) in [
                ("mcp-param-region", region),
                ("mcp-param-priority", priority),
                ("mcp-param-debug", debug),
            ] {
                if !value.is_empty() {
                    headers.insert(name, HeaderValue::from_str(value).unwrap());
                }
            }
            params.check(&arguments, &headers)
        };
        assert_eq!(with("Hello", "42", "true"), Ok(()));
        assert_eq!(with("=?base64?SGVsbG8=?=", "42.0", "true"), Ok(()));
        assert_eq!(with("  Hello  ", "42", "true"), Ok(()));
        // Bad base64: no padding, characters outside the alphabet.
        assert!(with("=?base64?SGVsbG8?=", "42", "true").is_err());
        assert!(with("=?base64?SGVs!!!bG8=?=", "42", "true").is_err());
        // Without both ends of the sentinel, the value is plain text.
        assert!(with("SGVsbG8=", "42", "true").is_err());
        assert!(with("hello", "42", "true").is_err());
        assert!(with("Hello", "43", "true").is_err());
        assert!(with("Hello", "42.5", "true").is_err());
        assert!(with("Hello", "42", "True").is_err());
        assert!(with("", "42", "true").is_err());
        // A header for an argument that is not there.
        let mut headers = headers_of(&params, &arguments);
        let fewer = json!({"region": "Hello", "priority": 42});
        assert!(params.check(&fewer, &headers).is_err());
        // A header sent twice.
        headers.append("mcp-param-region", HeaderValue::from_static("Hello"));
        assert!(params.check(&arguments, &headers).is_err());
    }

    #[test]
    fn a_literal_that_reads_as_the_sentinel_round_trips() {
        let params = ParamHeaders::from_schema(&schema(json!({
            "v": {"type": "string", "x-mcp-header": "V"}
        })))
        .unwrap();
        for text in [
            "=?base64?SGVsbG8=",
            "SGVsbG8=",
            "=?base64?SGk=?=",
            "a\u{7f}b",
            "é",
        ] {
            let arguments = json!({ "v": text });
            let headers = headers_of(&params, &arguments);
            assert_eq!(params.check(&arguments, &headers), Ok(()), "{text:?}");
        }
    }
}
