//! Process probes (Linux): resident set size and its peak, and CPU pinning.

use std::fs;

/// A `kB` field of `/proc/<pid>/status`, in bytes.
fn status_field(pid: Option<u32>, field: &str) -> Option<u64> {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let status = fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Current resident set size of `pid` (`None`: this process).
pub fn rss(pid: Option<u32>) -> Option<u64> {
    status_field(pid, "VmRSS:")
}

/// Peak resident set size of `pid` since it started or since the last
/// [`reset_peak`].
pub fn peak_rss(pid: Option<u32>) -> Option<u64> {
    status_field(pid, "VmHWM:")
}

/// Resets the peak resident set size of `pid` to its current size
/// (`/proc/<pid>/clear_refs`, Linux 4.0+). Returns false if the kernel
/// refused.
pub fn reset_peak(pid: Option<u32>) -> bool {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/clear_refs"),
        None => "/proc/self/clear_refs".to_owned(),
    };
    fs::write(path, "5").is_ok()
}

/// Pins the calling thread, and so every thread and process it starts
/// afterwards, to one CPU.
///
/// The benchmarks that talk to a child process use it: on this kind of
/// virtual machine, waking a process on the other vCPU costs 60-130 µs and
/// varies with the host's load, which would swamp what is measured. On one
/// CPU a round trip costs two context switches, for the floor and for us
/// alike. Returns false if the kernel refused.
pub fn pin_to_cpu(cpu: usize) -> bool {
    // SAFETY: `set` is a plain bitmask owned by this frame; the call only
    // reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// CPU time of two groups of this process's threads, by thread name, and
/// the time they spent runnable but waiting for a CPU, all in ns.
#[derive(Debug, Default, Clone, Copy)]
pub struct ThreadCpu {
    pub server_ns: u64,
    pub client_ns: u64,
    pub wait_ns: u64,
}

/// Sums `/proc/self/task/*/schedstat` (run time, run-queue wait) over the
/// threads named `server` and those named `client`.
pub fn thread_cpu(server: &str, client: &str) -> ThreadCpu {
    let mut cpu = ThreadCpu::default();
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return cpu;
    };
    for task in tasks.flatten() {
        let dir = task.path();
        let (Ok(comm), Ok(stat)) = (
            fs::read_to_string(dir.join("comm")),
            fs::read_to_string(dir.join("schedstat")),
        ) else {
            continue;
        };
        let mut fields = stat
            .split_whitespace()
            .map(|f| f.parse::<u64>().unwrap_or(0));
        let (run, wait) = (fields.next().unwrap_or(0), fields.next().unwrap_or(0));
        match comm.trim() {
            name if name == server => cpu.server_ns += run,
            name if name == client => cpu.client_ns += run,
            _ => continue,
        }
        cpu.wait_ns += wait;
    }
    cpu
}

/// What `cmd args` prints, trimmed; `unknown` when it cannot run.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown".into(), |s| s.trim().to_owned())
}

/// The commit the runtime under measure is at, and the runtime's files
/// changed since, for a benchmark's report.
pub fn runtime_commit() -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = root.to_str().unwrap_or(".");
    let mut commit = sh("git", &["-C", root, "log", "--oneline", "-1"]);
    let dirty = sh(
        "git",
        &["-C", root, "status", "--porcelain", "--", "jsonrpc-runtime"],
    );
    if !dirty.is_empty() {
        commit.push_str(" + uncommitted changes in jsonrpc-runtime: ");
        commit.push_str(
            &dirty
                .split_whitespace()
                .filter(|w| w.contains('/'))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    commit
}
