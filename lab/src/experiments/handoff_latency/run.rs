//! One cell in a child: its warm-up and measured runs of the workload, each checked, the
//! measured runs' histograms merged and sent back encoded; and the judgement of a
//! fixed-rate run (sustained or not); the run recorded with the kernel's scheduler.

use super::cell::{self, PingPong, Pipeline, Rate, RateRun};
use super::hdr::{self, Tail};
use super::{Cell, LatOutcome, RateFacts, RunOut, Step, Work};
use crate::measure::variants::{self, Settings};
use crate::profile::sched::WakeDelays;
use crate::protocol::Ctx;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The variant's settings: the ring, disruptor-rs and the channel peers bounded at the
/// cell's ring size; the locked queue and the naive buffer unbounded (as the seed's LBQ).
fn settings(c: &Cell, variant: &str) -> Settings {
    Settings {
        variant: variant.to_string(),
        wait: c.wait.clone(),
        ring_size: c.ring_size,
        capacity: None,
        prefetch: reactive::DEFAULT_PREFETCH,
    }
}

/// Whether a fixed-rate run kept its schedule: every message sent, and p99 within the
/// bound. `Err` says why not (the figures that broke it).
pub fn judge(run: &RateRun, p99_bound_ns: u64) -> Result<(), String> {
    let p99 = run.corrected.value_at_quantile(0.99);
    let mut why = Vec::new();
    if run.unsent > 0 {
        why.push(format!("{} of {} messages never sent", run.unsent, run.planned));
    }
    if run.corrected.is_empty() || p99 > p99_bound_ns {
        why.push(format!("p99 {} µs over the bound of {} µs", p99 / 1000, p99_bound_ns / 1000));
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

/// A run's account, judged against the p99 bound `bound`, ns.
fn facts(run: &RateRun, offered: f64, bound: u64) -> RateFacts {
    RateFacts {
        offered,
        planned: run.planned,
        sent: run.sent,
        late: run.late,
        unsent: run.unsent,
        not_sustained: judge(run, bound).err(),
        depths: run.depths.clone(),
        slowest: run.slowest.clone(),
    }
}

/// One run of a rate-shaped workload (fixed rate or pipeline).
fn rate_run(
    c: &Cell,
    variant: Option<&str>,
    rate: Rate,
    pipeline: bool,
) -> Result<RateRun, String> {
    let Some(variant) = variant else {
        return cell::schedule_only(Rate { plant: c.plant, ..rate });
    };
    let s = settings(c, variant);
    if pipeline {
        variants::dispatch(&s, Pipeline { rate })?
    } else {
        variants::dispatch(&s, Rate { plant: c.plant, ..rate })?
    }
}

/// A sweep: the rate doubles from `from` for `steps` steps, each for `step`, and stops
/// after the first step the variant did not sustain.
fn sweep(
    c: &Cell,
    variant: &str,
    from: f64,
    steps: u32,
    producers: usize,
    step_length: Duration,
) -> Result<Vec<Step>, String> {
    let mut out = Vec::new();
    let mut rate = from;
    for _ in 0..steps {
        let r = Rate { rate, producers, duration: step_length, plant: c.plant };
        let run = rate_run(c, Some(variant), r, false)?;
        let s = step(&run, rate, c.p99_bound_ns);
        let stop = s.not_sustained.is_some();
        out.push(s);
        if stop {
            break;
        }
        rate *= 2.0;
    }
    Ok(out)
}

/// One step of a climb: `run` at `rate`, judged against the p99 bound `bound`, ns.
pub fn step(run: &RateRun, rate: f64, bound: u64) -> Step {
    Step {
        rate,
        tail: Tail::of(&run.corrected),
        late: run.late,
        unsent: run.unsent,
        not_sustained: judge(run, bound).err(),
    }
}

/// The highest rate of a climb that was sustained (0 when none was).
pub fn highest_sustained(steps: &[Step]) -> f64 {
    steps.iter().filter(|s| s.not_sustained.is_none()).map(|s| s.rate).fold(0.0, f64::max)
}

/// One run: its histogram(s), score and facts.
pub struct One {
    /// From the due time (ping-pong: the round trips; a sweep: empty).
    pub corrected: Histogram<u64>,
    /// From the actual send (fixed-rate and pipeline runs).
    pub uncorrected: Option<Histogram<u64>>,
    /// The run's score in the cell's unit.
    pub score: f64,
    /// Fixed-rate and pipeline runs: the schedule's account.
    pub rate: Option<RateFacts>,
    /// A sweep's climb.
    pub steps: Vec<Step>,
}

fn one_run(c: &Cell) -> Result<One, String> {
    let variant = c.variant.as_deref();
    let plain = |h: Histogram<u64>| {
        let score = h.value_at_quantile(0.5) as f64;
        One { corrected: h, uncorrected: None, score, rate: None, steps: Vec::new() }
    };
    Ok(match (&c.work, variant) {
        (Work::PingPong { trips }, None) => plain(cell::floor(*trips)?),
        (Work::PingPong { trips }, Some(v)) => {
            plain(variants::dispatch(&settings(c, v), PingPong { trips: *trips })??)
        }
        (Work::FixedRate { rate, producers, duration_ms }, v) => {
            rated(c, v, *rate, *producers, *duration_ms, false)?
        }
        (Work::Pipeline { rate, duration_ms }, Some(v)) => {
            rated(c, Some(v), *rate, 1, *duration_ms, true)?
        }
        (Work::Sweep { from, steps, step_ms, producers }, Some(v)) => {
            let s = sweep(c, v, *from, *steps, *producers, Duration::from_millis(*step_ms))?;
            One {
                corrected: hdr::hist(),
                uncorrected: None,
                score: highest_sustained(&s),
                rate: None,
                steps: s,
            }
        }
        (_, None) => {
            return Err("only ping-pong and fixed-rate have a row without a variant".into())
        }
    })
}

/// A fixed-rate or pipeline run; its score is the p99 (fixed rate) or the mean (the
/// pipeline, as LMAX reports it), ns.
fn rated(
    c: &Cell,
    v: Option<&str>,
    rate: f64,
    producers: usize,
    ms: u64,
    pipeline: bool,
) -> Result<One, String> {
    let r = Rate { rate, producers, duration: Duration::from_millis(ms), plant: c.plant };
    let run = rate_run(c, v, r, pipeline)?;
    Ok(rated_one(run, rate, c.p99_bound_ns, pipeline))
}

/// A fixed-rate or pipeline run as one run of its cell, judged against `bound`.
pub fn rated_one(run: RateRun, rate: f64, bound: u64, pipeline: bool) -> One {
    let score =
        if pipeline { run.corrected.mean() } else { run.corrected.value_at_quantile(0.99) as f64 };
    let facts = Some(facts(&run, rate, bound));
    One {
        corrected: run.corrected,
        uncorrected: Some(run.uncorrected),
        score,
        rate: facts,
        steps: Vec::new(),
    }
}

/// A Rust cell: warm-ups, then measured runs; the measured histograms merged; then, for a
/// cell with [`Cell::wakeups`], the run recorded with the kernel's scheduler.
pub fn run_cell(c: &Cell, ctx: &mut Ctx) -> Result<LatOutcome, String> {
    let mut out = Collect::default();
    for i in 0..c.warmup + c.runs {
        out.push(i, i < c.warmup, one_run(c))?;
        ctx.heartbeat();
    }
    let mut out = out.finish()?;
    if c.wakeups {
        out.wake = Some(wake_run(c));
        ctx.heartbeat();
    }
    Ok(out)
}

/// The consumer's sleeps and wake-ups in one run of a fixed-rate cell, recorded from the
/// kernel's scheduler tracepoints. The run is one more after the measured ones, never
/// timed, so the recording costs the figures nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WakeRun {
    /// Recorded runs (one a fork; summed when forks are merged).
    #[serde(default)]
    pub runs: u64,
    /// Messages the recorded run's consumer took.
    pub taken: u64,
    /// The recorded run's p99 from the due time, ns.
    pub p99_ns: u64,
    /// The consumer's off-CPU intervals in the run (sleeps and preemptions).
    pub off_cpu: u64,
    /// How long its wake-ups took, from the kernel's wake-up record to running again
    /// (`None`: it never slept, or nothing was recorded).
    pub wake_to_run: Option<WakeDelays>,
    /// Why nothing was recorded, or what may make the record incomplete.
    pub note: Option<String>,
}

/// The recorded run's schedule at most, ms: long enough for hundreds of wake-ups of a
/// blocking consumer at the default rate, short enough that recording in every fork costs
/// the run little time.
const WAKE_RUN_MS: u64 = 20;

/// Runs `c` once more, on a schedule of at most [`WAKE_RUN_MS`], with the kernel's
/// scheduler recorded around it.
pub fn wake_run(c: &Cell) -> WakeRun {
    let mut short = c.clone();
    if let Work::FixedRate { duration_ms, .. } = &mut short.work {
        *duration_ms = (*duration_ms).min(WAKE_RUN_MS);
    }
    let session = crate::profile::sched::Session::start();
    let run = one_run(&short);
    let recorded = session.finish(&[]);
    // The consumer is the calling thread ([`cell::Rate`]'s run): a fork's main thread.
    let consumer_name = crate::profile::sched::own_name();
    match (run, recorded) {
        (Err(e), _) => {
            WakeRun { note: Some(format!("the recorded run failed: {e}")), ..WakeRun::default() }
        }
        (_, Err(why)) => WakeRun { note: Some(why), ..WakeRun::default() },
        (Ok(o), Ok((threads, caveats))) => {
            let consumer = threads.get(&consumer_name);
            WakeRun {
                runs: 1,
                taken: o.corrected.len(),
                p99_ns: o.corrected.value_at_quantile(0.99),
                off_cpu: consumer.map_or(0, |t| t.off_cpu_slices),
                wake_to_run: consumer.and_then(|t| t.wake_to_run.clone()),
                note: (!caveats.is_empty()).then(|| caveats.join("; ")),
            }
        }
    }
}

impl WakeRun {
    /// The forks' records as one: counts summed, the median fork's p50 and p99 (each
    /// taken apart), the longest wake-up; the first note. `None` for none.
    pub fn merge(forks: &[&WakeRun]) -> Option<WakeRun> {
        if forks.is_empty() {
            return None;
        }
        let delays: Vec<&WakeDelays> =
            forks.iter().filter_map(|w| w.wake_to_run.as_ref()).collect();
        let median = |f: fn(&WakeDelays) -> u64| {
            crate::stats::median(&delays.iter().map(|d| f(d) as f64).collect::<Vec<_>>())
                .map_or(0, |m| m as u64)
        };
        let p99s: Vec<f64> = forks.iter().map(|w| w.p99_ns as f64).collect();
        Some(WakeRun {
            runs: forks.iter().map(|w| w.runs).sum(),
            taken: forks.iter().map(|w| w.taken).sum(),
            p99_ns: crate::stats::median(&p99s).map_or(0, |m| m as u64),
            off_cpu: forks.iter().map(|w| w.off_cpu).sum(),
            wake_to_run: (!delays.is_empty()).then(|| WakeDelays {
                count: delays.iter().map(|d| d.count).sum(),
                p50_ns: median(|d| d.p50_ns),
                p99_ns: median(|d| d.p99_ns),
                max_ns: delays.iter().map(|d| d.max_ns).max().unwrap_or(0),
            }),
            note: forks.iter().find_map(|w| w.note.clone()),
        })
    }
}

/// A cell's runs as they come, the measured ones' histograms merged.
#[derive(Default)]
pub struct Collect {
    out: LatOutcome,
    all: Option<Histogram<u64>>,
    all_unc: Option<Histogram<u64>>,
}

impl Collect {
    /// Run `i` (a warm-up or measured), or why it failed.
    pub fn push(&mut self, i: usize, warmup: bool, run: Result<One, String>) -> Result<(), String> {
        let run = match run {
            Ok(o) => {
                if !warmup {
                    let add = |to: &mut Option<Histogram<u64>>, h: &Histogram<u64>| {
                        to.get_or_insert_with(hdr::hist)
                            .add(h)
                            .map_err(|e| format!("histogram: {e:?}"))
                    };
                    add(&mut self.all, &o.corrected)?;
                    if let Some(u) = &o.uncorrected {
                        add(&mut self.all_unc, u)?;
                    }
                    if !o.steps.is_empty() {
                        self.out.sweeps.push(o.steps.clone());
                    }
                }
                RunOut {
                    warmup,
                    valid: true,
                    verdict: "ok".into(),
                    score: o.score,
                    tail: Tail::of(&o.corrected),
                    rate: o.rate,
                    uncorrected: o.uncorrected.as_ref().map(Tail::of),
                }
            }
            Err(e) => RunOut {
                warmup,
                valid: false,
                verdict: format!("run {i}: {e}"),
                score: 0.0,
                tail: Tail::default(),
                rate: None,
                uncorrected: None,
            },
        };
        self.out.runs.push(run);
        Ok(())
    }

    /// The outcome (its `jvm` left for the caller).
    pub fn finish(self) -> Result<LatOutcome, String> {
        let mut out = self.out;
        if let Some(h) = self.all.filter(|h| !h.is_empty()) {
            out.hist = Some(hdr::encode(&h)?);
        }
        if let Some(h) = self.all_unc.filter(|h| !h.is_empty()) {
            out.uncorrected = Some(hdr::encode(&h)?);
        }
        Ok(out)
    }
}
