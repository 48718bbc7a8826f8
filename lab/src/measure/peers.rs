//! Reference peers: well-known channels from the ecosystem, driven through the same
//! [`handoff::Handoff`] contract as the lab's own variants, so one harness measures all.
//!
//! * [`CrossbeamHandoff`]: `crossbeam_channel::bounded(cap)` (Vyukov's array queue with
//!   parking), the channel most Rust code reaches for.
//! * [`StdMpscHandoff`]: `std::sync::mpsc::sync_channel(cap)` (the standard library's bounded
//!   channel, itself a port of crossbeam's array flavor since Rust 1.67).
//! * [`DisruptorRsHandoff`]: the `disruptor` crate 4.x (a Rust port of the LMAX Disruptor),
//!   through its event-poller API so that the consumer runs on the lab's thread.
//!
//! The two channel peers share one adapter, [`ChannelHandoff`], over the small
//! [`Channel`] trait (send, try_send, recv_timeout, try_recv, len where the channel has one).
//!
//! What the adapters add, and what it costs (measured by `cargo bench -p lab --bench
//! handoff -- adapter-cost`, which runs each peer through its own API and through its
//! adapter in alternating pairs; the lab's comparison is fair while each costs ≤ 5%):
//! * **Close.** None of the three has an explicit close shared by all senders. `close`
//!   sets a shared flag; every send loads it (a read-mostly line: one load, no sharing).
//!   The channel peers carry `T` itself, never a wrapper: an earlier `Option<T>` with a
//!   `None` close marker made every message 8 bytes larger and cost crossbeam a large share
//!   of its throughput (figures: docs/design-figures.md). So nothing travels at close; instead the consumer waits with
//!   `recv_timeout(CLOSE_POLL)` only once `try_recv` finds the channel empty (when it
//!   would block anyway) and looks at the flag between waits: a consumer blocked on an
//!   empty channel sees a close within [`CLOSE_POLL`], and a consumer that is busy sees it
//!   at its next empty `try_recv`. Once it has drained after the close it drops its
//!   receiver, so later or blocked sends fail with the message returned. `close` never
//!   blocks. The disruptor peer polls, so the flag is all it needs. On the lab's hot path
//!   `close` is never called (producers just drop their handles, which every peer handles
//!   natively).
//! * **Depth.** crossbeam has `len()`. `std::sync::mpsc` has none, so that adapter counts:
//!   each producer keeps its own total and publishes it with one store to its own
//!   cache-padded counter (no sharing on the hot path); the consumer likewise, once per
//!   `recv`, `try_recv` or batch rather than once per message. Depth is the difference,
//!   clamped to the capacity, exact whenever the channel is quiet. The disruptor crate
//!   keeps the sequences depth needs, so that adapter counts nothing: a producer asks the
//!   crate's sequencer for more room than the ring has and reads how much it lacked, and
//!   the consumer asks its poller how many events are published past its cursor without
//!   taking them. Both are exact when the channel is quiet, and the send and receive
//!   paths stay as small as the crate's own.
//! * **Batches.** Neither channel has a batch receive. The contract's default
//!   `recv_batch` (wait for one, then `try_recv` the rest) is there for the contract, but
//!   the lab's harness receives from these two one at a time, as their own loops do
//!   (`VariantInfo::batches`): taking the rest with `try_recv` made crossbeam's consumer in
//!   the lab slower than the crate's own loop (docs/design-figures.md).
//! * **Waiting in the disruptor peer.** The crate's event poller never blocks and its
//!   `publish` spins without a hint. The adapter spins with `spin_loop`, then calls
//!   `yield_now` between polls, and publishes with `try_publish` in the same loop so that
//!   it notices a closed channel or a consumer that is gone. How long it spins depends on
//!   the machine: [`SPINS_ALONE`] when every thread of the channel has a core of its own
//!   (as the crate's own busy-spin loop, it then never gives its core away while the other
//!   side keeps up), [`SPINS_SHARED`] when they outnumber the cores (a pure spin would hold
//!   a core a descheduled producer needs).
//! * **Inlining.** A send is a few instructions when there is room, and each adapter's
//!   `send` is small enough to inline into the caller's loop: a call per message that the
//!   crate's own loop does not pay slows the producer, and on two cores a slower producer
//!   turns the disruptor's batched handoff into a per-message one (figures in
//!   docs/design-figures.md). The disruptor peer's wait is inlined too, as a user's loop
//!   around `try_publish` is: a wait out of line that took the message back by value kept
//!   every message on the stack on its way to the slot, and cost the producer a
//!   cache-line transfer per message (docs/harness.md, 2026-12-07).

