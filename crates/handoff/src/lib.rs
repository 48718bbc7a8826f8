//! The handoff contract: what every variant in the lab implements, so that the lab, the
//! tests and the benches drive a locked queue, a Disruptor ring, a reactive pipeline or a
//! naive buffer through one code path.
//!
//! # Design
//!
//! * A [`Handoff`] is a *flavor* with its settings (capacity, wait strategy, …). Its
//!   [`Handoff::open`] makes a channel for `P` producer threads and one consumer and returns
//!   `P` [`Producer`] handles and one [`Consumer`]. Knowing `P` up front lets a variant pick
//!   a cheaper design for one producer (the Disruptor's single-producer sequencer).
//! * Hot loops are generic over these traits and monomorphised; the choice of variant by
//!   name at run time is one `match` outside the loop (enum dispatch, as crossbeam-channel's
//!   `SenderFlavor`), done by the lab.
//! * Close: [`Producer::close`] closes the channel for every producer; a send after it
//!   returns [`SendError`] carrying the message back. The channel also ends when every
//!   producer handle is dropped. Either way the consumer receives everything sent before,
//!   then the end ([`Consumer::recv`] → `None`). Dropping the consumer makes sends fail the
//!   same way, so that no producer blocks forever on a dead channel.
//! * [`Message`] is the `Copy` struct the lab sends: producer id, per-producer sequence,
//!   a send-timestamp slot and a payload of `N` bytes derived from `(producer, seq)` so the
//!   consumer can check it ([`Checker`]).
//! * [`conformance`] holds the one suite every variant passes; [`conformance_tests!`]
//!   expands it into `#[test]` functions in a variant's crate.
//! * [`trace`] fixes the shape of the `tracing` events variants emit (counters, waits,
//!   sampled flows) so any recorder can turn them into Chrome-trace tracks. Variants depend
//!   on `tracing` only, never on a recorder.
//!
//! # Guarantees every variant gives (checked by the suite)
//! No loss, no duplication, per-producer FIFO; a bounded variant never holds more than its
//! capacity; nothing is lost at close; each message left in a dropped channel is dropped
//! exactly once; no lost wake-up.

#![forbid(unsafe_code)]

use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod conformance;
pub mod trace;

/// A send that could not happen because the channel is closed or its consumer is gone.
/// The message comes back: nothing is lost.
#[derive(PartialEq, Eq, Clone, Copy)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The message that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sending on a closed channel")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// Why [`Producer::try_send`] failed. Both cases give the message back.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TrySendError<T> {
    /// The channel is at capacity.
    Full(T),
    /// The channel is closed or its consumer is gone.
    Closed(T),
}

impl<T> TrySendError<T> {
    /// The message that was not sent.
    pub fn into_inner(self) -> T {
        match self {
            TrySendError::Full(t) | TrySendError::Closed(t) => t,
        }
    }
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("Full(..)"),
            TrySendError::Closed(_) => f.write_str("Closed(..)"),
        }
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrySendError::Full(_) => f.write_str("sending on a full channel"),
            TrySendError::Closed(_) => f.write_str("sending on a closed channel"),
        }
    }
}

impl<T> std::error::Error for TrySendError<T> {}

/// Why [`Consumer::try_recv`] returned nothing.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum TryRecvError {
    /// Nothing is available now; more may come.
    Empty,
    /// Closed (or every producer gone) and fully drained: nothing more will come.
    Ended,
}

/// A channel could not be built with these settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl ConfigError {
    /// An error with this message.
    pub fn new(msg: impl Into<String>) -> Self {
        ConfigError(msg.into())
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// One producer thread's handle. Dropping the last one ends the channel.
pub trait Producer<T>: Send {
    /// Sends, blocking while a bounded channel is full.
    fn send(&mut self, msg: T) -> Result<(), SendError<T>>;

    /// Sends if there is room now; never blocks.
    fn try_send(&mut self, msg: T) -> Result<(), TrySendError<T>>;

    /// Closes the channel for every producer. Messages already sent stay receivable.
    fn close(&self);

    /// Messages in the channel now (sent, not yet received); approximate under
    /// concurrency, but never above the capacity for a bounded variant.
    fn depth(&self) -> usize;
}

/// The one consumer's handle.
pub trait Consumer<T>: Send {
    /// Blocks until a message arrives (`Some`) or the channel has ended (`None`).
    fn recv(&mut self) -> Option<T>;

    /// Returns a message if one is available now.
    fn try_recv(&mut self) -> Result<T, TryRecvError>;

    /// Blocks until at least one message is available or the channel has ended, then hands
    /// every message available now (at most `max`) to `f`, in order. Returns how many;
    /// `0` means the channel has ended. Variants override it with their batch path (the
    /// Disruptor's batch processor, LBQ's `drainTo`, the naive buffer's swap).
    fn recv_batch<F: FnMut(T)>(&mut self, max: usize, mut f: F) -> usize {
        let Some(first) = self.recv() else { return 0 };
        f(first);
        let mut n = 1;
        while n < max {
            match self.try_recv() {
                Ok(m) => {
                    f(m);
                    n += 1;
                }
                Err(_) => break,
            }
        }
        n
    }

    /// Messages in the channel now; see [`Producer::depth`].
    fn depth(&self) -> usize;
}

/// A handoff design with its settings: makes channels.
pub trait Handoff: Send + Sync {
    /// The producer handle for messages of type `T`.
    type Producer<T: Send + 'static>: Producer<T> + 'static;
    /// The consumer handle for messages of type `T`.
    type Consumer<T: Send + 'static>: Consumer<T> + 'static;

    /// A short name, e.g. `"locked"`.
    fn name(&self) -> String;

    /// The most messages the channel holds, or `None` when unbounded.
    fn capacity(&self) -> Option<usize>;

    /// A channel for `producers` producer threads and one consumer.
    fn open<T: Send + 'static>(&self, producers: usize) -> Result<Channel<Self, T>, ConfigError>;
}

/// What [`Handoff::open`] gives: the producer handles and the consumer.
pub type Channel<H, T> = (Vec<<H as Handoff>::Producer<T>>, <H as Handoff>::Consumer<T>);

/// Nanoseconds since a process-wide epoch (the first call), from a monotonic clock.
/// Cheap enough to stamp sampled messages; comparable across threads of one process.
pub fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    Instant::now().duration_since(epoch).as_nanos() as u64
}

