//! What `jsonrpc-runtime`'s transports and servers use of the core's
//! internals that are not items of a public module: the runtime seam and
//! the trace points. (The rest it uses is `#[doc(hidden)]` in place.)
//! Not part of the public API: names and signatures change without notice.

/// The runtime seam: spawning and timers.
pub mod rt {
    pub use crate::rt::*;
}

/// Trace points: frames in and out, refused HTTP requests.
pub mod trace {
    pub use crate::trace::{frame_in, frame_out, http_refused};
}
