//! The workloads a child runs, each generic over the handoff (`WithHandoff`, monomorphised
//! per variant) and each checking what it delivered.
//!
//! * [`PingPong`]: two channels of one variant, one message in flight: the pinger stamps,
//!   sends on the first, the echo sends it back on the second, the pinger records the round
//!   trip. [`floor`] is the same protocol through one atomic: the machine's own round trip.
//! * [`Rate`]: P producers on a schedule (open loop). Message `k` (producer `k mod P`, its
//!   number `k div P`) is due at `start + k / rate`; the consumer records `taken − due`
//!   (corrected: a stall is charged to every message it delayed, as wrk2 counts) and
//!   `taken − sent` (uncorrected, only to show what coordinated omission would hide).
//! * [`Pipeline`]: LMAX's one-to-three pipeline: a publisher on a schedule and three stages
//!   in a chain, each stage a channel of the variant; the last stage records `taken − due`.
//!
//! Timestamps are [`handoff::now_ns`] (one `Instant` read) on every side.

use super::depth::{self, Depths, DEPTH_FROM_NS};
use super::hdr::{self, record};
use super::journeys::{Journey, Slowest};
use super::LATE_NS;
use crate::machine::placement::{self, Placement};
use crate::measure::variants::WithHandoff;
use handoff::{now_ns, Checker, Consumer as _, Handoff, Message, Producer as _};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// The message every workload sends: the lab's 16-byte-payload message, checked on receipt.
pub type Msg = Message<16>;

/// Faults planted for the lab's own tests of the recording (never set by the command line).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Plant {
    /// The consumer sleeps [`Plant::stall_ns`] after every this many messages (0: never).
    pub stall_every: u64,
    /// How long a stall lasts, ns.
    pub stall_ns: u64,
    /// The consumer spins this long on each message before reading the clock, ns (a slow
    /// consumer).
    pub work_ns: u64,
    /// Each producer sends every message this long after it is due, ns (a fixed delay
    /// before the handoff, waited for as the schedule is: no CPU held).
    pub send_late_ns: u64,
}

impl Plant {
    /// Whether nothing is planted.
    pub fn is_none(&self) -> bool {
        *self == Plant::default()
    }

    #[inline]
    fn after_take(&self, taken: u64) {
        if self.work_ns > 0 {
            let until = now_ns() + self.work_ns;
            while now_ns() < until {
                std::hint::spin_loop();
            }
        }
        if self.stall_every > 0 && taken % self.stall_every == 0 {
            std::thread::sleep(Duration::from_nanos(self.stall_ns));
        }
    }
}

/// Pins the calling thread to `cpus[i]` where the run's threads each have a CPU.
fn pin(cpus: &Option<Vec<usize>>, i: usize) {
    if let Some(c) = cpus.as_ref().and_then(|c| c.get(i)) {
        // A thread that cannot be pinned runs where the kernel puts it: the run stays valid.
        let _ = placement::pin_current(*c);
    }
}

/// A channel's two ends for one producer.
type Ends<H> = (<H as Handoff>::Producer<Msg>, <H as Handoff>::Consumer<Msg>);

/// One channel for one producer.
fn open1<H: Handoff>(h: &H) -> Result<Ends<H>, String> {
    let (mut ps, c) = h.open::<Msg>(1).map_err(|e| e.to_string())?;
    Ok((ps.pop().ok_or("open gave no producer")?, c))
}

/// Ping-pong: `trips` round trips with one message in flight; the round trips, ns.
#[derive(Debug, Clone, Copy)]
pub struct PingPong {
    /// Round trips.
    pub trips: u64,
}

impl WithHandoff for PingPong {
    type Out = Result<Histogram<u64>, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        let (mut there, mut there_c) = open1(&h)?;
        let (mut back, mut back_c) = open1(&h)?;
        let cpus = placement::plan(Placement::Auto, 2)?;
        let echo_cpus = cpus.clone();
        let echo = std::thread::Builder::new()
            .name("echo".into())
            .spawn(move || -> Result<u64, String> {
                pin(&echo_cpus, 1);
                let mut n = 0;
                while let Some(m) = there_c.recv() {
                    back.send(m).map_err(|_| "the pinger is gone".to_string())?;
                    n += 1;
                }
                Ok(n)
            })
            .map_err(|e| format!("spawning the echo: {e}"))?;
        let trips = self.trips;
        let pinger = std::thread::Builder::new()
            .name("pinger".into())
            .spawn(move || -> Result<Histogram<u64>, String> {
                pin(&cpus, 0);
                let mut h = hdr::hist();
                for i in 0..trips {
                    let m = Msg::new(0, i);
                    let t = now_ns();
                    there.send(m).map_err(|_| "the echo is gone".to_string())?;
                    let r = back_c.recv().ok_or("the echo ended early")?;
                    record(&mut h, now_ns() - t);
                    if r != m {
                        return Err(format!("round trip {i} came back as seq {}", r.seq));
                    }
                }
                there.close();
                Ok(h)
            })
            .map_err(|e| format!("spawning the pinger: {e}"))?;
        let h = pinger.join().map_err(|_| "the pinger panicked".to_string())?;
        let n = echo.join().map_err(|_| "the echo panicked".to_string())??;
        let h = h?;
        if n != trips {
            return Err(format!("the echo saw {n} of {trips} messages"));
        }
        Ok(h)
    }
}