/// A message of the lab: `Copy`, fixed size, `N` payload bytes (the lab offers 16, 64 and
/// 256: `PAYLOADS` in `lab/src/measure/harness.rs`).
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Message<const N: usize> {
    /// Which producer sent it, `0..P`.
    pub producer: u32,
    /// Non-zero when the sender stamped [`Message::sent_ns`] (a sampled message).
    pub sampled: u32,
    /// Per-producer sequence number, from 0.
    pub seq: u64,
    /// [`now_ns`] at send, for sampled messages; 0 otherwise.
    pub sent_ns: u64,
    /// Bytes derived from `(producer, seq)`, checked by the consumer.
    pub payload: [u8; N],
}

impl<const N: usize> Default for Message<N> {
    fn default() -> Self {
        Message { producer: 0, sampled: 0, seq: 0, sent_ns: 0, payload: [0; N] }
    }
}

impl<const N: usize> fmt::Debug for Message<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("producer", &self.producer)
            .field("seq", &self.seq)
            .field("sampled", &self.sampled)
            .field("sent_ns", &self.sent_ns)
            .field("payload_len", &N)
            .finish()
    }
}

/// SplitMix64: a cheap, well-mixed hash for payload bytes and checksums.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<const N: usize> Message<N> {
    /// The message producer `producer` sends as number `seq`, payload filled.
    #[inline]
    pub fn new(producer: u32, seq: u64) -> Self {
        let mut payload = [0u8; N];
        let mut h = mix64(((producer as u64) << 40) ^ seq);
        for chunk in payload.chunks_mut(8) {
            let bytes = h.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
            h = mix64(h);
        }
        Message { producer, sampled: 0, seq, sent_ns: 0, payload }
    }

    /// This message's contribution to a run's checksum (order-independent sum).
    #[inline]
    pub fn digest(&self) -> u64 {
        let mut h = mix64(((self.producer as u64) << 40) ^ self.seq);
        for chunk in self.payload.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            h = mix64(h ^ u64::from_le_bytes(b));
        }
        h
    }
}

/// What a run's checks found. A run is valid only if `ok()`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Verdict {
    /// Messages the producers sent.
    pub sent: u64,
    /// Messages the consumer received.
    pub received: u64,
    /// Messages that arrived out of per-producer order (or duplicated).
    pub out_of_order: u64,
    /// Whether the checksum of what arrived equals the checksum of what was sent.
    pub checksum_ok: bool,
    /// Messages from a producer id outside `0..P`.
    pub unknown_producer: u64,
}

impl Verdict {
    /// True when nothing was lost, duplicated, reordered or corrupted.
    pub fn ok(&self) -> bool {
        self.sent == self.received
            && self.out_of_order == 0
            && self.checksum_ok
            && self.unknown_producer == 0
    }

    /// A one-line account of what failed, or "ok".
    pub fn describe(&self) -> String {
        if self.ok() {
            return "ok".to_string();
        }
        let mut parts = Vec::new();
        if self.sent != self.received {
            parts.push(format!("received {} of {} sent", self.received, self.sent));
        }
        if self.out_of_order > 0 {
            parts.push(format!("{} out of per-producer order", self.out_of_order));
        }
        if self.unknown_producer > 0 {
            parts.push(format!("{} from unknown producers", self.unknown_producer));
        }
        if !self.checksum_ok {
            parts.push("checksum mismatch".to_string());
        }
        parts.join(", ")
    }
}

/// The consumer-side check of a run: count, per-producer order, checksum. Allocates once
/// (one slot per producer), never per message.
#[derive(Debug, Clone)]
pub struct Checker {
    next_seq: Vec<u64>,
    received: u64,
    out_of_order: u64,
    unknown_producer: u64,
    checksum: u64,
}

