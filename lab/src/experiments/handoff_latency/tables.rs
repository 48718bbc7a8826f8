//! `handoff-latency`'s tables (the clock, ping-pong beside the machine floor, each fixed
//! rate, the sweep, the pipeline beside LMAX's figures), its targets and its method.

use super::clock::Clock;
use super::detail::{detail, LatDetail};
use super::hdr::Tail;
use super::plan::{fmt_rate, FLOOR};
use super::HlArgs;
use crate::results::{Ratio, Results, Row, Status, Table, Target};
use crate::units::fmt_num;

/// LMAX's published one-to-three pipeline means, ns: the Disruptor, then three
/// `ArrayBlockingQueue`s (the Disruptor paper, its latency table).
pub const LMAX_MEAN_NS: (f64, f64) = (52.0, 32_757.0);

fn ratio<'a>(r: &'a Results, row: &str, base: &str, group: &str) -> Option<&'a Ratio> {
    r.ratios.iter().find(|q| q.variant == row && q.baseline == base && q.group == group)
}

/// A ratio's text, inverted (base/row → row/base): "1.42× [1.30, 1.55]".
fn inverted(q: &Ratio) -> String {
    let Some(m) = q.median.filter(|m| *m > 0.0) else { return "–".into() };
    let ci = match (q.ci_low, q.ci_high) {
        (Some(a), Some(b)) if a > 0.0 => format!(" [{:.2}, {:.2}]", 1.0 / b, 1.0 / a),
        _ => " [–]".into(),
    };
    format!("{:.2}×{ci}", 1.0 / m)
}

/// The score with its interval, in µs (or as it is, for rates).
fn score(x: &Row, clock: &Clock, as_ns: bool) -> String {
    let f = |v: f64| if as_ns { clock.us(v) } else { fmt_num(v) };
    match (x.score, x.score_ci) {
        (Some(s), Some([lo, hi])) => format!("{} [{}, {}]", f(s), f(lo), f(hi)),
        (Some(s), None) => format!("{} [–]", f(s)),
        _ => "–".into(),
    }
}

/// p50 … max as µs, each floored at the clock's resolution; `≥` before each where some
/// messages were never sent (their latency is unknown and larger).
fn tail_cells(t: &Tail, clock: &Clock, lower_bound: bool) -> Vec<String> {
    let ge = if lower_bound { "≥ " } else { "" };
    [t.p50, t.p90, t.p99, t.p999, t.p9999, t.max]
        .iter()
        .map(|&v| format!("{ge}{}", clock.us(v as f64)))
        .collect()
}

fn status(x: &Row) -> String {
    match (&x.status, &x.error) {
        (Status::Ok, _) => "ok".into(),
        (s, Some(e)) => format!("{}: {e}", s.word()),
        (s, None) => s.word().into(),
    }
}

fn clock_table(c: &Clock) -> Table {
    let mut t = Table::new(
        "The clock: what one timestamp costs and how fine it is (measured in this run)",
        &["clock", "cost of one read, ns", "resolution, ns", "used for"],
    );
    t.rows.push(vec![
        "Instant (CLOCK_MONOTONIC, vDSO)".into(),
        fmt_num(c.instant.cost_ns),
        fmt_num(c.instant.resolution_ns),
        "every latency here (handoff::now_ns)".into(),
    ]);
    match (c.tsc, c.tsc_ghz) {
        (Some(f), Some(g)) => t.rows.push(vec![
            format!("TSC (rdtsc, invariant, {:.3} GHz)", g),
            fmt_num(f.cost_ns),
            fmt_num(f.resolution_ns),
            "not used: shown for comparison".into(),
        ]),
        _ => t.rows.push(vec!["TSC".into(), "–".into(), "–".into(), "not invariant here".into()]),
    }
    t.note = Some(format!(
        "Resolution: the smallest non-zero step between two consecutive reads. No latency \
         below the Instant's resolution ({} ns) is printed (\"< …\"). A ping-pong round trip \
         includes one read's cost; a fixed-rate latency includes one on the consumer side.",
        fmt_num(c.floor_ns())
    ));
    t
}

