//! The clock, measured: what one timestamp costs and how fine it is, for the clock the
//! workloads read (`Instant`, through [`handoff::now_ns`]) and for the TSC where the CPU
//! says it is invariant (`constant_tsc` and `nonstop_tsc` in /proc/cpuinfo). No latency
//! figure is printed below the resolution of the clock that took it ([`Clock::floor_ns`]).

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Reads per measurement: a few milliseconds of reads, enough for the smallest step to
/// show and the mean cost to settle.
const READS: u32 = 200_000;

/// One clock's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockFigures {
    /// Mean cost of one read, ns.
    pub cost_ns: f64,
    /// The smallest non-zero step between two consecutive reads, ns: no two events closer
    /// than this can be told apart.
    pub resolution_ns: f64,
}

/// The clocks of this machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// `Instant::now` (CLOCK_MONOTONIC through the vDSO on Linux): what the workloads read.
    pub instant: ClockFigures,
    /// The TSC (`rdtsc`), where invariant; `None` elsewhere.
    pub tsc: Option<ClockFigures>,
    /// TSC ticks per ns, measured against `Instant`.
    pub tsc_ghz: Option<f64>,
}

impl Clock {
    /// The figure below which a latency cannot be told from zero: the workload clock's
    /// resolution, or its cost where that is larger (a round trip reads it twice).
    pub fn floor_ns(&self) -> f64 {
        self.instant.resolution_ns.max(1.0)
    }

    /// `ns` as text, in µs, or `< floor` where it is below the clock's resolution.
    pub fn us(&self, ns: f64) -> String {
        if ns < self.floor_ns() {
            format!("< {}", crate::units::fmt_num(self.floor_ns() / 1e3))
        } else {
            crate::units::fmt_num(ns / 1e3)
        }
    }
}

fn instant() -> ClockFigures {
    let t = Instant::now();
    let mut last = Instant::now();
    let mut step = u128::MAX;
    for _ in 0..READS {
        let now = Instant::now();
        let d = now.duration_since(last).as_nanos();
        if d > 0 {
            step = step.min(d);
        }
        last = now;
    }
    let cost = t.elapsed().as_nanos() as f64 / f64::from(READS + 1);
    ClockFigures { cost_ns: cost, resolution_ns: if step == u128::MAX { 0.0 } else { step as f64 } }
}

/// Whether the CPU says its TSC runs at one rate in every state.
fn tsc_invariant() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info.lines().find(|l| l.starts_with("flags")).unwrap_or("");
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    has("constant_tsc") && has("nonstop_tsc")
}

#[cfg(target_arch = "x86_64")]
#[inline]
fn rdtsc() -> u64 {
    // SAFETY: `rdtsc` reads a counter; it touches no memory and every x86_64 CPU has it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86_64")]
fn tsc() -> Option<(ClockFigures, f64)> {
    if !tsc_invariant() {
        return None;
    }
    let (t0, c0) = (Instant::now(), rdtsc());
    let mut last = rdtsc();
    let mut step = u64::MAX;
    for _ in 0..READS {
        let now = rdtsc();
        let d = now.wrapping_sub(last);
        if d > 0 {
            step = step.min(d);
        }
        last = now;
    }
    let reads_ns = t0.elapsed().as_nanos() as f64;
    // The rate against Instant over at least 10 ms.
    while t0.elapsed().as_millis() < 10 {
        std::hint::spin_loop();
    }
    let (ns, ticks) = (t0.elapsed().as_nanos() as f64, rdtsc().wrapping_sub(c0) as f64);
    let ghz = ticks / ns;
    if ghz.is_nan() || ghz <= 0.0 || step == u64::MAX {
        return None;
    }
    let f = ClockFigures { cost_ns: reads_ns / f64::from(READS), resolution_ns: step as f64 / ghz };
    Some((f, ghz))
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc() -> Option<(ClockFigures, f64)> {
    None
}

/// Measures both clocks (about 20 ms).
pub fn measure() -> Clock {
    let t = tsc();
    Clock { instant: instant(), tsc: t.map(|x| x.0), tsc_ghz: t.map(|x| x.1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_is_measured_and_figures_below_it_are_not_printed() {
        let c = measure();
        assert!(c.instant.cost_ns > 0.0 && c.instant.cost_ns < 10_000.0, "{c:?}");
        assert!(c.instant.resolution_ns >= 1.0 && c.instant.resolution_ns < 1e6, "{c:?}");
        let fine = Clock {
            instant: ClockFigures { cost_ns: 20.0, resolution_ns: 30.0 },
            ..Clock::default()
        };
        assert_eq!(fine.us(10.0), "< 0.030");
        assert_eq!(fine.us(2_500.0), "2.50");
    }
}
