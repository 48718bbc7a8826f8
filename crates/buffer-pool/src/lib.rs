//! A size-classed buffer pool, measured against the global allocator: the Rust side of
//! seed 004's `ByteBufAllocatorBenchmark` table (Netty's pooled vs unpooled
//! allocate-and-free of 0, 256, 1024, 4096, 16384 and 65536-byte buffers).
//!
//! # Design
//! * Size classes are powers of two from 64 bytes up to [`MAX_POOLED`] (1 MiB); a request
//!   is rounded up to its class. A request of 0 bytes takes the smallest class, as Netty
//!   hands out a real (empty) buffer for 0.
//! * Each class keeps a free stack of boxed slices. [`Pool::alloc`] pops one (or allocates
//!   when the stack is empty); dropping the [`PooledBuf`] pushes it back. After warm-up an
//!   allocate + free cycle touches no allocator at all: it is two `Vec` operations.
//! * The pool is per thread (`!Sync`, interior mutability through `RefCell`), like Netty's
//!   thread-local caches in front of its arenas; a buffer borrows its pool, so it can't
//!   outlive it or cross threads.
//! * Pooled buffers are **not zeroed** when reused (Netty's pooled buffers aren't either);
//!   the unpooled path, [`unpooled`], returns zeroed memory as Java's `new byte[n]` does.
//!   The report says so, since zeroing is part of what the unpooled side pays.
//! * Larger requests than [`MAX_POOLED`] bypass the pool (Netty's "huge" allocations).
//!
//! # Guarantees
//! No unsafe code. Each class's free stack is capped at [`Pool::with_limit`] buffers
//! (default 64), so a burst does not keep memory forever.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// The smallest size class, in bytes.
pub const MIN_CLASS: usize = 64;
/// Requests above this size are not pooled.
pub const MAX_POOLED: usize = 1 << 20;
const CLASSES: usize = (MAX_POOLED / MIN_CLASS).trailing_zeros() as usize + 1;

/// The buffer sizes of seed 004's table.
pub const SEED_SIZES: [usize; 6] = [0, 256, 1024, 4096, 16384, 65536];

/// A per-thread pool of byte buffers in power-of-two size classes.
pub struct Pool {
    free: RefCell<Vec<Vec<Box<[u8]>>>>,
    limit: usize,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let free = self.free.borrow();
        f.debug_struct("Pool")
            .field("limit", &self.limit)
            .field("cached", &free.iter().map(Vec::len).sum::<usize>())
            .finish()
    }
}

impl Default for Pool {
    fn default() -> Self {
        Pool::with_limit(64)
    }
}

/// The class index and class size for a request of `len` bytes, or `None` above
/// [`MAX_POOLED`].
pub fn size_class(len: usize) -> Option<(usize, usize)> {
    if len > MAX_POOLED {
        return None;
    }
    let size = len.max(MIN_CLASS).next_power_of_two();
    Some(((size / MIN_CLASS).trailing_zeros() as usize, size))
}

impl Pool {
    /// A pool that caches at most `limit` free buffers per size class.
    pub fn with_limit(limit: usize) -> Self {
        Pool { free: RefCell::new((0..CLASSES).map(|_| Vec::new()).collect()), limit }
    }

    /// A buffer of `len` bytes (its capacity is the class size). Reused memory is not
    /// zeroed.
    pub fn alloc(&self, len: usize) -> PooledBuf<'_> {
        let storage = match size_class(len) {
            Some((class, size)) => {
                self.free.borrow_mut()[class].pop().unwrap_or_else(|| vec![0u8; size].into())
            }
            None => vec![0u8; len].into(),
        };
        PooledBuf { pool: self, storage: Some(storage), len }
    }

    /// Free buffers cached now, over all classes.
    pub fn cached(&self) -> usize {
        self.free.borrow().iter().map(Vec::len).sum()
    }

    fn release(&self, storage: Box<[u8]>) {
        if let Some((class, size)) = size_class(storage.len()) {
            if size == storage.len() {
                let mut free = self.free.borrow_mut();
                if free[class].len() < self.limit {
                    free[class].push(storage);
                }
            }
        }
    }
}