use crossbeam_utils::CachePadded;
use handoff::{ConfigError, Consumer, Handoff, Producer, SendError, TryRecvError, TrySendError};
use std::cell::UnsafeCell;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Default bound of the channel peers when the caller asks for none (the lab passes its
/// `--ring-size`).
pub const DEFAULT_PEER_CAPACITY: usize = 64 * 1024;

/// State shared by every handle of one peer channel.
#[derive(Debug, Default)]
struct Shared {
    closed: CachePadded<AtomicBool>,
    /// One counter per producer (the std-mpsc peer only).
    /// Each producer holds its own `Arc` of its counter, so a send stores through one
    /// pointer of its own rather than indexing this `Vec` through the shared state.
    sent: Vec<Arc<CachePadded<AtomicU64>>>,
    received: CachePadded<AtomicU64>,
}

impl Shared {
    fn new(producers: usize, counted: bool) -> Arc<Self> {
        Arc::new(Shared {
            closed: CachePadded::new(AtomicBool::new(false)),
            sent: if counted {
                (0..producers).map(|_| Arc::new(CachePadded::new(AtomicU64::new(0)))).collect()
            } else {
                Vec::new()
            },
            received: CachePadded::new(AtomicU64::new(0)),
        })
    }

    #[inline]
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Producer `producer`'s counter, when counted.
    fn sent_counter(&self, producer: usize) -> Option<SentCounter> {
        self.sent.get(producer).map(|c| SentCounter { total: 0, counter: c.clone() })
    }

    /// Depth seen from a producer: the consumer publishes its total after each `recv`,
    /// `try_recv` or batch, so this may overstate by the batch being handed out.
    fn counted_depth(&self, cap: usize) -> usize {
        self.depth_after(self.received.load(Ordering::Acquire), cap)
    }

    /// Depth given what the consumer has received: exact when the channel is quiet.
    fn depth_after(&self, received: u64, cap: usize) -> usize {
        let sent: u64 = self.sent.iter().map(|c| c.load(Ordering::Acquire)).sum();
        (sent.saturating_sub(received) as usize).min(cap)
    }
}

/// One producer's count of what it has sent. Only that producer writes its counter and it
/// keeps the total itself: one store per send, no load, no read-modify-write.
#[derive(Debug)]
struct SentCounter {
    total: u64,
    counter: Arc<CachePadded<AtomicU64>>,
}

impl SentCounter {
    #[inline]
    fn add_one(&mut self) {
        self.total += 1;
        self.counter.store(self.total, Ordering::Release);
    }
}

/// The consumer's own count of what it has received, published for the producers with
/// one store per call (a batch is one call): no load, no read-modify-write.
#[derive(Debug, Default)]
struct Received {
    total: u64,
}

impl Received {
    #[inline]
    fn add(&mut self, n: u64, shared: &Shared) {
        if n > 0 {
            self.total += n;
            shared.received.store(self.total, Ordering::Release);
        }
    }
}

fn check_capacity(name: &str, cap: usize) -> Result<(), ConfigError> {
    if cap == 0 {
        return Err(ConfigError::new(format!("{name}: capacity must be at least 1")));
    }
    Ok(())
}

fn check_producers(name: &str, producers: usize) -> Result<(), ConfigError> {
    if producers == 0 {
        return Err(ConfigError::new(format!("{name}: at least one producer is needed")));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// crossbeam-channel and std::sync::mpsc::sync_channel: one adapter over both
// ---------------------------------------------------------------------------------------

/// What [`Channel::try_send`] reports when the message did not go.
#[derive(Debug)]
pub enum ChanTrySendError<T> {
    /// No room now.
    Full(T),
    /// The receiver is gone.
    Gone(T),
}

/// What [`Channel::recv_timeout`] reports when nothing came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChanRecvTimeoutError {
    /// Nothing came within the timeout.
    Timeout,
    /// Every sender is gone and the channel is empty.
    Gone,
}

/// What [`Channel::try_recv`] reports when nothing came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChanTryRecvError {
    /// Nothing there now.
    Empty,
    /// Every sender is gone and the channel is empty.
    Gone,
}

/// How long a channel peer's consumer waits on an empty channel before it looks at the
/// close flag again: the most a blocked consumer takes to notice a close. Messages wake it
/// at once; only a close waits for this.
pub const CLOSE_POLL: Duration = Duration::from_millis(1);

/// A bounded MPSC channel from the ecosystem, as the channel peers use it: messages are
/// `T` itself. The adapter ([`ChannelHandoff`]) adds the contract's close and depth on top.
pub trait Channel: Send + Sync + 'static {
    /// The variant name (`--variants`).
    const NAME: &'static str;
    /// Whether the channel reports its length; if not, the adapter counts.
    const HAS_LEN: bool;
    /// Sending half.
    type Tx<T: Send + 'static>: Clone + Send;
    /// Receiving half.
    type Rx<T: Send + 'static>: Send;
    /// A channel holding at most `cap` messages.
    fn bounded<T: Send + 'static>(cap: usize) -> (Self::Tx<T>, Self::Rx<T>);
    /// Sends, waiting for room; `Err` returns the message when the receiver is gone.
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), T>;
    /// Sends if there is room now.
    fn try_send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), ChanTrySendError<T>>;
    /// Receives, waiting at most `timeout` for a message.
    fn recv_timeout<T: Send + 'static>(
        rx: &Self::Rx<T>,
        timeout: Duration,
    ) -> Result<T, ChanRecvTimeoutError>;
    /// Receives if a message is there now.
    fn try_recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Result<T, ChanTryRecvError>;
    /// Messages queued, seen from a sender (only called when [`Channel::HAS_LEN`]).
    fn tx_len<T: Send + 'static>(tx: &Self::Tx<T>) -> usize;
    /// Messages queued, seen from the receiver (only called when [`Channel::HAS_LEN`]).
    fn rx_len<T: Send + 'static>(rx: &Self::Rx<T>) -> usize;
}

/// `crossbeam_channel::bounded(capacity)`.
#[derive(Debug, Clone, Copy)]
pub struct Crossbeam;

