//! A bounded ring of fixed-size records with one writer and any number of readers, each
//! slot guarded by a sequence stamp (a seqlock per slot, every word an atomic so a racing
//! read is never undefined behaviour, only detected and discarded).
//!
//! Writer (the owning thread): stamp := 2i+1 (busy), release fence, store the words,
//! stamp := 2i+2 (release), head := i+1 (release). Reader: for each index still in the
//! ring, load the stamp (acquire), load the words, acquire fence, reload the stamp: the copy
//! is good only if both stamps equal 2i+2. This is the seqlock of Boehm, "Can seqlocks get
//! along with programming language memory models?" (MSPC 2012), with relaxed data atomics.
//! The oldest records are overwritten when the ring is full: the writer never waits.

#[cfg(loom)]
use loom::sync::atomic::{fence, AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{fence, AtomicU64, Ordering};

struct Slot<const W: usize> {
    stamp: AtomicU64,
    words: [AtomicU64; W],
}

/// Single-writer ring of `W`-word records.
pub(crate) struct Ring<const W: usize> {
    slots: Box<[Slot<W>]>,
    mask: u64,
    head: AtomicU64,
}

/// What a [`Ring::snapshot`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct SnapshotStats {
    /// Records ever pushed when the snapshot started.
    pub written: u64,
    /// Records overwritten before the snapshot (pushed but no longer in the ring), plus
    /// those overwritten while it was being read.
    pub overwritten: u64,
}

impl<const W: usize> Ring<W> {
    /// A ring of `capacity` slots, all allocated now; `capacity` is a power of two ≥ 2.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        assert!(capacity.is_power_of_two() && capacity >= 2, "ring capacity {capacity}");
        let slots = (0..capacity)
            .map(|_| Slot {
                stamp: AtomicU64::new(0),
                words: std::array::from_fn(|_| AtomicU64::new(0)),
            })
            .collect();
        Ring { slots, mask: capacity as u64 - 1, head: AtomicU64::new(0) }
    }

    /// Appends `record`, overwriting the oldest when full. Wait-free, no allocation.
    /// Only one thread may push to a ring (the recorder gives each thread its own); pushes
    /// racing from two threads would store mixed records, never cause undefined behaviour.
    /// A record of `N < W` words fills the slot's first `N` words and leaves the rest as
    /// an older record wrote them: a reader gets whole records of `W` words, and the
    /// record's own encoding must say that only its first `N` count (see `record.rs`).
    #[inline(always)]
    pub(crate) fn push<const N: usize>(&self, record: &[u64; N]) {
        const { assert!(N <= W, "a record longer than the ring's slots") };
        let i = self.head.load(Ordering::Relaxed);
        let slot = &self.slots[(i & self.mask) as usize];
        slot.stamp.store(2 * i + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (w, &v) in slot.words.iter().zip(record) {
            w.store(v, Ordering::Relaxed);
        }
        slot.stamp.store(2 * i + 2, Ordering::Release);
        self.head.store(i + 1, Ordering::Release);
    }

    /// Records pushed so far (the index the next push gets).
    pub(crate) fn written(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }

    /// Appends to `out` every record still in the ring, oldest first; see
    /// [`Ring::snapshot_with`].
    #[cfg(test)]
    pub(crate) fn snapshot(&self, out: &mut Vec<[u64; W]>) -> SnapshotStats {
        self.snapshot_with(|_, rec| out.push(*rec))
    }

    /// Calls `f(index, record)` for every record still in the ring, oldest first, skipping
    /// any that the writer overwrites while we read (counted as overwritten). May run
    /// concurrently with [`Ring::push`].
    pub(crate) fn snapshot_with(&self, mut f: impl FnMut(u64, &[u64; W])) -> SnapshotStats {
        let head = self.head.load(Ordering::Acquire);
        let cap = self.slots.len() as u64;
        let first = head.saturating_sub(cap);
        let mut stats = SnapshotStats { written: head, overwritten: first };
        for i in first..head {
            let slot = &self.slots[(i & self.mask) as usize];
            let want = 2 * i + 2;
            if slot.stamp.load(Ordering::Acquire) != want {
                stats.overwritten += 1;
                continue;
            }
            let rec: [u64; W] = std::array::from_fn(|k| slot.words[k].load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            if slot.stamp.load(Ordering::Relaxed) != want {
                stats.overwritten += 1;
                continue;
            }
            f(i, &rec);
        }
        stats
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_counts_the_overwritten() {
        let r: Ring<2> = Ring::with_capacity(4);
        let mut out = Vec::new();
        assert_eq!(r.snapshot(&mut out), SnapshotStats { written: 0, overwritten: 0 });
        for i in 0..10u64 {
            r.push(&[i, i * 10]);
        }
        let s = r.snapshot(&mut out);
        assert_eq!(s, SnapshotStats { written: 10, overwritten: 6 });
        assert_eq!(out, vec![[6, 60], [7, 70], [8, 80], [9, 90]]);
    }

    #[test]
    fn concurrent_snapshots_never_see_torn_records() {
        let r: Ring<3> = Ring::with_capacity(8);
        let n: u64 = if cfg!(miri) { 200 } else { 200_000 };
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 1..=n {
                    r.push(&[i, i.wrapping_mul(3), !i]);
                }
            });
            let mut out = Vec::new();
            let mut last = 0;
            while last < n {
                out.clear();
                let st = r.snapshot(&mut out);
                for rec in &out {
                    assert_eq!(rec[1], rec[0].wrapping_mul(3), "torn record {rec:?}");
                    assert_eq!(rec[2], !rec[0], "torn record {rec:?}");
                }
                assert!(out.windows(2).all(|w| w[0][0] < w[1][0]), "out of order");
                assert_eq!(st.written - st.overwritten, out.len() as u64);
                last = st.written;
            }
        });
    }
}