/// The machine's floor: the ping-pong protocol through one `AtomicU64` (the pinger writes
/// an odd value, the echo answers with the next even one), on the CPUs ping-pong uses, each
/// round trip timed as a handoff's is. `runner::speed::ping_pong` times the same protocol
/// untimed per trip (its mean is each fork's `cpu_ping_pong_ns`).
pub fn floor(trips: u64) -> Result<Histogram<u64>, String> {
    let line = Arc::new(AtomicU64::new(0));
    let cpus = placement::plan(Placement::Auto, 2)?;
    let (l, echo_cpus) = (Arc::clone(&line), cpus.clone());
    let echo = std::thread::spawn(move || {
        pin(&echo_cpus, 1);
        for i in 0..trips {
            while l.load(Ordering::Acquire) != 2 * i + 1 {
                std::hint::spin_loop();
            }
            l.store(2 * i + 2, Ordering::Release);
        }
    });
    let timed = std::thread::spawn(move || {
        pin(&cpus, 0);
        let mut h = hdr::hist();
        for i in 0..trips {
            let t = now_ns();
            line.store(2 * i + 1, Ordering::Release);
            while line.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
            record(&mut h, now_ns() - t);
        }
        h
    });
    let h = timed.join().map_err(|_| "the pinger panicked".to_string())?;
    echo.join().map_err(|_| "the echo panicked".to_string())?;
    Ok(h)
}

/// A fixed offered rate.
#[derive(Debug, Clone, Copy)]
pub struct Rate {
    /// Messages per second, all producers together.
    pub rate: f64,
    /// Producer threads.
    pub producers: usize,
    /// How long the schedule runs.
    pub duration: Duration,
    /// The test faults.
    pub plant: Plant,
}

/// What one fixed-rate run delivered.
#[derive(Debug)]
pub struct RateRun {
    /// From due to taken, ns (corrected).
    pub corrected: Histogram<u64>,
    /// From sent to taken, ns (uncorrected).
    pub uncorrected: Histogram<u64>,
    /// Messages the schedule held.
    pub planned: u64,
    /// Messages sent.
    pub sent: u64,
    /// Messages sent [`LATE_NS`] or more after they were due.
    pub late: u64,
    /// Messages never sent: due when the producers had to stop (twice the schedule's
    /// length, then they give up).
    pub unsent: u64,
    /// The depth behind each message taken [`DEPTH_FROM_NS`] or more after it was due
    /// (the pipeline: in its last stage's channel; the schedule alone: none).
    pub depths: Depths,
    /// The slowest messages taken, slowest first (the schedule alone: none).
    pub slowest: Vec<Journey>,
}

impl Rate {
    /// When message `k` (over all producers) is due, ns after the start.
    #[inline]
    fn due(&self, k: u64) -> u64 {
        (k as f64 * 1e9 / self.rate) as u64
    }

    fn planned(&self) -> u64 {
        ((self.duration.as_secs_f64() * self.rate).round() as u64).max(1)
    }
}

/// Far from its due time a producer sleeps, leaving the CPU to the consumer (this machine
/// may have only two), and wakes this long before it, ns: past a timer's usual overshoot.
const SLEEP_MARGIN_NS: u64 = 100_000;

/// Waits until `due` (ns of [`now_ns`]): sleeps while more than [`SLEEP_MARGIN_NS`] away,
/// then spins; returns the time it stopped waiting.
#[inline]
fn wait_until(due: u64) -> u64 {
    let mut now = now_ns();
    while now < due {
        if due - now > 2 * SLEEP_MARGIN_NS {
            std::thread::sleep(Duration::from_nanos(due - now - SLEEP_MARGIN_NS));
        } else {
            std::hint::spin_loop();
        }
        now = now_ns();
    }
    now
}

/// What a producer reports: sent, late.
type Sent = (u64, u64);

