//! Which retained event the replay budget drops next: the oldest one that
//! may go, found without looking at every stream.
//!
//! A busy session keeps hundreds of finished POST streams for replay (one
//! event each); scanning them for every answer once the budget is full cost
//! most of the server's time per call. [`Order`] lists the SSE streams'
//! events in the order they were written, so the oldest droppable one is
//! at (or near) its front.

use super::*;

/// The SSE streams' retained events by sequence number: `(seq, stream)`.
///
/// Entries are appended as events are written (sequence numbers only
/// grow), so the list stays sorted. An entry whose event is gone (its
/// stream was removed whole) is skipped and dropped when eviction reaches
/// it, and the list is rebuilt from the streams if such entries ever
/// outnumber the live ones, so it stays within twice the retained events.
#[derive(Default)]
pub(super) struct Order {
    entries: VecDeque<(u64, u64)>,
    /// Events of SSE streams retained now: the entries still live.
    live: usize,
}

/// What eviction may do with one entry of [`Order`].
enum Entry {
    /// It is its stream's oldest event and may be dropped.
    Drop,
    /// Not yet: its stream's oldest event is undelivered on a live (or not
    /// yet polled) stream, so nothing of that stream goes.
    Keep,
    /// Its event is no longer retained.
    Stale,
}

impl Order {
    /// Records the event `seq` just appended to the SSE stream `sid`.
    pub(super) fn push(&mut self, seq: u64, sid: u64, streams: &BTreeMap<u64, Stream>) {
        self.entries.push_back((seq, sid));
        self.live += 1;
        if self.entries.len() > 2 * self.live + 64 {
            self.rebuild(streams);
        }
    }

    /// `count` events of an SSE stream left without eviction (its stream
    /// was removed).
    pub(super) fn forget(&mut self, count: usize) {
        self.live -= count;
    }

    fn rebuild(&mut self, streams: &BTreeMap<u64, Stream>) {
        let mut entries: Vec<(u64, u64)> = streams
            .iter()
            .filter(|(_, s)| !matches!(s.kind, Kind::Json(_)))
            .flat_map(|(sid, s)| s.events.iter().map(move |e| (e.seq, *sid)))
            .collect();
        entries.sort_unstable();
        self.live = entries.len();
        self.entries = entries.into();
    }
}

impl Stream {
    /// Whether the event `seq` of this stream may be dropped now: only its
    /// oldest, once delivered or once its connection is gone.
    fn entry(&self, seq: u64) -> Entry {
        match self.events.front() {
            Some(front) if front.seq == seq => {
                let gone = self.live.is_none() && self.attached;
                if seq <= self.delivered || gone {
                    Entry::Drop
                } else {
                    Entry::Keep
                }
            }
            // An older event of the stream waits, and this one after it.
            Some(front) if front.seq < seq => Entry::Keep,
            _ => Entry::Stale,
        }
    }
}

