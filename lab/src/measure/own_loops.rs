//! Our own variants, each driven by its crate's own API in a plain loop: the `X/own-loop`
//! rows beside `X` (`crate::measure::calibration`), so that the harness's share of our rows
//! is measured in the same rounds as the peers' is (STYLE.md item 19).
//!
//! Each loop keeps what the lab's cell does that is the handoff's work, and nothing else:
//! the lab's message (`handoff::Message<N>`, built and stamped every `sample_every`-th as
//! the harness does), the same P, capacity, wait strategy and thread placement, and the
//! lab's check of every message (count, per-producer order, checksum, through
//! [`crate::measure::plain`]). What it leaves out is the harness: the `Handoff` contract
//! (owned messages moved through an adapter), the consumer's batch and latency recording,
//! per-thread accounting and counters.
//!
//! * `ring`: the Disruptor API, as a user of the crate writes it: `ring::Builder` with one
//!   handler (its batch event processor thread checks each event in place), the single
//!   producer sequencer at P=1 and the multi-producer one above (as the lab's adapter
//!   chooses), each producer writing its message into the claimed slot with `publish`.
//! * `locked`: `LinkedBlockingQueue::put`, and `take_batch` of up to `--batch` (`take` with
//!   `--batch 1`), the last producer closing the queue.
//! * `naive`: `NaiveBuffer::push` and the consumer's blocking `swap_out` (drain the whole
//!   buffer, then the boxes one by one).
//! * `reactive`: a `Sink` emitting into `publish_on(Scheduler::single(), prefetch)` with a
//!   plain subscriber (unbounded request, a check per `on_next`): Reactor's
//!   `Flux.create(sink).publishOn(single).subscribe(..)`; the sink's emitters wait for
//!   `publish_on`'s replenish requests.
//!
//! * the planted faults of an own loop (`faults::OwnLoopFault`, `LAB_FAULTS=1`):
//!   crossbeam's own loop with a consumer that loses every 1000th message before its check,
//!   or spins 500 ns a message.
//!
//! A consumer thread the crate starts itself is pinned by the crate's own means where it
//! has one: the ring's processor when its thread starts (`Builder::on_thread_start`, the
//! Disruptor's thread factory), before the run, as the harness pins its consumer before the
//! barrier. The scheduler's worker has none and pins itself on its first message.

use crate::measure::faults::{self, OwnLoopFault};
use crate::measure::harness::CellSpec;
use crate::measure::plain::{
    self, channel_run, join_producers, spawn_producers, Ends, Finish, Joined, Observer,
};
use handoff::{Checker, Message};
use ring::{WaitKind, WaitStrategy};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::time::Instant;

/// The variants with an own loop here.
pub const OURS: &[&str] = &["locked", "ring", "naive", "reactive"];

/// One run of our variant `variant`'s own loop, `per` messages per producer, threads on
/// `cpus` (consumer first) when placed.
pub(crate) fn run<const N: usize>(
    variant: &str,
    spec: &CellSpec,
    per: &[u64],
    cpus: &Option<Vec<usize>>,
) -> Result<Ends, String> {
    let every = spec.sample_every;
    match variant {
        "ring" => {
            let wait: WaitKind = spec
                .wait
                .as_deref()
                .unwrap_or("blocking")
                .parse()
                .map_err(|e: ring::UnknownWaitKind| e.to_string())?;
            let size = spec.ring_size;
            match wait {
                WaitKind::Blocking => ring_run::<ring::Blocking, N>(per, cpus, every, size),
                WaitKind::Sleeping => ring_run::<ring::Sleeping, N>(per, cpus, every, size),
                WaitKind::Yielding => ring_run::<ring::Yielding, N>(per, cpus, every, size),
                WaitKind::BusySpin => ring_run::<ring::BusySpin, N>(per, cpus, every, size),
                WaitKind::JavaBlocking => ring_run::<ring::JavaBlocking, N>(per, cpus, every, size),
            }
        }
        "locked" => locked_run::<N>(per, cpus, every, spec.capacity, spec.batch),
        "naive" => naive_run::<N>(per, cpus, every),
        "reactive" => reactive_run::<N>(per, cpus, every, spec.prefetch),
        other => {
            if let Some(fault) = faults::own_loop_fault(other) {
                return fault_run::<N>(fault, spec, per, cpus);
            }
            Err(format!(
                "no own loop for '{other}'; valid: {}, crossbeam, std-mpsc, disruptor-rs",
                OURS.join(", ")
            ))
        }
    }
}

/// A producer's handle of a queue that the last one to finish closes (the crates' own
/// close; the lab's adapters do the same when their last producer drops).
pub(crate) struct Last<Q> {
    pub(crate) q: Q,
    live: Arc<AtomicUsize>,
    close: fn(&Q),
}

