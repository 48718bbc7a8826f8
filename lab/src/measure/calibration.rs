//! Calibration cells: a competitor driven by its own API in a plain loop, run beside the
//! lab's cell of the same competitor so that a harness or adapter that slows it shows up
//! in the very run it would distort.
//!
//! # The mechanism
//! A variant has an optional calibration cell kind ([`kind_of`]). When it has one, the
//! experiment's plan puts a calibration cell beside each of its cells: the same
//! [`CellSpec`] (messages, P, capacity, payload, placement) with [`CellSpec::calibration`]
//! set to the kind, labelled `<label>/<kind>` (e.g. `crossbeam/own-loop`), in the same
//! group, so the runner schedules both in the same rounds, and a (cell, calibration) pair
//! whose per-round ratio (lab speed / calibration speed) is summarised with its repeat
//! interval like every other pair. A child told to run a calibration cell runs [`run`]
//! instead of the harness.
//!
//! Kinds:
//! * [`OWN_LOOP`]: the Rust peers (crossbeam, std-mpsc, disruptor-rs, and the planted
//!   `fault-slow-crossbeam`, calibrated by crossbeam's loop). The producers call the
//!   crate's own send (`Sender::send`, `SyncSender::send`, the disruptor's `publish`);
//!   the consumer is the crate's own receive (`for m in rx`, or the disruptor's managed
//!   processor thread with `BusySpinWithSpinLoopHint`). Same messages as the lab
//!   (`handoff::Message<N>`, built and stamped every `sample_every`-th as the harness
//!   does), same capacity, the same threads pinned to the same CPUs
//!   ([`crate::machine::placement`]), and the same check of every run
//!   ([`handoff::Checker`]: count, per-producer order, checksum): what differs from the
//!   lab's cell is only the adapter and the harness's loop around it.
//!
//!   The JVM originals (jvm-lbq, jvm-disruptor, jvm-jctools): `Bus --plain`
//!   (tools/jvm/Plain.java), `LinkedBlockingQueue`'s put/take, the Disruptor's
//!   next/get/publish with one `EventHandler`, or `MpscArrayQueue`'s offer and drain, the
//!   same message form, stamps, split, collector flags and placement, and the same check of
//!   every message as the Rust loops keep (Bus's checker: count, per-producer order,
//!   checksum); without Bus's harness (end markers, latency recording, per-thread
//!   accounting, protocol lines while it runs).
//!
//! To give another variant a calibration, add its arm to [`competitor`] and its loop to
//! [`run`].

use crate::machine::placement;
use crate::measure::harness::{CellOutput, CellSpec, RunResult, WARMUP_MESSAGES};
use crate::protocol::{Ctx, Pass};
use handoff::{Checker, Message};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Instant;

/// The calibration kind of the Rust peers: the crate's own API in a plain loop.
pub const OWN_LOOP: &str = "own-loop";

/// The calibration cell kind of `variant`, if it has one.
pub fn kind_of(variant: &str) -> Option<&'static str> {
    competitor(variant).map(|_| OWN_LOOP)
}

/// The crate (or JVM original) whose own loop calibrates `variant`.
fn competitor(variant: &str) -> Option<&'static str> {
    match variant {
        "crossbeam" | "fault-slow-crossbeam" => Some("crossbeam"),
        "std-mpsc" => Some("std-mpsc"),
        "disruptor-rs" => Some("disruptor-rs"),
        "jvm-lbq" => Some("jvm-lbq"),
        "jvm-disruptor" => Some("jvm-disruptor"),
        "jvm-disruptor-3.4" => Some("jvm-disruptor-3.4"),
        "jvm-jctools" => Some("jvm-jctools"),
        _ => None,
    }
}

/// The label of `label`'s calibration cell of `kind`.
pub fn label_of(label: &str, kind: &str) -> String {
    format!("{label}/{kind}")
}

