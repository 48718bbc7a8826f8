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
//! What the adapters add, and what it costs:
//! * **Close.** None of the three has an explicit close shared by all senders. The channel
//!   peers carry `Option<T>`: `close` sets a shared flag and sends a `None` marker that wakes
//!   a blocked consumer; once the consumer has drained after the marker it drops its
//!   receiver, so later or blocked sends fail with the message returned. `close` may wait
//!   for room for its marker (as Java's `put` would). The disruptor peer polls, so a flag is
//!   enough there. On the lab's hot path `close` is never called (producers just drop their
//!   handles, which every peer handles natively); each send pays one load of the
//!   read-mostly flag.
//! * **Depth.** crossbeam has `len()`. `std::sync::mpsc` and the disruptor crate do not, so
//!   those adapters count: each producer bumps its own cache-padded counter (no sharing on
//!   the hot path), the consumer its own; depth is the difference, clamped to the capacity.
//! * **Waiting in the disruptor peer.** The crate's event poller never blocks and its
//!   `publish` spins without a hint. The adapter spins with `spin_loop` 64 times, then calls
//!   `yield_now` between polls (on 2 cores a pure spin would starve the other side), and
//!   publishes with `try_publish` in the same loop so that it notices a closed channel or a
//!   consumer that is gone.

use crossbeam_utils::CachePadded;
use handoff::{ConfigError, Consumer, Handoff, Producer, SendError, TryRecvError, TrySendError};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

/// Default bound of the channel peers when the caller asks for none (the lab passes its
/// `--ring-size`).
pub const DEFAULT_PEER_CAPACITY: usize = 64 * 1024;

/// State shared by every handle of one peer channel.
#[derive(Debug, Default)]
struct Shared {
    closed: CachePadded<AtomicBool>,
    /// One counter per producer (std-mpsc and disruptor-rs peers only).
    sent: Vec<CachePadded<AtomicU64>>,
    received: CachePadded<AtomicU64>,
}

impl Shared {
    fn new(producers: usize, counted: bool) -> Arc<Self> {
        Arc::new(Shared {
            closed: CachePadded::new(AtomicBool::new(false)),
            sent: if counted {
                (0..producers).map(|_| CachePadded::new(AtomicU64::new(0))).collect()
            } else {
                Vec::new()
            },
            received: CachePadded::new(AtomicU64::new(0)),
        })
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    #[inline]
    fn count_sent(&self, producer: usize) {
        let c = &self.sent[producer];
        // Only this producer writes its counter: a load and a store, no read-modify-write.
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Release);
    }

    #[inline]
    fn count_received(&self, n: u64) {
        let c = &self.received;
        c.store(c.load(Ordering::Relaxed) + n, Ordering::Release);
    }