/// A buffer on loan from a [`Pool`]; goes back to it when dropped.
pub struct PooledBuf<'a> {
    pool: &'a Pool,
    storage: Option<Box<[u8]>>,
    len: usize,
}

impl fmt::Debug for PooledBuf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PooledBuf")
            .field("len", &self.len)
            .field("class", &self.capacity())
            .finish()
    }
}

impl PooledBuf<'_> {
    /// The size class this buffer came from.
    pub fn capacity(&self) -> usize {
        self.storage.as_ref().map_or(0, |s| s.len())
    }
}

impl Deref for PooledBuf<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.storage {
            Some(s) => &s[..self.len],
            None => &[],
        }
    }
}

impl DerefMut for PooledBuf<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Some(s) => &mut s[..self.len],
            None => &mut [],
        }
    }
}

impl Drop for PooledBuf<'_> {
    fn drop(&mut self) {
        if let Some(s) = self.storage.take() {
            self.pool.release(s);
        }
    }
}

/// The unpooled path: a zeroed buffer from the global allocator (Java's `new byte[n]`).
pub fn unpooled(len: usize) -> Vec<u8> {
    vec![0u8; len]
}

/// One allocate + touch + free through the pool; returns a byte so the work is observable.
#[inline]
pub fn pooled_cycle(pool: &Pool, len: usize) -> u8 {
    let mut b = pool.alloc(len);
    if let Some(x) = b.first_mut() {
        *x = x.wrapping_add(1);
    }
    std::hint::black_box(&mut *b);
    b.first().copied().unwrap_or(0)
}

/// One allocate + touch + free through the global allocator.
#[inline]
pub fn unpooled_cycle(len: usize) -> u8 {
    let mut b = unpooled(len);
    if let Some(x) = b.first_mut() {
        *x = x.wrapping_add(1);
    }
    std::hint::black_box(&mut b);
    b.first().copied().unwrap_or(0)
}

/// Runs `n` allocate + free cycles of `len` bytes, pooled when `pool` is given; returns a
/// checksum of the touched bytes (so the loop can't be elided). The lab times this.
pub fn run_cycles(pool: Option<&Pool>, len: usize, n: u64) -> u64 {
    let mut acc = 0u64;
    match pool {
        Some(p) => {
            for _ in 0..n {
                acc = acc.wrapping_add(u64::from(pooled_cycle(p, len)));
            }
        }
        None => {
            for _ in 0..n {
                acc = acc.wrapping_add(u64::from(unpooled_cycle(len)));
            }
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_and_cap() {
        assert_eq!(size_class(0), Some((0, 64)));
        assert_eq!(size_class(64), Some((0, 64)));
        assert_eq!(size_class(65), Some((1, 128)));
        assert_eq!(size_class(65536), Some((10, 65536)));
        assert_eq!(size_class(MAX_POOLED), Some((CLASSES - 1, MAX_POOLED)));
        assert_eq!(size_class(MAX_POOLED + 1), None);
    }

    #[test]
    fn buffers_are_reused_not_reallocated() {
        let pool = Pool::default();
        let first = {
            let b = pool.alloc(1000);
            assert_eq!(b.len(), 1000);
            assert_eq!(b.capacity(), 1024);
            b.as_ptr()
        };
        assert_eq!(pool.cached(), 1);
        let again = pool.alloc(1024);
        assert_eq!(again.as_ptr(), first, "the same class reuses the cached buffer");
        assert_eq!(pool.cached(), 0);
    }

    #[test]
    fn zero_length_and_huge_requests_work() {
        let pool = Pool::default();
        assert_eq!(pooled_cycle(&pool, 0), 0);
        assert_eq!(pool.cached(), 1);
        let huge = pool.alloc(MAX_POOLED + 1);
        assert_eq!(huge.len(), MAX_POOLED + 1);
        drop(huge);
        assert_eq!(pool.cached(), 1, "huge buffers are not cached");
    }

    #[test]
    fn the_cache_is_bounded() {
        let pool = Pool::with_limit(2);
        let bufs: Vec<_> = (0..5).map(|_| pool.alloc(256)).collect();
        drop(bufs);
        assert_eq!(pool.cached(), 2);
    }
}
