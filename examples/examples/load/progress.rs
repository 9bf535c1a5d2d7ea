//! The progress line on stderr: rate and ETA on one self-refreshing line,
//! hidden when stderr is not a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// How many answers or items between two updates of the progress line.
pub(crate) const PROGRESS_STEP: u64 = 1024;

/// Answers out of `calls`.
pub(crate) fn calls(calls: u64) -> ProgressBar {
    bar(
        Some(calls),
        "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} answered, {rate} calls/s, eta {eta}",
    )
}

/// Items out of `items`, or items so far when the run is timed.
pub(crate) fn items(items: Option<u64>) -> ProgressBar {
    let template = match items {
        Some(_) => {
            "{elapsed_precise} [{bar:30}] {human_pos}/{human_len} items, {rate} items/s, eta {eta}"
        }
        None => "{elapsed_precise} {human_pos} items, {rate} items/s",
    };
    bar(items, template)
}

fn bar(len: Option<u64>, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(template)
        .expect("a valid progress template")
        .with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}", state.per_sec());
            },
        )
        .progress_chars("=> ");
    bar.set_style(style);
    bar
}
