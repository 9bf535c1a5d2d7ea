//! Every error type, wherever it is defined: an index for discovery.
//!
//! | error | what it is | defined in |
//! |---|---|---|
//! | [`ErrorObject`], [`ErrorCode`], [`ErrorStage`] | the error on the wire | [`message`](crate::message) |
//! | [`RpcError`] | maps a domain error enum to codes and back (derive it) | [`message`](crate::message) |
//! | [`CallError`], [`SendError`] | why a call or a notification failed | [`peer`](crate::peer) |
//! | [`CloseReason`] | why a connection ended | [`peer`](crate::peer) |
//! | [`TransportError`], [`ProcessExit`], [`WebSocketError`] | a transport failure | [`transport`](crate::transport) |
//! | `TlsError`, `TlsConfigError` (feature `tls`) | a TLS handshake failure; PEM files that cannot be used | [`transport`](crate::transport), `tls` |
//! | [`FramingError`], [`FrameRefusal`] | a framer's failure; a frame it refused | [`codec`](crate::codec) |
//! | [`Refusal`] | a connection an `on_connect` hook refused | [`connection`](crate::connection) |
//! | [`MergeError`] | two routers that name the same method | [`router`](crate::router) |

pub use crate::codec::{FrameRefusal, FramingError};
pub use crate::connection::Refusal;
pub use crate::message::{ErrorCode, ErrorObject, ErrorStage, RpcError};
pub use crate::peer::{CallError, CloseReason, SendError};
pub use crate::router::MergeError;
pub use crate::transport::{ProcessExit, TransportError, WebSocketError};
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub use crate::{tls::TlsConfigError, transport::TlsError};
