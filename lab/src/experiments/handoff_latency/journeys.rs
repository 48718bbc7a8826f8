//! The slowest messages of each fixed-rate run, and their journeys as a Chrome trace that
//! Perfetto opens: for each, when it was due, sent and taken, drawn as a track of its own
//! ("waiting to be sent", then "in the channel") and as a flow from its producer's send to
//! the consumer's take.
//!
//! The consumer keeps the [`KEPT`] slowest by latency from the due time: one comparison per
//! message against the slowest-kept threshold, the list touched only by a message above it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Messages kept per run.
pub const KEPT: usize = 8;

/// One message's journey, ns on its fork's clock (`handoff::now_ns`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Journey {
    /// Its producer.
    pub producer: u32,
    /// Its number in its producer's sequence.
    pub seq: u64,
    /// When the schedule had it due.
    pub due_ns: u64,
    /// When its producer stamped it, just before the send.
    pub sent_ns: u64,
    /// When the consumer took it.
    pub taken_ns: u64,
}

impl Journey {
    /// Its latency from its due time, ns.
    pub fn latency_ns(&self) -> u64 {
        self.taken_ns.saturating_sub(self.due_ns)
    }
}

/// The consumer's record of the slowest messages.
#[derive(Debug, Clone, Default)]
pub struct Slowest {
    kept: Vec<Journey>,
    /// The lowest latency kept once [`KEPT`] are (0 before): a message must exceed it.
    floor_ns: u64,
}

impl Slowest {
    /// One taken message: kept if it is among the slowest so far.
    #[inline]
    pub fn offer(&mut self, latency_ns: u64, j: impl FnOnce() -> Journey) {
        if latency_ns > self.floor_ns || self.kept.len() < KEPT {
            self.keep(j());
        }
    }

    #[cold]
    fn keep(&mut self, j: Journey) {
        if self.kept.len() == KEPT {
            let (i, _) =
                self.kept.iter().enumerate().min_by_key(|(_, k)| k.latency_ns()).expect("KEPT > 0");
            self.kept[i] = j;
        } else {
            self.kept.push(j);
        }
        if self.kept.len() == KEPT {
            self.floor_ns = self.kept.iter().map(Journey::latency_ns).min().unwrap_or(0);
        }
    }

    /// The slowest, slowest first.
    pub fn finish(mut self) -> Vec<Journey> {
        self.kept.sort_by_key(|j| std::cmp::Reverse(j.latency_ns()));
        self.kept
    }
}

/// Track ids: the consumer, then each producer, then one per journey (tid 0 is avoided:
/// Perfetto's JSON importer merges it into tid 1).
const CONSUMER_TID: u64 = 1;
fn producer_tid(p: u32) -> u64 {
    2 + u64::from(p)
}
const JOURNEY_TID: u64 = 1000;