impl Channel for Crossbeam {
    const NAME: &'static str = "crossbeam";
    const HAS_LEN: bool = true;
    type Tx<T: Send + 'static> = crossbeam_channel::Sender<T>;
    type Rx<T: Send + 'static> = crossbeam_channel::Receiver<T>;

    fn bounded<T: Send + 'static>(cap: usize) -> (Self::Tx<T>, Self::Rx<T>) {
        crossbeam_channel::bounded(cap)
    }
    #[inline]
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), T> {
        tx.send(m).map_err(|e| e.into_inner())
    }
    fn try_send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), ChanTrySendError<T>> {
        tx.try_send(m).map_err(|e| match e {
            crossbeam_channel::TrySendError::Full(m) => ChanTrySendError::Full(m),
            crossbeam_channel::TrySendError::Disconnected(m) => ChanTrySendError::Gone(m),
        })
    }
    fn recv_timeout<T: Send + 'static>(
        rx: &Self::Rx<T>,
        timeout: Duration,
    ) -> Result<T, ChanRecvTimeoutError> {
        rx.recv_timeout(timeout).map_err(|e| match e {
            crossbeam_channel::RecvTimeoutError::Timeout => ChanRecvTimeoutError::Timeout,
            crossbeam_channel::RecvTimeoutError::Disconnected => ChanRecvTimeoutError::Gone,
        })
    }
    #[inline]
    fn try_recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Result<T, ChanTryRecvError> {
        rx.try_recv().map_err(|e| match e {
            crossbeam_channel::TryRecvError::Empty => ChanTryRecvError::Empty,
            crossbeam_channel::TryRecvError::Disconnected => ChanTryRecvError::Gone,
        })
    }
    fn tx_len<T: Send + 'static>(tx: &Self::Tx<T>) -> usize {
        tx.len()
    }
    fn rx_len<T: Send + 'static>(rx: &Self::Rx<T>) -> usize {
        rx.len()
    }
}

/// `std::sync::mpsc::sync_channel(capacity)`.
#[derive(Debug, Clone, Copy)]
pub struct StdMpsc;

impl Channel for StdMpsc {
    const NAME: &'static str = "std-mpsc";
    const HAS_LEN: bool = false;
    type Tx<T: Send + 'static> = mpsc::SyncSender<T>;
    type Rx<T: Send + 'static> = mpsc::Receiver<T>;

    fn bounded<T: Send + 'static>(cap: usize) -> (Self::Tx<T>, Self::Rx<T>) {
        mpsc::sync_channel(cap)
    }
    #[inline]
    fn send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), T> {
        tx.send(m).map_err(|e| e.0)
    }
    fn try_send<T: Send + 'static>(tx: &Self::Tx<T>, m: T) -> Result<(), ChanTrySendError<T>> {
        tx.try_send(m).map_err(|e| match e {
            mpsc::TrySendError::Full(m) => ChanTrySendError::Full(m),
            mpsc::TrySendError::Disconnected(m) => ChanTrySendError::Gone(m),
        })
    }
    fn recv_timeout<T: Send + 'static>(
        rx: &Self::Rx<T>,
        timeout: Duration,
    ) -> Result<T, ChanRecvTimeoutError> {
        rx.recv_timeout(timeout).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => ChanRecvTimeoutError::Timeout,
            mpsc::RecvTimeoutError::Disconnected => ChanRecvTimeoutError::Gone,
        })
    }
    #[inline]
    fn try_recv<T: Send + 'static>(rx: &Self::Rx<T>) -> Result<T, ChanTryRecvError> {
        rx.try_recv().map_err(|e| match e {
            mpsc::TryRecvError::Empty => ChanTryRecvError::Empty,
            mpsc::TryRecvError::Disconnected => ChanTryRecvError::Gone,
        })
    }
    fn tx_len<T: Send + 'static>(_: &Self::Tx<T>) -> usize {
        unreachable!("std::sync::mpsc has no len(): the adapter counts")
    }
    fn rx_len<T: Send + 'static>(_: &Self::Rx<T>) -> usize {
        unreachable!("std::sync::mpsc has no len(): the adapter counts")
    }
}

/// A channel peer: [`Crossbeam`] or [`StdMpsc`] behind the handoff contract.
pub struct ChannelHandoff<C> {
    capacity: usize,
    channel: PhantomData<C>,
}

/// `crossbeam_channel::bounded(capacity)` as a handoff.
pub type CrossbeamHandoff = ChannelHandoff<Crossbeam>;
/// Producer handle of [`CrossbeamHandoff`].
pub type CrossbeamProducer<T> = ChannelProducer<Crossbeam, T>;
/// Consumer handle of [`CrossbeamHandoff`].
pub type CrossbeamConsumer<T> = ChannelConsumer<Crossbeam, T>;
/// `std::sync::mpsc::sync_channel(capacity)` as a handoff.
pub type StdMpscHandoff = ChannelHandoff<StdMpsc>;

impl<C: Channel> ChannelHandoff<C> {
    /// A bounded channel; `None` means [`DEFAULT_PEER_CAPACITY`].
    pub fn new(capacity: Option<usize>) -> Self {
        ChannelHandoff { capacity: capacity.unwrap_or(DEFAULT_PEER_CAPACITY), channel: PhantomData }
    }
}

impl<C> Clone for ChannelHandoff<C> {
    fn clone(&self) -> Self {
        ChannelHandoff { capacity: self.capacity, channel: PhantomData }
    }
}