    fn counted_depth(&self, cap: usize) -> usize {
        let received = self.received.load(Ordering::Acquire);
        let sent: u64 = self.sent.iter().map(|c| c.load(Ordering::Acquire)).sum();
        (sent.saturating_sub(received) as usize).min(cap)
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
// crossbeam-channel
// ---------------------------------------------------------------------------------------

/// `crossbeam_channel::bounded(capacity)`.
#[derive(Debug, Clone)]
pub struct CrossbeamHandoff {
    capacity: usize,
}

impl CrossbeamHandoff {
    /// A bounded crossbeam channel; `None` means [`DEFAULT_PEER_CAPACITY`].
    pub fn new(capacity: Option<usize>) -> Self {
        CrossbeamHandoff { capacity: capacity.unwrap_or(DEFAULT_PEER_CAPACITY) }
    }
}

/// Producer handle of [`CrossbeamHandoff`].
#[derive(Debug)]
pub struct CrossbeamProducer<T> {
    tx: crossbeam_channel::Sender<Option<T>>,
    shared: Arc<Shared>,
}

/// Consumer handle of [`CrossbeamHandoff`].
#[derive(Debug)]
pub struct CrossbeamConsumer<T> {
    rx: Option<crossbeam_channel::Receiver<Option<T>>>,
    shared: Arc<Shared>,
}

impl Handoff for CrossbeamHandoff {
    type Producer<T: Send + 'static> = CrossbeamProducer<T>;
    type Consumer<T: Send + 'static> = CrossbeamConsumer<T>;

    fn name(&self) -> String {
        "crossbeam".to_string()
    }

    fn capacity(&self) -> Option<usize> {
        Some(self.capacity)
    }

    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<Self::Producer<T>>, Self::Consumer<T>), ConfigError> {
        check_producers("crossbeam", producers)?;
        check_capacity("crossbeam", self.capacity)?;
        let (tx, rx) = crossbeam_channel::bounded(self.capacity);
        let shared = Shared::new(producers, false);
        let txs = (0..producers)
            .map(|_| CrossbeamProducer { tx: tx.clone(), shared: shared.clone() })
            .collect();
        Ok((txs, CrossbeamConsumer { rx: Some(rx), shared }))
    }
}

impl<T: Send + 'static> Producer<T> for CrossbeamProducer<T> {
    #[inline]
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        if self.shared.is_closed() {
            return Err(SendError(msg));
        }
        self.tx.send(Some(msg)).map_err(|e| SendError(e.into_inner().expect("a message")))
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        if self.shared.is_closed() {
            return Err(TrySendError::Closed(msg));
        }
        self.tx.try_send(Some(msg)).map_err(|e| match e {
            crossbeam_channel::TrySendError::Full(m) => TrySendError::Full(m.expect("a message")),
            crossbeam_channel::TrySendError::Disconnected(m) => {
                TrySendError::Closed(m.expect("a message"))
            }
        })
    }

    fn close(&self) {
        if !self.shared.closed.swap(true, Ordering::AcqRel) {
            // Wake a consumer blocked in `recv`; fails only when the consumer is gone.
            let _ = self.tx.send(None);
        }
    }

    fn depth(&self) -> usize {
        self.tx.len()
    }
}

impl<T: Send + 'static> CrossbeamConsumer<T> {
    /// After the close marker: hand out what is left, then end for good.
    fn drain_after_close(&mut self) -> Option<T> {
        while let Some(rx) = &self.rx {
            match rx.try_recv() {
                Ok(Some(m)) => return Some(m),
                Ok(None) => continue,
                Err(_) => self.rx = None,
            }
        }
        None
    }
}

impl<T: Send + 'static> Consumer<T> for CrossbeamConsumer<T> {
    #[inline]
    fn recv(&mut self) -> Option<T> {
        let rx = self.rx.as_ref()?;
        if !self.shared.is_closed() {
            match rx.recv() {
                Ok(Some(m)) => return Some(m),
                Ok(None) => {}
                Err(_) => {
                    self.rx = None;
                    return None;
                }
            }
        }
        self.drain_after_close()
    }

    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(rx) = self.rx.as_ref() else { return Err(TryRecvError::Ended) };
        match rx.try_recv() {
            Ok(Some(m)) => Ok(m),
            Ok(None) => self.drain_after_close().ok_or(TryRecvError::Ended),
            Err(crossbeam_channel::TryRecvError::Empty) => {
                if self.shared.is_closed() {
                    self.drain_after_close().ok_or(TryRecvError::Ended)
                } else {
                    Err(TryRecvError::Empty)
                }
            }
            Err(crossbeam_channel::TryRecvError::Disconnected) => {
                self.rx = None;
                Err(TryRecvError::Ended)
            }
        }
    }

    fn depth(&self) -> usize {
        self.rx.as_ref().map_or(0, |rx| rx.len())
    }
}

// ---------------------------------------------------------------------------------------
// std::sync::mpsc::sync_channel
// ---------------------------------------------------------------------------------------

/// `std::sync::mpsc::sync_channel(capacity)`.
#[derive(Debug, Clone)]
pub struct StdMpscHandoff {
    capacity: usize,
}

impl StdMpscHandoff {
    /// A bounded std channel; `None` means [`DEFAULT_PEER_CAPACITY`].
    pub fn new(capacity: Option<usize>) -> Self {
        StdMpscHandoff { capacity: capacity.unwrap_or(DEFAULT_PEER_CAPACITY) }
    }
}