/// The trace of one row: one process per measured run (`(label of the run, its journeys)`),
/// times in µs from the run's earliest due time.
pub fn trace(label: &str, runs: &[(String, Vec<Journey>)]) -> Value {
    let mut events = Vec::new();
    let mut flow = 0u64;
    for (k, (name, js)) in runs.iter().enumerate() {
        let pid = k as u64 + 1;
        let base = js.iter().map(|j| j.due_ns).min().unwrap_or(0);
        let us = |ns: u64| ns.saturating_sub(base) as f64 / 1e3;
        let meta = |tid: u64, what: &str, n: String| json!({"ph": "M", "pid": pid, "tid": tid, "name": what, "args": {"name": n}});
        events.push(meta(0, "process_name", format!("{label}: {name}")));
        events.push(meta(CONSUMER_TID, "thread_name", "consumer".into()));
        let mut producers: Vec<u32> = js.iter().map(|j| j.producer).collect();
        producers.sort_unstable();
        producers.dedup();
        for p in producers {
            events.push(meta(producer_tid(p), "thread_name", format!("producer-{p}")));
        }
        for (i, j) in js.iter().enumerate() {
            let tid = JOURNEY_TID + i as u64;
            let lat_us = j.latency_ns() as f64 / 1e3;
            let title = format!("#{} producer-{} #{}: {lat_us:.1} µs", i + 1, j.producer, j.seq);
            events.push(meta(tid, "thread_name", title));
            let args = json!({"producer": j.producer, "seq": j.seq, "latency_us": lat_us,
                "late_to_send_us": j.sent_ns.saturating_sub(j.due_ns) as f64 / 1e3,
                "in_channel_us": j.taken_ns.saturating_sub(j.sent_ns) as f64 / 1e3});
            let sent = j.sent_ns.max(j.due_ns);
            events.push(json!({"ph": "X", "pid": pid, "tid": tid, "ts": us(j.due_ns),
                "dur": us(sent) - us(j.due_ns), "name": "waiting to be sent", "cat": "journey",
                "args": args}));
            let taken = j.taken_ns.max(sent);
            events.push(json!({"ph": "X", "pid": pid, "tid": tid, "ts": us(sent),
                "dur": us(taken) - us(sent), "name": "in the channel", "cat": "journey",
                "args": args}));
            // The flow binds to a zero-length slice on each end, as Perfetto binds flows to
            // the enclosing slice of their track.
            let ptid = producer_tid(j.producer);
            events.push(json!({"ph": "X", "pid": pid, "tid": ptid, "ts": us(sent), "dur": 0,
                "name": "send", "cat": "journey", "args": args}));
            events.push(json!({"ph": "s", "pid": pid, "tid": ptid, "ts": us(sent), "id": flow,
                "name": "journey", "cat": "journey"}));
            events.push(json!({"ph": "X", "pid": pid, "tid": CONSUMER_TID, "ts": us(taken),
                "dur": 0, "name": "take", "cat": "journey", "args": args}));
            events.push(json!({"ph": "f", "bp": "e", "pid": pid, "tid": CONSUMER_TID,
                "ts": us(taken), "id": flow, "name": "journey", "cat": "journey"}));
            flow += 1;
        }
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns"})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(seq: u64, latency: u64) -> Journey {
        Journey {
            producer: 0,
            seq,
            due_ns: 1_000 * seq,
            sent_ns: 1_000 * seq + 50,
            taken_ns: 1_000 * seq + latency,
        }
    }

    #[test]
    fn the_slowest_are_kept_slowest_first() {
        let mut s = Slowest::default();
        for seq in 0..100u64 {
            let latency = if seq % 10 == 3 { 5_000 + seq } else { 100 + seq % 7 };
            s.offer(latency, || j(seq, latency));
        }
        let kept = s.finish();
        assert_eq!(kept.len(), KEPT);
        assert_eq!(
            kept.iter().map(|j| j.seq).collect::<Vec<_>>(),
            [93, 83, 73, 63, 53, 43, 33, 23]
        );
    }

    #[test]
    fn each_journey_is_a_track_of_its_own_and_a_flow_from_send_to_take() {
        let runs = vec![("round 1".to_string(), vec![j(2, 900), j(1, 400)])];
        let t = trace("ring", &runs);
        let ev = t["traceEvents"].as_array().expect("events");
        let count = |ph: &str| ev.iter().filter(|e| e["ph"] == ph).count();
        assert_eq!((count("s"), count("f")), (2, 2));
        // Two phases per journey, a send and a take.
        assert_eq!(count("X"), 2 * 4);
        let names: Vec<&str> = ev
            .iter()
            .filter(|e| e["ph"] == "M")
            .filter_map(|e| e["args"]["name"].as_str())
            .collect();
        assert!(names.contains(&"consumer") && names.contains(&"producer-0"), "{names:?}");
        assert!(names.iter().any(|n| n.starts_with("#1 producer-0 #2: 0.9 µs")), "{names:?}");
        // Times run from the run's first due time.
        let first = ev.iter().find(|e| e["name"] == "waiting to be sent").expect("a phase");
        assert_eq!(first["ts"], 1.0);
        assert!(ev.iter().all(|e| e["tid"] != 0 || e["ph"] == "M"));
    }
}