fn ping_pong_table(r: &Results, clock: &Clock, base: &str) -> Option<Table> {
    let rows: Vec<&Row> = r.results.iter().filter(|x| x.group == super::plan::PING_PONG).collect();
    if rows.is_empty() {
        return None;
    }
    let mut t = Table::new(
        "Ping-pong round trip, µs: two channels of one variant, one message in flight, \
         beside the machine floor (one atomic, same CPUs)",
        &[
            "row",
            "status",
            "p50 (score) [interval]",
            "p90",
            "p99",
            "p99.9",
            "p99.99",
            "max",
            "round trips",
            "× machine floor (p50, paired)",
        ],
    );
    t.header.push(format!("{base}/row (p50, paired)"));
    for x in rows {
        let d = detail(x);
        let mut line = vec![x.label.clone(), status(x), score(x, clock, true)];
        match d.tail {
            Some(tl) => {
                line.extend(tail_cells(&tl, clock, false).into_iter().skip(1));
                line.push(fmt_num(tl.count as f64));
            }
            None => line.extend(std::iter::repeat_n("–".to_string(), 6)),
        }
        line.push(if x.label == FLOOR {
            "1 (floor)".into()
        } else {
            ratio(r, &x.label, FLOOR, &x.group).map_or("–".into(), inverted)
        });
        line.push(ratio(r, &x.label, base, &x.group).map_or("–".into(), Ratio::text));
        t.rows.push(line);
    }
    t.note = Some(
        "Percentiles: all valid forks' measured round trips in one HdrHistogram. × machine \
         floor: the row's p50 over the floor's, per round, median [99% repeat interval]; the \
         floor is the round trip of runner::speed's probe, timed per trip here."
            .into(),
    );
    Some(t.headline())
}

fn rate_cells(d: &LatDetail, clock: &Clock) -> Vec<String> {
    let Some(f) = &d.rate else { return vec!["–".into(); 4] };
    let sustained = match (&f.not_sustained, d.runs_not_sustained) {
        (None, _) => "yes".to_string(),
        (Some(_), n) => format!("NO ({n} of {} runs)", d.runs),
    };
    vec![
        sustained,
        format!("{} ({:.2}%)", f.late, 100.0 * f.late as f64 / f.planned.max(1) as f64),
        fmt_num(f.unsent as f64),
        d.uncorrected.map_or("–".into(), |u| clock.us(u.p99 as f64)),
    ]
}

fn rate_table(r: &Results, clock: &Clock, group: &str, base: &str, pipeline: bool) -> Table {
    let title = if pipeline {
        format!(
            "LMAX's one-to-three pipeline, {group}: a publisher and three stages in a chain, \
             latency from the due time to the third stage, µs"
        )
    } else {
        format!("Fixed offered rate, {group} (open loop): latency from each message's due time to its take, µs")
    };
    let first =
        if pipeline { "mean (score) [interval]" } else { "p99, runs' median (score) [interval]" };
    let mut t = Table::new(
        title,
        &[
            "row",
            "status",
            first,
            "p50",
            "p90",
            "p99",
            "p99.9",
            "p99.99",
            "max",
            "sustained",
            "late (≥ 10 µs)",
            "unsent",
            "p99 uncorrected (from send)",
        ],
    );
    t.header.push(format!("{base}/row ({}, paired)", if pipeline { "mean" } else { "p99" }));
    for x in r.results.iter().filter(|x| x.group == group) {
        let d = detail(x);
        let unsent = d.rate.as_ref().is_some_and(|f| f.unsent > 0);
        let mut line = vec![x.label.clone(), status(x), score(x, clock, true)];
        match d.tail {
            Some(tl) => line.extend(tail_cells(&tl, clock, unsent)),
            None => line.extend(std::iter::repeat_n("–".to_string(), 6)),
        }
        line.extend(rate_cells(&d, clock));
        line.push(
            ratio(r, &x.label, base, group)
                .map_or(if x.label == base { "baseline".into() } else { "–".into() }, Ratio::text),
        );
        t.rows.push(line);
    }
    t.note = Some(if pipeline {
        format!(
            "LMAX published a mean of {} ns for the Disruptor against {} ns for three \
             ArrayBlockingQueues ({:.0}× apart), at one event per µs on their machine. Each \
             stage here is a channel of the row's variant (the ring's Builder has no gated \
             handler chain), four threads on this machine's CPUs.",
            fmt_num(LMAX_MEAN_NS.0),
            fmt_num(LMAX_MEAN_NS.1),
            LMAX_MEAN_NS.1 / LMAX_MEAN_NS.0
        )
    } else {
        "Sustained: every message sent, and p99 under --p99-bound-us (results.json keeps \
         each row's first reason why not, under rate.not_sustained). Late: sent 10 µs or more \
         after it was due (the send itself held the producer). Unsent: still due when the \
         producers stopped at twice the schedule's length; each is charged from its due time \
         to the run's end, so percentiles marked ≥ are lower bounds. Uncorrected: from the actual send, what a closed-loop recording would report. \
         harness (no handoff): the producers' schedule alone, recording where they would send: \
         what the schedule and the machine cost before any handoff."
            .into()
    });
    t
}

