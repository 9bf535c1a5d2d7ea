//! The wire's errors: the error object, its codes and stages, and the
//! [`RpcError`] mapping trait for domain errors.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A JSON-RPC error code.
///
/// Codes are plain integers on the wire. The constants name the five codes
/// JSON-RPC 2.0 predefines and the extras LSP uses; [`ErrorCode::stage`]
/// tells where in a request's life an error with this code arose.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::error::ErrorStage;
/// use jsonrpc_runtime::ErrorCode;
///
/// assert_eq!(ErrorCode::METHOD_NOT_FOUND.stage(), ErrorStage::Dispatch);
/// assert!(ErrorCode(-32050).is_implementation_defined());
/// assert!(!ErrorCode(-32600).is_available_to_applications());
/// assert!(ErrorCode(-32010).is_available_to_applications());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// -32700: the frame is not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: the JSON is not a valid request object.
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: no route for the method.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: the params do not fit the route.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: the handler failed (it panicked, or its result could not be
    /// encoded).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000: the peer refused the request because too many are queued.
    pub const SERVER_OVERLOADED: ErrorCode = ErrorCode(-32000);
    /// -32001: the peer is closing and takes no new requests.
    pub const SERVER_CLOSING: ErrorCode = ErrorCode(-32001);
    /// -32002 (LSP): a request arrived before the handshake completed.
    pub const SERVER_NOT_INITIALIZED: ErrorCode = ErrorCode(-32002);
    /// -32800 (LSP): the request was cancelled.
    pub const REQUEST_CANCELLED: ErrorCode = ErrorCode(-32800);
    /// -32801 (LSP): the content changed while the request ran.
    pub const CONTENT_MODIFIED: ErrorCode = ErrorCode(-32801);
    /// -32803 (LSP): the request failed although its params were valid.
    pub const REQUEST_FAILED: ErrorCode = ErrorCode(-32803);
    /// -32100: the transport lost the request or its answer (an HTTP
    /// `POST` that failed or got a status other than 2xx). Made up on the
    /// calling side, never sent by the other side; its data says what
    /// happened (for HTTP, a `transport::HttpFailure`). Inside the reserved
    /// block, so no domain error can claim it.
    pub const TRANSPORT_FAILED: ErrorCode = ErrorCode(-32100);

    /// Returns true for the five codes JSON-RPC 2.0 predefines.
    pub const fn is_predefined(self) -> bool {
        matches!(self.0, -32700 | -32600 | -32601 | -32602 | -32603)
    }

    /// Returns true inside -32099..=-32000, the block JSON-RPC 2.0 leaves to
    /// implementations ("server error").
    pub const fn is_implementation_defined(self) -> bool {
        self.0 >= -32099 && self.0 <= -32000
    }

    /// Returns true for codes inside the block JSON-RPC 2.0 reserves,
    /// -32768..=-32000 (the predefined codes and the implementation band
    /// included).
    pub const fn is_reserved(self) -> bool {
        self.0 >= -32768 && self.0 <= -32000
    }

    /// Returns true when an application may map its own errors to this code:
    /// anything but the five predefined codes and -32768..=-32100 (the
    /// implementation band -32099..=-32000 is allowed).
    pub const fn is_available_to_applications(self) -> bool {
        !(self.is_predefined() || (self.0 >= -32768 && self.0 <= -32100))
    }

    /// The stage of a request's life that errors with this code come from.
    pub const fn stage(self) -> ErrorStage {
        match self.0 {
            -32700 | -32600 => ErrorStage::Parse,
            -32601 | -32602 | -32002 => ErrorStage::Dispatch,
            -32603 | -32800 => ErrorStage::Execution,
            -32100 => ErrorStage::Transport,
            c if c >= -32099 && c <= -32000 => ErrorStage::Execution,
            _ => ErrorStage::Application,
        }
    }

    /// The message JSON-RPC 2.0 suggests for a predefined code.
    pub(crate) const fn default_message(self) -> &'static str {
        match self.0 {
            -32700 => "Parse error",
            -32600 => "Invalid Request",
            -32601 => "Method not found",
            -32602 => "Invalid params",
            -32603 => "Internal error",
            _ => "Server error",
        }
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ErrorCode({})", self.0)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl From<i64> for ErrorCode {
    fn from(code: i64) -> Self {
        ErrorCode(code)
    }
}

/// Where in a request's life an error arose.
///
/// Match on it to handle a whole class of failures at once.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::error::ErrorStage;
/// use jsonrpc_runtime::ErrorObject;
///
/// let err = ErrorObject::invalid_params("missing field `a`");
/// assert_eq!(err.stage(), ErrorStage::Dispatch);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorStage {
    /// The frame could not be read as a request (-32700, -32600).
    Parse,
    /// The request was read but could not be routed: unknown method, params
    /// that do not fit, a handshake not yet done.
    Dispatch,
    /// The handler ran and failed: panicked, timed out, was cancelled, or the
    /// implementation refused it (-32603, -32099..=-32000, -32800).
    Execution,
    /// The handler returned one of its domain errors.
    Application,
    /// The request or its answer was lost on the way (-32100): the other
    /// side may or may not have run it.
    Transport,
}

/// The error object of a JSON-RPC response: `{"code", "message", "data"?}`.
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{ErrorCode, ErrorObject};
///
/// let err = ErrorObject::new(-32010, "Negative input").with_data(&[1, 2]).unwrap();
/// assert_eq!(err.code, ErrorCode(-32010));
/// assert_eq!(
///     serde_json::to_string(&err).unwrap(),
///     r#"{"code":-32010,"message":"Negative input","data":[1,2]}"#
/// );
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: ErrorCode,
    /// A short description of the error.
    pub message: Cow<'static, str>,
    /// Further details, as raw JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Box<RawValue>>,
}

