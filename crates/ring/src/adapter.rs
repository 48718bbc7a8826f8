//! The ring as a lab [`Handoff`]: producers move messages into slots, the one consumer
//! moves them out. One producer uses the single-producer sequencer, more use the
//! multi-producer one.

use crate::core::{check_size, Core, Multi, Sequencer, Single, Stop, TryClaimError};
use crate::loom::{AtomicUsize, Ordering};
use crate::wait::WaitStrategy;
use handoff::{ConfigError, Handoff, SendError, TryRecvError, TrySendError};
use std::fmt;
use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::sync::Arc;

/// The Disruptor ring as a [`Handoff`], with wait strategy `W`:
/// `RingHandoff::<Blocking>::new(65536)`. Sizes are checked by [`Handoff::open`].
pub struct RingHandoff<W: WaitStrategy> {
    size: usize,
    _wait: PhantomData<fn() -> W>,
}

impl<W: WaitStrategy> RingHandoff<W> {
    /// A ring of `size` slots (must be a power of two; `open` says so otherwise).
    pub fn new(size: usize) -> Self {
        RingHandoff { size, _wait: PhantomData }
    }
}

impl<W: WaitStrategy> fmt::Debug for RingHandoff<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingHandoff").field("size", &self.size).field("wait", &W::KIND).finish()
    }
}

impl<W: WaitStrategy> Clone for RingHandoff<W> {
    fn clone(&self) -> Self {
        RingHandoff::new(self.size)
    }
}

/// The ring plus the producer count; drops messages left in published slots.
struct Shared<T, W: WaitStrategy, S: Sequencer> {
    core: Core<MaybeUninit<T>, W, S>,
    producers: AtomicUsize,
}

impl<T, W: WaitStrategy, S: Sequencer> Drop for Shared<T, W, S> {
    fn drop(&mut self) {
        // Every initialised slot is published and not yet read by the consumer: it lies
        // in `gate..gate + size`. With several producers the published ones need not be
        // contiguous (a producer may have failed after claiming), so test each.
        let next = self.core.gate(0);
        for s in next..next + self.core.size {
            if self.core.seq.is_published(s) {
                // SAFETY: `&mut self`: no other thread can reach the ring.
                let msg = unsafe {
                    self.core.with_slot_mut(s, |m| mem::replace(m, MaybeUninit::uninit()))
                };
                // SAFETY: `s` is published and unread, so its slot held an initialised `T`
                // that nobody else will drop.
                drop(unsafe { msg.assume_init() });
            }
        }
    }
}

enum Tx<T, W: WaitStrategy> {
    Single(Arc<Shared<T, W, Single>>, <Single as Sequencer>::Claim),
    Multi(Arc<Shared<T, W, Multi>>, <Multi as Sequencer>::Claim),
}

/// A producer handle of [`RingHandoff`].
pub struct RingSender<T, W: WaitStrategy>(Tx<T, W>);

enum Rx<T, W: WaitStrategy> {
    Single(Arc<Shared<T, W, Single>>),
    Multi(Arc<Shared<T, W, Multi>>),
}

/// The consumer handle of [`RingHandoff`].
pub struct RingReceiver<T, W: WaitStrategy> {
    rx: Rx<T, W>,
    /// Next sequence to read.
    next: u64,
    /// End of the published run last seen (`next ≤ avail`).
    avail: u64,
}

impl<T, W: WaitStrategy> fmt::Debug for RingSender<T, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Tx::Single(s, c) => f.debug_tuple("RingSender").field(&s.core).field(c).finish(),
            Tx::Multi(s, c) => f.debug_tuple("RingSender").field(&s.core).field(c).finish(),
        }
    }
}

impl<T, W: WaitStrategy> fmt::Debug for RingReceiver<T, W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RingReceiver")
            .field("next", &self.next)
            .field("avail", &self.avail)
            .finish()
    }
}

impl<W: WaitStrategy> Handoff for RingHandoff<W> {
    type Producer<T: Send + 'static> = RingSender<T, W>;
    type Consumer<T: Send + 'static> = RingReceiver<T, W>;

    fn name(&self) -> String {
        format!("ring-{}", W::KIND.name())
    }

    fn capacity(&self) -> Option<usize> {
        Some(self.size)
    }

    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<RingSender<T, W>>, RingReceiver<T, W>), ConfigError> {
        check_size(self.size).map_err(ConfigError::new)?;
        if producers == 0 {
            return Err(ConfigError::new("a ring needs at least one producer (got 0)"));
        }
        let size = self.size as u64;
        // Slots start zeroed, not uninit: writing every slot here touches the ring's pages
        // before the first send, as the Disruptor's factory fills every entry up front;
        // untouched, a large ring takes its page faults inside the sends.
        if producers == 1 {
            let shared = Arc::new(Shared {
                core: Core::new(self.size, 1, MaybeUninit::zeroed),
                producers: AtomicUsize::new(1),
            });
            let tx = RingSender(Tx::Single(shared.clone(), Single::new_claim(size)));
            Ok((vec![tx], RingReceiver { rx: Rx::Single(shared), next: 0, avail: 0 }))
        } else {
            let shared = Arc::new(Shared {
                core: Core::new(self.size, 1, MaybeUninit::zeroed),
                producers: AtomicUsize::new(producers),
            });
            let txs = (0..producers)
                .map(|_| RingSender(Tx::Multi(shared.clone(), Multi::new_claim(size))))
                .collect();
            Ok((txs, RingReceiver { rx: Rx::Multi(shared), next: 0, avail: 0 }))
        }
    }
}