/// Runs a calibration cell (a child's entry point when [`CellSpec::calibration`] is set):
/// warm-up and measured runs as a timed fork of the harness makes them.
pub fn run(spec: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
    let kind = spec.calibration.as_deref().unwrap_or_default();
    if kind != OWN_LOOP {
        return Err(format!("unknown calibration kind '{kind}'; valid: {OWN_LOOP}"));
    }
    let crate_ = competitor(&spec.variant)
        .ok_or_else(|| format!("variant '{}' has no {OWN_LOOP} calibration", spec.variant))?;
    if !matches!(ctx.pass, Pass::Timed) {
        return Err("a calibration cell has only timed forks (no heap or trace pass)".into());
    }
    if spec.jvm.is_some() {
        return jvm_own_loop(spec, ctx);
    }
    match spec.payload {
        16 => timed::<16>(crate_, spec, ctx),
        64 => timed::<64>(crate_, spec, ctx),
        256 => timed::<256>(crate_, spec, ctx),
        other => Err(format!(
            "payload {other} is not compiled in; valid: {:?}",
            crate::measure::harness::PAYLOADS
        )),
    }
}

fn timed<const N: usize>(
    crate_: &str,
    spec: &CellSpec,
    ctx: &mut Ctx,
) -> Result<CellOutput, String> {
    let mut out = CellOutput {
        per_producer: handoff::spread(spec.messages, spec.producers),
        pinned_cpus: placement::plan(spec.placement, spec.producers + 1)?,
        ..Default::default()
    };
    let warm = spec.messages.min(WARMUP_MESSAGES);
    for _ in 0..spec.warmup {
        out.warmup.push(own_run::<N>(crate_, spec, warm)?);
        ctx.heartbeat();
    }
    while crate::measure::harness::more_runs(spec, &out.runs) {
        out.runs.push(own_run::<N>(crate_, spec, spec.messages)?);
        ctx.heartbeat();
    }
    out.notes.push(format!(
        "{OWN_LOOP}: {crate_} driven by its own API in a plain loop (the lab's messages, \
         check and placement)"
    ));
    Ok(out)
}

/// A JVM original's own loop (`Bus --plain`, run by [`crate::measure::jvm::run_plain`]):
/// its measured runs as this fork's runs. The plain loop checks every message (count,
/// per-producer order, checksum) and fails the fork when a check fails, so a run it reports
/// is a valid one.
fn jvm_own_loop(spec: &CellSpec, ctx: &mut Ctx) -> Result<CellOutput, String> {
    let runs = crate::measure::jvm::run_plain(spec, ctx)?;
    Ok(CellOutput {
        per_producer: handoff::spread(spec.messages, spec.producers),
        pinned_cpus: placement::plan(spec.placement, spec.producers + 1)?,
        runs: runs
            .iter()
            .map(|r| RunResult {
                ms: r.ms,
                valid: true,
                verdict: "count, order and checksum checked by the plain loop".into(),
                sent: spec.messages,
                received: spec.messages,
                ..Default::default()
            })
            .collect(),
        notes: vec![format!(
            "{OWN_LOOP}: {} driven by its own API in a plain loop (Bus --plain: the same \
             message, stamps, check and placement, without Bus's harness)",
            spec.variant
        )],
        ..Default::default()
    })
}

/// What a run's threads report: when each producer left the barrier and its failed sends;
/// the consumer's start, end and checker.
struct Ends {
    starts: Vec<Instant>,
    failures: u64,
    end: Instant,
    checker: Option<Checker>,
}