fn sweep_table(r: &Results, clock: &Clock, group: &str, base: &str, bound_us: u64) -> Table {
    let mut t = Table::new(
        format!("Highest sustained rate, {group}: every message sent and p99 under {bound_us} µs"),
        &[
            "row",
            "status",
            "msgs/s (score) [interval]",
            "p99 there",
            "next rate",
            "why not",
            "forks' highest (min–max)",
        ],
    );
    t.header.push(format!("row/{base} (paired)"));
    for x in r.results.iter().filter(|x| x.group == group) {
        let d = detail(x);
        let best = d.sweep.iter().rfind(|s| s.not_sustained.is_none());
        let fail = d.sweep.iter().find(|s| s.not_sustained.is_some());
        let lo = d.fork_highest.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = d.fork_highest.iter().copied().fold(0.0, f64::max);
        t.rows.push(vec![
            x.label.clone(),
            status(x),
            score(x, clock, false),
            best.map_or("none sustained".into(), |s| clock.us(s.tail.p99 as f64)),
            fail.map_or("– (the climb's end)".into(), |s| fmt_rate(s.rate)),
            fail.and_then(|s| s.not_sustained.clone()).unwrap_or_default(),
            if d.fork_highest.is_empty() {
                "–".into()
            } else {
                format!("{}–{}", fmt_rate(lo), fmt_rate(hi))
            },
            ratio(r, &x.label, base, group).map_or("–".into(), Ratio::text),
        ]);
    }
    t.note = Some(
        "The rate doubles each step from --sweep-from and the climb stops after the first step \
         not sustained; a row's score is each fork's highest sustained rate, its interval over \
         forks. 0: not even the first rate was sustained."
            .into(),
    );
    t
}

/// The latency targets (ping-pong against the floor, ring against locked at a fixed rate)
/// that this run can decide.
fn targets(r: &Results) -> Vec<Target> {
    let mut out = Vec::new();
    let bs = "ring[busy-spin]";
    if let Some(q) = ratio(r, bs, FLOOR, super::plan::PING_PONG) {
        let m = q.median.map(|m| 1.0 / m);
        out.push(Target {
            what: "ring[busy-spin] ping-pong p50 over the machine floor's (paired)".into(),
            target: "≤ 2×".into(),
            measured: inverted(q),
            // Decided only on the interval: its upper end (as row/floor) within 2×, or its
            // lower end past it.
            met: q
                .ci_low
                .filter(|_| m.is_some())
                .map(|lo| 1.0 / lo <= 2.0)
                .or(q.ci_high.filter(|hi| 1.0 / hi > 2.0).map(|_| false)),
        });
    }
    for q in r.ratios.iter().filter(|q| q.variant == bs && q.baseline == "locked") {
        let Some(rate) = r.results.iter().find(|x| x.label == bs && x.group == q.group) else {
            continue;
        };
        let d = detail(rate);
        let fast = d.rate.as_ref().is_some_and(|f| f.offered >= 1e6);
        if d.workload != "fixed-rate"
            || !fast
            || rate.key_as::<super::detail::HlKey>().producers != 1
        {
            continue;
        }
        out.push(Target {
            what: format!("ring[busy-spin] p99 below locked's at {}", q.group),
            target: "locked/ring > 1 (paired p99)".into(),
            measured: q.text(),
            // Decided only on the interval: wholly above 1 (met) or wholly below (not).
            met: match (q.ci_low, q.ci_high) {
                (Some(lo), _) if lo > 1.0 => Some(true),
                (_, Some(hi)) if hi < 1.0 => Some(false),
                _ => None,
            },
        });
    }
    out
}