/// Model check (`RUSTFLAGS="--cfg loom" cargo test -p flight-recorder --lib --release loom`,
/// about 43,000 schedules, 10 s). It catches a planted missing re-check in `snapshot` and a
/// planted missing release fence in `push` (each reports a torn record such as `[1, 30]`).
/// Both threads are spawned: loom explored a single schedule when the reader ran on the
/// model's main thread.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    #[test]
    fn loom_snapshot_during_pushes_sees_only_whole_records() {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(|| {
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let ring = Arc::new(Ring::<2>::with_capacity(2));
            let writer = Arc::clone(&ring);
            let t = loom::thread::spawn(move || {
                for i in 1..=3u64 {
                    writer.push(&[i, i * 10]);
                }
            });
            let reader = loom::thread::spawn(move || {
                let mut out = Vec::new();
                let st = ring.snapshot(&mut out);
                for rec in &out {
                    assert_eq!(rec[1], rec[0] * 10, "torn record {rec:?}");
                }
                assert_eq!(st.written - st.overwritten, out.len() as u64);
            });
            t.join().expect("writer");
            reader.join().expect("reader");
        });
        let schedules = N.load(std::sync::atomic::Ordering::Relaxed);
        assert!(schedules > 1000, "loom explored only {schedules} schedules");
    }

    /// The direct path's shorter records (`push` of `N < W` words) among whole ones: a
    /// record read is never torn in the words its push wrote; the words it did not write
    /// are whatever an older record left (its encoding says to ignore them).
    #[test]
    fn loom_snapshot_sees_whole_prefixes_of_shorter_records() {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        loom::model(|| {
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let ring = Arc::new(Ring::<3>::with_capacity(2));
            let writer = Arc::clone(&ring);
            let t = loom::thread::spawn(move || {
                writer.push(&[1, 10, 100]);
                writer.push(&[2, 20]);
                writer.push(&[3, 30]); // over [1, 10, 100]: its word 2 stays 100
            });
            let reader = loom::thread::spawn(move || {
                let mut out = Vec::new();
                let st = ring.snapshot(&mut out);
                for rec in &out {
                    assert_eq!(rec[1], rec[0] * 10, "torn record {rec:?}");
                    if rec[0] == 1 {
                        assert_eq!(rec[2], 100, "torn record {rec:?}");
                    }
                }
                assert_eq!(st.written - st.overwritten, out.len() as u64);
            });
            t.join().expect("writer");
            reader.join().expect("reader");
        });
        let schedules = N.load(std::sync::atomic::Ordering::Relaxed);
        assert!(schedules > 1000, "loom explored only {schedules} schedules");
    }
}
