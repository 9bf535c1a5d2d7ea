//! The stdio transport when fd 0 and fd 1 are sockets, as Node.js (and so
//! VS Code and most MCP hosts) spawns its children: the server must still
//! leave as soon as the connection ends, with no blocking read left behind.
#![cfg(unix)]

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::Stdio;

use tests::{example_path, ANSWER_TIMEOUT};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;

#[tokio::test]
async fn socket_stdio_is_served_and_exit_ends_the_process_while_stdin_stays_open() {
    let (ours_in, theirs_in) = UnixStream::pair().unwrap();
    let (ours_out, theirs_out) = UnixStream::pair().unwrap();
    let mut child = Command::new(example_path("spec_server"))
        .arg("--content-length")
        .stdin(Stdio::from(OwnedFd::from(theirs_in)))
        .stdout(Stdio::from(OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    ours_in.set_nonblocking(true).unwrap();
    ours_out.set_nonblocking(true).unwrap();
    let mut input = tokio::net::UnixStream::from_std(ours_in).unwrap();
    let mut output = tokio::net::UnixStream::from_std(ours_out).unwrap();
    let send = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());

    let request = r#"{"jsonrpc":"2.0","id":1,"method":"subtract","params":[42,23]}"#;
    input.write_all(send(request).as_bytes()).await.unwrap();
    let expected = send(r#"{"jsonrpc":"2.0","id":1,"result":19}"#);
    let mut answer = vec![0; expected.len()];
    tokio::time::timeout(ANSWER_TIMEOUT, output.read_exact(&mut answer))
        .await
        .expect("an answer in time")
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&answer), expected);

    input
        .write_all(send(r#"{"jsonrpc":"2.0","method":"exit"}"#).as_bytes())
        .await
        .unwrap();
    // `input` stays open: the server must leave on `exit` alone.
    let status = tokio::time::timeout(ANSWER_TIMEOUT, child.wait())
        .await
        .expect("the server exits while its stdin is still open")
        .unwrap();
    assert_eq!(status.code(), Some(1));
    drop(input);
}