impl<Q> Last<Q> {
    /// The first handle of `q`, which `close` closes.
    pub(crate) fn new(q: Q, close: fn(&Q)) -> Self {
        Last { q, live: Arc::new(AtomicUsize::new(1)), close }
    }
}

impl<Q: Clone> Clone for Last<Q> {
    fn clone(&self) -> Self {
        self.live.fetch_add(1, Ordering::Relaxed);
        Last { q: self.q.clone(), live: self.live.clone(), close: self.close }
    }
}

impl<Q> Drop for Last<Q> {
    fn drop(&mut self) {
        // AcqRel: the last one's close follows every other handle's sends.
        if self.live.fetch_sub(1, Ordering::AcqRel) == 1 {
            (self.close)(&self.q);
        }
    }
}

/// The ring's own loop through its Disruptor API.
fn ring_run<W: WaitStrategy, const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    size: usize,
) -> Result<Ends, String> {
    let finish = Finish::default();
    // The processor pins itself when its thread starts, before the run, as the harness pins
    // its consumer before the barrier; the observer then pins nothing.
    let mut obs = Observer::new(per, &None, finish.clone());
    let pin_failed: Arc<Mutex<Option<String>>> = Arc::default();
    let (cpus0, failed) = (cpus.clone(), pin_failed.clone());
    let b = ring::Builder::<Message<N>, W>::new(size, Message::<N>::default)
        .on_thread_start(move |_| {
            if let Err(why) = plain::pin(&cpus0, 0) {
                *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
            }
        })
        .handler(move |m: &Message<N>, _seq, _end_of_batch| obs.observe(m));
    let barrier = Arc::new(Barrier::new(per.len()));
    let (producers, procs) = if per.len() == 1 {
        let (tx, procs) = b.build_single().map_err(|e| format!("ring: {e}"))?;
        let send = |tx: &mut ring::SingleProducer<Message<N>, W>, m: Message<N>| {
            tx.publish(|e| *e = m).is_ok()
        };
        (spawn_producers(per, cpus, every, &barrier, vec![tx], send), procs)
    } else {
        let (tx, procs) = b.build_multi().map_err(|e| format!("ring: {e}"))?;
        let txs: Vec<_> = per.iter().map(|_| tx.clone()).collect();
        drop(tx);
        let send = |tx: &mut ring::MultiProducer<Message<N>, W>, m: Message<N>| {
            tx.publish(|e| *e = m).is_ok()
        };
        (spawn_producers(per, cpus, every, &barrier, txs, send), procs)
    };
    let joined = join_producers(producers);
    // Every producer handle is dropped by now: the processor drains what was published,
    // then ends.
    procs.join().map_err(|e| format!("ring: the processor failed: {e}"))?;
    if let Some(why) = pin_failed.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(why);
    }
    let (starts, failures) = joined?;
    plain::ends_from(&finish, starts, failures)
}

/// The locked queue's own loop: `put`, and `take_batch` of up to `batch` (the crate's
/// blocking batch take, one acquisition of the take lock per batch, as the lab's consumer
/// takes them; `take` one at a time with `batch` 1). One `take` per message ran the lab's
/// row well above this loop: that was not the crate's best plain use (docs/harness.md).
fn locked_run<const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    capacity: Option<usize>,
    batch: usize,
) -> Result<Ends, String> {
    let q = match capacity {
        None => locked_queue::LinkedBlockingQueue::<Message<N>>::new(),
        Some(c) => locked_queue::LinkedBlockingQueue::with_capacity(c)
            .map_err(|e| format!("locked: {e}"))?,
    };
    let q = Arc::new(q);
    let rx = q.clone();
    let tx = Last::new(q, |q: &Arc<locked_queue::LinkedBlockingQueue<Message<N>>>| q.close());
    channel_run(
        per,
        cpus,
        every,
        tx,
        |tx: &mut Last<Arc<locked_queue::LinkedBlockingQueue<Message<N>>>>, m| tx.q.put(m).is_ok(),
        move |checker: &mut Checker| {
            if batch <= 1 {
                while let Some(m) = rx.take() {
                    checker.observe(&m);
                }
            } else {
                while rx.take_batch(batch, |m| checker.observe(&m)) > 0 {}
            }
        },
    )
}

/// The naive buffer's own loop: `push`, and the consumer's blocking `swap_out`.
fn naive_run<const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
) -> Result<Ends, String> {
    use naive_buffer::{NaiveBuffer, Swap};
    let buf = Arc::new(NaiveBuffer::<Message<N>>::new());
    let rx = buf.clone();
    let tx = Last::new(buf, |b: &Arc<NaiveBuffer<Message<N>>>| b.close());
    channel_run(
        per,
        cpus,
        every,
        tx,
        |tx: &mut Last<Arc<NaiveBuffer<Message<N>>>>, m| tx.q.push(m).is_ok(),
        move |checker: &mut Checker| loop {
            match rx.swap_out(true) {
                Swap::Items(items) => items.iter().for_each(|m| checker.observe(m)),
                Swap::Ended => break,
                Swap::Empty => {}
            }
        },
    )
}

