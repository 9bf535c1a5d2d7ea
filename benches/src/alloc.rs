//! A counting global allocator: how many allocations, how many bytes, and
//! how many bytes are live. Install it with
//! `#[global_allocator] static A: Counting = Counting;` in the one binary
//! that measures memory, so it never perturbs the timing benchmarks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Allocations by size while [`record_sizes`] is on: bucket `i` counts the
/// sizes `16 * i + 1 ..= 16 * (i + 1)`, the last one everything larger.
const BUCKETS: usize = 65;
static SIZES_ON: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static SIZES: [AtomicU64; BUCKETS] = [const { AtomicU64::new(0) }; BUCKETS];

fn counted(size: usize) {
    ALLOCS.fetch_add(1, Relaxed);
    BYTES.fetch_add(size as u64, Relaxed);
    if SIZES_ON.load(Relaxed) {
        SIZES[(size.saturating_sub(1) / 16).min(BUCKETS - 1)].fetch_add(1, Relaxed);
    }
}

/// Starts (clearing it) or stops the histogram of allocation sizes.
pub fn record_sizes(on: bool) {
    if on {
        SIZES.iter().for_each(|bucket| bucket.store(0, Relaxed));
    }
    SIZES_ON.store(on, Relaxed);
}

/// The histogram of allocation sizes recorded: `(largest size of the
/// bucket, allocations)` for each bucket that saw one; the last bucket's
/// size is `usize::MAX`.
pub fn sizes() -> Vec<(usize, u64)> {
    SIZES
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let top = if i == BUCKETS - 1 {
                usize::MAX
            } else {
                16 * (i + 1)
            };
            (top, n.load(Relaxed))
        })
        .filter(|&(_, n)| n > 0)
        .collect()
}

fn grew(size: usize) {
    let live = LIVE.fetch_add(size, Relaxed) + size;
    PEAK.fetch_max(live, Relaxed);
}

/// The system allocator, counted.
#[derive(Debug)]
pub struct Counting;

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        counted(layout.size());
        grew(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        counted(layout.size());
        grew(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // A reallocation counts as one allocation of the new size.
        counted(new_size);
        // Old and new block both exist while the contents move.
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// The most heap live at once since the last [`reset_peak`].
pub fn peak_live() -> usize {
    PEAK.load(Relaxed)
}

/// Starts a new peak from the heap live now.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub allocs: u64,
    pub bytes: u64,
    pub live: usize,
}

/// Reads the counters.
pub fn snapshot() -> Snapshot {
    Snapshot {
        allocs: ALLOCS.load(Relaxed),
        bytes: BYTES.load(Relaxed),
        live: LIVE.load(Relaxed),
    }
}

impl Snapshot {
    /// Allocations and bytes since `earlier`, per `ops` operations.
    pub fn per_op_since(&self, earlier: &Snapshot, ops: u64) -> (f64, f64) {
        (
            (self.allocs - earlier.allocs) as f64 / ops as f64,
            (self.bytes - earlier.bytes) as f64 / ops as f64,
        )
    }
}
