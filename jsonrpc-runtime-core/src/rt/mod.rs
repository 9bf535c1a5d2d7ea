//! The runtime seam: the one place the crate spawns tasks and reads the
//! clock. Everything else calls these, so each target brings its own half:
//!
//! - everywhere but the browser, tokio's tasks and timers (a current-thread
//!   or a multi-thread runtime alike);
//! - on `wasm32-unknown-unknown`, the JavaScript event loop: tasks through
//!   `wasm-bindgen-futures`, timers through `setTimeout`, the clock through
//!   `performance.now()` (tokio has no clock there: its timers would
//!   panic). A page, a Web Worker, Node and Deno all have the three.

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod native;
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub use self::native::*;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod browser;
#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub use self::browser::*;