impl PartialEq for ErrorObject {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.message == other.message
            && self.data.as_ref().map(|d| d.get()) == other.data.as_ref().map(|d| d.get())
    }
}

impl ErrorObject {
    /// Builds an error with a code and a message and no data.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<Cow<'static, str>>) -> Self {
        ErrorObject {
            code: code.into(),
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`, serialized to JSON.
    ///
    /// # Errors
    ///
    /// Fails when `data` cannot be serialized (a map with non-string keys).
    pub fn with_data<T: Serialize + ?Sized>(mut self, data: &T) -> Result<Self, serde_json::Error> {
        self.data = Some(serde_json::value::to_raw_value(data)?);
        Ok(self)
    }

    /// Decodes the `data` member into `T`; `None` when there is no data.
    ///
    /// # Errors
    ///
    /// Fails when the data does not fit `T`.
    pub fn data_as<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>, serde_json::Error> {
        self.data
            .as_ref()
            .map(|d| serde_json::from_str(d.get()))
            .transpose()
    }

    /// The stage this error comes from, from its code.
    pub fn stage(&self) -> ErrorStage {
        self.code.stage()
    }

    /// -32700 with a detail message.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// -32600 with a detail message.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// -32601 naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// -32602 with a detail message.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        )
    }

    /// -32603 with a detail message.
    pub fn internal_error(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }

    /// An implementation-defined server error: a code in -32099..=-32000,
    /// the band JSON-RPC 2.0 reserves for them (-32000 "server overloaded"
    /// and -32001 "closing" are this runtime's own).
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::ErrorObject;
    ///
    /// let busy = ErrorObject::server_error(-32050, "Index still building");
    /// assert_eq!(busy.code.0, -32050);
    /// assert!(busy.code.is_implementation_defined());
    /// ```
    ///
    /// # Panics
    ///
    /// Panics if `code` is outside -32099..=-32000 (use [`ErrorObject::new`]
    /// for application codes).
    #[track_caller]
    pub fn server_error(code: i64, message: impl Into<Cow<'static, str>>) -> Self {
        let code = ErrorCode(code);
        assert!(
            code.is_implementation_defined(),
            "error code {code} is not an implementation-defined server error; \
             use a code in -32099..=-32000, or `ErrorObject::new` for application codes"
        );
        Self::new(code, message)
    }

    /// An error with one of the predefined codes and its standard message.
    pub(crate) fn standard(code: ErrorCode) -> Self {
        Self::new(code, code.default_message())
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// A domain error type that travels as a JSON-RPC error object, in both
/// directions.
///
/// Handlers return `Result<T, E>` with `E: RpcError`; the server turns an
/// `Err` into a wire error with [`into_error_object`](Self::into_error_object),
/// and a typed client turns a wire error back into `E` with
/// [`from_error_object`](Self::from_error_object) when its code is one of
/// `E`'s. Derive it with `#[derive(RpcError)]`, or implement it by hand.
///
/// [`ErrorObject`] implements it (every wire error is accepted as is), and so
/// does [`Infallible`] (no wire error is ever a domain error).
///
/// # Examples
///
/// ```
/// use jsonrpc_runtime::{ErrorObject, RpcError};
///
/// #[derive(Debug, PartialEq)]
/// struct Negative;
///
/// impl RpcError for Negative {
///     fn into_error_object(self) -> ErrorObject {
///         ErrorObject::new(-32010, "Negative input")
///     }
///     fn from_error_object(error: &ErrorObject) -> Option<Self> {
///         (error.code.0 == -32010).then_some(Negative)
///     }
/// }
///
/// let wire = Negative.into_error_object();
/// assert_eq!(Negative::from_error_object(&wire), Some(Negative));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a method's error type: it does not implement `RpcError`",
    label = "an error type maps to JSON-RPC error codes",
    note = "derive `RpcError` on an error enum with `#[rpc(error(code = ...))]` on each variant, or use `jsonrpc_runtime::ErrorObject` for free-form errors"
)]
pub trait RpcError: Sized {
    /// Turns the error into the object sent on the wire.
    fn into_error_object(self) -> ErrorObject;

    /// Recognises a wire error as one of this type's values; `None` when the
    /// code is not one of this type's or its data does not decode.
    fn from_error_object(error: &ErrorObject) -> Option<Self>;

    /// The codes and messages this type's values go out with, for
    /// descriptions of a service (OpenRPC documents). `#[derive(RpcError)]`
    /// lists every variant; by default, none.
    fn documented_errors() -> Vec<(i64, &'static str)> {
        Vec::new()
    }
}

impl RpcError for ErrorObject {
    fn into_error_object(self) -> ErrorObject {
        self
    }

    fn from_error_object(error: &ErrorObject) -> Option<Self> {
        Some(error.clone())
    }
}

impl RpcError for Infallible {
    fn into_error_object(self) -> ErrorObject {
        match self {}
    }

    fn from_error_object(_: &ErrorObject) -> Option<Self> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "not an implementation-defined server error")]
    fn server_errors_stay_in_their_band() {
        assert_eq!(ErrorObject::server_error(-32099, "low").code.0, -32099);
        assert_eq!(ErrorObject::server_error(-32000, "high").code.0, -32000);
        let _ = ErrorObject::server_error(-32100, "outside");
    }

    #[test]
    fn application_codes_exclude_predefined_and_reserved_block() {
        for code in [
            -32700, -32600, -32601, -32602, -32603, -32768, -32100, -32500,
        ] {
            assert!(!ErrorCode(code).is_available_to_applications(), "{code}");
        }
        for code in [-32099, -32000, -31999, -32800, 0, 1, 404] {
            assert!(ErrorCode(code).is_available_to_applications(), "{code}");
        }
    }
}