/// Producer handle of [`StdMpscHandoff`].
#[derive(Debug)]
pub struct StdMpscProducer<T> {
    tx: mpsc::SyncSender<Option<T>>,
    shared: Arc<Shared>,
    index: usize,
    capacity: usize,
}

/// Consumer handle of [`StdMpscHandoff`].
#[derive(Debug)]
pub struct StdMpscConsumer<T> {
    rx: Option<mpsc::Receiver<Option<T>>>,
    shared: Arc<Shared>,
    capacity: usize,
}

impl Handoff for StdMpscHandoff {
    type Producer<T: Send + 'static> = StdMpscProducer<T>;
    type Consumer<T: Send + 'static> = StdMpscConsumer<T>;

    fn name(&self) -> String {
        "std-mpsc".to_string()
    }

    fn capacity(&self) -> Option<usize> {
        Some(self.capacity)
    }

    fn open<T: Send + 'static>(
        &self,
        producers: usize,
    ) -> Result<(Vec<Self::Producer<T>>, Self::Consumer<T>), ConfigError> {
        check_producers("std-mpsc", producers)?;
        check_capacity("std-mpsc", self.capacity)?;
        let (tx, rx) = mpsc::sync_channel(self.capacity);
        let shared = Shared::new(producers, true);
        let capacity = self.capacity;
        let txs = (0..producers)
            .map(|index| StdMpscProducer {
                tx: tx.clone(),
                shared: shared.clone(),
                index,
                capacity,
            })
            .collect();
        Ok((txs, StdMpscConsumer { rx: Some(rx), shared, capacity }))
    }
}

impl<T: Send + 'static> Producer<T> for StdMpscProducer<T> {
    #[inline]
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        if self.shared.is_closed() {
            return Err(SendError(msg));
        }
        match self.tx.send(Some(msg)) {
            Ok(()) => {
                self.shared.count_sent(self.index);
                Ok(())
            }
            Err(e) => Err(SendError(e.0.expect("a message"))),
        }
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        if self.shared.is_closed() {
            return Err(TrySendError::Closed(msg));
        }
        match self.tx.try_send(Some(msg)) {
            Ok(()) => {
                self.shared.count_sent(self.index);
                Ok(())
            }
            Err(mpsc::TrySendError::Full(m)) => Err(TrySendError::Full(m.expect("a message"))),
            Err(mpsc::TrySendError::Disconnected(m)) => {
                Err(TrySendError::Closed(m.expect("a message")))
            }
        }
    }

    fn close(&self) {
        if !self.shared.closed.swap(true, Ordering::AcqRel) {
            let _ = self.tx.send(None);
        }
    }

    fn depth(&self) -> usize {
        self.shared.counted_depth(self.capacity)
    }
}

impl<T: Send + 'static> StdMpscConsumer<T> {
    fn drain_after_close(&mut self) -> Option<T> {
        while let Some(rx) = &self.rx {
            match rx.try_recv() {
                Ok(Some(m)) => {
                    self.shared.count_received(1);
                    return Some(m);
                }
                Ok(None) => continue,
                Err(_) => self.rx = None,
            }
        }
        None
    }
}

impl<T: Send + 'static> Consumer<T> for StdMpscConsumer<T> {
    #[inline]
    fn recv(&mut self) -> Option<T> {
        let rx = self.rx.as_ref()?;
        if !self.shared.is_closed() {
            match rx.recv() {
                Ok(Some(m)) => {
                    self.shared.count_received(1);
                    return Some(m);
                }
                Ok(None) => {}
                Err(_) => {
                    self.rx = None;
                    return None;
                }
            }
        }
        self.drain_after_close()
    }

    fn try_recv(&mut self) -> Result<T, TryRecvError> {
        let Some(rx) = self.rx.as_ref() else { return Err(TryRecvError::Ended) };
        match rx.try_recv() {
            Ok(Some(m)) => {
                self.shared.count_received(1);
                Ok(m)
            }
            Ok(None) => self.drain_after_close().ok_or(TryRecvError::Ended),
            Err(mpsc::TryRecvError::Empty) => {
                if self.shared.is_closed() {
                    self.drain_after_close().ok_or(TryRecvError::Ended)
                } else {
                    Err(TryRecvError::Empty)
                }
            }
            Err(mpsc::TryRecvError::Disconnected) => {
                self.rx = None;
                Err(TryRecvError::Ended)
            }
        }
    }

    fn depth(&self) -> usize {
        self.shared.counted_depth(self.capacity)
    }
}