// Always inlined, as the Disruptor API's `publish` is into its caller: the handle's match
// over the two sequencers otherwise makes `send` too large to inline, and a call per message
// (the message spilled to the stack and copied from there into the slot) is a cost that a
// plain loop over the ring does not pay.
#[inline(always)]
fn send<T, W: WaitStrategy, S: Sequencer>(
    sh: &Shared<T, W, S>,
    c: &mut S::Claim,
    msg: T,
) -> Result<(), SendError<T>> {
    match S::claim(&sh.core, c, 1) {
        Ok(seq) => {
            // SAFETY: this handle claimed `seq` and has not published it.
            unsafe { sh.core.with_slot_mut(seq, |m| *m = MaybeUninit::new(msg)) };
            S::publish(&sh.core, c, seq, 1);
            Ok(())
        }
        Err(_) => Err(SendError(msg)),
    }
}

#[inline]
fn try_send<T, W: WaitStrategy, S: Sequencer>(
    sh: &Shared<T, W, S>,
    c: &mut S::Claim,
    msg: T,
) -> Result<(), TrySendError<T>> {
    match S::try_claim(&sh.core, c, 1) {
        Ok(seq) => {
            // SAFETY: this handle claimed `seq` and has not published it.
            unsafe { sh.core.with_slot_mut(seq, |m| *m = MaybeUninit::new(msg)) };
            S::publish(&sh.core, c, seq, 1);
            Ok(())
        }
        Err(TryClaimError::Full) => Err(TrySendError::Full(msg)),
        Err(TryClaimError::Refused(_)) => Err(TrySendError::Closed(msg)),
    }
}

impl<T: Send + 'static, W: WaitStrategy> handoff::Producer<T> for RingSender<T, W> {
    #[inline(always)]
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        match &mut self.0 {
            Tx::Single(sh, c) => send(sh, c, msg),
            Tx::Multi(sh, c) => send(sh, c, msg),
        }
    }

    #[inline]
    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        match &mut self.0 {
            Tx::Single(sh, c) => try_send(sh, c, msg),
            Tx::Multi(sh, c) => try_send(sh, c, msg),
        }
    }

    fn close(&self) {
        match &self.0 {
            Tx::Single(sh, _) => sh.core.close(None),
            Tx::Multi(sh, _) => sh.core.close(None),
        }
    }

    fn depth(&self) -> usize {
        match &self.0 {
            Tx::Single(sh, _) => sh.core.depth(),
            Tx::Multi(sh, _) => sh.core.depth(),
        }
    }
}

impl<T, W: WaitStrategy> Drop for RingSender<T, W> {
    fn drop(&mut self) {
        fn last<T, W: WaitStrategy, S: Sequencer>(sh: &Shared<T, W, S>) {
            if sh.producers.fetch_sub(1, Ordering::AcqRel) == 1 {
                sh.core.close(None);
            }
        }
        match &self.0 {
            Tx::Single(sh, _) => last(sh),
            Tx::Multi(sh, _) => last(sh),
        }
    }
}

/// Moves the message of published, unread sequence `seq` out of its slot.
///
/// # Safety
/// `seq` is published, `seq ≥` the consumer's gate, and it is read only once (the caller
/// advances past it before the gate is released).
#[inline(always)]
unsafe fn take<T, W: WaitStrategy, S: Sequencer>(sh: &Shared<T, W, S>, seq: u64) -> T {
    // SAFETY: by the caller's contract `seq` is published and not released, and this is
    // the only consumer: exclusive access.
    let msg = unsafe { sh.core.with_slot_mut(seq, |m| mem::replace(m, MaybeUninit::uninit())) };
    // SAFETY: a published, unread slot holds an initialised `T`, now moved out exactly
    // once (the caller never reads `seq` again).
    unsafe { msg.assume_init() }
}

/// Releases the consumed prefix on every exit, unwinding included, so a panicking
/// callback neither loses track of moved-out messages nor drops them twice.
///
/// The batch's position is a field of this local guard, not the receiver's `next`: the
/// guard's address never escapes, so the position can stay in a register while the
/// callback runs (a store to the receiver before every callback that may call out of line
/// would be needed if the callback could see it), and reaches `next` once, at the end or
/// while unwinding.
struct Consumed<'a, T, W: WaitStrategy, S: Sequencer> {
    sh: &'a Shared<T, W, S>,
    next: &'a mut u64,
    at: u64,
}