/// The row the ratios are taken against: locked where it ran, else the plan's first row.
pub fn baseline(r: &Results) -> String {
    if r.results.iter().any(|x| x.label == "locked") {
        return "locked".into();
    }
    r.ratios.first().map_or_else(|| "locked".into(), |q| q.baseline.clone())
}

/// Every table, and the targets.
pub fn tables(a: &HlArgs, clock: &Clock, out: &mut Results) {
    let base = baseline(out);
    let mut groups: Vec<(String, String)> = Vec::new();
    for x in &out.results {
        let w = detail(x).workload;
        if !groups.iter().any(|g| g.0 == x.group) {
            groups.push((x.group.clone(), w));
        }
    }
    let mut ts = vec![clock_table(clock)];
    ts.extend(ping_pong_table(out, clock, &base));
    for (g, w) in &groups {
        match w.as_str() {
            "fixed-rate" => ts.push(rate_table(out, clock, g, &base, false).headline()),
            "pipeline" => ts.push(rate_table(out, clock, g, &base, true).headline()),
            "sweep" => ts.push(sweep_table(out, clock, g, &base, a.p99_bound_us).headline()),
            _ => {}
        }
    }
    out.tables.extend(ts);
    out.targets = targets(out);
}

/// The method lines.
pub fn method(a: &HlArgs, clock: &Clock) -> Vec<String> {
    vec![
        format!(
            "Ping-pong: {} round trips a run; the pinger stamps, sends on one channel, the echo \
             sends the same message back on a second channel of the same variant, the pinger \
             records now − stamp and checks the message. Both threads pinned to the first two \
             CPUs where the machine has two. The machine floor runs the same protocol through \
             one AtomicU64 (runner::speed::ping_pong's, timed per trip).",
            a.round_trips
        ),
        format!(
            "Fixed rate (open loop, wrk2's way): message k is due at start + k/rate; its \
             producer (k mod P) spins until then and sends; the consumer records now − due, so \
             a stall is charged to every message it delayed (coordinated omission corrected by \
             construction, as recordValueWithExpectedInterval does for a closed loop). {} ms \
             of schedule a run; producers stop at twice that and count the rest unsent.",
            a.duration_ms
        ),
        format!(
            "Sweep: from {} msgs/s doubling, {} ms a step, at most {} steps; a step is \
             sustained when every message was sent and its p99 is under {} µs.",
            fmt_rate(a.sweep_from as f64),
            a.sweep_step_ms,
            a.sweep_steps,
            a.p99_bound_us
        ),
        format!(
            "Pipeline: LMAX's ThrottledOneToThreePipelineLatencyTest shape: a publisher at {} \
             msgs/s and three stages, each stage's input a channel of the row's variant; the \
             third stage records now − due; {} ms a run.",
            fmt_rate(a.pipeline_rate as f64),
            a.pipeline_ms
        ),
        format!(
            "HdrHistogram (1 ns .. 100 s, 3 significant digits). Per row: <row>.hgrm (µs, \
             HdrHistogram's percentile distribution, which its plotter opens) and <row>.hlog \
             (a V2 interval log, one interval per fork). Clock: Instant costs {} ns a read, \
             resolves {} ns.",
            fmt_num(clock.instant.cost_ns),
            fmt_num(clock.instant.resolution_ns)
        ),
        "Every run checks count, per-producer order and checksum; one that fails is INVALID, \
         warm-ups included."
            .into(),
    ]
}