/// One run of `crate_`'s own loop over `messages` messages.
fn own_run<const N: usize>(
    crate_: &str,
    spec: &CellSpec,
    messages: u64,
) -> Result<RunResult, String> {
    let per = handoff::spread(messages, spec.producers);
    let cpus = placement::plan(spec.placement, spec.producers + 1)?;
    let every = spec.sample_every;
    let ends = match crate_ {
        "crossbeam" => {
            let (tx, rx) = crossbeam_channel::bounded::<Message<N>>(spec.ring_size);
            channel_run(
                &per,
                &cpus,
                every,
                tx,
                |tx: &mut crossbeam_channel::Sender<Message<N>>, m| tx.send(m).is_ok(),
                move |checker: &mut Checker| rx.iter().for_each(|m| checker.observe(&m)),
            )?
        }
        "std-mpsc" => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Message<N>>(spec.ring_size);
            channel_run(
                &per,
                &cpus,
                every,
                tx,
                |tx: &mut std::sync::mpsc::SyncSender<Message<N>>, m| tx.send(m).is_ok(),
                move |checker: &mut Checker| rx.iter().for_each(|m| checker.observe(&m)),
            )?
        }
        "disruptor-rs" => disruptor_run::<N>(&per, &cpus, every, spec.ring_size)?,
        other => return Err(format!("no {OWN_LOOP} for '{other}'")),
    };
    let t0 = ends.starts.iter().min().copied().unwrap_or(ends.end);
    let ms = ends.end.duration_since(t0).as_secs_f64() * 1e3;
    let verdict = match &ends.checker {
        Some(c) => c.verdict_against(&per, crate::measure::harness::expected_checksum::<N>(&per)),
        None => handoff::Verdict { sent: messages, ..Default::default() },
    };
    let mut text = verdict.describe();
    if ends.checker.is_none() {
        text = format!("the consumer did not see every message; {text}");
    }
    Ok(RunResult {
        ms,
        valid: verdict.ok() && ends.checker.is_some(),
        verdict: text,
        sent: verdict.sent,
        received: verdict.received,
        send_failures: ends.failures,
        sampled: every > 0,
        ..Default::default()
    })
}

fn pin(cpus: &Option<Vec<usize>>, thread: usize) -> Result<(), String> {
    cpus.as_ref().map_or(Ok(()), |c| placement::pin_current(c[thread]))
}

/// Producer `i`'s loop, as the harness's: `Message::new`, every `every`-th stamped.
/// Returns its failed sends (it stops at the first).
#[inline]
fn produce<const N: usize>(
    i: usize,
    n: u64,
    every: u64,
    mut send: impl FnMut(Message<N>) -> bool,
) -> u64 {
    let mut countdown = 0u64;
    for seq in 0..n {
        let mut m = Message::<N>::new(i as u32, seq);
        if every > 0 {
            if countdown == 0 {
                countdown = every;
                m.sampled = 1;
                m.sent_ns = handoff::now_ns();
            }
            countdown -= 1;
        }
        if !send(m) {
            return 1;
        }
    }
    0
}

type Joined<T> = thread::JoinHandle<Result<T, String>>;

/// Starts the producers of a run: each pinned as the harness pins it, released by
/// `barrier`, sending with `send` through its own handle of `txs`.
fn spawn_producers<Tx, S, const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    barrier: &Arc<Barrier>,
    txs: Vec<Tx>,
    send: S,
) -> Vec<Joined<(Instant, u64)>>
where
    Tx: Send + 'static,
    S: Fn(&mut Tx, Message<N>) -> bool + Copy + Send + 'static,
{
    per.iter()
        .zip(txs)
        .enumerate()
        .map(|(i, (&n, mut tx))| {
            let (barrier, cpus) = (barrier.clone(), cpus.clone());
            thread::spawn(move || {
                let pinned = pin(&cpus, i + 1);
                barrier.wait();
                let start = Instant::now();
                let failures = produce::<N>(i, n, every, |m| send(&mut tx, m));
                drop(tx);
                pinned.map(|()| (start, failures))
            })
        })
        .collect()
}

fn join_producers(hs: Vec<Joined<(Instant, u64)>>) -> Result<(Vec<Instant>, u64), String> {
    let (mut starts, mut failures) = (Vec::new(), 0);
    for h in hs {
        let (s, f) = h.join().map_err(|_| "a producer panicked".to_string())??;
        starts.push(s);
        failures += f;
    }
    Ok((starts, failures))
}