impl<T, W: WaitStrategy, S: Sequencer> Drop for Consumed<'_, T, W, S> {
    #[inline]
    fn drop(&mut self) {
        *self.next = self.at;
        self.sh.core.release(0, self.at);
    }
}

impl<T, W: WaitStrategy> RingReceiver<T, W> {
    #[inline]
    fn recv_on<S: Sequencer>(sh: &Shared<T, W, S>, next: &mut u64, avail: &mut u64) -> Option<T> {
        if *next == *avail {
            match sh.core.wait_for_data(*next) {
                Ok(end) => {
                    handoff::batch_counter!("queue_depth", end - *next);
                    *avail = end;
                }
                Err(_) => return None,
            }
        }
        // SAFETY: `next < avail`: published, unread, and `next` advances right after.
        let msg = unsafe { take(sh, *next) };
        *next += 1;
        sh.core.release(0, *next);
        Some(msg)
    }

    #[inline]
    fn try_recv_on<S: Sequencer>(
        sh: &Shared<T, W, S>,
        next: &mut u64,
        avail: &mut u64,
    ) -> Result<T, TryRecvError> {
        if *next == *avail {
            match sh.core.poll_data(*next) {
                Ok(end) if end > *next => *avail = end,
                Ok(_) => return Err(TryRecvError::Empty),
                Err(Stop::Ended | Stop::Halted) => return Err(TryRecvError::Ended),
            }
        }
        // SAFETY: `next < avail`: published, unread, and `next` advances right after.
        let msg = unsafe { take(sh, *next) };
        *next += 1;
        sh.core.release(0, *next);
        Ok(msg)
    }

    #[inline]
    fn recv_batch_on<S: Sequencer, F: FnMut(T)>(
        sh: &Shared<T, W, S>,
        next: &mut u64,
        avail: &mut u64,
        max: usize,
        mut f: F,
    ) -> usize {
        if *next == *avail {
            // A batch takes what is published now and, while events stream fast, what
            // follows within a few µs, up to `max` (`Core::wait_for_run`, as the batch
            // processor does; `max` 1 never pauses). It raised P=1 and P=2 in `lab run
            // disruptor-vs-lbq --variants ring`, left P=4/6 unchanged, and sampled latencies
            // stayed queueing-bound (figures: docs/design-figures.md).
            match sh.core.wait_for_run(*next, max as u64) {
                Ok(end) => *avail = end,
                Err(_) => return 0,
            }
        }
        let first = *next;
        let stop = (*avail).min(first + max.max(1) as u64);
        let _b = handoff::batch_span!(stop - first);
        handoff::batch_counter!("queue_depth", *avail - first);
        let mut guard = Consumed { sh, next, at: first };
        for s in first..stop {
            // SAFETY: `s < avail`: published and unread; the guard's position moves past
            // it before `f` runs, so it is never read again, even if `f` unwinds.
            let msg = unsafe { take(sh, s) };
            guard.at = s + 1;
            f(msg);
        }
        drop(guard);
        (stop - first) as usize
    }
}

impl<T: Send + 'static, W: WaitStrategy> handoff::Consumer<T> for RingReceiver<T, W> {
    #[inline]
    fn recv(&mut self) -> Option<T> {
        let (next, avail) = (&mut self.next, &mut self.avail);
        match &self.rx {
            Rx::Single(sh) => Self::recv_on(sh, next, avail),
            Rx::Multi(sh) => Self::recv_on(sh, next, avail),
        }
    }

    #[inline]
    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let (next, avail) = (&mut self.next, &mut self.avail);
        match &self.rx {
            Rx::Single(sh) => Self::try_recv_on(sh, next, avail),
            Rx::Multi(sh) => Self::try_recv_on(sh, next, avail),
        }
    }

    #[inline]
    fn recv_batch<F: FnMut(T)>(&mut self, max: usize, f: F) -> usize {
        let (next, avail) = (&mut self.next, &mut self.avail);
        match &self.rx {
            Rx::Single(sh) => Self::recv_batch_on(sh, next, avail, max, f),
            Rx::Multi(sh) => Self::recv_batch_on(sh, next, avail, max, f),
        }
    }

    fn depth(&self) -> usize {
        match &self.rx {
            Rx::Single(sh) => sh.core.depth(),
            Rx::Multi(sh) => sh.core.depth(),
        }
    }
}

impl<T, W: WaitStrategy> Drop for RingReceiver<T, W> {
    fn drop(&mut self) {
        // Producers' sends fail from now on; those waiting for room wake (or see it at
        // their next poll) and fail.
        match &self.rx {
            Rx::Single(sh) => sh.core.mark_gone(),
            Rx::Multi(sh) => sh.core.mark_gone(),
        }
    }
}
