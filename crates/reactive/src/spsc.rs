//! A bounded lock-free single-producer/single-consumer ring: `publish_on`'s queue.
//!
//! Written here rather than taken from rtrb or crossbeam's `ArrayQueue` because the two
//! roles are not owned handles: in `publish_on` the producer role is "whoever delivers the
//! upstream's `on_next`" (serial by §1.3, possibly on different threads over time) and the
//! consumer role is "whoever holds the WIP counter". An owned `Producer`/`Consumer` pair
//! would have to sit behind a lock; here the caller proves exclusivity instead, which is
//! why `push` and `pop` are `unsafe fn`.
//!
//! Layout as in rtrb: `head` (written by the consumer) and `tail` (written by the producer)
//! on their own cache lines; each side caches the other's index and reloads it only when
//! it seems full (producer) or empty (consumer), so the cross-core traffic is one line
//! transfer per batch, not per element. Positions are unbounded `usize` counters (wrapping);
//! the slot array has a power-of-two length (mask, no division) of at least `capacity`,
//! while fullness is judged against `capacity` itself, so the bound is exact.

use crossbeam_utils::CachePadded;
use std::cell::UnsafeCell;
use std::fmt;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The ring. See the module docs for who may call what.
pub struct SpscRing<T> {
    /// Next position to read; written by the consumer only.
    head: CachePadded<AtomicUsize>,
    /// Next position to write; written by the producer only.
    tail: CachePadded<AtomicUsize>,
    /// The producer's copy of `head`.
    cached_head: CachePadded<UnsafeCell<usize>>,
    /// The consumer's copy of `tail`.
    cached_tail: CachePadded<UnsafeCell<usize>>,
    capacity: usize,
    mask: usize,
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
}

// SAFETY: the ring moves `T`s from one thread to another (so `T: Send`) and never hands
// out `&T`. Shared access to the cells is split by role: slots in `head..tail` belong to
// the consumer, the others to the producer; `cached_head` is touched only by the producer
// and `cached_tail` only by the consumer, and the `unsafe fn`s' contracts make each role
// exclusive. Ownership of a slot passes with the Release store of `tail` (to the consumer)
// or `head` (back to the producer) and the matching Acquire loads.
unsafe impl<T: Send> Sync for SpscRing<T> {}
// SAFETY: owning the ring owns the `T`s in it; sending it sends them (`T: Send`).
unsafe impl<T: Send> Send for SpscRing<T> {}

impl<T> fmt::Debug for SpscRing<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SpscRing")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

impl<T> SpscRing<T> {
    /// A ring holding at most `capacity` elements; `capacity` must be at least 1 (callers
    /// validate and report a configuration error first).
    pub fn new(capacity: usize) -> Self {
        assert!(capacity >= 1, "SpscRing::new: capacity must be at least 1 (callers validate)");
        let slots_len = capacity.next_power_of_two();
        let slots = (0..slots_len).map(|_| UnsafeCell::new(MaybeUninit::uninit())).collect();
        SpscRing {
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            cached_head: CachePadded::new(UnsafeCell::new(0)),
            cached_tail: CachePadded::new(UnsafeCell::new(0)),
            capacity,
            mask: slots_len - 1,
            slots,
        }
    }

    /// The bound.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Elements in the ring now; exact for either role, approximate for anyone else, but
    /// never above `capacity`.
    pub fn len(&self) -> usize {
        let head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        tail.wrapping_sub(head).min(self.capacity)
    }