impl<C: Channel> fmt::Debug for ChannelHandoff<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChannelHandoff")
            .field("channel", &C::NAME)
            .field("capacity", &self.capacity)
            .finish()
    }
}

/// Producer handle of a [`ChannelHandoff`].
pub struct ChannelProducer<C: Channel, T: Send + 'static> {
    tx: C::Tx<T>,
    shared: Arc<Shared>,
    /// Counted only when the channel has no `len`.
    sent: Option<SentCounter>,
    capacity: usize,
}

/// Consumer handle of a [`ChannelHandoff`].
pub struct ChannelConsumer<C: Channel, T: Send + 'static> {
    /// `None` once drained after a close, or once every sender is gone.
    rx: Option<C::Rx<T>>,
    shared: Arc<Shared>,
    /// Counted only when the channel has no `len`.
    received: Received,
    capacity: usize,
}

impl<C: Channel, T: Send + 'static> fmt::Debug for ChannelProducer<C, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChannelProducer").field("channel", &C::NAME).finish_non_exhaustive()
    }
}

impl<C: Channel, T: Send + 'static> fmt::Debug for ChannelConsumer<C, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChannelConsumer").field("channel", &C::NAME).finish_non_exhaustive()
    }
}

impl<C: Channel> Handoff for ChannelHandoff<C> {
    type Producer<T: Send + 'static> = ChannelProducer<C, T>;
    type Consumer<T: Send + 'static> = ChannelConsumer<C, T>;

    fn name(&self) -> String {
        C::NAME.to_string()
    }

    fn capacity(&self) -> Option<usize> {
        Some(self.capacity)
    }

    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<Self::Producer<T>>, Self::Consumer<T>), ConfigError> {
        check_producers(C::NAME, producers)?;
        check_capacity(C::NAME, self.capacity)?;
        let (tx, rx) = C::bounded(self.capacity);
        let shared = Shared::new(producers, !C::HAS_LEN);
        let capacity = self.capacity;
        let txs = (0..producers)
            .map(|index| ChannelProducer {
                tx: tx.clone(),
                sent: shared.sent_counter(index),
                shared: shared.clone(),
                capacity,
            })
            .collect();
        Ok((txs, ChannelConsumer { rx: Some(rx), shared, received: Received::default(), capacity }))
    }
}

impl<C: Channel, T: Send + 'static> ChannelProducer<C, T> {
    #[inline]
    fn sent(&mut self) {
        if let (false, Some(c)) = (C::HAS_LEN, &mut self.sent) {
            c.add_one();
        }
    }
}

impl<C: Channel, T: Send + 'static> Producer<T> for ChannelProducer<C, T> {
    /// Always inlined, so that the caller's loop calls the channel's own `send` directly,
    /// as a plain loop over the channel does.
    #[inline(always)]
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        if self.shared.is_closed() {
            return Err(SendError(msg));
        }
        match C::send(&self.tx, msg) {
            Ok(()) => {
                self.sent();
                Ok(())
            }
            Err(m) => Err(SendError(m)),
        }
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        if self.shared.is_closed() {
            return Err(TrySendError::Closed(msg));
        }
        match C::try_send(&self.tx, msg) {
            Ok(()) => {
                self.sent();
                Ok(())
            }
            Err(ChanTrySendError::Full(m)) => Err(TrySendError::Full(m)),
            Err(ChanTrySendError::Gone(m)) => Err(TrySendError::Closed(m)),
        }
    }

    fn close(&self) {
        // The consumer sees it at its next empty `try_recv`, or within `CLOSE_POLL` if it
        // is waiting; nothing is sent, so close never blocks on a full channel.
        self.shared.closed.store(true, Ordering::Release);
    }

    fn depth(&self) -> usize {
        if C::HAS_LEN {
            C::tx_len(&self.tx)
        } else {
            self.shared.counted_depth(self.capacity)
        }
    }
}

impl<C: Channel, T: Send + 'static> ChannelConsumer<C, T> {
    /// Counts `n` messages received (when the channel has no `len`): once per call of
    /// `recv`, `try_recv` or `recv_batch`, in the consumer's own count.
    #[inline]
    fn got(&mut self, n: u64) {
        if !C::HAS_LEN {
            self.received.add(n, &self.shared);
        }
    }

    /// After a close: hand out what is left, then end for good (dropping the receiver, so
    /// that later or blocked sends fail).
    fn drain_after_close(&mut self) -> Option<T> {
        let rx = self.rx.as_ref()?;
        match C::try_recv(rx) {
            Ok(m) => Some(m),
            Err(_) => {
                self.rx = None;
                None
            }
        }
    }

    /// `recv` without the count.
    #[inline]
    fn take(&mut self) -> Option<T> {
        loop {
            let rx = self.rx.as_ref()?;
            // The fast path: a message is there. Only an empty channel looks at the flag.
            match C::try_recv(rx) {
                Ok(m) => return Some(m),
                Err(ChanTryRecvError::Gone) => {
                    self.rx = None;
                    return None;
                }
                Err(ChanTryRecvError::Empty) => {}
            }
            if self.shared.is_closed() {
                return self.drain_after_close();
            }
            match C::recv_timeout(rx, CLOSE_POLL) {
                Ok(m) => return Some(m),
                Err(ChanRecvTimeoutError::Timeout) => {}
                Err(ChanRecvTimeoutError::Gone) => {
                    self.rx = None;
                    return None;
                }
            }
        }
    }

    /// `try_recv` without the count.
    #[inline]
    fn try_take(&mut self) -> Result<T, TryRecvError> {
        let Some(rx) = self.rx.as_ref() else { return Err(TryRecvError::Ended) };
        match C::try_recv(rx) {
            Ok(m) => Ok(m),
            Err(ChanTryRecvError::Empty) => {
                if self.shared.is_closed() {
                    self.drain_after_close().ok_or(TryRecvError::Ended)
                } else {
                    Err(TryRecvError::Empty)
                }
            }
            Err(ChanTryRecvError::Gone) => {
                self.rx = None;
                Err(TryRecvError::Ended)
            }
        }
    }
}

