//! Wait strategies: how a consumer waits for data and a producer waits for room.
//!
//! The four strategies of the LMAX Disruptor (`com.lmax.disruptor.*WaitStrategy`). The ring
//! is generic over [`WaitStrategy`], so the hot loops are monomorphised per strategy;
//! [`WaitKind`] names them for run-time selection (the lab's `--wait` option).
//!
//! A ring holds two instances: one the consumer waits on for data (producers
//! [`notify`](WaitStrategy::notify) it after publishing) and one producers wait on for room
//! (the consumer notifies it after each batch). Only [`Blocking`] does anything in
//! `notify`; the others poll.

use crate::loom::{
    fence, sleep_briefly, spin_loop, yield_now, AtomicBool, Condvar, Mutex, Ordering,
};
use std::fmt;
use std::str::FromStr;

mod sealed {
    pub trait Sealed {}
}

/// How a thread waits until a condition holds. Sealed: the ring's correctness relies on
/// the notify protocol of each implementation.
pub trait WaitStrategy: sealed::Sealed + Default + Send + Sync + fmt::Debug + 'static {
    /// The strategy's name and run-time tag.
    const KIND: WaitKind;

    /// Calls `check` until it returns `Some`, waiting in this strategy's way in between.
    /// `check` must read the shared state it depends on with `Acquire` (or stronger).
    fn wait_for<R>(&self, check: impl FnMut() -> Option<R>) -> R;

    /// Called after a change that may satisfy a waiter's `check` (published data, freed
    /// room, close, halt). Must follow the change in program order.
    fn notify(&self);
}

/// Mutex + condition variable: waiters sleep in the kernel until notified. The seed's
/// choice (`BlockingWaitStrategy`). Java's takes the lock and signals on every publish;
/// this one keeps the mutex + condvar for the actual sleep but avoids paying for it when
/// nobody sleeps, in two measured ways:
/// * `notify` locks only when a sleeper has asked for a wake-up since the last one (a
///   `need_wake` flag, as `LiteBlockingWaitStrategy`'s `signalNeeded`). A waiter sets the
///   flag under the lock, then a `SeqCst` fence, then re-checks; a notifier makes its
///   change, then a `SeqCst` fence, then reads the flag. The fences order "ask, check"
///   against "change, read flag", so one side always sees the other. The first notifier
///   clears the flag: the publishes that follow, before the sleeper has even woken, pay a
///   fence and a load, not a lock and a futex call each (with a plain waiter count they
///   did, and one producer managed about 1.2 M msgs/s).
/// * A waiter first spins [`Blocking::SPINS`] times (a few microseconds) before it
///   sleeps, as adaptive mutexes do, so a consumer that keeps catching up with its
///   producer does not sleep after nearly every message.
#[derive(Debug, Default)]
pub struct Blocking {
    need_wake: AtomicBool,
    lock: Mutex<()>,
    cond: Condvar,
}

impl Blocking {
    /// Spins before a waiter goes to sleep.
    pub const SPINS: u32 = 100;
}

impl sealed::Sealed for Blocking {}

impl WaitStrategy for Blocking {
    const KIND: WaitKind = WaitKind::Blocking;

    #[inline]
    fn wait_for<R>(&self, mut check: impl FnMut() -> Option<R>) -> R {
        for _ in 0..Self::SPINS {
            if let Some(r) = check() {
                return r;
            }
            spin_loop();
        }
        let mut guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            self.need_wake.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if let Some(r) = check() {
                return r;
            }
            guard = self.cond.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
    }

    #[inline]
    fn notify(&self) {
        fence(Ordering::SeqCst);
        if self.need_wake.load(Ordering::Relaxed) {
            self.wake();
        }
    }
}

impl Blocking {
    #[cold]
    fn wake(&self) {
        // Holding the lock means every sleeper that asked is inside `cond.wait` (it asks
        // and checks under the lock): it cannot miss this notification.
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        if self.need_wake.swap(false, Ordering::Relaxed) {
            self.cond.notify_all();
        }
    }
}

/// Spin, then yield, then park briefly: `SleepingWaitStrategy` (200 tries: 100 spins,
/// 100 yields, then `parkNanos(100)` per try). Notify is a no-op.
#[derive(Debug, Default)]
pub struct Sleeping;

impl sealed::Sealed for Sleeping {}

