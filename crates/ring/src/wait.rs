//! Wait strategies: how a consumer waits for data and a producer waits for room.
//!
//! The four strategies of the LMAX Disruptor (`com.lmax.disruptor.*WaitStrategy`), plus
//! [`JavaBlocking`], a literal port of Java's `BlockingWaitStrategy` kept beside the
//! ring's own [`Blocking`] so that the lab can tell what the port gains from the language
//! (the same algorithm in both languages) from what it gains from waiting differently
//! ([`Blocking`] against [`JavaBlocking`] in the same run). The ring is generic over
//! [`WaitStrategy`], so the hot loops are monomorphised per strategy; [`WaitKind`] names
//! them for run-time selection (the lab's `--wait` option).
//!
//! A ring holds two instances: one the consumer waits on for data (producers
//! [`notify`](WaitStrategy::notify) it after publishing) and one producers wait on for room
//! (the consumer [`notify_room`](WaitStrategy::notify_room)s it after each batch). Only
//! [`Blocking`] and [`JavaBlocking`] do anything in `notify`, and only [`Blocking`] in
//! `notify_room`; the others poll. Producers waiting for room do not use the other
//! strategies' waits: they spin briefly, then park for short spells, as Java's sequencers
//! do (see [`WaitStrategy::wait_for_room`]; [`JavaBlocking`] parks exactly as Java's do);
//! only [`Blocking`] sleeps on its condition variable.

use crate::loom::{
    park_for_room, park_nanos_1, sleep_briefly, spin_loop, yield_now, AtomicBool, Condvar, Mutex,
    Ordering,
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

    /// How a producer waits for room in a full ring; `park` says whether the ring is large
    /// enough to park in (at least 16Ki slots). By default a few spins, then 100 µs parks
    /// (yields in smaller rings), whatever the strategy, as in Java; [`Blocking`] waits on
    /// its condition variable instead (the consumer notifies after each batch), so that
    /// loom can model it.
    #[inline]
    fn wait_for_room<R>(&self, check: impl FnMut() -> Option<R>, park: bool) -> R {
        wait_for_room(check, park)
    }

    /// How a consumer waits until sequence `next` is published: `claimed` says whether a
    /// producer has claimed `next` (the claim cursor passed it; with one producer, its
    /// published cursor), `check` is as [`wait_for`](WaitStrategy::wait_for)'s (published
    /// data, halt, close). By default `wait_for(check)`: the ring's own strategies wait for
    /// the publication itself. [`JavaBlocking`] waits on the claim cursor first, as Java's
    /// `BlockingWaitStrategy` does behind a `MultiProducerSequencer`.
    #[inline]
    fn wait_for_data<R>(
        &self,
        claimed: impl FnMut() -> bool,
        check: impl FnMut() -> Option<R>,
    ) -> R {
        let _ = claimed;
        self.wait_for(check)
    }

    /// Called after a change that may satisfy a waiter's `check` (published data, freed
    /// room, close, halt). Must follow the change in program order.
    fn notify(&self);

    /// Called, instead of [`notify`](WaitStrategy::notify), after a change that may let a
    /// producer waiting in [`wait_for_room`](WaitStrategy::wait_for_room) go on (released
    /// slots, consumers gone). By default the same as `notify`; a strategy whose producers
    /// poll for room (never sleep until notified) may skip it.
    #[inline]
    fn notify_room(&self) {
        self.notify();
    }
}

/// Fruitless spins of a producer waiting for room before it parks (or yields).
pub(crate) const ROOM_SPINS: u32 = 16;

/// The smallest ring whose producers park while they wait for room; in smaller ones they
/// yield. A park lasts its 100 µs plus the kernel's timer slack, and a ring of 16Ki slots
/// holds about that much of the consumer's work (docs/design-figures.md), so in a smaller
/// one a parked producer could leave the consumer idle.
pub(crate) const ROOM_PARK_MIN_SIZE: u64 = 16 * 1024;

