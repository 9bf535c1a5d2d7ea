//! The size sweep's server in a child process, on stdio:
//! `sweep_peer [--content-length] [--max-frame-len N]`. Serves
//! `tests::sweep::router` until its input ends.

use jsonrpc_runtime::codec::{Framing, DEFAULT_MAX_FRAME_LEN};
use jsonrpc_runtime::{Peer, Transport};

fn main() -> std::io::Result<()> {
    let mut framing = Framing::NewlineDelimited;
    let mut max_frame_len = DEFAULT_MAX_FRAME_LEN;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--content-length" => framing = Framing::ContentLength,
            "--max-frame-len" => {
                max_frame_len = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or_else(|| std::io::Error::other("--max-frame-len takes a number"))?;
            }
            other => return Err(std::io::Error::other(format!("unknown argument `{other}`"))),
        }
    }
    let config = tests::sweep::config(framing, max_frame_len);
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async {
            let transport = Transport::stdio(&config)?;
            let peer = Peer::builder()
                .config(config)
                .router(tests::sweep::router())
                .spawn(transport);
            peer.closed().await;
            Ok(())
        })
}