// ---------------------------------------------------------------------------------------
// disruptor 4.x (event poller)
// ---------------------------------------------------------------------------------------

/// One ring slot of the disruptor peer. The crate hands its consumer `&E`, but the contract
/// moves messages out, so the slot holds an `Option<T>` behind an `UnsafeCell`.
struct Slot<T>(UnsafeCell<Option<T>>);

// SAFETY: a slot is touched by one thread at a time, handed over by the crate's sequence
// barriers: a producer writes it only between claiming its sequence and publishing it
// (`&mut E` from the crate, exclusive), the one consumer only while an `EventGuard` covers
// that sequence, and the crate does not let a producer claim the sequence again until the
// guard is dropped. So sharing `&Slot<T>` across threads is like sharing a `Mutex<Option<T>>`
// whose lock is the sequence: it needs `T: Send`, not `T: Sync`.
unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Slot<T> {
    /// Moves the message out of a slot that this consumer's guard covers.
    ///
    /// # Safety
    /// The caller holds the crate's `EventGuard` covering this slot's sequence, and is the
    /// only consumer of the ring: no other thread accesses the slot meanwhile.
    unsafe fn take(&self) -> Option<T> {
        // SAFETY: exclusive access for the guard's lifetime, per the caller's contract.
        unsafe { (*self.0.get()).take() }
    }
}

/// How the disruptor peer's producer side is built.
enum DisruptorTx<T: Send + 'static> {
    Single(disruptor::SingleProducer<Slot<T>, disruptor::SingleConsumerBarrier>),
    Multi(disruptor::MultiProducer<Slot<T>, disruptor::SingleConsumerBarrier>),
}

/// How the disruptor peer's consumer side is built.
enum DisruptorRx<T: Send + 'static> {
    Single(disruptor::EventPoller<Slot<T>, disruptor::SingleProducerBarrier>),
    Multi(disruptor::EventPoller<Slot<T>, disruptor::MultiProducerBarrier>),
}

/// The smallest ring the crate's multi-producer sequencer accepts (it panics below).
pub const DISRUPTOR_RS_MULTI_MIN: usize = 64;

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

/// State of the disruptor peer shared by all handles.
#[derive(Debug)]
struct RsShared {
    counts: Arc<Shared>,
    consumer_gone: CachePadded<AtomicBool>,
    size: usize,
}

/// Producer handle of [`DisruptorRsHandoff`].
pub struct DisruptorRsProducer<T: Send + 'static> {
    tx: DisruptorTx<T>,
    shared: Arc<RsShared>,
    index: usize,
}

impl<T: Send + 'static> std::fmt::Debug for DisruptorRsProducer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisruptorRsProducer").field("index", &self.index).finish()
    }
}

/// Consumer handle of [`DisruptorRsHandoff`].
pub struct DisruptorRsConsumer<T: Send + 'static> {
    rx: DisruptorRx<T>,
    shared: Arc<RsShared>,
    ended: bool,
}

impl<T: Send + 'static> std::fmt::Debug for DisruptorRsConsumer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DisruptorRsConsumer").field("ended", &self.ended).finish()
    }
}