fn producer_loop<P: handoff::Producer<Msg>>(
    r: Rate,
    p: u32,
    mut tx: P,
    start: u64,
    deadline: u64,
) -> Result<Sent, String> {
    let pn = r.producers as u64;
    let planned = r.planned();
    let (mut sent, mut late) = (0u64, 0u64);
    let mut seq = 0u64;
    loop {
        let k = seq * pn + u64::from(p);
        if k >= planned {
            break;
        }
        let due = start + r.due(k);
        let now = wait_until(due + r.plant.send_late_ns);
        if now > deadline {
            break;
        }
        if now - due >= LATE_NS {
            late += 1;
        }
        let mut m = Msg::new(p, seq);
        m.sent_ns = now;
        tx.send(m).map_err(|_| "the consumer is gone".to_string())?;
        sent += 1;
        seq += 1;
    }
    Ok((sent, late))
}

impl WithHandoff for Rate {
    type Out = Result<RateRun, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        let r = self;
        let (txs, mut rx) = h.open::<Msg>(r.producers).map_err(|e| e.to_string())?;
        let capacity = h.capacity();
        let cpus = placement::plan(Placement::Auto, r.producers + 1)?;
        let go = Arc::new(Barrier::new(r.producers + 1));
        // Everyone starts from one instant, a little after all threads are up.
        let start = Arc::new(AtomicU64::new(0));
        let mut threads = Vec::new();
        for (i, tx) in txs.into_iter().enumerate() {
            let (go, start, cpus) = (Arc::clone(&go), Arc::clone(&start), cpus.clone());
            let t = std::thread::Builder::new()
                .name(format!("producer-{i}"))
                .spawn(move || {
                    pin(&cpus, i + 1);
                    go.wait();
                    let s = start.load(Ordering::Acquire);
                    let deadline = s + 2 * r.duration.as_nanos() as u64;
                    producer_loop(r, i as u32, tx, s, deadline)
                })
                .map_err(|e| format!("spawning a producer: {e}"))?;
            threads.push(t);
        }
        // This thread (the child's main one) is the consumer: pinned for this run only, or
        // the next run's producers would inherit its one CPU.
        let _pinned = cpus.as_ref().and_then(|c| placement::pin_scoped(c[0]).ok());
        let s = now_ns() + 1_000_000;
        start.store(s, Ordering::Release);
        go.wait();
        let mut check = Checker::new(r.producers);
        let mut taken = Taken::new();
        let pn = r.producers as u64;
        while let Some(m) = rx.recv() {
            check.observe(&m);
            r.plant.after_take(check.received());
            let due = s + r.due(m.seq * pn + u64::from(m.producer));
            taken.take(&m, due, now_ns(), || rx.depth());
        }
        let mut per = Vec::new();
        let mut late = 0;
        for t in threads {
            let (n, l) = t.join().map_err(|_| "a producer panicked".to_string())??;
            per.push(n);
            late += l;
        }
        let v = check.verdict::<16>(&per);
        if !v.ok() {
            return Err(v.describe());
        }
        Ok(taken.finish(&r, s, &per, late, capacity))
    }
}

/// What a consumer records of each message it takes: the corrected and uncorrected
/// latencies, the depth behind the late ones, the slowest journeys.
struct Taken {
    corrected: Histogram<u64>,
    uncorrected: Histogram<u64>,
    depths: depth::Recorder,
    slowest: Slowest,
}

impl Taken {
    fn new() -> Self {
        Taken {
            corrected: hdr::hist(),
            uncorrected: hdr::hist(),
            depths: depth::Recorder::default(),
            slowest: Slowest::default(),
        }
    }

    /// Message `m`, due at `due`, taken at `now`; `depth` asks the channel how many
    /// messages are behind it (asked only of a message [`DEPTH_FROM_NS`] or more late).
    #[inline]
    fn take(&mut self, m: &Msg, due: u64, now: u64, depth: impl FnOnce() -> usize) {
        let late = now.saturating_sub(due);
        record(&mut self.corrected, late);
        record(&mut self.uncorrected, now.saturating_sub(m.sent_ns));
        if late >= DEPTH_FROM_NS {
            self.depths.record(late, depth() as u64);
        }
        self.slowest.offer(late, || journey(m, due, now));
    }

    /// The run's account: producer `p` sent `sent[p]` messages (the unsent charged from
    /// their due time), `late` of them late; `capacity` is the channel's.
    fn finish(
        mut self,
        r: &Rate,
        start: u64,
        sent: &[u64],
        late: u64,
        capacity: Option<usize>,
    ) -> RateRun {
        charge_unsent(&mut self.corrected, r, start, sent);
        let planned = r.planned();
        let sent: u64 = sent.iter().sum();
        RateRun {
            corrected: self.corrected,
            uncorrected: self.uncorrected,
            planned,
            sent,
            late,
            unsent: planned - sent,
            depths: self.depths.finish(capacity),
            slowest: self.slowest.finish(),
        }
    }
}

/// A taken message's journey.
fn journey(m: &Msg, due_ns: u64, taken_ns: u64) -> Journey {
    Journey { producer: m.producer, seq: m.seq, due_ns, sent_ns: m.sent_ns, taken_ns }
}

