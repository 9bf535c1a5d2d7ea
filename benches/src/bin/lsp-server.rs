//! The server end of the LSP benchmark (`benches/lsp.rs`): the same
//! language server written on `jsonrpc-lsp` (`ours`), tower-lsp-server
//! (`tower`) or async-lsp (`async-lsp`), served on stdio on a
//! current-thread runtime:
//!
//! ```text
//! lsp-server ours|tower|async-lsp
//! ```

use jsonrpc_benches::lsp;

fn main() {
    let side = std::env::args().nth(1).unwrap_or_else(|| "ours".into());
    jsonrpc_benches::runtime().block_on(async {
        match side.as_str() {
            "tower" => lsp::serve_tower().await,
            "async-lsp" => lsp::serve_async_lsp().await,
            _ => lsp::serve_ours().await,
        }
    });
}
