//! The queue behind the slow messages of a fixed-rate run: when the consumer takes a
//! message that waited [`DEPTH_FROM_NS`] or more from its due time, it asks the handoff how
//! many messages are in the channel behind it (`Consumer::depth`).
//!
//! A consumer held for `L` (a stall, a wake-up, a descheduled thread) leaves the producers
//! sending into the channel meanwhile, so its first slow message finds about `L × rate`
//! behind it. A producer held for `L` sends nothing meanwhile and then catches up in a burst,
//! so its late message finds little behind it. The depth behind the tail says which side
//! held it.
//!
//! Only slow messages pay for the question (a few loads of the handoff's counters): the fast
//! path of the consumer is unchanged. Depths are grouped by the message's latency into
//! power-of-two buckets (as a log-scaled histogram groups it): per bucket the count, the sum
//! and the largest.

use serde::{Deserialize, Serialize};

/// Messages this late or later (from their due time, ns) have the depth behind them
/// recorded: the fixed rate's lateness bound, past a timer tick's worth of noise.
pub const DEPTH_FROM_NS: u64 = super::LATE_NS;

/// Buckets of latency: bucket `b > 0` holds latencies in `[2^(b−1), 2^b)` ns.
const BUCKETS: usize = 65;

/// The consumer's record (fixed size, no allocation while it runs).
#[derive(Debug, Clone)]
pub struct Recorder {
    /// Per bucket: messages, sum of depths, largest depth.
    b: [[u64; 3]; BUCKETS],
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder { b: [[0; 3]; BUCKETS] }
    }
}

fn bucket(latency_ns: u64) -> usize {
    (u64::BITS - latency_ns.leading_zeros()) as usize
}

fn bucket_from(b: usize) -> u64 {
    if b == 0 {
        0
    } else {
        1u64 << (b - 1)
    }
}

impl Recorder {
    /// One slow message: its latency from its due time and the depth behind it when taken.
    #[cold]
    pub fn record(&mut self, latency_ns: u64, depth: u64) {
        let b = &mut self.b[bucket(latency_ns)];
        b[0] += 1;
        b[1] += depth;
        b[2] = b[2].max(depth);
    }

    /// The record in its reported form, for a channel of `capacity` slots (`None`:
    /// unbounded).
    pub fn finish(&self, capacity: Option<usize>) -> Depths {
        let buckets = self
            .b
            .iter()
            .enumerate()
            .filter(|(_, c)| c[0] > 0)
            .map(|(i, c)| Bucket {
                from_ns: bucket_from(i),
                messages: c[0],
                depth_sum: c[1],
                depth_max: c[2],
            })
            .collect();
        Depths { capacity: capacity.map(|c| c as u64), buckets }
    }
}

/// The slow messages of one latency bucket and the depths behind them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket's lowest latency, ns (it holds latencies below twice this).
    pub from_ns: u64,
    /// Messages taken with a latency in the bucket.
    pub messages: u64,
    /// The sum of the depths behind them when taken.
    pub depth_sum: u64,
    /// The largest of those depths.
    pub depth_max: u64,
}

/// Depths behind the slow messages, by latency, over one or more runs
/// (`results[i].rate.depths`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Depths {
    /// The channel's slots (`None`: unbounded): no depth exceeds it.
    pub capacity: Option<u64>,
    /// Non-empty buckets, by latency.
    pub buckets: Vec<Bucket>,
}

/// What the messages at and above a latency found behind them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Found {
    /// Messages in the buckets from the one holding the latency up.
    pub messages: u64,
    /// Their mean depth behind.
    pub mean: f64,
    /// The largest.
    pub max: u64,
    /// The lowest latency of those buckets, ns.
    pub from_ns: u64,
    /// The channel's slots (`None`: unbounded).
    pub capacity: Option<u64>,
}

/// Messages that found at least this share of `latency × rate` behind them waited on the
/// consumer's side: the producers kept sending into the channel meanwhile. Half, because
/// the first message after a consumer's stall finds the whole stall's arrivals behind it
/// and the last it delayed finds few.
pub const CONSUMER_HELD_SHARE: f64 = 0.5;

