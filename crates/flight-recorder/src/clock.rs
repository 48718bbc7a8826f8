//! The recorder's timestamp source: raw readings on the record path ([`Clock::raw`]),
//! turned into nanoseconds since the recorder started when a dump reads them
//! ([`Clock::ns`]), so a record pays for the counter read alone.
//!
//! `Instant::now()` is a vDSO `clock_gettime`, several times the cost of reading the TSC
//! on the lab's VM (figures: docs/design-figures.md); a span takes two reads. Where the kernel itself
//! keeps time with the TSC (its clocksource is `tsc`: the counter is invariant and
//! synchronised across cores, or the kernel would have rejected it), the recorder reads
//! the TSC directly and scales it by a rate
//! calibrated against `Instant` over 2 ms when the recorder is made (a relative error of
//! order 1e-5: timestamps within a dump stay consistent, they are only scaled that little).
//! Elsewhere, under Miri and under loom, it uses `Instant`.

use std::time::{Duration, Instant};

#[derive(Clone, Copy)]
pub(crate) enum Clock {
    Instant(Instant),
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    Tsc {
        tsc0: u64,
        /// Nanoseconds per tick, fixed point with 32 fraction bits.
        ns_per_tick_q32: u64,
    },
}

#[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
#[inline(always)]
fn rdtsc() -> u64 {
    // SAFETY: RDTSC exists on every x86_64 CPU and only reads the time-stamp counter; it
    // touches no memory.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Nanoseconds since `epoch`: out of line, so that the TSC path inlined into a record
/// function stays a few instructions (no call, no spills).
#[inline(never)]
fn elapsed_ns(epoch: &Instant) -> u64 {
    epoch.elapsed().as_nanos() as u64
}

impl Clock {
    /// The TSC clock when the kernel keeps time with the TSC, else `Instant`.
    pub(crate) fn new() -> Clock {
        #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
        if let Some(c) = Self::tsc() {
            return c;
        }
        Clock::Instant(Instant::now())
    }

    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    fn tsc() -> Option<Clock> {
        let source = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .ok()?;
        if source.trim() != "tsc" {
            return None;
        }
        let (i0, c0) = (Instant::now(), rdtsc());
        while i0.elapsed() < Duration::from_millis(2) {
            std::hint::spin_loop();
        }
        let (i1, c1) = (Instant::now(), rdtsc());
        let ns = i1.duration_since(i0).as_nanos() as u64;
        let ticks = c1.wrapping_sub(c0);
        // A plausible rate only (0.1 to 10 GHz), else the counter is not what we think.
        if ticks == 0 || !(ns / 10..=ns * 10).contains(&ticks) {
            return None;
        }
        let ns_per_tick_q32 = (((ns as u128) << 32) / ticks as u128) as u64;
        // The epoch is the calibration's start.
        Some(Clock::Tsc { tsc0: c0, ns_per_tick_q32 })
    }

    /// A raw reading: TSC ticks, or nanoseconds since the clock was made (`Instant`).
    /// Monotonic on a thread; [`Clock::ns`] turns it into nanoseconds.
    #[inline(always)]
    pub(crate) fn raw(&self) -> u64 {
        match self {
            Clock::Instant(epoch) => elapsed_ns(epoch),
            #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
            Clock::Tsc { .. } => rdtsc(),
        }
    }

    /// A TSC reading when this clock is the TSC, else `None` (read [`Clock::raw`] then):
    /// lets a record function keep its TSC path free of calls.
    #[inline(always)]
    pub(crate) fn tsc_reading(&self) -> Option<u64> {
        match self {
            Clock::Instant(_) => None,
            #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
            Clock::Tsc { .. } => Some(rdtsc()),
        }
    }

    /// A [`Clock::raw`] reading as nanoseconds since the clock was made.
    #[inline]
    pub(crate) fn ns(&self, raw: u64) -> u64 {
        match self {
            Clock::Instant(_) => raw,
            #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
            Clock::Tsc { tsc0, ns_per_tick_q32 } => {
                // Saturating: another core's counter may be a few ticks behind at the start.
                let ticks = raw.saturating_sub(*tsc0);
                ((ticks as u128 * *ns_per_tick_q32 as u128) >> 32) as u64
            }
        }
    }

    /// Nanoseconds since the clock was made.
    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        self.ns(self.raw())
    }

    /// `"tsc"` or `"clock_gettime"`: which source this clock reads.
    pub(crate) fn source(&self) -> &'static str {
        match self {
            Clock::Instant(_) => "clock_gettime",
            #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
            Clock::Tsc { .. } => "tsc",
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Each clock read is bracketed by two `Instant` reads, so the clock's interval must lie
    /// between the inner and the outer `Instant` interval (within 2% for the TSC's
    /// calibration), however slowly the reads run (Miri).
    #[test]
    fn the_clock_keeps_pace_with_instant() {
        let c = Clock::new();
        let (ia, t0, ib) = (Instant::now(), c.now_ns(), Instant::now());
        std::thread::sleep(Duration::from_millis(if cfg!(miri) { 1 } else { 30 }));
        let (ic, t1, id) = (Instant::now(), c.now_ns(), Instant::now());
        assert!(t1 >= t0, "monotonic");
        let clock = (t1 - t0) as f64;
        let inner = ic.duration_since(ib).as_nanos() as f64;
        let outer = id.duration_since(ia).as_nanos() as f64;
        assert!(
            inner * 0.98 <= clock && clock <= outer * 1.02,
            "{}: {clock} ns, not within [{inner}, {outer}] ns",
            c.source()
        );
    }
}