/// A producer's wait for room in a full ring with every strategy but [`Blocking`], as in
/// Java (the sequencers' `next()` calls `LockSupport.parkNanos(1)` in a loop and never the
/// wait strategy): [`ROOM_SPINS`] spins, then, per try, a 100 µs park (rings of at least
/// [`ROOM_PARK_MIN_SIZE`] slots) or a yield (smaller ones). A full ring means the consumer
/// is behind: a parked producer leaves it the core, where a spinning or yielding one (more
/// threads than cores) keeps taking turns on it, and a condition variable would make the
/// consumer pay a wake-up syscall per batch. 100 µs, longer than Java's `parkNanos(1)`
/// (which lasts the timer slack, 50 µs by default on Linux): with more producers than
/// cores, the longer park cut their context switches at the same throughput
/// (docs/design-figures.md).
#[inline]
pub(crate) fn wait_for_room<R>(mut check: impl FnMut() -> Option<R>, park: bool) -> R {
    for _ in 0..ROOM_SPINS {
        if let Some(r) = check() {
            return r;
        }
        spin_loop();
    }
    loop {
        if let Some(r) = check() {
            return r;
        }
        if park {
            park_for_room();
        } else {
            yield_now();
        }
    }
}

/// Mutex + condition variable: waiters sleep in the kernel until notified. The seed's
/// choice (`BlockingWaitStrategy`). Java's takes the lock and signals on every publish;
/// this one keeps the mutex + condvar for the actual sleep but avoids paying for it when
/// nobody sleeps, in four measured ways:
/// * `notify` locks only when a sleeper has asked for a wake-up since the last one (a
///   `need_wake` flag, as `LiteBlockingWaitStrategy`'s `signalNeeded`). A waiter sets the
///   flag, then a heavy barrier, then re-checks; a notifier makes its change, then a light
///   barrier, then reads the flag. The pair orders "ask, check" against "change, read
///   flag", so one side always sees the other. The first notifier clears the flag under
///   the lock and signals: the publishes that follow, before the sleeper has even woken,
///   pay a barrier and a load, not a lock and a futex call each (with a plain waiter count
///   they did, and one producer's throughput collapsed; figures: docs/design-figures.md).
/// * The waiter takes the lock only after that first check, so the heavy barrier runs
///   outside it: under the lock it checks once more and sleeps only while the flag is
///   still set. A notifier that saw the flag and takes the lock first has made its change
///   before it unlocked, so the check under the lock sees it; one that comes later finds
///   the waiter inside `cond.wait`. (With the barrier under the lock, a producer that saw
///   the flag blocked on the mutex for the barrier's length and then slept: the handoff
///   settled into both threads sleeping, turn about, every few thousand messages.)
/// * The barriers are asymmetric on Linux: the waiter, about to sleep anyway, calls
///   `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, which runs a full fence on every CPU
///   running a thread of this process; the notifier then needs only a compiler fence (the
///   `barrier()` / `membarrier()` pairing of the man page, as userspace RCU uses it).
///   A `SeqCst` fence per publish made the producer wait for its slot's cache line on every
///   message, where most of the send path's time went (figures: docs/design-figures.md).
///   Where membarrier is unavailable (other systems, an old kernel, loom, Miri) both sides
///   use `fence(SeqCst)`.
/// * A waiter first spins [`Blocking::SPINS`] times (a few microseconds) before it
///   sleeps, as adaptive mutexes do, so a consumer that keeps catching up with its
///   producer does not sleep after nearly every message.
#[derive(Debug)]
pub struct Blocking {
    need_wake: AtomicBool,
    lock: Mutex<()>,
    cond: Condvar,
}

