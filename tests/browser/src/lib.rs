//! The peer in a browser: the tests in `tests/` run in headless Chromium
//! through `wasm-bindgen-test`, against native `spec_server --ws` and
//! `--http` servers that `bash interop/browser.sh` starts. The addresses
//! reach the tests at build time, in `JSONRPC_BROWSER_WS` and
//! `JSONRPC_BROWSER_HTTP`. On targets other than wasm32 this crate is
//! empty.
