//! The building blocks of a plain loop, shared by the peers' own loops
//! ([`crate::measure::calibration`]) and ours ([`crate::measure::own_loops`]): producers
//! that make and stamp the lab's messages as the harness's do, pinned where the harness
//! pins them and released by one barrier; a consumer that checks every message with
//! [`handoff::Checker`]; and the run's result made from what its threads saw (never from
//! the spec). What differs between two own loops is only the crate's own send and
//! receive.

use crate::machine::placement;
use crate::measure::harness::{self, RunResult};
use handoff::{Checker, Message};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Instant;

/// What a run's threads report: when each producer left the barrier and its failed sends;
/// the consumer's start (when it has a thread of its own), end and checker.
pub(crate) struct Ends {
    pub(crate) starts: Vec<Instant>,
    pub(crate) failures: u64,
    pub(crate) end: Instant,
    /// `None`: the consumer never saw the run's last message (it ended short).
    pub(crate) checker: Option<Checker>,
}

/// The result of one own-loop run of `messages` messages split as `per`: wall time from
/// the first thread to leave the barrier to the consumer's end, and the checker's verdict,
/// sent and received counts as the run's consumer saw them.
pub(crate) fn result<const N: usize>(ends: &Ends, per: &[u64], every: u64) -> RunResult {
    let t0 = ends.starts.iter().min().copied().unwrap_or(ends.end);
    let ms = ends.end.duration_since(t0).as_secs_f64() * 1e3;
    let sent: u64 = per.iter().sum();
    let verdict = match &ends.checker {
        Some(c) => c.verdict_against(per, crate::measure::harness::expected_checksum::<N>(per)),
        None => handoff::Verdict { sent, ..Default::default() },
    };
    let mut text = verdict.describe();
    if ends.checker.is_none() {
        text = format!("the consumer did not see every message; {text}");
    }
    RunResult {
        ms,
        valid: verdict.ok() && ends.checker.is_some(),
        verdict: text,
        sent: verdict.sent,
        received: verdict.received,
        send_failures: ends.failures,
        sampled: every > 0,
        ..Default::default()
    }
}

/// Pins the calling thread to its CPU of `cpus` (thread 0 is the consumer), if placed.
pub(crate) fn pin(cpus: &Option<Vec<usize>>, thread: usize) -> Result<(), String> {
    cpus.as_ref().map_or(Ok(()), |c| placement::pin_current(c[thread]))
}

pub(crate) type Joined<T> = thread::JoinHandle<Result<T, String>>;

/// Starts the producers of a run: each pinned as the harness pins it, released by
/// `barrier`, sending with `send` through its own handle of `txs`, which it drops when
/// done (a crate whose end comes from its handles' drop ends there).
pub(crate) fn spawn_producers<Tx, S, const N: usize>(
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
                let failures = harness::produce::<N>(i, n, every, |m| send(&mut tx, m));
                drop(tx);
                pinned.map(|()| (start, failures))
            })
        })
        .collect()
}

/// Joins the producers: their start instants and their failed sends.
pub(crate) fn join_producers(
    hs: Vec<Joined<(Instant, u64)>>,
) -> Result<(Vec<Instant>, u64), String> {
    let (mut starts, mut failures) = (Vec::new(), 0);
    for h in hs {
        let (s, f) = h.join().map_err(|_| "a producer panicked".to_string())??;
        starts.push(s);
        failures += f;
    }
    Ok((starts, failures))
}

/// A channel's own loop: producers `send`, the consumer drains into the checker with
/// `drain` (the crate's own blocking receive) until every sender is gone. Both are
/// closures of their own types, so each compiles to the loop a user would write: the
/// crate's call inlined, no call through a pointer per message.
pub(crate) fn channel_run<Tx, S, D, const N: usize>(
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
    let txs = per.iter().map(|_| tx.clone()).collect();
    drop(tx);
    handles_run(per, cpus, every, txs, send, drain)
}

/// [`channel_run`] over one handle per producer (`txs`, a crate whose producers are not
/// clones of one sender): the consumer thread, pinned and released by the producers'
/// barrier, runs `drain` and ends when it returns.
pub(crate) fn handles_run<Tx, S, D, const N: usize>(
    per: &[u64],
    cpus: &Option<Vec<usize>>,
    every: u64,
    txs: Vec<Tx>,
    send: S,
    drain: D,
) -> Result<Ends, String>
where
    Tx: Send + 'static,
    S: Fn(&mut Tx, Message<N>) -> bool + Copy + Send + 'static,
    D: FnOnce(&mut Checker) + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(per.len() + 1));
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