impl<T: Send + 'static> Drop for DisruptorRsConsumer<T> {
    fn drop(&mut self) {
        self.shared.consumer_gone.store(true, Ordering::Release);
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
            counts: Shared::new(producers, true),
            consumer_gone: CachePadded::new(AtomicBool::new(false)),
            size: self.size,
        });
        let factory = || Slot(UnsafeCell::new(None));
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
            .map(|(index, tx)| DisruptorRsProducer { tx, shared: shared.clone(), index })
            .collect();
        Ok((producers, DisruptorRsConsumer { rx, shared, ended: false }))
    }
}

/// Spins briefly, then yields: the adapter's wait for both sides.
#[derive(Debug, Default)]
struct Backoff(u32);

impl Backoff {
    #[inline]
    fn snooze(&mut self) {
        if self.0 < 64 {
            std::hint::spin_loop();
            self.0 += 1;
        } else {
            std::thread::yield_now();
        }
    }
}

impl<T: Send + 'static> DisruptorRsProducer<T> {
    #[inline]
    fn try_publish(&mut self, msg: &mut Option<T>) -> bool {
        use disruptor::Producer as _;
        let write = |slot: &mut Slot<T>| *slot.0.get_mut() = msg.take();
        match &mut self.tx {
            DisruptorTx::Single(p) => p.try_publish(write).is_ok(),
            DisruptorTx::Multi(p) => p.try_publish(write).is_ok(),
        }
    }

    fn refused(&self) -> bool {
        self.shared.counts.is_closed() || self.shared.consumer_gone.load(Ordering::Acquire)
    }
}

impl<T: Send + 'static> Producer<T> for DisruptorRsProducer<T> {
    #[inline]
    fn send(&mut self, msg: T) -> Result<(), SendError<T>> {
        let mut msg = Some(msg);
        let mut backoff = Backoff::default();
        loop {
            if self.refused() {
                return Err(SendError(msg.take().expect("unsent message")));
            }
            if self.try_publish(&mut msg) {
                self.shared.counts.count_sent(self.index);
                return Ok(());
            }
            backoff.snooze();
        }
    }

    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>> {
        if self.refused() {
            return Err(TrySendError::Closed(msg));
        }
        let mut msg = Some(msg);
        if self.try_publish(&mut msg) {
            self.shared.counts.count_sent(self.index);
            Ok(())
        } else {
            Err(TrySendError::Full(msg.take().expect("unsent message")))
        }
    }

    fn close(&self) {
        self.shared.counts.closed.store(true, Ordering::Release);
    }

    fn depth(&self) -> usize {
        self.shared.counts.counted_depth(self.shared.size)
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
                    // SAFETY: `guard` covers this slot and this adapter is the ring's only
                    // consumer (one poller, made in `open`).
                    if let Some(m) = unsafe { slot.take() } {
                        ($f)(m);
                    }
                    n += 1;
                }
                Some(n)
            }
            Err(disruptor::Polling::NoEvents) => Some(0),
            Err(disruptor::Polling::Shutdown) => None,
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
        let got = match &mut self.rx {
            DisruptorRx::Single(p) => poll_into!(p, max, f),
            DisruptorRx::Multi(p) => poll_into!(p, max, f),
        };
        match got {
            Some(0) if self.shared.counts.is_closed() => {
                // Closed: everything published before `close` is visible now; one more poll
                // picks up the rest, then the channel has ended.
                let again = match &mut self.rx {
                    DisruptorRx::Single(p) => poll_into!(p, max, f),
                    DisruptorRx::Multi(p) => poll_into!(p, max, f),
                };
                match again {
                    Some(n) if n > 0 => {
                        self.shared.counts.count_received(n as u64);
                        Some(n)
                    }
                    _ => {
                        self.ended = true;
                        None
                    }
                }
            }
            Some(n) => {
                if n > 0 {
                    self.shared.counts.count_received(n as u64);
                }
                Some(n)
            }
            None => {
                self.ended = true;
                None
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
        let mut backoff = Backoff::default();
        loop {
            match self.poll_batch(max.max(1), &mut f) {
                None => return 0,
                Some(0) => backoff.snooze(),
                Some(n) => return n,
            }
        }
    }

    fn depth(&self) -> usize {
        self.shared.counts.counted_depth(self.shared.size)
    }
}