impl Checker {
    /// A checker for `producers` producers.
    pub fn new(producers: usize) -> Self {
        Checker {
            next_seq: vec![0; producers],
            received: 0,
            out_of_order: 0,
            unknown_producer: 0,
            checksum: 0,
        }
    }

    /// Records one received message. Always inlined: it is the consumer's per-message work
    /// in every harness and plain loop, and a call per message where one caller inlines it
    /// and another does not would make the two loops differ by more than what they measure.
    #[inline(always)]
    pub fn observe<const N: usize>(&mut self, m: &Message<N>) {
        self.received += 1;
        self.checksum = self.checksum.wrapping_add(m.digest());
        match self.next_seq.get_mut(m.producer as usize) {
            Some(next) => {
                if m.seq != *next {
                    self.out_of_order += 1;
                }
                *next = m.seq.wrapping_add(1);
            }
            None => self.unknown_producer += 1,
        }
    }

    /// Messages received so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Compares what arrived with what producer `i` sent: `sent_per_producer[i]` messages
    /// numbered `0..n`.
    pub fn verdict<const N: usize>(&self, sent_per_producer: &[u64]) -> Verdict {
        self.verdict_against(sent_per_producer, expected_checksum::<N>(sent_per_producer))
    }

    /// [`Checker::verdict`] with the sent messages' checksum given: `expected` must be
    /// [`expected_checksum`] of `sent_per_producer` (a harness that repeats one run shape
    /// computes it once; it costs a digest per message).
    pub fn verdict_against(&self, sent_per_producer: &[u64], expected: u64) -> Verdict {
        let sent: u64 = sent_per_producer.iter().sum();
        let tails_ok = self.next_seq.len() == sent_per_producer.len()
            && self.next_seq.iter().zip(sent_per_producer).all(|(a, b)| a == b);
        Verdict {
            sent,
            received: self.received,
            out_of_order: self.out_of_order + u64::from(!tails_ok && self.received == sent),
            checksum_ok: expected == self.checksum,
            unknown_producer: self.unknown_producer,
        }
    }
}

/// The checksum a [`Checker`] reaches when producer `i` sent `sent_per_producer[i]`
/// messages numbered `0..n`, each received once.
pub fn expected_checksum<const N: usize>(sent_per_producer: &[u64]) -> u64 {
    let mut expected = 0u64;
    for (p, &n) in sent_per_producer.iter().enumerate() {
        for seq in 0..n {
            expected = expected.wrapping_add(Message::<N>::new(p as u32, seq).digest());
        }
    }
    expected
}

/// Splits `total` messages over `producers` as evenly as possible: the first
/// `total % producers` producers send one more. Returns the per-producer counts.
pub fn spread(total: u64, producers: usize) -> Vec<u64> {
    let p = producers.max(1) as u64;
    (0..p).map(|i| total / p + u64::from(i < total % p)).collect()
}

/// A bounded wait used by tests and tools: `Duration` helpers in one place.
pub fn deadline(after: Duration) -> Instant {
    Instant::now() + after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checker_accepts_a_faithful_run_and_flags_faults() {
        let sent = spread(1000, 3);
        assert_eq!(sent, vec![334, 333, 333]);
        let mut ok = Checker::new(3);
        for (p, &n) in sent.iter().enumerate() {
            for s in 0..n {
                ok.observe(&Message::<16>::new(p as u32, s));
            }
        }
        assert!(ok.verdict::<16>(&sent).ok());

        // A lost message.
        let mut lost = Checker::new(3);
        for (p, &n) in sent.iter().enumerate() {
            for s in 0..n {
                if !(p == 1 && s == 7) {
                    lost.observe(&Message::<16>::new(p as u32, s));
                }
            }
        }
        let v = lost.verdict::<16>(&sent);
        assert!(!v.ok());
        assert!(v.describe().contains("received 999 of 1000"), "{}", v.describe());

        // A swapped pair: same count and checksum, wrong order.
        let mut swapped = Checker::new(1);
        swapped.observe(&Message::<16>::new(0, 1));
        swapped.observe(&Message::<16>::new(0, 0));
        let v = swapped.verdict::<16>(&[2]);
        assert!(!v.ok() && v.out_of_order > 0);

        // A corrupted payload.
        let mut bad = Checker::new(1);
        let mut m = Message::<64>::new(0, 0);
        m.payload[63] ^= 1;
        bad.observe(&m);
        let v = bad.verdict::<64>(&[1]);
        assert!(!v.checksum_ok && !v.ok());
    }

    #[test]
    fn payload_depends_on_producer_and_seq() {
        assert_ne!(Message::<16>::new(0, 1).payload, Message::<16>::new(1, 0).payload);
        assert_ne!(Message::<64>::new(0, 1).payload, Message::<64>::new(0, 2).payload);
        assert_eq!(std::mem::size_of::<Message<16>>(), 40);
    }
}
