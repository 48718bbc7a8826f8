//! The machine as each fork met it, probed just before the fork starts: how fast a CPU
//! computes (a fixed chain of dependent multiply-adds, timed on every CPU the lab may use)
//! and how fast two CPUs hand a cache line to each other (a ping-pong between the first two).
//!
//! A shared VM's CPUs change speed over minutes (the host's clock, or its other tenants on
//! the sibling hyperthreads), and the host may place its virtual CPUs nearer or farther
//! apart; a handoff that spins moves with both more than one that sleeps in the kernel.
//! The probes record the state each fork met, so that the report can show how far it moved
//! within a run, and `lab compare` can say when two runs met different machines. They run
//! in the parent while no child runs, on short-lived threads (the parent's own affinity,
//! which children inherit, is never changed).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Multiply-adds per trial: about half a millisecond on the lab's VM (figures:
/// docs/design-figures.md), long enough to outlast a timer tick's noise.
const OPS: u64 = 1 << 19;
/// Trials per CPU; the fastest is kept (an interrupt only ever slows a trial).
const TRIALS: usize = 3;
/// Round trips per ping-pong trial: about a quarter of a millisecond on the lab's VM
/// (figures: docs/design-figures.md).
const ROUND_TRIPS: u64 = 2000;

/// Nanoseconds per dependent multiply-add, averaged over the allowed CPUs (each the
/// fastest of its trials); `None` where a probe thread could not be pinned.
pub fn probe() -> Option<f64> {
    let cpus = crate::machine::placement::allowed_cpus().ok()?;
    let per_cpu: Option<Vec<f64>> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::spawn(move || {
                crate::machine::placement::pin_current(cpu).ok()?;
                (0..TRIALS).map(|_| chain(OPS)).reduce(f64::min)
            })
            .join()
            .ok()
            .flatten()
        })
        .collect();
    let v = per_cpu?;
    Some(v.iter().sum::<f64>() / v.len() as f64)
}

/// Nanoseconds per round trip of a cache line between the first two allowed CPUs (each
/// side spins until the other has written), the fastest of [`TRIALS`]; `None` with fewer
/// than two CPUs or where a thread could not be pinned.
pub fn ping_pong() -> Option<f64> {
    let cpus = crate::machine::placement::allowed_cpus().ok()?;
    let (&a, &b) = (cpus.first()?, cpus.get(1)?);
    (0..TRIALS)
        .map(|_| ping_pong_trial(a, b, ROUND_TRIPS))
        .collect::<Option<Vec<f64>>>()?
        .into_iter()
        .reduce(f64::min)
}

/// One trial: `trips` round trips, `a` writing odd values and `b` answering with the next
/// even one. `b` pins itself and says so before `a` writes anything; a side that cannot
/// pin gives up and makes the other give up too, so no thread is left spinning.
fn ping_pong_trial(a: usize, b: usize, trips: u64) -> Option<f64> {
    let line = Arc::new(AtomicU64::new(0));
    let ready = Arc::new(AtomicU8::new(PENDING));
    let (l, r) = (Arc::clone(&line), Arc::clone(&ready));
    let echo = std::thread::spawn(move || {
        let pinned = crate::machine::placement::pin_current(b).is_ok();
        r.store(if pinned { READY } else { FAILED }, Ordering::Release);
        if !pinned {
            return false;
        }
        for i in 0..trips {
            loop {
                match l.load(Ordering::Acquire) {
                    GIVE_UP => return false,
                    v if v == 2 * i + 1 => break,
                    _ => std::hint::spin_loop(),
                }
            }
            l.store(2 * i + 2, Ordering::Release);
        }
        true
    });
    let timed = std::thread::spawn(move || {
        let pinned = crate::machine::placement::pin_current(a).is_ok();
        let echo_state = loop {
            match ready.load(Ordering::Acquire) {
                PENDING => std::hint::spin_loop(),
                s => break s,
            }
        };
        if echo_state != READY || !pinned {
            // The echo either gave up already or waits for a value: release it.
            line.store(GIVE_UP, Ordering::Release);
            return None;
        }
        let t = Instant::now();
        for i in 0..trips {
            line.store(2 * i + 1, Ordering::Release);
            while line.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        Some(t.elapsed().as_nanos() as f64 / trips as f64)
    });
    let ns = timed.join().ok().flatten();
    let echoed = echo.join().unwrap_or(false);
    ns.filter(|_| echoed)
}

/// The echo's pinning: not yet known, pinned, failed.
const PENDING: u8 = 0;
const READY: u8 = 1;
const FAILED: u8 = 2;
/// Written by the timed side when it will not play, so that the echo stops waiting.
const GIVE_UP: u64 = u64::MAX;

/// One trial: `ops` multiply-adds, each waiting for the last (no overlap, no vectorising).
fn chain(ops: u64) -> f64 {
    let t = Instant::now();
    let mut x = 1u64;
    for i in 0..ops {
        x = black_box(x).wrapping_mul(6364136223846793005).wrapping_add(i);
    }
    black_box(x);
    t.elapsed().as_nanos() as f64 / ops as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_probe_reads_a_plausible_speed() {
        let ns = super::probe().expect("the probe pins to the allowed CPUs");
        // A multiply-add takes a few cycles: from a fraction of a ns up, never seconds.
        assert!(ns > 0.05 && ns < 1_000.0, "{ns} ns per op");
    }

    #[test]
    fn the_ping_pong_reads_a_plausible_round_trip_where_there_are_two_cpus() {
        let cpus = crate::machine::placement::allowed_cpus().unwrap();
        match super::ping_pong() {
            // A cache line crosses between cores in tens to hundreds of ns; far under 1 ms.
            Some(ns) => assert!(cpus.len() >= 2 && ns > 5.0 && ns < 1e6, "{ns} ns"),
            None => assert!(cpus.len() < 2, "two CPUs and no ping-pong"),
        }
    }
}