impl Core {
    /// Drops the oldest events while the session keeps more than its replay
    /// budget: delivered ones, or those of streams whose connection is gone.
    /// A POST stream whose body has not been polled yet has lost nothing:
    /// its events wait for it (an answer over the replay budget, written
    /// before hyper first polled the body, was dropped).
    ///
    /// The entries passed over are those of streams that must keep their
    /// events: at most the undelivered events, which the backlog bounds.
    pub(super) fn evict(&self, state: &mut State) {
        let mut at = 0;
        while state.retained > self.options.replay_buffer {
            let Some(&(seq, sid)) = state.order.entries.get(at) else {
                break;
            };
            let entry = state
                .streams
                .get(&sid)
                .map_or(Entry::Stale, |s| s.entry(seq));
            match entry {
                Entry::Keep => {
                    at += 1;
                    continue;
                }
                Entry::Stale => {
                    state.order.entries.remove(at);
                    continue;
                }
                Entry::Drop => {}
            }
            state.order.entries.remove(at);
            state.order.live -= 1;
            let Some(stream) = state.streams.get_mut(&sid) else {
                break;
            };
            let Some(event) = stream.events.pop_front() else {
                break;
            };
            let len = event.message.len();
            stream.bytes -= len;
            stream.evicted = event.seq;
            state.retained -= len;
            if event.seq > stream.delivered {
                stream.pending -= len;
                self.lost(
                    len,
                    event.request,
                    "its stream lost its connection and the replay buffer is full",
                );
            }
            let stream = &state.streams[&sid];
            if stream.events.is_empty() && stream.complete && stream.live.is_none() {
                self.remove_stream(state, sid);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::mcp_http::Origins;

    /// The eviction this index replaced: the smallest front sequence number
    /// over every droppable stream, found by looking at all of them.
    fn evict_by_scan(core: &Core, state: &mut State) {
        while state.retained > core.options.replay_buffer {
            let victim = state
                .streams
                .iter()
                .filter(|(_, s)| !matches!(s.kind, Kind::Json(_)))
                .filter_map(|(sid, s)| {
                    let front = s.events.front()?;
                    let gone = s.live.is_none() && s.attached;
                    (front.seq <= s.delivered || gone).then_some((front.seq, *sid))
                })
                .min();
            let Some((_, sid)) = victim else { break };
            let stream = state.streams.get_mut(&sid).unwrap();
            let event = stream.events.pop_front().unwrap();
            stream.bytes -= event.message.len();
            stream.evicted = event.seq;
            state.retained -= event.message.len();
            if event.seq > stream.delivered {
                stream.pending -= event.message.len();
            }
            let stream = &state.streams[&sid];
            if stream.events.is_empty() && stream.complete && stream.live.is_none() {
                core.remove_stream(state, sid);
            }
        }
    }

    fn core(replay_buffer: usize) -> Core {
        let options = Options {
            path: "/mcp".into(),
            health_path: "/health".into(),
            json_responses: false,
            instance_tag: None,
            max_sessions: 1,
            idle_timeout: Duration::from_secs(60),
            keep_alive: None,
            replay_buffer,
            origins: Origins::Loopback,
            protocol_versions: Vec::new(),
            stateless_versions: Vec::new(),
            auth: None,
        };
        let (injected, _) = mpsc::unbounded_channel();
        Core::new(
            "s".into(),
            Arc::new(options),
            injected,
            Dialect::Strict,
            None,
        )
    }

    /// One stream as eviction leaves it: its number, its events' numbers,
    /// the last evicted, its undelivered bytes.
    type Kept = (u64, Vec<u64>, u64, u64);

    /// What a session retains: its bytes, and each stream.
    fn retained(state: &State) -> (usize, Vec<Kept>) {
        let streams = state.streams.iter().map(|(sid, s)| {
            let seqs = s.events.iter().map(|e| e.seq).collect();
            (*sid, seqs, s.evicted, s.pending as u64)
        });
        (state.retained, streams.collect())
    }

    /// A small deterministic generator, so a failure replays.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// One random step on a session's streams, the same on both states.
    fn step(core: &Core, state: &mut State, rng: &mut Rng) {
        let sids: Vec<u64> = state.streams.keys().copied().collect();
        let pick = |rng: &mut Rng| {
            sids.get(rng.below(sids.len().max(1) as u64) as usize)
                .copied()
        };
        match rng.below(10) {
            0 | 1 => {
                let sid = state.next_stream;
                state.next_stream += 1;
                let kind = if rng.below(8) == 0 {
                    Kind::Json(None)
                } else {
                    Kind::Post
                };
                state.streams.insert(sid, Stream::new(kind));
                if rng.below(4) > 0 {
                    core.attach(state, sid);
                }
            }
            2..=5 => {
                if let Some(sid) = pick(rng) {
                    let len = 1 + rng.below(300) as usize;
                    core.append(state, sid, Bytes::from(vec![b'x'; len]), None);
                }
            }
            6 => {
                // The body hands events over, or a client resumes from an
                // earlier one.
                if let Some(stream) = pick(rng).and_then(|sid| state.streams.get_mut(&sid)) {
                    let last = stream.events.back().map_or(stream.delivered, |e| e.seq);
                    let lowest = stream.events.front().map_or(last, |e| e.seq - 1);
                    stream.delivered = lowest + rng.below(last - lowest + 1);
                    let delivered = stream.delivered;
                    stream.pending = stream
                        .events
                        .iter()
                        .filter(|e| e.seq > delivered)
                        .map(|e| e.message.len())
                        .sum();
                }
            }
            7 => {
                if let Some(stream) = pick(rng).and_then(|sid| state.streams.get_mut(&sid)) {
                    stream.live = None;
                }
            }
            8 => {
                if let Some(sid) = pick(rng) {
                    if state.streams[&sid].live.is_none() {
                        core.attach(state, sid);
                    }
                    state.streams.get_mut(&sid).unwrap().complete = rng.below(2) == 0;
                }
            }
            _ => {
                if let Some(sid) = pick(rng) {
                    core.remove_stream(state, sid);
                }
            }
        }
    }

    #[test]
    fn the_index_drops_what_the_scan_of_every_stream_dropped() {
        for seed in 1..=200u64 {
            let budget = [0, 1, 299, 300, 301, 2048][seed as usize % 6];
            let (indexed, scanned) = (core(budget), core(budget));
            let (mut a, mut b) = (indexed.lock(), scanned.lock());
            let (mut rng_a, mut rng_b) = (Rng(seed * 0x9E37_79B9), Rng(seed * 0x9E37_79B9));
            for n in 0..400 {
                step(&indexed, &mut a, &mut rng_a);
                step(&scanned, &mut b, &mut rng_b);
                indexed.evict(&mut a);
                evict_by_scan(&scanned, &mut b);
                assert_eq!(
                    retained(&a),
                    retained(&b),
                    "seed {seed}, step {n}: the index and the scan disagree"
                );
                assert!(
                    a.order.entries.len() <= 2 * a.order.live + 65,
                    "seed {seed}"
                );
            }
        }
    }
}
