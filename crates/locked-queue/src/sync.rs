//! The primitives the queue synchronises with, swapped for loom's under `cfg(loom)` (as
//! `ring`'s `loom` module does), so the model checker sees every lock, condvar wait, atomic
//! of the real code. Outside loom these are plain re-exports of std's types: the
//! queue uses them directly, with no wrapper in between.

#[cfg(not(loom))]
pub(crate) use std::{
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    sync::{Condvar, Mutex, MutexGuard},
};

#[cfg(loom)]
pub(crate) use loom::{
    sync::atomic::Ordering,
    sync::{Condvar, Mutex, MutexGuard},
};

#[cfg(loom)]
pub(crate) use seq_cst::{AtomicBool, AtomicUsize};

/// loom's atomics, with a `fence(SeqCst)` before every `SeqCst` access.
///
/// loom treats a `SeqCst` load, store or read-modify-write as `AcqRel` (loom's README,
/// "Unsupported features"; tokio-rs/loom#180), so it reports the `not_empty` handshake (a
/// Dekker pattern: each side writes one variable, then reads the other, all `SeqCst`) as a
/// lost wake-up that C++20's single total order `S` rules out; without this module the
/// models fail at once. loom does model `fence(SeqCst)`, so each `SeqCst` access here is
/// preceded by one (the leading-fence mapping of SC atomics, as POWER's `sync; ld`). Between
/// a thread's `SeqCst` write and its later `SeqCst` read there is then a fence, and of two
/// such fences the one earlier in `S` makes its side's write visible to the other side's
/// read: the store-buffering guarantee the handshake relies on. A modelling choice, not a
/// full model of SC accesses; a `Relaxed`/`Acquire` access gets no fence, so a side weakened
/// to one still fails the models. Other orderings pass through unchanged.
#[cfg(loom)]
mod seq_cst {
    use loom::sync::atomic::{self, fence, Ordering};

    #[inline]
    fn lead(order: Ordering) {
        if order == Ordering::SeqCst {
            fence(Ordering::SeqCst);
        }
    }

    macro_rules! atomic {
        ($name:ident, $t:ty) => {
            #[derive(Debug)]
            pub(crate) struct $name(atomic::$name);

            impl $name {
                pub(crate) fn new(v: $t) -> Self {
                    $name(atomic::$name::new(v))
                }

                #[track_caller]
                pub(crate) fn load(&self, order: Ordering) -> $t {
                    lead(order);
                    self.0.load(order)
                }
            }
        };
    }

    atomic!(AtomicBool, bool);
    atomic!(AtomicUsize, usize);

    impl AtomicBool {
        #[track_caller]
        pub(crate) fn store(&self, v: bool, order: Ordering) {
            lead(order);
            self.0.store(v, order)
        }
    }

    impl AtomicUsize {
        #[track_caller]
        pub(crate) fn fetch_add(&self, v: usize, order: Ordering) -> usize {
            lead(order);
            self.0.fetch_add(v, order)
        }

        #[track_caller]
        pub(crate) fn fetch_sub(&self, v: usize, order: Ordering) -> usize {
            lead(order);
            self.0.fetch_sub(v, order)
        }
    }
}