/// A channel's own loop: producers `send`, the consumer drains into the checker with
/// `drain` (the crate's own blocking iterator) until every sender is gone. Both are
/// closures of their own types, so each compiles to the loop a user would write: the
/// crate's call inlined, no call through a pointer per message.
fn channel_run<Tx, S, D, const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    tx: Tx,
    send: S,
    drain: D,
) -> Result<Ends, String>
where
    Tx: Clone + Send + 'static,
    S: Fn(&mut Tx, Message<N>) -> bool + Copy + Send + 'static,
    D: FnOnce(&mut Checker) + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(per.len() + 1));
    let txs = per.iter().map(|_| tx.clone()).collect();
    drop(tx);
    let producers = spawn_producers(per, cpus, every, &barrier, txs, send);
    let (p, cpus0) = (per.len(), cpus.clone());
    let consumer = thread::spawn(move || {
        let pinned = pin(&cpus0, 0);
        let mut checker = Checker::new(p);
        barrier.wait();
        let start = Instant::now();
        drain(&mut checker);
        pinned.map(|()| (start, Instant::now(), checker))
    });
    let joined = join_producers(producers);
    let (start, end, checker) = consumer.join().map_err(|_| "the consumer panicked")??;
    let (mut starts, failures) = joined?;
    starts.push(start);
    Ok(Ends { starts, failures, end, checker: Some(checker) })
}

/// The disruptor crate's own loop: its producers `publish`, its managed processor thread
/// (pinned where the lab's consumer is, `BusySpinWithSpinLoopHint`) checks each event.
fn disruptor_run<const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    size: usize,
) -> Result<Ends, String> {
    use disruptor::{ProcessorSettings as _, Producer as _};
    if !size.is_power_of_two() {
        return Err(format!("disruptor-rs: ring size {size} is not a power of two"));
    }
    let total: u64 = per.iter().sum();
    let done: Arc<Mutex<Option<(Instant, Checker)>>> = Arc::new(Mutex::new(None));
    let mut checker = Checker::new(per.len());
    let mut seen = 0u64;
    let slot = done.clone();
    let handler = move |m: &Message<N>, _seq: i64, _end_of_batch: bool| {
        checker.observe(m);
        seen += 1;
        if seen == total {
            let end = Instant::now();
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some((end, checker.clone()));
        }
    };
    let wait = disruptor::BusySpinWithSpinLoopHint;
    let barrier = Arc::new(Barrier::new(per.len()));
    let producers = if per.len() == 1 {
        let mut b = disruptor::build_single_producer(size, Message::<N>::default, wait);
        if let Some(c) = cpus {
            b = b.pin_at_core(c[0]);
        }
        let tx = b.handle_events_with(handler).build();
        spawn_producers(per, cpus, every, &barrier, vec![tx], |tx, m| {
            tx.publish(|e| *e = m);
            true
        })
    } else {
        let mut b = disruptor::build_multi_producer(size, Message::<N>::default, wait);
        if let Some(c) = cpus {
            b = b.pin_at_core(c[0]);
        }
        let first = b.handle_events_with(handler).build();
        let mut txs: Vec<_> = (1..per.len()).map(|_| first.clone()).collect();
        txs.push(first);
        spawn_producers(per, cpus, every, &barrier, txs, |tx, m| {
            tx.publish(|e| *e = m);
            true
        })
    };
    // Every producer handle is dropped by now: the last drop joined the processor, which
    // had handled every published event.
    let (starts, failures) = join_producers(producers)?;
    let got = done.lock().unwrap_or_else(|e| e.into_inner()).take();
    let (end, checker) = match got {
        Some((end, c)) => (end, Some(c)),
        None => (Instant::now(), None),
    };
    Ok(Ends { starts, failures, end, checker })
}