impl Default for Blocking {
    fn default() -> Self {
        // Decide the barrier kind before any producer or consumer uses this strategy.
        barrier::init();
        Blocking {
            need_wake: AtomicBool::new(false),
            lock: Mutex::default(),
            cond: Condvar::default(),
        }
    }
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
        loop {
            self.need_wake.store(true, Ordering::Relaxed);
            barrier::heavy();
            if let Some(r) = check() {
                return r;
            }
            let guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(r) = check() {
                return r;
            }
            if !self.need_wake.load(Ordering::Relaxed) {
                continue;
            }
            drop(self.cond.wait(guard).unwrap_or_else(|p| p.into_inner()));
        }
    }

    #[inline]
    fn wait_for_room<R>(&self, check: impl FnMut() -> Option<R>, _park: bool) -> R {
        self.wait_for(check)
    }

    #[inline]
    fn notify(&self) {
        barrier::light();
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

/// The two halves of [`Blocking`]'s store-then-load ("Dekker") pairing: `light` on the
/// notifier's hot path, `heavy` on the waiter's way to sleep. Each orders the caller's
/// earlier stores before its later loads against the other side.
mod barrier {
    #[cfg(all(target_os = "linux", not(loom), not(miri)))]
    mod imp {
        use crate::loom::fence;
        use std::sync::atomic::{compiler_fence, AtomicU8, Ordering};
        use std::sync::Once;

        const UNKNOWN: u8 = 0;
        const MEMBARRIER: u8 = 1;
        const FENCE: u8 = 2;
        const CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
        const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

        /// Set once, by `init`, before any `Blocking` exists; never changes after.
        static MODE: AtomicU8 = AtomicU8::new(UNKNOWN);
        static INIT: Once = Once::new();

        fn membarrier(cmd: libc::c_int) -> bool {
            // SAFETY: membarrier(2) takes two integers and touches no memory of ours; an
            // unknown command or an old kernel returns -1 (ENOSYS / EINVAL), nothing else.
            unsafe { libc::syscall(libc::SYS_membarrier, cmd, 0 as libc::c_int) == 0 }
        }

        pub(crate) fn init() {
            INIT.call_once(|| {
                let ok = membarrier(CMD_REGISTER_PRIVATE_EXPEDITED);
                MODE.store(if ok { MEMBARRIER } else { FENCE }, Ordering::Release);
            });
        }

        #[inline(always)]
        pub(crate) fn light() {
            // Only once registration succeeded does `heavy` always run membarrier; before
            // `init` (never the case for a constructed `Blocking`) the full fence is safe.
            if MODE.load(Ordering::Relaxed) == MEMBARRIER {
                compiler_fence(Ordering::SeqCst);
            } else {
                fence(Ordering::SeqCst);
            }
        }

        #[cold]
        pub(crate) fn heavy() {
            init();
            fence(Ordering::SeqCst);
            if MODE.load(Ordering::Acquire) == MEMBARRIER && !membarrier(CMD_PRIVATE_EXPEDITED) {
                // Registered, so this cannot fail; were it to, a notifier might miss this
                // waiter. Better loud than a hang.
                panic!("membarrier(PRIVATE_EXPEDITED) failed after registration");
            }
        }
    }

    #[cfg(not(all(target_os = "linux", not(loom), not(miri))))]
    mod imp {
        use crate::loom::{fence, Ordering};

        pub(crate) fn init() {}

        #[inline(always)]
        pub(crate) fn light() {
            fence(Ordering::SeqCst);
        }

        pub(crate) fn heavy() {
            fence(Ordering::SeqCst);
        }
    }

    pub(crate) use imp::{heavy, init, light};
}

/// A literal port of the LMAX Disruptor 3.4's `BlockingWaitStrategy` (the one seed 001
/// ran; `com/lmax/disruptor/BlockingWaitStrategy.java`, read from the Disruptor sources and
/// checked against the bytecode of the 3.4.4 jar Bus.java runs): a `ReentrantLock` and one
/// `Condition`, with none of [`Blocking`]'s departures.
/// * Waiter (`waitFor`, [`wait_for_data`](WaitStrategy::wait_for_data)): one look at the
///   cursor without the lock; then `lock; while cursor < sequence { checkAlert;
///   processorNotifyCondition.await } unlock`. No spin before sleeping. The cursor is the
///   sequencer's: with `MultiProducerSequencer` (the ring's MULTI, seed 001's), the *claim*
///   cursor, which runs ahead of the published slots. So once a producer has claimed the
///   sequence the waiter never sleeps: `ProcessingSequenceBarrier.waitFor` then asks the
///   sequencer for the highest published sequence (`getHighestPublishedSequence`, the
///   availability buffer's scan), and while the claimed slot is not yet published the
///   `BatchEventProcessor` goes straight back to `waitFor`, which returns at once: a busy
///   wait, for as long as the claiming producer takes to publish (descheduled, where
///   threads outnumber cores). Here `claimed` is the cursor test, `check` the barrier's
///   `checkAlert` (halt, close) and availability scan, and a spin hint stands for the trip
///   through the processor's loop (Java's has no hint; it stores its sequence instead).
///   With one producer the cursor is the published one, and the busy phase never comes.
/// * Notifier (`signalAllWhenBlocking`, which `publish` calls after every publish):
///   `lock; processorNotifyCondition.signalAll(); unlock`, whether or not anyone waits.
/// * Producers waiting for room: the strategy is not asked. Java's `MultiProducerSequencer.
///   next()` (and `SingleProducerSequencer.next()`) re-reads the gating sequences and calls
///   `LockSupport.parkNanos(1)` in a loop, with no spin first and whatever the ring size;
///   so does [`wait_for_room`](WaitStrategy::wait_for_room) here, and the consumer's
///   [`notify_room`](WaitStrategy::notify_room) does nothing (Java's consumers signal
///   nobody).
///
/// `signalAll` on a `Condition` whose queue is empty does nothing (AQS's `ConditionObject`
/// looks at its first waiter, under the lock), whereas std's `Condvar::notify_all` makes a
/// `futex` wake call every time. So that the port pays what Java pays, the mutex guards
/// the number of threads in `cond.wait` (the length of Java's condition queue) and
/// `notify` calls `notify_all` only when it is not zero; the lock is still taken on every
/// publish. (Calling `notify_all` every time cost the port a system call per message:
/// figures in docs/design-figures.md.)
///
/// No lost wake-up: a notifier makes its change (a claim, then a `Release` store of the
/// availability or the cursor; or the close), then takes the lock. A waiter tests the
/// cursor and checks under the lock, counts itself and stays under it until `cond.wait`
/// releases it atomically. If the notifier's critical section comes first, the waiter's
/// tests (after its lock) see the change: the claim and the publish come before the
/// notifier's unlock, so the waiter's lock orders them before its loads; if the waiter's
/// comes first, the notifier sees the count and its `notify_all` finds the waiter
/// waiting. A claim whose publish has not come yet keeps the waiter awake (busy), so the
/// publish's notification is not needed to end that wait. Java's
/// `dependentSequence` spin, which follows the wait, is for handlers behind other
/// handlers; the ring's consumers all follow the cursor.
#[derive(Debug, Default)]
pub struct JavaBlocking {
    /// Threads inside `cond.wait`; changed and read only under this lock.
    waiting: Mutex<u32>,
    cond: Condvar,
}

impl sealed::Sealed for JavaBlocking {}

impl WaitStrategy for JavaBlocking {
    const KIND: WaitKind = WaitKind::JavaBlocking;

    #[inline]
    fn wait_for<R>(&self, mut check: impl FnMut() -> Option<R>) -> R {
        if let Some(r) = check() {
            return r;
        }
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(r) = check() {
                return r;
            }
            *waiting += 1;
            waiting = self.cond.wait(waiting).unwrap_or_else(|p| p.into_inner());
            *waiting -= 1;
        }
    }

    #[inline]
    fn wait_for_data<R>(
        &self,
        mut claimed: impl FnMut() -> bool,
        mut check: impl FnMut() -> Option<R>,
    ) -> R {
        loop {
            // `BlockingWaitStrategy.waitFor`: sleep while the cursor has not reached it.
            if !claimed() {
                let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
                while !claimed() {
                    if let Some(r) = check() {
                        return r;
                    }
                    *waiting += 1;
                    waiting = self.cond.wait(waiting).unwrap_or_else(|p| p.into_inner());
                    *waiting -= 1;
                }
            }
            // `getHighestPublishedSequence`: claimed, but perhaps not yet published; if not,
            // round again (the processor's loop), awake.
            if let Some(r) = check() {
                return r;
            }
            spin_loop();
        }
    }

    #[inline]
    fn wait_for_room<R>(&self, mut check: impl FnMut() -> Option<R>, _park: bool) -> R {
        loop {
            if let Some(r) = check() {
                return r;
            }
            park_nanos_1();
        }
    }

    #[inline]
    fn notify(&self) {
        let waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        if *waiting > 0 {
            self.cond.notify_all();
        }
    }

    #[inline(always)]
    fn notify_room(&self) {}
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
    /// [`JavaBlocking`]
    JavaBlocking,
}

impl WaitKind {
    /// Every strategy, in the order above.
    pub const ALL: [WaitKind; 5] = [
        WaitKind::Blocking,
        WaitKind::Sleeping,
        WaitKind::Yielding,
        WaitKind::BusySpin,
        WaitKind::JavaBlocking,
    ];

    /// The name `FromStr` accepts: "blocking", "sleeping", "yielding", "busy-spin",
    /// "java-blocking".
    pub const fn name(self) -> &'static str {
        match self {
            WaitKind::Blocking => "blocking",
            WaitKind::Sleeping => "sleeping",
            WaitKind::Yielding => "yielding",
            WaitKind::BusySpin => "busy-spin",
            WaitKind::JavaBlocking => "java-blocking",
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