    /// True when `len() == 0`.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `value`, or gives it back if the ring is full.
    ///
    /// # Safety
    /// No other call to `push` may run at the same time, and every earlier `push` (from
    /// any thread) must happen-before this one: one producer at a time, handed over with
    /// synchronisation (a lock, or the serial signals of §1.3).
    #[inline]
    pub unsafe fn push(&self, value: T) -> Result<(), T> {
        let tail = self.tail.load(Ordering::Relaxed);
        // SAFETY: `cached_head` belongs to the producer role, which the caller holds
        // exclusively (contract above).
        let cached_head = unsafe { &mut *self.cached_head.get() };
        if tail.wrapping_sub(*cached_head) >= self.capacity {
            *cached_head = self.head.load(Ordering::Acquire);
            if tail.wrapping_sub(*cached_head) >= self.capacity {
                return Err(value);
            }
        }
        let slot = &self.slots[tail & self.mask];
        // SAFETY: `tail - head < capacity`, so position `tail` is outside `head..tail`: the
        // slot is the producer's (its previous value, if any, was moved out by a `pop`
        // that published `head` past it, seen through the Acquire load above or earlier).
        unsafe { (*slot.get()).write(value) };
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// Takes the oldest element, if any.
    ///
    /// # Safety
    /// No other call to `pop` may run at the same time, and every earlier `pop` must
    /// happen-before this one (one consumer at a time, e.g. the holder of a WIP counter).
    #[inline]
    pub unsafe fn pop(&self) -> Option<T> {
        let head = self.head.load(Ordering::Relaxed);
        // SAFETY: `cached_tail` belongs to the consumer role, held exclusively (contract).
        let cached_tail = unsafe { &mut *self.cached_tail.get() };
        if head == *cached_tail {
            *cached_tail = self.tail.load(Ordering::Acquire);
            if head == *cached_tail {
                return None;
            }
        }
        let slot = self.slots[head & self.mask].get();
        // SAFETY: `head < tail` (as last loaded with Acquire), so the producer wrote this
        // slot and published it with its Release store of `tail`; the slot is the
        // consumer's until the store of `head` below: no one else accesses it meanwhile.
        let cell = unsafe { &*slot };
        // SAFETY: initialised (see above); read exactly once, as `head` moves past it.
        let value = unsafe { cell.assume_init_read() };
        self.head.store(head.wrapping_add(1), Ordering::Release);
        Some(value)
    }
}

impl<T> Drop for SpscRing<T> {
    fn drop(&mut self) {
        let head = *self.head.get_mut();
        let tail = *self.tail.get_mut();
        let mut pos = head;
        while pos != tail {
            let slot = &mut self.slots[pos & self.mask];
            // SAFETY: positions `head..tail` hold initialised values not yet popped;
            // `&mut self` means no role is active; each is dropped once.
            unsafe { slot.get_mut().assume_init_drop() };
            pos = pos.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fills_to_capacity_exactly_and_keeps_order() {
        for cap in [1usize, 2, 3, 10, 16] {
            let r = SpscRing::new(cap);
            for i in 0..cap {
                // SAFETY: single-threaded test: one producer, one consumer.
                assert!(unsafe { r.push(i) }.is_ok());
            }
            // SAFETY: as above.
            assert_eq!(unsafe { r.push(99) }, Err(99), "cap {cap}");
            assert_eq!(r.len(), cap);
            for i in 0..cap {
                // SAFETY: as above.
                assert_eq!(unsafe { r.pop() }, Some(i));
            }
            // SAFETY: as above.
            assert_eq!(unsafe { r.pop() }, None);
        }
    }

    #[test]
    fn drops_leftovers_once() {
        let counter = Arc::new(());
        let r = SpscRing::new(5);
        for _ in 0..4 {
            // SAFETY: single-threaded test.
            unsafe { r.push(counter.clone()) }.unwrap();
        }
        // SAFETY: single-threaded test.
        drop(unsafe { r.pop() });
        assert_eq!(Arc::strong_count(&counter), 4);
        drop(r);
        assert_eq!(Arc::strong_count(&counter), 1);
    }

    #[test]
    fn two_threads_move_everything_in_order() {
        let n: usize = if cfg!(miri) { 500 } else { 200_000 };
        let r = Arc::new(SpscRing::new(7));
        let p = {
            let r = r.clone();
            std::thread::spawn(move || {
                for i in 0..n {
                    let mut v = i;
                    // SAFETY: this thread is the only producer.
                    while let Err(back) = unsafe { r.push(v) } {
                        v = back;
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut next = 0;
        while next < n {
            // SAFETY: this thread is the only consumer.
            match unsafe { r.pop() } {
                Some(v) => {
                    assert_eq!(v, next);
                    next += 1;
                }
                None => std::thread::yield_now(),
            }
        }
        p.join().unwrap();
    }
}
