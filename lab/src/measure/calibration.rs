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
//!   crate's own send (`Sender::send`, `SyncSender::send`, the disruptor's
//!   `try_publish`); the consumer is the crate's own receive (crossbeam's `try_recv` while
//!   messages are there and `recv` when the channel is empty, std's `for m in rx`, or the
//!   disruptor's event poller; both disruptor sides spin briefly, then yield, while the
//!   ring is full or empty: the crate's fastest plain use here, faster than its managed
//!   processor, whose busy spin also holds a core another thread needs where threads
//!   outnumber the cores). Same messages as the lab
//!   (`handoff::Message<N>`, built and stamped every `sample_every`-th as the harness
//!   does), same capacity, the same threads pinned to the same CPUs
//!   ([`crate::machine::placement`]), and the same check of every run
//!   ([`handoff::Checker`]: count, per-producer order, checksum): what differs from the
//!   lab's cell is only the adapter and the harness's loop around it.
//!
//!   Our own variants (ring, locked, naive, reactive) through their crates' own APIs
//!   ([`crate::measure::own_loops`], built from the same pieces, [`crate::measure::plain`]),
//!   and two planted faults in an own loop (`crate::measure::faults::OwnLoopFault`).
//!   Every Rust own-loop run's counts and verdict are its consumer's checker's.
//!
//!   The JVM originals (jvm-lbq, jvm-disruptor, jvm-jctools): `Bus --plain`
//!   (tools/jvm/bus/src/main/java/Plain.java), `LinkedBlockingQueue`'s put/take, the Disruptor's
//!   next/get/publish with one `EventHandler`, or `MpscArrayQueue`'s offer and drain, the
//!   same message form, stamps, split, collector flags and placement, and the same check of
//!   every message as the Rust loops keep (Bus's checker: count, per-producer order,
//!   checksum); without Bus's harness (end markers, latency recording, per-thread
//!   accounting, protocol lines while it runs).
//!
//! * [`CONTRACT_LOOP`] (Rust competitors, on request): the lab's adapter of the same
//!   competitor through the `Handoff` contract (`send`, `recv_batch` of up to `--batch`),
//!   in the same plain loop as the own loops ([`plain::ContractLoop`]), with none of the
//!   harness's recording. Against the own loop it measures what the contract costs (owned
//!   messages moved through an adapter instead of the crate's own API); the row against
//!   it, what the harness costs.
//!
//! To give another variant a calibration, add its arm to [`competitor`] and its loop to
//! [`run`].

use crate::machine::placement;
use crate::measure::harness::{CellOutput, CellSpec, RunResult, WARMUP_MESSAGES};
use crate::measure::own_loops;
use crate::measure::plain::{self, channel_run, Ends};
use crate::protocol::{Ctx, Pass};
use handoff::{Checker, Message};

/// The calibration kind of every competitor: the crate's own API in a plain loop.
pub const OWN_LOOP: &str = "own-loop";

/// The second calibration kind of a Rust competitor: the lab's own adapter through the
/// `Handoff` contract, in the same plain loop ([`plain::ContractLoop`]). Beside the row and
/// its own loop it splits the row's gap to its own loop into the contract's share
/// (contract loop against own loop) and the harness's (row against contract loop).
pub const CONTRACT_LOOP: &str = "contract-loop";

/// The contract-loop calibration kind of `variant`, if it has one: the Rust competitors
/// with an own loop (the JVM originals do not go through the contract).
pub fn contract_kind_of(variant: &str) -> Option<&'static str> {
    let rust = crate::measure::variants::find(variant).is_some_and(|v| !v.jvm);
    kind_of(variant).filter(|_| rust).map(|_| CONTRACT_LOOP)
}

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
        // Ours, and the planted faults of an own loop: each is its own competitor.
        v => own_loops::OURS
            .iter()
            .chain(crate::measure::faults::OWN_LOOP_FAULTS.iter().map(|(name, _)| name))
            .find(|name| **name == v)
            .copied(),
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
    let crate_ = match kind {
        OWN_LOOP => competitor(&spec.variant),
        CONTRACT_LOOP => contract_kind_of(&spec.variant).map(|_| CONTRACT_LOOP),
        _ => {
            return Err(format!(
                "unknown calibration kind '{kind}'; valid: {OWN_LOOP}, {CONTRACT_LOOP}"
            ))
        }
    }
    .ok_or_else(|| format!("variant '{}' has no {kind} calibration", spec.variant))?;
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
    out.notes.push(if crate_ == CONTRACT_LOOP {
        format!(
            "{CONTRACT_LOOP}: {} through the lab's Handoff contract in a plain loop (the lab's \
             messages, check and placement, without the harness)",
            spec.variant
        )
    } else {
        format!(
            "{OWN_LOOP}: {crate_} driven by its own API in a plain loop (the lab's messages, \
             check and placement)"
        )
    });
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

/// One run of a calibration loop outside a fork, for the bisect example (`peer_loops`):
/// `kind` is a crate's own loop ([`competitor`]'s names) or [`CONTRACT_LOOP`] (the adapter
/// of `spec.variant` through the contract), messages of 16 payload bytes.
#[doc(hidden)]
pub fn bisect_run(kind: &str, spec: &CellSpec, messages: u64) -> Result<RunResult, String> {
    own_run::<16>(kind, spec, messages)
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
        "crossbeam" => crossbeam_run::<N>(&per, &cpus, every, spec.ring_size)?,
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
        "disruptor-rs" if !spec.ring_size.is_power_of_two() => {
            return Err(format!(
                "disruptor-rs: ring size {} is not a power of two",
                spec.ring_size
            ));
        }
        "disruptor-rs" => disruptor_poll_run::<N>(&per, &cpus, every, spec.ring_size)?,
        CONTRACT_LOOP => {
            let lp = plain::ContractLoop { per: &per, cpus: &cpus, every, batch: spec.batch };
            crate::measure::variants::dispatch(&spec.settings(), Contract::<N>(lp))??
        }
        ours => own_loops::run::<N>(ours, spec, &per, &cpus)?,
    };
    Ok(plain::result::<N>(&ends, &per, every))
}