impl Found {
    /// The depth a consumer held for `latency_ns` at `rate` msgs/s would leave behind: the
    /// arrivals meanwhile, at most the channel's slots (a full channel holds the producers).
    pub fn held_consumer_depth(&self, latency_ns: u64, rate: f64) -> f64 {
        let arrivals = latency_ns as f64 * rate / 1e9;
        self.capacity.map_or(arrivals, |c| arrivals.min(c as f64))
    }

    /// Whether these messages, of `latency_ns` or more at `rate` msgs/s, were held on the
    /// consumer's side ([`CONSUMER_HELD_SHARE`] of [`Found::held_consumer_depth`]).
    pub fn consumer_held(&self, latency_ns: u64, rate: f64) -> bool {
        self.mean >= self.held_consumer_depth(latency_ns, rate) * CONSUMER_HELD_SHARE
    }
}

impl Depths {
    /// Adds another run's record.
    pub fn merge(&mut self, other: &Depths) {
        for o in &other.buckets {
            match self.buckets.iter_mut().find(|b| b.from_ns == o.from_ns) {
                Some(b) => {
                    b.messages += o.messages;
                    b.depth_sum += o.depth_sum;
                    b.depth_max = b.depth_max.max(o.depth_max);
                }
                None => self.buckets.push(o.clone()),
            }
        }
        self.buckets.sort_by_key(|b| b.from_ns);
        self.capacity = self.capacity.or(other.capacity);
    }

    /// What the messages whose latency falls in `latency_ns`'s bucket or above found
    /// behind them; `None` when none was recorded there.
    pub fn at_or_above(&self, latency_ns: u64) -> Option<Found> {
        let from_ns = bucket_from(bucket(latency_ns));
        let tail: Vec<&Bucket> = self.buckets.iter().filter(|x| x.from_ns >= from_ns).collect();
        let messages: u64 = tail.iter().map(|x| x.messages).sum();
        if messages == 0 {
            return None;
        }
        let sum: u64 = tail.iter().map(|x| x.depth_sum).sum();
        let max = tail.iter().map(|x| x.depth_max).max().unwrap_or(0);
        let mean = sum as f64 / messages as f64;
        Some(Found { messages, mean, max, from_ns, capacity: self.capacity })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_powers_of_two_and_the_tail_reads_from_its_bucket_up() {
        let mut r = Recorder::default();
        r.record(10_000, 1);
        r.record(12_000, 3);
        r.record(0, 0);
        r.record(50_000, 40);
        r.record(60_000, 20);
        let b = r.finish(None);
        assert_eq!(b.buckets.iter().map(|x| x.from_ns).collect::<Vec<_>>(), [0, 8192, 32768]);
        let tail = b.at_or_above(40_000).expect("the slow bucket");
        assert_eq!((tail.messages, tail.max, tail.from_ns), (2, 40, 32768));
        assert!((tail.mean - 30.0).abs() < 1e-9);
        let all = b.at_or_above(0).expect("every bucket");
        assert_eq!((all.messages, all.max), (5, 40));
        assert!(b.at_or_above(1 << 20).is_none());
        // Held 50 µs at 1M msgs/s: 50 arrivals behind, or as many as a smaller channel holds.
        assert!(tail.consumer_held(50_000, 1e6) && !tail.consumer_held(200_000, 1e6));
        let full = Found { capacity: Some(32), ..tail };
        assert_eq!(full.held_consumer_depth(200_000, 1e6), 32.0);
        assert!(full.consumer_held(200_000, 1e6));
    }

    #[test]
    fn runs_merge_bucket_by_bucket() {
        let (mut a, mut b) = (Recorder::default(), Recorder::default());
        a.record(20_000, 5);
        b.record(20_000, 2);
        b.record(3_000_000, 9);
        let mut m = a.finish(Some(64));
        m.merge(&b.finish(Some(64)));
        assert_eq!(m.capacity, Some(64));
        assert_eq!(m.buckets.len(), 2);
        assert_eq!((m.buckets[0].messages, m.buckets[0].depth_sum), (2, 7));
        assert_eq!((m.buckets[0].from_ns, m.buckets[0].depth_max), (16384, 5));
        assert_eq!(m.buckets[1].from_ns, 2_097_152);
    }
}