impl<C: Channel, T: Send + 'static> Consumer<T> for ChannelConsumer<C, T> {
    #[inline]
    fn recv(&mut self) -> Option<T> {
        let m = self.take();
        self.got(u64::from(m.is_some()));
        m
    }

    #[inline]
    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let m = self.try_take();
        self.got(u64::from(m.is_ok()));
        m
    }

    /// The contract's default shape (wait for one, then take what is there), counted once
    /// per batch.
    #[inline]
    fn recv_batch<F: FnMut(T)>(&mut self, max: usize, mut f: F) -> usize {
        let Some(first) = self.take() else { return 0 };
        f(first);
        let mut n = 1;
        while n < max {
            match self.try_take() {
                Ok(m) => {
                    f(m);
                    n += 1;
                }
                Err(_) => break,
            }
        }
        self.got(n as u64);
        n
    }

    fn depth(&self) -> usize {
        match &self.rx {
            Some(rx) if C::HAS_LEN => C::rx_len(rx),
            None if C::HAS_LEN => 0,
            _ => self.shared.depth_after(self.received.total, self.capacity),
        }
    }
}

// ---------------------------------------------------------------------------------------
// disruptor 4.x (event poller)
// ---------------------------------------------------------------------------------------

/// One ring slot of the disruptor peer: the message itself, as in the crate's own loop
/// (an `Option<T>` would add a tag, 8 bytes a slot for the lab's 40-byte message, and a
/// fifth more bytes through the caches for every message; measured in
/// docs/design-figures.md).
///
/// Invariant: a slot holds an initialised message exactly from the moment a producer
/// writes it, before publishing its sequence, until the consumer moves it out, before the
/// guard covering that sequence releases it. The crate hands a sequence to a producer only
/// once the consumer has released it, so a producer always writes into a slot that holds
/// nothing (never written, or moved out), and [`MaybeUninit::write`] overwrites nothing
/// that needs dropping. What is published and never taken is dropped by [`RsShared`]'s
/// drop, once no handle is left.
struct Slot<T>(UnsafeCell<MaybeUninit<T>>);

// SAFETY: a slot is touched by one thread at a time, handed over by the crate's sequence
// barriers: a producer writes it only between claiming its sequence and publishing it
// (`&mut E` from the crate, exclusive), the one consumer only while an `EventGuard` covers
// that sequence, and the crate does not let a producer claim the sequence again until the
// guard is dropped. So sharing `&Slot<T>` across threads is like sharing a `Mutex<Option<T>>`
// whose lock is the sequence: it needs `T: Send`, not `T: Sync`.
unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Slot<T> {
    /// An empty slot (the ring's event factory).
    fn empty() -> Self {
        Slot(UnsafeCell::new(MaybeUninit::uninit()))
    }

    /// Moves the message out of a slot that this consumer's guard covers.
    ///
    /// # Safety
    /// The caller holds the crate's `EventGuard` covering this slot's sequence, is the only
    /// consumer of the ring (no other thread accesses the slot meanwhile), and takes each
    /// published sequence once: by the invariant the slot then holds a message, and after
    /// this call it holds none.
    #[inline]
    unsafe fn take(&self) -> T {
        // SAFETY: the guard gives this consumer exclusive access to the slot for its
        // lifetime (the caller's contract), so no other reference to the cell's contents
        // exists while this one lives.
        let slot = unsafe { &*self.0.get() };
        // SAFETY: the slot holds a message (the invariant: its sequence is published and
        // not taken, per the caller's contract); the slot counts as empty from here on.
        unsafe { slot.assume_init_read() }
    }
}

type TxSingle<T> = disruptor::SingleProducer<Slot<T>, disruptor::SingleConsumerBarrier>;
type TxMulti<T> = disruptor::MultiProducer<Slot<T>, disruptor::SingleConsumerBarrier>;

/// How the disruptor peer's producer side is built.
enum DisruptorTx<T: Send + 'static> {
    Single(TxSingle<T>),
    Multi(TxMulti<T>),
}

/// How the disruptor peer's consumer side is built.
enum DisruptorRx<T: Send + 'static> {
    Single(disruptor::EventPoller<Slot<T>, disruptor::SingleProducerBarrier>),
    Multi(disruptor::EventPoller<Slot<T>, disruptor::MultiProducerBarrier>),
}

/// The smallest ring the crate's multi-producer sequencer accepts (it panics below).
pub const DISRUPTOR_RS_MULTI_MIN: usize = 64;

/// Spins before a yield when every thread of the channel has a core of its own: long
/// enough that a side which keeps up never yields (as the crate's own busy-spin loop never
/// does), short enough that a side left waiting for long gives its core back.
pub const SPINS_ALONE: u32 = 1 << 14;

