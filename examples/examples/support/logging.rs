//! `RUST_LOG` for the examples: when it is set, what the runtime traces
//! (`jsonrpc_runtime=debug` for spans and refusals,
//! `jsonrpc_runtime::wire=trace` for every frame) goes to stderr, never to a
//! stdio transport's stdout. Shared by every example through `#[path]`.

/// Installs the `fmt` subscriber with `RUST_LOG`'s filter, if it is set.
pub(crate) fn init() {
    let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
