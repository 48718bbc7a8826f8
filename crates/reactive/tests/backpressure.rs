//! Seed 000's corrected on_backpressure_buffer case, with exact counts.
//!
//! * A synchronous `request(1)` loop drains the buffer as fast as the range fills it: a
//!   capacity-10 buffer never overflows, whatever the policy.
//! * `publish_on(.., 1)` behind the buffer is an asynchronous boundary that takes one
//!   element and requests the next only when its subscriber consumes: the range's 1000
//!   elements pour into the buffer at once. Element 0 goes into publish_on's queue,
//!   1..=10 fill the buffer, and the other 989 overflow. The same on every pooled
//!   scheduler (`common::pools`).

mod common;

use common::Recorder;
use reactive::{Error, Flux, Overflow, UNBOUNDED};
use std::time::Duration;

/// The seed's 1000 elements (fewer under Miri; the expected counts follow from `N`).
const N: u64 = if cfg!(miri) { 100 } else { 1000 };
const CAP: usize = 10;

#[test]
fn synchronous_request_one_loop_never_overflows() {
    for policy in [Overflow::Error, Overflow::DropLatest, Overflow::DropOldest] {
        let f = Flux::range(0, N).on_backpressure_buffer(CAP, policy);
        let overflows = f.overflow_counter();
        let (rec, log) = Recorder::new(Some(1));
        f.subscribe(rec.per_next(1));
        let l = log.snapshot();
        assert_eq!(l.items, (0..N).collect::<Vec<_>>(), "{policy:?}");
        assert_eq!((l.completes, l.errors.len()), (1, 0), "{policy:?}");
        assert_eq!(overflows.get(), 0, "{policy:?}: a synchronous request(1) loop never fills it");
    }
}

/// Runs range(N) → buffer(CAP, policy) → publish_on(pool, 1) → a subscriber that
/// requests nothing until the range has finished, then everything.
fn through_async_boundary(pool: common::Pool, policy: Overflow) -> (common::Log, u64) {
    let s = pool.build();
    let f = Flux::range(0, N).on_backpressure_buffer(CAP, policy);
    let overflows = f.overflow_counter();
    let (rec, log) = Recorder::new(None);
    let (rec, handles) = rec.detached();
    use reactive::Subscription as _;
    // The range is synchronous: subscribe returns once all N elements went into the buffer.
    f.publish_on(&s, 1).subscribe(rec);
    let after_range = overflows.get();
    handles.recv().unwrap().request(UNBOUNDED);
    let l = log.wait_for("the end", |l| l.terminals() > 0);
    std::thread::sleep(Duration::from_millis(if cfg!(miri) { 5 } else { 20 }));
    assert_eq!(overflows.get(), after_range, "no overflow after the range finished");
    common::dispose(&pool.to_string(), &s);
    assert!(l.violations.is_empty(), "{pool}: {:?}", l.violations);
    (log.snapshot(), after_range)
}

#[test]
fn publish_on_prefetch_1_behind_the_buffer_overflows_at_once() {
    let dropped = N - 1 - CAP as u64; // 989
    for p in common::pools() {
        let (l, overflows) = through_async_boundary(p, Overflow::DropLatest);
        assert_eq!(overflows, dropped, "{p}");
        let mut want = vec![0];
        want.extend(1..=CAP as u64);
        assert_eq!(l.items, want, "{p}: DropLatest keeps the first ten");
        assert_eq!(l.completes, 1, "{p}");

        let (l, overflows) = through_async_boundary(p, Overflow::DropOldest);
        assert_eq!(overflows, dropped, "{p}");
        let mut want = vec![0];
        want.extend(N - CAP as u64..N);
        assert_eq!(l.items, want, "{p}: DropOldest keeps the last ten");
        assert_eq!(l.completes, 1, "{p}");

        let (l, overflows) = through_async_boundary(p, Overflow::Error);
        assert_eq!(overflows, 1, "{p}: the first overflow ends the stream");
        assert_eq!(l.items, vec![0], "{p}: the error cuts ahead of the buffered elements");
        assert_eq!(l.errors, vec![Error::Overflow { capacity: CAP }], "{p}");
        assert_eq!(l.completes, 0, "{p}");
    }
}

#[test]
fn buffer_handles_lent_subscription_calls() {
    // A detached cancel from the consumer side stops the range behind the buffer.
    let f = Flux::range(0, u64::MAX).on_backpressure_buffer(4, Overflow::DropLatest);
    let (rec, log) = Recorder::unbounded();
    f.subscribe(rec.cancel_after(3));
    let l = log.snapshot();
    assert_eq!(l.items, vec![0, 1, 2]);
    assert_eq!(l.terminals(), 0);
    // request(0) through the buffer is an error.
    let (rec, log) = Recorder::new(Some(0));
    Flux::range(0, 5).on_backpressure_buffer(4, Overflow::DropLatest).subscribe(rec);
    assert_eq!(log.snapshot().errors, vec![Error::NonPositiveRequest]);
}