/// Where a consumer thread that the crate itself starts (a ring's processor, a
/// scheduler's worker) leaves its end: the instant it saw the run's last message and its
/// checker, or why it could not pin itself.
pub(crate) type Finish = Arc<Mutex<Option<Result<(Instant, Checker), String>>>>;

/// A check of every message for a consumer the crate calls back (a handler, a
/// subscriber): the lab's checker, the count of messages seen, and on the first call a pin
/// to the consumer's CPU, where `cpus` is given (a crate-started thread that the crate
/// offers no start hook for cannot be pinned before it runs). At the run's last message it
/// leaves its end in [`Finish`].
pub(crate) struct Observer {
    checker: Checker,
    seen: u64,
    total: u64,
    cpu: Option<usize>,
    pin_failed: Option<String>,
    finish: Finish,
}

impl Observer {
    /// An observer of `per.len()` producers' `per` messages, pinned to `cpus[0]` if placed.
    pub(crate) fn new(per: &[u64], cpus: &Option<Vec<usize>>, finish: Finish) -> Self {
        Observer {
            checker: Checker::new(per.len()),
            seen: 0,
            total: per.iter().sum(),
            cpu: cpus.as_ref().map(|c| c[0]),
            pin_failed: None,
            finish,
        }
    }

    /// Checks `m`; at the run's last message, leaves the end. Inlined into the crate's
    /// loop that calls it, as a user's handler would be: what runs once a run (the pin,
    /// the end) is out of line, so that the per-message part stays small.
    #[inline(always)]
    pub(crate) fn observe<const N: usize>(&mut self, m: &Message<N>) {
        if self.seen == 0 {
            self.pin();
        }
        self.checker.observe(m);
        self.seen += 1;
        if self.seen == self.total {
            self.end();
        }
    }

    #[cold]
    #[inline(never)]
    fn end(&mut self) {
        let end = Instant::now();
        let out = match self.pin_failed.take() {
            Some(why) => Err(why),
            None => Ok((end, self.checker.clone())),
        };
        *self.finish.lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
    }

    #[cold]
    fn pin(&mut self) {
        if let Some(cpu) = self.cpu.take() {
            if let Err(why) = placement::pin_current(cpu) {
                self.pin_failed = Some(why);
            }
        }
    }
}

/// The end a crate-started consumer left, once every producer is joined and the crate has
/// stopped it: `Ends` with no consumer start (its thread started before the barrier and
/// waits on the crate), or an error if it could not pin itself.
pub(crate) fn ends_from(
    finish: &Finish,
    starts: Vec<Instant>,
    failures: u64,
) -> Result<Ends, String> {
    let got = finish.lock().unwrap_or_else(|e| e.into_inner()).take();
    match got {
        Some(Ok((end, c))) => Ok(Ends { starts, failures, end, checker: Some(c) }),
        Some(Err(why)) => Err(why),
        None => Ok(Ends { starts, failures, end: Instant::now(), checker: None }),
    }
}

/// Any handoff through the lab's contract (`handoff::Handoff`) in a plain loop: each
/// producer `send`s through its own handle, the consumer takes `recv_batch`es of up to
/// `batch` (`recv` with 1) into the checker, as the harness's consumer does, and nothing
/// else: no latency record, no per-thread accounting, no counters. It sits between a
/// variant's own loop (the crate's own API) and its row in the lab (the contract and the
/// harness), so that the two steps can be told apart.
pub(crate) struct ContractLoop<'a> {
    pub(crate) per: &'a [u64],
    pub(crate) cpus: &'a Option<Vec<usize>>,
    pub(crate) every: u64,
    pub(crate) batch: usize,
}

impl ContractLoop<'_> {
    /// One run with `handoff`'s channel, messages of `N` payload bytes.
    pub(crate) fn run<H: handoff::Handoff, const N: usize>(
        &self,
        handoff: &H,
    ) -> Result<Ends, String> {
        use handoff::{Consumer as _, Producer as _};
        let p = self.per.len();
        let (txs, mut rx) =
            handoff.open::<Message<N>>(p).map_err(|e| format!("{}: {e}", handoff.name()))?;
        let send = |tx: &mut H::Producer<Message<N>>, m: Message<N>| tx.send(m).is_ok();
        let batch = self.batch.max(1);
        let drain = move |checker: &mut Checker| {
            if batch == 1 {
                while let Some(m) = rx.recv() {
                    checker.observe(&m);
                }
            } else {
                while rx.recv_batch(batch, |m: Message<N>| checker.observe(&m)) > 0 {}
            }
        };
        handles_run(self.per, self.cpus, self.every, txs, send, drain)
    }
}