/// crossbeam's own loop: `send` on each producer's clone of the sender; the consumer takes
/// with `try_recv` while messages are there and with `recv` (the crate's spin, yield, then
/// park) when the channel is empty. Where the consumer took every message with `recv`
/// alone (`rx.iter()`), the same crate ran well below this loop and below the lab's adapter
/// through the contract, which takes the same way (docs/harness.md).
fn crossbeam_run<const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    size: usize,
) -> Result<Ends, String> {
    use crossbeam_channel::TryRecvError;
    let (tx, rx) = crossbeam_channel::bounded::<Message<N>>(size);
    let drain = move |checker: &mut Checker| loop {
        match rx.try_recv() {
            Ok(m) => checker.observe(&m),
            Err(TryRecvError::Empty) => match rx.recv() {
                Ok(m) => checker.observe(&m),
                Err(_) => return,
            },
            Err(TryRecvError::Disconnected) => return,
        }
    };
    let send = |tx: &mut crossbeam_channel::Sender<Message<N>>, m| tx.send(m).is_ok();
    channel_run(per, cpus, every, tx, send, drain)
}

/// The contract loop ([`CONTRACT_LOOP`]) of the variant the dispatch chose by name.
struct Contract<'a, const N: usize>(plain::ContractLoop<'a>);

impl<const N: usize> crate::measure::variants::WithHandoff for Contract<'_, N> {
    type Out = Result<plain::Ends, String>;
    fn run<H: handoff::Handoff + 'static>(self, handoff: H) -> Self::Out {
        self.0.run::<H, N>(&handoff)
    }
}

/// The disruptor crate's own loop: `try_publish`, and an event poller on the consumer's
/// thread, each spinning briefly and then yielding while the ring is full or empty (the
/// yield a user would write; the spins of the lab's adapter where threads outnumber the
/// cores, `peers::Backoff`). The poller takes every published event at each poll.
///
/// It is the crate's fastest plain use on this machine at every P. Where threads
/// outnumber the cores, the crate's managed processor and its `publish` only busy-spin,
/// which holds a core that a descheduled thread needs. Where each thread has a core, the
/// managed processor (`BusySpinWithSpinLoopHint`, `publish`) ran at three quarters of this
/// loop's rate, in the same process, interleaved (docs/harness.md).
fn disruptor_poll_run<const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    size: usize,
) -> Result<Ends, String> {
    use crate::measure::peers::{Backoff, SPINS_SHARED};
    use disruptor::Polling;
    fn send<P: disruptor::Producer<Message<N>>, const N: usize>(tx: &mut P, m: Message<N>) -> bool {
        let mut wait = Backoff::with_spins(SPINS_SHARED);
        while tx.try_publish(|e| *e = m).is_err() {
            wait.snooze();
        }
        true
    }
    macro_rules! drain {
        ($poller:expr) => {{
            let mut poller = $poller;
            move |checker: &mut Checker| {
                let mut wait = Backoff::with_spins(SPINS_SHARED);
                loop {
                    match poller.poll() {
                        Ok(mut events) => {
                            for m in &mut events {
                                checker.observe(m);
                            }
                            wait = Backoff::with_spins(SPINS_SHARED);
                        }
                        Err(Polling::NoEvents) => wait.snooze(),
                        Err(Polling::Shutdown) => break,
                    }
                }
            }
        }};
    }
    let wait = disruptor::BusySpinWithSpinLoopHint;
    if per.len() == 1 {
        let b = disruptor::build_single_producer(size, Message::<N>::default, wait);
        let (poller, b) = b.new_event_poller();
        let tx = b.build();
        plain::handles_run(per, cpus, every, vec![tx], send, drain!(poller))
    } else {
        let b = disruptor::build_multi_producer(size, Message::<N>::default, wait);
        let (poller, b) = b.new_event_poller();
        let first = b.build();
        let mut txs: Vec<_> = (1..per.len()).map(|_| first.clone()).collect();
        txs.push(first);
        plain::handles_run(per, cpus, every, txs, send, drain!(poller))
    }
}

#[cfg(test)]
mod tests {
    use super::{crossbeam_run, disruptor_poll_run, Ends};

    /// Each peer's own loop delivers every message of every producer, in order, as the
    /// checker sees it, and ends when the producers have gone: one producer (the disruptor
    /// crate's single-producer sequencer) and three (its multi-producer one); crossbeam's
    /// consumer with `try_recv`, then `recv` on an empty channel.
    #[test]
    fn each_peer_own_loop_checks_every_message() {
        type Loop = fn(&[u64], &Option<Vec<usize>>, u64, usize) -> Result<Ends, String>;
        let loops: [(&str, Loop); 2] =
            [("crossbeam", crossbeam_run::<16>), ("disruptor-rs", disruptor_poll_run::<16>)];
        for (name, run) in loops {
            for p in [1, 3] {
                let per = handoff::spread(30_000, p);
                let ends = run(&per, &None, 64, 1024).expect("the own loop");
                let r = crate::measure::plain::result::<16>(&ends, &per, 64);
                assert!(r.valid, "{name} P={p}: {}", r.verdict);
                assert_eq!((r.sent, r.received), (30_000, 30_000), "{name} P={p}");
            }
        }
    }
}
