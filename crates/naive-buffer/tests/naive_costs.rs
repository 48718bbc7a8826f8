//! What makes the buffer naive, shown rather than claimed: with no consumer it grows without
//! bound, and every message costs a heap allocation. Allocations are counted per thread by a
//! wrapper around the system allocator, so other tests' threads do not disturb the counts.

use handoff::{Consumer, Handoff, Message, Producer, TrySendError};
use naive_buffer::NaiveHandoff;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
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
        // SAFETY: `ptr` was allocated by `System` (through us) with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: `ptr`/`layout` came from `System` through us; `new_size` is valid per our
        // caller.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

fn n() -> u64 {
    if cfg!(miri) {
        300
    } else {
        100_000
    }
}

#[test]
fn grows_without_bound_when_nobody_consumes() {
    // Whatever capacity is asked for, there is none: a fast producer is never held back.
    assert_eq!(NaiveHandoff::new().capacity(), None);
    let (mut txs, rx) = NaiveHandoff::new().open::<Message<64>>(1).unwrap();
    let n = n();
    let mut last = 0;
    for seq in 0..n {
        match txs[0].try_send(Message::new(0, seq)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => panic!("naive buffer reported Full at {seq}"),
            Err(TrySendError::Closed(_)) => panic!("closed while open at {seq}"),
        }
        if seq % 1000 == 999 {
            let d = rx.depth();
            assert!(d > last, "depth should keep growing: {d} after {last}");
            last = d;
        }
    }
    assert_eq!(rx.depth(), n as usize, "every message is held: no bound, no backpressure");
}

#[test]
fn allocates_once_per_message() {
    let (mut txs, mut rx) = NaiveHandoff::new().open::<Message<16>>(1).unwrap();
    let n = n();
    let before = allocs();
    for seq in 0..n {
        txs[0].send(Message::new(0, seq)).unwrap();
    }
    let sent_allocs = allocs() - before;
    // One Box per message, plus the Vec regrowing by doubling (about log2 n reallocations).
    let regrowth = 64 - n.leading_zeros() as u64 + 2;
    assert!(
        sent_allocs >= n && sent_allocs <= n + regrowth,
        "{sent_allocs} allocations for {n} sends: expected one per message + at most {regrowth}"
    );
    // Receiving frees the boxes and allocates nothing.
    let before = allocs();
    let mut got = 0;
    while got < n {
        got += rx.recv_batch(4096, |m| assert_eq!(m.seq, m.seq)) as u64;
    }
    assert_eq!(allocs() - before, 0, "the consumer side allocates nothing");
    // Each swap leaves an empty Vec without capacity: the next burst regrows it from zero.
    let before = allocs();
    for seq in n..n + 100 {
        txs[0].send(Message::new(0, seq)).unwrap();
    }
    let burst = allocs() - before;
    assert!(burst >= 100 + 3, "{burst} allocations for 100 sends after a swap: box + regrowth");
}