/// Spins before a yield when the channel's threads outnumber the cores: a pure spin would
/// hold a core that a descheduled thread needs to make progress.
pub const SPINS_SHARED: u32 = 64;

/// The spins the disruptor peer's waits use for `threads` threads on this machine: fewer
/// where they outnumber its cores.
pub fn spins_for(threads: usize) -> u32 {
    if threads > std::thread::available_parallelism().map_or(1, |n| n.get()) {
        SPINS_SHARED
    } else {
        SPINS_ALONE
    }
}

/// The `disruptor` crate (4.x): single-producer sequencer for one producer, multi-producer
/// otherwise, one event poller as the consumer. Ring size must be a power of two.
#[derive(Debug, Clone)]
pub struct DisruptorRsHandoff {
    size: usize,
}

impl DisruptorRsHandoff {
    /// A ring of `size` slots; `None` means [`DEFAULT_PEER_CAPACITY`].
    pub fn new(size: Option<usize>) -> Self {
        DisruptorRsHandoff { size: size.unwrap_or(DEFAULT_PEER_CAPACITY) }
    }
}

/// One poll of the crate's event poller: `Some(n)` events handed to `f`, `None` at
/// shutdown. A macro because the crate's barrier trait is not public, so a function cannot
/// be generic over the poller's two types.
macro_rules! poll_into {
    ($poller:expr, $max:expr, $f:expr) => {
        match $poller.take($max as u64) {
            Ok(mut guard) => {
                let mut n = 0usize;
                for slot in &mut guard {
                    // SAFETY: `guard` covers this slot, this adapter is the ring's only
                    // consumer (one poller, made in `open`, later orphaned to the shared
                    // state), and the guard hands out each published sequence once.
                    ($f)(unsafe { slot.take() });
                    n += 1;
                }
                Some(n)
            }
            Err(disruptor::Polling::NoEvents) => Some(0),
            Err(disruptor::Polling::Shutdown) => None,
        }
    };
}

/// State of the disruptor peer shared by all handles.
struct RsShared<T: Send + 'static> {
    closed: CachePadded<AtomicBool>,
    size: usize,
    /// Spins before each yield in a wait ([`spins_for`] the channel's threads).
    spins: u32,
    /// The consumer's poller once the consumer is gone, kept (only for messages that need
    /// dropping) so that the last handle's drop can drop what was published and never
    /// taken. Touched only by the consumer's drop and this struct's.
    orphan: std::sync::Mutex<Option<DisruptorRx<T>>>,
}

impl<T: Send + 'static> RsShared<T> {
    #[inline]
    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }
}

impl<T: Send + 'static> Drop for RsShared<T> {
    /// The last handle is gone: every publish has finished (the handles' `Arc` drops order
    /// them before this), and whatever the consumer did not take is in the ring still,
    /// initialised. Takes it through the orphaned poller and drops it, once each.
    fn drop(&mut self) {
        let orphan = self.orphan.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut rx) = orphan {
            let drop_it = &mut |m: T| drop(m);
            loop {
                let got = match &mut rx {
                    DisruptorRx::Single(p) => poll_into!(p, usize::MAX, drop_it),
                    DisruptorRx::Multi(p) => poll_into!(p, usize::MAX, drop_it),
                };
                if got.unwrap_or(0) == 0 {
                    break;
                }
            }
        }
    }
}

/// Producer handle of [`DisruptorRsHandoff`].
///
/// The crate's producer sits in an `UnsafeCell` so that `depth(&self)` can ask it how much
/// room is left (an `&mut` call that publishes nothing). The cell makes the handle `!Sync`,
/// so every `&self` and `&mut self` method runs on the thread that owns the handle, one at
/// a time.
pub struct DisruptorRsProducer<T: Send + 'static> {
    tx: UnsafeCell<DisruptorTx<T>>,
    shared: Arc<RsShared<T>>,
    index: usize,
}

impl<T: Send + 'static> std::fmt::Debug for DisruptorRsProducer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisruptorRsProducer").field("index", &self.index).finish()
    }
}

/// Consumer handle of [`DisruptorRsHandoff`]. The poller sits in an `UnsafeCell` for the
/// same reason as the producer's: `depth(&self)` looks at what is published without
/// taking it.
pub struct DisruptorRsConsumer<T: Send + 'static> {
    /// Dropped, or handed to [`RsShared`], by this handle's drop.
    rx: ManuallyDrop<UnsafeCell<DisruptorRx<T>>>,
    shared: Arc<RsShared<T>>,
    ended: bool,
}

impl<T: Send + 'static> std::fmt::Debug for DisruptorRsConsumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisruptorRsConsumer").field("ended", &self.ended).finish()
    }
}

impl<T: Send + 'static> Drop for DisruptorRsConsumer<T> {
    fn drop(&mut self) {
        // A gone consumer refuses sends as a close does: producers then load one flag.
        self.shared.closed.store(true, Ordering::Release);
        // SAFETY: `rx` is taken once, here, and the handle is not used after its drop.
        let rx = unsafe { ManuallyDrop::take(&mut self.rx) }.into_inner();
        if std::mem::needs_drop::<T>() {
            // Producers may still publish: the last handle drops what is left.
            *self.shared.orphan.lock().unwrap_or_else(|e| e.into_inner()) = Some(rx);
        }
    }
}

impl Handoff for DisruptorRsHandoff {
    type Producer<T: Send + 'static> = DisruptorRsProducer<T>;
    type Consumer<T: Send + 'static> = DisruptorRsConsumer<T>;