impl WaitStrategy for Sleeping {
    const KIND: WaitKind = WaitKind::Sleeping;

    #[inline]
    fn wait_for<R>(&self, mut check: impl FnMut() -> Option<R>) -> R {
        let mut tries = 200u32;
        loop {
            if let Some(r) = check() {
                return r;
            }
            if tries > 100 {
                tries -= 1;
                spin_loop();
            } else if tries > 0 {
                tries -= 1;
                yield_now();
            } else {
                sleep_briefly();
            }
        }
    }

    #[inline(always)]
    fn notify(&self) {}
}

/// Spin about 100 times, then yield on every try: `YieldingWaitStrategy`. Notify is a
/// no-op.
#[derive(Debug, Default)]
pub struct Yielding;

impl sealed::Sealed for Yielding {}

impl WaitStrategy for Yielding {
    const KIND: WaitKind = WaitKind::Yielding;

    #[inline]
    fn wait_for<R>(&self, mut check: impl FnMut() -> Option<R>) -> R {
        let mut spins = 100u32;
        loop {
            if let Some(r) = check() {
                return r;
            }
            if spins > 0 {
                spins -= 1;
                spin_loop();
            } else {
                yield_now();
            }
        }
    }

    #[inline(always)]
    fn notify(&self) {}
}

/// Spin with the spin-loop hint: `BusySpinWaitStrategy`. Lowest latency while every busy
/// thread has a core of its own. Notify is a no-op.
///
/// One deviation from Java: after [`BusySpin::YIELD_EVERY`] fruitless spins in a row
/// (a few microseconds) it yields once. With more threads than cores a pure spin holds
/// the core until the scheduler's time slice ends (milliseconds) while the thread it waits
/// for — a descheduled producer holding the next claimed sequence, or the consumer — cannot
/// run; the conformance suite's 8 producers on 2 cores then took minutes (64 spins per yield: 24 s for the suite's
/// 6-producer, capacity-1 check, vs 47 s with 128 and over 200 s with 1024). With threads
/// on their own cores the yield is a cheap syscall every few microseconds of waiting.
#[derive(Debug, Default)]
pub struct BusySpin;

impl BusySpin {
    /// Fruitless spins between two yields.
    pub const YIELD_EVERY: u32 = 1 << 6;
}

impl sealed::Sealed for BusySpin {}

impl WaitStrategy for BusySpin {
    const KIND: WaitKind = WaitKind::BusySpin;

    #[inline]
    fn wait_for<R>(&self, mut check: impl FnMut() -> Option<R>) -> R {
        let mut spins = 0u32;
        loop {
            if let Some(r) = check() {
                return r;
            }
            spins += 1;
            if spins % Self::YIELD_EVERY == 0 {
                yield_now();
            } else {
                spin_loop();
            }
        }
    }

    #[inline(always)]
    fn notify(&self) {}
}

/// A wait strategy chosen by name at run time; dispatch to the generic code happens once,
/// outside any loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WaitKind {
    /// [`Blocking`]
    Blocking,
    /// [`Sleeping`]
    Sleeping,
    /// [`Yielding`]
    Yielding,
    /// [`BusySpin`]
    BusySpin,
}

impl WaitKind {
    /// Every strategy, in the order above.
    pub const ALL: [WaitKind; 4] =
        [WaitKind::Blocking, WaitKind::Sleeping, WaitKind::Yielding, WaitKind::BusySpin];

    /// The name `FromStr` accepts: "blocking", "sleeping", "yielding", "busy-spin".
    pub const fn name(self) -> &'static str {
        match self {
            WaitKind::Blocking => "blocking",
            WaitKind::Sleeping => "sleeping",
            WaitKind::Yielding => "yielding",
            WaitKind::BusySpin => "busy-spin",
        }
    }
}

impl fmt::Display for WaitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown wait-strategy name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWaitKind(pub String);

impl fmt::Display for UnknownWaitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let valid: Vec<&str> = WaitKind::ALL.iter().map(|k| k.name()).collect();
        write!(f, "unknown wait strategy {:?}; valid: {}", self.0, valid.join(", "))
    }
}

impl std::error::Error for UnknownWaitKind {}

impl FromStr for WaitKind {
    type Err = UnknownWaitKind;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        WaitKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| UnknownWaitKind(s.to_string()))
    }
}