/// The harness alone (the fixed rate's plain loop): each producer keeps its schedule and
/// records `now − due` where it would send, with no handoff and no consumer. Its tail is
/// what the schedule and the machine cost before any handoff adds its own.
pub fn schedule_only(r: Rate) -> Result<RateRun, String> {
    let cpus = placement::plan(Placement::Auto, r.producers + 1)?;
    let s = now_ns() + 1_000_000;
    let deadline = s + 2 * r.duration.as_nanos() as u64;
    let pn = r.producers as u64;
    let planned = r.planned();
    let threads: Vec<_> = (0..r.producers)
        .map(|p| {
            let cpus = cpus.clone();
            std::thread::spawn(move || {
                pin(&cpus, p + 1);
                let mut h = hdr::hist();
                let (mut sent, mut late) = (0u64, 0u64);
                let mut k = p as u64;
                while k < planned {
                    let due = s + r.due(k);
                    let now = wait_until(due);
                    if now > deadline {
                        break;
                    }
                    late += u64::from(now - due >= LATE_NS);
                    record(&mut h, now_ns() - due);
                    sent += 1;
                    k += pn;
                }
                (h, sent, late)
            })
        })
        .collect();
    let mut run = RateRun {
        corrected: hdr::hist(),
        uncorrected: hdr::hist(),
        planned,
        sent: 0,
        late: 0,
        unsent: 0,
        depths: Depths::default(),
        slowest: Vec::new(),
    };
    let mut per = Vec::new();
    for t in threads {
        let (h, sent, late) = t.join().map_err(|_| "a producer panicked".to_string())?;
        run.corrected.add(&h).map_err(|e| format!("histogram: {e:?}"))?;
        per.push(sent);
        run.sent += sent;
        run.late += late;
    }
    run.unsent = planned - run.sent;
    run.uncorrected = run.corrected.clone();
    charge_unsent(&mut run.corrected, &r, s, &per);
    Ok(run)
}

/// Records every message never sent as waiting from its due time until now, a lower bound
/// of its latency: the unsent are charged, never left out (a rate that was not kept must
/// not read as a low latency). Producer `p` sent its first `sent[p]` messages.
fn charge_unsent(h: &mut Histogram<u64>, r: &Rate, start: u64, sent: &[u64]) {
    let end = now_ns();
    let (pn, planned) = (sent.len() as u64, r.planned());
    for (p, &n) in sent.iter().enumerate() {
        let mut k = n * pn + p as u64;
        while k < planned {
            record(h, end.saturating_sub(start + r.due(k)));
            k += pn;
        }
    }
}

/// The one-to-three pipeline: a publisher at `rate.rate` (one producer) and three stages.
#[derive(Debug, Clone, Copy)]
pub struct Pipeline {
    /// The schedule (its `producers` is 1).
    pub rate: Rate,
}

/// The number of stages, as LMAX's test.
pub const STAGES: usize = 3;

impl WithHandoff for Pipeline {
    type Out = Result<RateRun, String>;
    fn run<H: Handoff + 'static>(self, h: H) -> Self::Out {
        let r = Rate { producers: 1, ..self.rate };
        let capacity = h.capacity();
        let (first, mut rx) = open1(&h)?;
        let mut stages = Vec::new();
        for i in 1..STAGES {
            let (mut tx, next_rx) = open1(&h)?;
            let mut from = std::mem::replace(&mut rx, next_rx);
            let t = std::thread::Builder::new()
                .name(format!("stage-{i}"))
                .spawn(move || -> Result<(), String> {
                    while let Some(m) = from.recv() {
                        tx.send(m).map_err(|_| "the next stage is gone".to_string())?;
                    }
                    tx.close();
                    Ok(())
                })
                .map_err(|e| format!("spawning a stage: {e}"))?;
            stages.push(t);
        }
        let s = now_ns() + 1_000_000;
        let deadline = s + 2 * r.duration.as_nanos() as u64;
        let publisher = std::thread::Builder::new()
            .name("publisher".into())
            .spawn(move || producer_loop(r, 0, first, s, deadline))
            .map_err(|e| format!("spawning the publisher: {e}"))?;
        let mut check = Checker::new(1);
        let mut taken = Taken::new();
        while let Some(m) = rx.recv() {
            check.observe(&m);
            r.plant.after_take(check.received());
            taken.take(&m, s + r.due(m.seq), now_ns(), || rx.depth());
        }
        let (sent, late) = publisher.join().map_err(|_| "the publisher panicked".to_string())??;
        for t in stages {
            t.join().map_err(|_| "a stage panicked".to_string())??;
        }
        let v = check.verdict::<16>(&[sent]);
        if !v.ok() {
            return Err(v.describe());
        }
        Ok(taken.finish(&r, s, &[sent], late, capacity))
    }
}