    fn name(&self) -> String {
        "disruptor-rs".to_string()
    }

    fn capacity(&self) -> Option<usize> {
        Some(self.size)
    }

    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<Self::Producer<T>>, Self::Consumer<T>), ConfigError> {
        check_producers("disruptor-rs", producers)?;
        if !self.size.is_power_of_two() {
            return Err(ConfigError::new(format!(
                "disruptor-rs: ring size {} is not a power of two",
                self.size
            )));
        }
        if producers > 1 && self.size < DISRUPTOR_RS_MULTI_MIN {
            return Err(ConfigError::new(format!(
                "disruptor-rs: ring size {} is below the crate's minimum of {} slots for \
                 several producers",
                self.size, DISRUPTOR_RS_MULTI_MIN
            )));
        }
        let shared = Arc::new(RsShared {
            closed: CachePadded::new(AtomicBool::new(false)),
            size: self.size,
            spins: spins_for(producers + 1),
            orphan: std::sync::Mutex::new(None),
        });
        let factory = Slot::empty;
        // The poller does its own waiting; the wait strategy only serves managed threads.
        let wait = disruptor::BusySpinWithSpinLoopHint;
        let (txs, rx) = if producers == 1 {
            let builder = disruptor::build_single_producer(self.size, factory, wait);
            let (poller, builder) = builder.new_event_poller();
            (vec![DisruptorTx::Single(builder.build())], DisruptorRx::Single(poller))
        } else {
            let builder = disruptor::build_multi_producer(self.size, factory, wait);
            let (poller, builder) = builder.new_event_poller();
            let first = builder.build();
            let mut txs: Vec<_> =
                (1..producers).map(|_| DisruptorTx::Multi(first.clone())).collect();
            txs.insert(0, DisruptorTx::Multi(first));
            (txs, DisruptorRx::Multi(poller))
        };
        let producers = txs
            .into_iter()
            .enumerate()
            .map(|(index, tx)| DisruptorRsProducer {
                tx: UnsafeCell::new(tx),
                shared: shared.clone(),
                index,
            })
            .collect();
        Ok((
            producers,
            DisruptorRsConsumer {
                rx: ManuallyDrop::new(UnsafeCell::new(rx)),
                shared,
                ended: false,
            },
        ))
    }
}

/// Spins briefly, then yields: the disruptor adapter's wait for both sides. Public so
/// that the bench's raw disruptor loop waits exactly as the adapter does.
#[derive(Debug)]
pub struct Backoff {
    step: u32,
    spins: u32,
}

impl Default for Backoff {
    /// [`SPINS_SHARED`] spins before each yield.
    fn default() -> Self {
        Backoff::with_spins(SPINS_SHARED)
    }
}

impl Backoff {
    /// A wait that spins `spins` times before it starts yielding.
    pub fn with_spins(spins: u32) -> Self {
        Backoff { step: 0, spins }
    }

    /// One step of the wait: a spin hint for the first `spins` calls, then `yield_now`.
    #[inline]
    pub fn snooze(&mut self) {
        if self.step < self.spins {
            std::hint::spin_loop();
            self.step += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

/// Room left in the ring as the crate's producer `$p` sees it, without publishing: a batch
/// one larger than the ring never fits, so the crate refuses it and says how many slots it
/// lacked. A macro for the reason `poll_into!` is one.
macro_rules! free_slots {
    ($p:expr, $size:expr) => {{
        let ask = $size + 1;
        match $p.try_batch_publish(ask, |_| {
            unreachable!("a batch larger than the ring cannot be granted")
        }) {
            Err(disruptor::MissingFreeSlots(missing)) => ask.saturating_sub(missing as usize),
            Ok(_) => unreachable!("a batch larger than the ring cannot be granted"),
        }
    }};
}

impl<T: Send + 'static> DisruptorRsProducer<T> {
    /// The crate's producer.
    #[inline]
    #[allow(clippy::mut_from_ref)]
    fn tx(&self) -> &mut DisruptorTx<T> {
        // SAFETY: the handle is `!Sync` (the `UnsafeCell`), so only its owning thread calls
        // this, and every caller uses the reference within one method call without calling
        // back into the handle: no two references from here are alive at once.
        unsafe { &mut *self.tx.get() }
    }

    /// Publishes the message `msg` holds if the ring has room. `true`: the crate granted a
    /// slot and ran the write, which moved the message there, so the caller must neither
    /// use nor drop `msg` again; `false`: nothing was read, the message is still the
    /// caller's.
    ///
    /// The message goes from the caller's hands to the slot in one move, and must not
    /// be staged in memory on the way: staged, it was written to the stack field by field
    /// and read back in wider loads that the store buffer cannot forward, so each load
    /// waited for the stores before it to reach the cache, the previous slot's included,
    /// which on a ring the consumer reads right behind is a cache-line transfer per
    /// message. What staged it was `send`'s out-of-line wait taking the message back by
    /// value (docs/harness.md, the disruptor adapter's producer stall).
    #[inline(always)]
    fn try_publish(&mut self, msg: &ManuallyDrop<T>) -> bool {
        use disruptor::Producer as _;
        let mut moved = false;
        // The crate runs the write only once it granted the sequence, and before it
        // publishes it: the slot is written before its sequence is published, as the
        // invariant of `Slot` needs.
        let write = |slot: &mut Slot<T>| {
            // SAFETY: the crate calls this at most once (`FnOnce`), so the message is read
            // out of `msg` at most once, and `moved` tells the caller it was: from then on
            // the caller treats `msg` as moved (never uses or drops it; `ManuallyDrop`
            // never drops it by itself).
            slot.0.get_mut().write(unsafe { std::ptr::read(&**msg) });
            moved = true;
        };
        match self.tx.get_mut() {
            DisruptorTx::Single(p) => {
                let _ = p.try_publish(write);
            }
            DisruptorTx::Multi(p) => {
                let _ = p.try_publish(write);
            }
        }
        moved
    }

    /// Closed, or the consumer is gone (its drop sets the same flag).
    #[inline]
    fn refused(&self) -> bool {
        self.shared.is_closed()
    }
}

impl<T: Send + 'static> Producer<T> for DisruptorRsProducer<T> {
    /// Inlined whole, wait included, into the caller's loop, as a user's loop around the
    /// crate's `try_publish` would be. A wait out of line that took the message by value
    /// made the message live in memory: see [`DisruptorRsProducer::try_publish`].
    #[inline(always)]
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        let msg = ManuallyDrop::new(msg);
        let mut backoff = Backoff::with_spins(self.shared.spins);
        loop {
            if self.refused() {
                return Err(SendError(ManuallyDrop::into_inner(msg)));
            }
            if self.try_publish(&msg) {
                return Ok(());
            }
            backoff.snooze();
        }
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        if self.refused() {
            return Err(TrySendError::Closed(msg));
        }
        let msg = ManuallyDrop::new(msg);
        if self.try_publish(&msg) {
            Ok(())
        } else {
            Err(TrySendError::Full(ManuallyDrop::into_inner(msg)))
        }
    }

