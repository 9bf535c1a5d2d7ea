//! The peer in a browser: the tests in `tests/` run in headless Chromium
//! through `wasm-bindgen-test`, against native `spec_server --ws` and
//! `--http` and `mcp_server --http` servers that `bash interop/browser.sh`
//! starts. The addresses reach the tests at build time, in
//! `JSONRPC_BROWSER_WS`, `JSONRPC_BROWSER_HTTP` and `JSONRPC_BROWSER_MCP`.
//! On targets other than wasm32 this crate is empty.
