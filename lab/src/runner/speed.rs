//! The machine's speed as each fork met it: a fixed chain of dependent multiply-adds,
//! timed on every CPU the lab may use, just before the fork starts.
//!
//! A shared VM's CPUs change speed over minutes (the host's clock, or its other tenants on
//! the sibling hyperthreads), and a handoff that spins moves with them more than one that
//! sleeps in the kernel. The probe records the state each fork met, so that the report
//! can show how far it moved within a run, and `lab compare` can say when two runs met
//! different machines. It runs in the parent while no child runs, on short-lived threads
//! (the parent's own affinity, which children inherit, is never changed).

use std::hint::black_box;
use std::time::Instant;

/// Multiply-adds per trial: about half a millisecond at 1 ns each.
const OPS: u64 = 1 << 19;
/// Trials per CPU; the fastest is kept (an interrupt only ever slows a trial).
const TRIALS: usize = 3;

/// Nanoseconds per dependent multiply-add, averaged over the allowed CPUs (each the
/// fastest of its trials); `None` where a probe thread could not be pinned.
pub fn probe() -> Option<f64> {
    let cpus = crate::placement::allowed_cpus().ok()?;
    let per_cpu: Option<Vec<f64>> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::spawn(move || {
                crate::placement::pin_current(cpu).ok()?;
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
}