    fn close(&self) {
        self.shared.closed.store(true, Ordering::Release);
    }

    /// The ring's size less the room the crate's sequencer finds: every claimed sequence
    /// the consumer has not released. Exact when the channel is quiet; nothing is counted
    /// on the send path.
    fn depth(&self) -> usize {
        use disruptor::Producer as _;
        let size = self.shared.size;
        let free = match self.tx() {
            DisruptorTx::Single(p) => free_slots!(p, size),
            DisruptorTx::Multi(p) => free_slots!(p, size),
        };
        size.saturating_sub(free)
    }
}

/// Events published and not yet taken by the poller `$poller`, without taking them: the
/// guard says how many it covers, and is forgotten rather than dropped, since its drop is
/// what releases the events to the producers.
macro_rules! published_not_taken {
    ($poller:expr) => {
        match $poller.take(u64::MAX) {
            Ok(mut guard) => {
                let n = ExactSizeIterator::len(&&mut guard);
                std::mem::forget(guard);
                n
            }
            Err(_) => 0,
        }
    };
}

impl<T: Send + 'static> DisruptorRsConsumer<T> {
    /// Non-blocking: `Some(n > 0)` events handed out, `Some(0)` nothing now, `None` ended.
    #[inline]
    fn poll_batch<F: FnMut(T)>(&mut self, max: usize, f: &mut F) -> Option<usize> {
        if self.ended {
            return None;
        }
        // One poll site per poller type (two call sites of `f` in all), so that the
        // compiler can inline the caller's per-message work into the loop over the guard,
        // as it did not with the close path's second poll written out beside the first.
        let mut after_close = false;
        loop {
            let got = match self.rx.get_mut() {
                DisruptorRx::Single(p) => poll_into!(p, max, f),
                DisruptorRx::Multi(p) => poll_into!(p, max, f),
            };
            match got {
                // Closed: everything published before `close` is visible now; one more
                // poll picks up the rest, then the channel has ended.
                Some(0) if !after_close && self.shared.is_closed() => after_close = true,
                Some(n) if n > 0 || !after_close => return Some(n),
                _ => {
                    self.ended = true;
                    return None;
                }
            }
        }
    }
}

impl<T: Send + 'static> Consumer<T> for DisruptorRsConsumer<T> {
    fn recv(&mut self) -> Option<T> {
        let mut out = None;
        self.recv_batch(1, |m| out = Some(m));
        out
    }

    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let mut out = None;
        match self.poll_batch(1, &mut |m| out = Some(m)) {
            None => Err(TryRecvError::Ended),
            Some(0) => Err(TryRecvError::Empty),
            Some(_) => out.ok_or(TryRecvError::Empty),
        }
    }

    #[inline]
    fn recv_batch<F: FnMut(T)>(&mut self, max: usize, mut f: F) -> usize {
        let mut backoff = Backoff::with_spins(self.shared.spins);
        loop {
            match self.poll_batch(max.max(1), &mut f) {
                None => return 0,
                Some(0) => backoff.snooze(),
                Some(n) => return n,
            }
        }
    }

    /// What the crate has published that this consumer has not taken: exact when the
    /// channel is quiet; nothing is counted on the receive path.
    fn depth(&self) -> usize {
        if self.ended {
            return 0;
        }
        // SAFETY: the handle is `!Sync` (the `UnsafeCell`), so only its owning thread is
        // here, and no other method of the handle is running: this is the only reference
        // into the cell while it lives.
        let rx = unsafe { &mut *self.rx.get() };
        let n = match rx {
            DisruptorRx::Single(p) => published_not_taken!(p),
            DisruptorRx::Multi(p) => published_not_taken!(p),
        };
        n.min(self.shared.size)
    }
}