/// The producer threads a source started when it was subscribed.
type Started = Arc<Mutex<Option<Vec<Joined<(Instant, u64)>>>>>;

/// Reactor's `Flux.create`: at subscribe, a [`reactive::sink::Sink`] around the
/// subscriber, one handle per producer thread (the last to finish completes it); the
/// producers start at once and wait at their barrier.
struct Create {
    per: Vec<u64>,
    cpus: Option<Vec<usize>>,
    every: u64,
    barrier: Arc<Barrier>,
    started: Started,
}

struct CreateOf<const N: usize>(Create);

impl<const N: usize> reactive::Publisher for CreateOf<N> {
    type Item = Message<N>;

    fn subscribe<S: reactive::Subscriber<Message<N>> + Send + 'static>(self, s: S) {
        let c = self.0;
        let sink = reactive::sink::Sink::unicast(s);
        let tx = Last::new(sink, |s: &reactive::sink::Sink<Message<N>, S>| s.complete());
        let txs: Vec<_> = c.per.iter().map(|_| tx.clone()).collect();
        drop(tx);
        let send = |tx: &mut Last<reactive::sink::Sink<Message<N>, S>>, m: Message<N>| {
            tx.q.emit(m).is_ok()
        };
        let hs = spawn_producers(&c.per, &c.cpus, c.every, &c.barrier, txs, send);
        *c.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(hs);
    }
}

/// The plain subscriber: unbounded demand, the lab's check per element.
struct Check {
    obs: Observer,
    done: mpsc::Sender<Result<(), reactive::Error>>,
}

impl<const N: usize> reactive::Subscriber<Message<N>> for Check {
    fn on_subscribe<Q: reactive::Subscription>(&mut self, s: &Q) {
        s.request(reactive::UNBOUNDED);
    }

    #[inline]
    fn on_next<Q: reactive::Subscription>(&mut self, m: Message<N>, _s: &Q) {
        self.obs.observe(&m);
    }

    fn on_error(&mut self, error: reactive::Error) {
        let _ = self.done.send(Err(error));
    }

    fn on_complete(&mut self) {
        let _ = self.done.send(Ok(()));
    }
}

/// `publish_on`'s own loop: a sink's emitters → `publish_on(single, prefetch)` → a plain
/// subscriber on the scheduler's worker.
fn reactive_run<const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    prefetch: usize,
) -> Result<Ends, String> {
    let finish = Finish::default();
    let (done, ended) = mpsc::channel();
    let check = Check { obs: Observer::new(per, cpus, finish.clone()), done };
    let started = Started::default();
    let source = CreateOf::<N>(Create {
        per: per.to_vec(),
        cpus: cpus.clone(),
        every,
        barrier: Arc::new(Barrier::new(per.len())),
        started: started.clone(),
    });
    let scheduler = reactive::Scheduler::single();
    reactive::Flux(source).publish_on(&scheduler, prefetch).subscribe(check);
    let producers = started.lock().unwrap_or_else(|e| e.into_inner()).take();
    let producers = producers.ok_or("reactive: publish_on did not subscribe to the source")?;
    let joined = join_producers(producers);
    // The last producer completed the sink: the subscriber ends after every element.
    let end = ended.recv().map_err(|_| "reactive: the subscriber was dropped unended");
    scheduler.dispose()?;
    end?.map_err(|e| format!("reactive: the stream failed: {e}"))?;
    let (starts, failures) = joined?;
    plain::ends_from(&finish, starts, failures)
}

/// One run of crossbeam's own loop with `fault` planted in its consumer.
fn fault_run<const N: usize>(
    fault: OwnLoopFault,
    spec: &CellSpec,
    per: &[u64],
    cpus: &Option<Vec<usize>>,
) -> Result<Ends, String> {
    let (tx, rx) = crossbeam_channel::bounded::<Message<N>>(spec.ring_size);
    channel_run(
        per,
        cpus,
        spec.sample_every,
        tx,
        |tx: &mut crossbeam_channel::Sender<Message<N>>, m| tx.send(m).is_ok(),
        move |checker: &mut Checker| {
            for (i, m) in rx.iter().enumerate() {
                match fault {
                    OwnLoopFault::Lossy if (i + 1) % 1000 == 0 => continue,
                    OwnLoopFault::Lossy => {}
                    OwnLoopFault::Slow => faults::spin_slow(),
                }
                checker.observe(&m);
            }
        },
    )
}
