//! One cell in a child: its warm-up and measured runs of the workload, each checked, the
//! measured runs' histograms merged and sent back encoded; and the judgement of a
//! fixed-rate run (sustained or not).

use super::cell::{self, PingPong, Pipeline, Rate, RateRun};
use super::hdr::{self, Tail};
use super::{Cell, LatOutcome, RateFacts, RunOut, Step, Work};
use crate::measure::variants::{self, Settings};
use crate::protocol::Ctx;
use hdrhistogram::Histogram;
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
    step: Duration,
) -> Result<Vec<Step>, String> {
    let mut out = Vec::new();
    let mut rate = from;
    for _ in 0..steps {
        let r = Rate { rate, producers, duration: step, plant: c.plant };
        let run = rate_run(c, Some(variant), r, false)?;
        let verdict = judge(&run, c.p99_bound_ns);
        out.push(Step {
            rate,
            tail: Tail::of(&run.corrected),
            late: run.late,
            unsent: run.unsent,
            not_sustained: verdict.clone().err(),
        });
        if verdict.is_err() {
            break;
        }
        rate *= 2.0;
    }
    Ok(out)
}

/// The highest rate of a climb that was sustained (0 when none was).
pub fn highest_sustained(steps: &[Step]) -> f64 {
    steps.iter().filter(|s| s.not_sustained.is_none()).map(|s| s.rate).fold(0.0, f64::max)
}

/// One run: its histogram(s), score and facts.
struct One {
    corrected: Histogram<u64>,
    uncorrected: Option<Histogram<u64>>,
    score: f64,
    rate: Option<RateFacts>,
    steps: Vec<Step>,
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
    let score =
        if pipeline { run.corrected.mean() } else { run.corrected.value_at_quantile(0.99) as f64 };
    let facts = Some(facts(&run, rate, c.p99_bound_ns));
    Ok(One {
        corrected: run.corrected,
        uncorrected: Some(run.uncorrected),
        score,
        rate: facts,
        steps: Vec::new(),
    })
}

/// The cell: warm-ups, then measured runs; the measured histograms merged.
pub fn run_cell(c: &Cell, ctx: &mut Ctx) -> Result<LatOutcome, String> {
    let mut out = LatOutcome::default();
    let (mut all, mut all_unc) = (hdr::hist(), hdr::hist());
    for i in 0..c.warmup + c.runs {
        let warmup = i < c.warmup;
        let run = match one_run(c) {
            Ok(o) => {
                if !warmup {
                    all.add(&o.corrected).map_err(|e| format!("histogram: {e:?}"))?;
                    if let Some(u) = &o.uncorrected {
                        all_unc.add(u).map_err(|e| format!("histogram: {e:?}"))?;
                    }
                    if !o.steps.is_empty() {
                        out.sweeps.push(o.steps.clone());
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
        out.runs.push(run);
        ctx.heartbeat();
    }
    if !all.is_empty() {
        out.hist = Some(hdr::encode(&all)?);
    }
    if !all_unc.is_empty() {
        out.uncorrected = Some(hdr::encode(&all_unc)?);
    }
    Ok(out)
}
