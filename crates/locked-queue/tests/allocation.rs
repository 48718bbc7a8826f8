//! The allocation guarantee, counted: one node per successful insertion, none for an `offer`
//! that fails fast on a full queue, none on the take side, and none per message in the batch
//! path. Counted per thread by a wrapper around the system allocator.

use locked_queue::{LinkedBlockingQueue, OfferError};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
    static FREES: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call unchanged to `System`, which upholds `GlobalAlloc`'s contract;
// the only addition is a thread-local counter bump (const-initialised: it never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as ours: `layout` has non-zero size, per our caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        FREES.with(|c| c.set(c.get() + 1));
        // SAFETY: `ptr` was allocated by `System` (through us) with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn counts() -> (u64, u64) {
    (ALLOCS.with(Cell::get), FREES.with(Cell::get))
}

#[test]
fn one_node_per_put_one_free_per_take() {
    let n: u64 = if cfg!(miri) { 200 } else { 50_000 };
    let q = LinkedBlockingQueue::with_capacity(n as usize).unwrap();
    let (a0, f0) = counts();
    for i in 0..n {
        q.put(i).unwrap();
    }
    let (a1, f1) = counts();
    assert_eq!((a1 - a0, f1 - f0), (n, 0), "put: exactly one allocation (its node) each");

    // Full: offer fails before allocating, as Java's fast path.
    assert_eq!(q.offer(u64::MAX), Err(OfferError::Full(u64::MAX)));
    assert_eq!(counts(), (a1, f1), "a failed offer on a full queue allocates nothing");

    for i in 0..n / 2 {
        assert_eq!(q.take(), Some(i));
    }
    let (a2, f2) = counts();
    assert_eq!((a2 - a1, f2 - f1), (0, n / 2), "take: no allocation, frees the old head");

    let mut sum = 0;
    let drained = q.drain_with(usize::MAX, |v| sum += v);
    assert_eq!(drained as u64, n - n / 2);
    assert_eq!(sum, (n / 2..n).sum::<u64>());
    let (a3, f3) = counts();
    assert_eq!((a3 - a2, f3 - f2), (0, n - n / 2), "drain: no allocation, one free per element");

    // A put refused by a closed queue allocated its node first (as Java) and frees it.
    q.close();
    assert!(q.put(1).is_err());
    let (a4, f4) = counts();
    assert_eq!((a4 - a3, f4 - f3), (1, 1));
    drop(q);
    assert_eq!(counts().1 - f4, 1, "dropping the empty queue frees the dummy head");
}
