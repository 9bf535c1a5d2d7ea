//! Recording a session: every frame in and out of a transport, as JSON
//! Lines, so that a bug report can be a file (the `replay` example plays a
//! recording's inbound side against a server and reports where the answers
//! differ).

use crate::rt::Instant;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::{future, SinkExt as _, StreamExt as _};
use serde::Serialize;
use serde_json::value::RawValue;

use super::Transport;
use crate::codec::Frame;

/// One line of a recording.
#[derive(Serialize)]
struct Line<'a> {
    /// Milliseconds since the recording started.
    t: f64,
    /// `in` (read from the other side) or `out` (written to it).
    dir: &'static str,
    /// The frame, as the JSON it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    frame: Option<&'a RawValue>,
    /// The frame as text, when it is not JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<std::borrow::Cow<'a, str>>,
    /// Why the framer refused an inbound frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    refused: Option<String>,
}

/// Where lines go.
struct Recorder {
    start: Instant,
    out: Mutex<BufWriter<File>>,
}

impl Recorder {
    fn write(&self, dir: &'static str, bytes: Option<&[u8]>, refused: Option<String>) {
        let (frame, text) = match bytes {
            Some(bytes) => match std::str::from_utf8(bytes)
                .ok()
                .and_then(|text| serde_json::from_str::<&RawValue>(text).ok())
            {
                Some(json) => (Some(json), None),
                None => (None, Some(String::from_utf8_lossy(bytes))),
            },
            None => (None, None),
        };
        let line = Line {
            t: self.start.elapsed().as_secs_f64() * 1000.0,
            dir,
            frame,
            text,
            refused,
        };
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let written = serde_json::to_writer(&mut *out, &line)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(e) = written {
            tracing::warn!(error = %e, "the session recording could not be written");
        }
    }
}

impl Transport {
    /// This transport, with every frame read and written appended to the
    /// file at `path` as one JSON line: `{"t": ms, "dir": "in"|"out",
    /// "frame": ...}` (`"text"` instead of `"frame"` when a frame is not
    /// JSON, `"refused"` when the framer refused one). Each line is flushed
    /// as it is written, so a recording survives a crash.
    ///
    /// Play a recording back with the `replay` example:
    /// `cargo run --example replay -- session.jsonl --child CMD`.
    ///
    /// # Errors
    ///
    /// Fails when the file cannot be created.
    ///
    /// # Examples
    ///
    /// ```
    /// use jsonrpc_runtime::{Context, ErrorObject, Peer, Router, Transport};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let path = std::env::temp_dir().join(format!("session-{}.jsonl", std::process::id()));
    /// let (client, server) = Transport::pair(16);
    /// let router = Router::new().request("add", |(a, b): (i64, i64), _: Context| async move {
    ///     Ok::<_, ErrorObject>(a + b)
    /// });
    /// let _server = Peer::builder().router(router).spawn(server.recorded(&path)?);
    /// let client = Peer::spawn(client);
    /// let sum: i64 = client.call("add", (2, 3)).await?;
    /// assert_eq!(sum, 5);
    /// let recording = std::fs::read_to_string(&path)?;
    /// assert!(recording.contains(r#""dir":"in","frame":{"jsonrpc":"2.0","id":1,"method":"add""#));
    /// assert!(recording.contains(r#""dir":"out","frame":{"jsonrpc":"2.0","id":1,"result":5}"#));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn recorded(mut self, path: impl AsRef<Path>) -> io::Result<Transport> {
        let recorder = Arc::new(Recorder {
            start: Instant::now(),
            out: Mutex::new(BufWriter::new(File::create(path)?)),
        });
        let connection = std::mem::take(&mut self.connection);
        let vetted = self.vetted;
        let (sink, stream) = self.split();
        let reads = recorder.clone();
        let inbound = stream.inspect(move |item| match item {
            Ok(Frame::Message(bytes)) => reads.write("in", Some(bytes), None),
            Ok(Frame::Refused(why)) => reads.write("in", None, Some(why.to_string())),
            Err(_) => {}
        });
        let outbound = sink.with(move |frame: Bytes| {
            recorder.write("out", Some(&frame), None);
            future::ready(Ok(frame))
        });
        let mut recorded = Transport::new(inbound, outbound).with_connection(connection);
        recorded.vetted = vetted;
        Ok(recorded)
    }
}
