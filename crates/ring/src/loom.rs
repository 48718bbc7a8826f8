//! The concurrency primitives the ring is built from, swapped for loom's under `cfg(loom)`
//! (tokio's `src/loom/` pattern), so the model checker sees every atomic, cell access,
//! lock and spin of the real code.

#[cfg(not(loom))]
mod imp {
    pub(crate) use std::sync::atomic::{
        fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
    pub(crate) use std::sync::{Condvar, Mutex};

    /// `std::cell::UnsafeCell` with loom's closure-based access API.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        #[inline]
        pub(crate) fn new(v: T) -> Self {
            UnsafeCell(std::cell::UnsafeCell::new(v))
        }

        /// Shared access; the caller argues the absence of concurrent writers.
        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        /// Exclusive access; the caller argues the absence of any concurrent access.
        #[inline(always)]
        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }

    /// One step of a busy wait.
    #[inline(always)]
    pub(crate) fn spin_loop() {
        std::hint::spin_loop();
    }

    /// Gives the CPU away.
    #[inline]
    pub(crate) fn yield_now() {
        std::thread::yield_now();
    }

    /// A short park, as Disruptor's `SleepingWaitStrategy` does with `parkNanos(100)`.
    #[inline]
    pub(crate) fn sleep_briefly() {
        std::thread::sleep(std::time::Duration::from_nanos(100));
    }

    /// A producer's park while it waits for room in a full ring (see `wait::wait_for_room`).
    #[inline]
    pub(crate) fn park_for_room() {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }

    /// Java's `LockSupport.parkNanos(1)`, the Disruptor sequencers' wait for room: a timed
    /// sleep of 1 ns. Both are a timed kernel wait, so both end after the thread's timer
    /// slack (50 µs by default on Linux) rather than after 1 ns.
    #[inline]
    pub(crate) fn park_nanos_1() {
        std::thread::sleep(std::time::Duration::from_nanos(1));
    }

    /// Asks the CPU to fetch the cache line at `p` for writing (x86-64 `prefetchw`): a
    /// hint, a no-op elsewhere and under Miri.
    #[inline(always)]
    pub(crate) fn prefetch_write<T>(p: *const T) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        // SAFETY: `prefetchw` neither reads nor writes memory as the program sees it and
        // never faults, whatever the address; where the CPU lacks it, it decodes as a NOP
        // (Intel SDM, PREFETCHW). It changes no register or flag.
        unsafe {
            std::arch::asm!("prefetchw [{0}]", in(reg) p, options(nostack, preserves_flags, readonly));
        }
        #[cfg(not(all(target_arch = "x86_64", not(miri))))]
        let _ = p;
    }

    pub(crate) use std::thread::{Builder as ThreadBuilder, JoinHandle};
}

#[cfg(loom)]
mod imp {
    pub(crate) use loom::cell::UnsafeCell;
    pub(crate) use loom::sync::atomic::{
        fence, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering,
    };
    pub(crate) use loom::sync::{Condvar, Mutex};

    /// Under loom every spin must yield, or the model never ends.
    #[inline]
    pub(crate) fn spin_loop() {
        loom::thread::yield_now();
    }

    pub(crate) fn yield_now() {
        loom::thread::yield_now();
    }

    pub(crate) fn sleep_briefly() {
        loom::thread::yield_now();
    }

    pub(crate) fn park_for_room() {
        loom::thread::yield_now();
    }

    pub(crate) fn park_nanos_1() {
        loom::thread::yield_now();
    }

    /// A hint the model has nothing to check in.
    pub(crate) fn prefetch_write<T>(_p: *const T) {}

    pub(crate) use loom::thread::{Builder as ThreadBuilder, JoinHandle};
}

pub(crate) use imp::*;
