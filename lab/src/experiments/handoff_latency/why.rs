//! The Why section: each rate row's tail against the baseline's, explained from figures
//! measured in the same run.
//!
//! * `wake-up`: a consumer that parks at once pays the kernel's wake-up for every message
//!   that finds it asleep; one that spins first does not while messages come closer together
//!   than its spin. The ping-pong round trip measures each side's cost for a lone message
//!   (two hand-offs), so it says which kind each row is.
//! * `queue-depth`: which side held the tail. A consumer held for `L` leaves the producers
//!   sending into the channel meanwhile, so the slow messages find about `L × rate` behind
//!   them when taken; a producer held for `L` sends nothing meanwhile, so its late messages
//!   find little. The depth behind each message taken 10 µs or more after it was due is
//!   recorded by the consumer (`depth`).
//! * `loaded-machine`: the forks met a load average above the CPU count: a producer or
//!   consumer waits behind other work for a scheduler slice (milliseconds), and the late
//!   count says the producer itself was held.
//! * `kernel-wake`: one more run per fork of each Rust fixed-rate cell, never timed, with
//!   the kernel's scheduler recorded: how often the consumer slept and how long each
//!   wake-up took from `sched_waking` to running. Where the sleeps pass 1% of the messages,
//!   the p99 carries a wake-up.
//! * `jvm-runtime`: a JVM original's measured runs share the machine with the JVM's own
//!   work: its collector (the serial collector stops every thread) and its compiler
//!   threads, which on a machine with no CPU to spare take one from the run's pinned threads.
//!   Where either held 1% of the runs' time or more, more than 1% of the messages could be
//!   due while it ran, so the p99 can carry it.
//! * `machine-tail`: the harness alone (the schedule with no handoff) sent half a percent
//!   or more of its messages late: that share of every row's messages is late before any
//!   handoff, so the p99 (the slowest 1%) reads whether the machine stalled during a run,
//!   and the p90 is where the designs differ.

use super::depth::{Found, DEPTH_FROM_NS};
use super::detail::{detail, LatDetail};
use super::hdr::Tail;
use super::plan::{fmt_rate, PING_PONG};
use crate::results::{Figure, Results, Row, Status, Why};
use crate::units::fmt_num;

/// A lone message handed off this many times slower than the fastest row's: its consumer
/// was asleep (a futex wake-up costs tens of µs here; a spin, hundreds of ns).
const PARKED_FACTOR: f64 = 10.0;

fn figure(r: &Results, x: &Row, field: &str, value: f64) -> Figure {
    let i = r.results.iter().position(|y| std::ptr::eq(y, x)).unwrap_or(0);
    Figure { field: format!("results[{i}].{field}"), value }
}

fn ping_pong_p50<'a>(r: &'a Results, label: &str) -> Option<(&'a Row, f64)> {
    let x = r.results.iter().find(|x| x.group == PING_PONG && x.label == label)?;
    Some((x, detail(x).tail?.p50 as f64))
}

fn median_load(r: &Results, group: &str) -> Option<f64> {
    let loads: Vec<f64> = r
        .results
        .iter()
        .filter(|x| x.group == group)
        .flat_map(|x| x.forks.iter().filter_map(|f| f.disturbance.load_avg))
        .collect();
    crate::stats::median(&loads)
}

fn wake_up(r: &Results, x: &Row, base: &Row, fastest: f64) -> Option<Why> {
    let (xp, xn) = ping_pong_p50(r, &x.label)?;
    let (bp, bn) = ping_pong_p50(r, &base.label)?;
    let (xd, bd) = (detail(x), detail(base));
    let (xt, bt) = (xd.tail?, bd.tail?);
    let offered = xd.rate.as_ref()?.offered;
    let parks = |ns: f64| ns > fastest * PARKED_FACTOR;
    let kind = |ns: f64| if parks(ns) { "parks" } else { "spins first" };
    // The rule explains the tail only where it points the way the tails went.
    let fits = match (parks(xn), parks(bn)) {
        (false, true) if xt.p99 < bt.p99 => " The spinner's lower p99 fits the rule.",
        (true, false) if xt.p99 > bt.p99 => " The parker's higher p99 fits the rule.",
        (a, b) if a == b => " Both are of one kind: the rule does not tell them apart.",
        _ => " The tails go the other way: the wake-up does not explain them here.",
    };
    let gap_us = 1e6 / offered;
    let text = format!(
        "At {} msgs/s messages are due {} µs apart. A lone message crosses {} and back in {} µs \
         (ping-pong p50; its consumer {}), {} in {} µs (its consumer {}): a consumer that \
         parks pays a kernel wake-up for each message that finds it asleep, one that spins \
         does not while messages come closer than its spin. p99 here: {} {} µs, {} {} µs.{}",
        fmt_rate(offered),
        fmt_num(gap_us),
        x.label,
        fmt_num(xn / 1e3),
        kind(xn),
        base.label,
        fmt_num(bn / 1e3),
        kind(bn),
        x.label,
        fmt_num(xt.p99 as f64 / 1e3),
        base.label,
        fmt_num(bt.p99 as f64 / 1e3),
        fits,
    );
    Some(Why {
        group: x.group.clone(),
        variant: x.label.clone(),
        baseline: base.label.clone(),
        rule: "wake-up".into(),
        text,
        figures: vec![
            figure(r, xp, "tail.p50", xn),
            figure(r, bp, "tail.p50", bn),
            figure(r, x, "tail.p99", xt.p99 as f64),
            figure(r, base, "tail.p99", bt.p99 as f64),
        ],
    })
}

/// One row's tail and what its slow messages found behind them; `None` when its p99 is
/// below the recorded latencies (`depth::DEPTH_FROM_NS`) or nothing was recorded.
/// One side of the queue-depth rule, from one read of the row's detail.
struct DepthSide<'a> {
    row: &'a Row,
    tail: Tail,
    found: Found,
    offered: f64,
    /// The p99 from the actual send, ns.
    uncorrected_p99: Option<u64>,
}

fn depth_of(row: &Row) -> Option<DepthSide<'_>> {
    let d = detail(row);
    let (tail, rate) = (d.tail?, d.rate?);
    if tail.p99 < DEPTH_FROM_NS {
        return None;
    }
    let found = rate.depths.at_or_above(tail.p99)?;
    let uncorrected_p99 = d.uncorrected.map(|u| u.p99);
    Some(DepthSide { row, tail, found, offered: rate.offered, uncorrected_p99 })
}

fn queue_depth(r: &Results, x: &Row, base: &Row) -> Option<Why> {
    let sides: Vec<DepthSide<'_>> = [x, base].into_iter().filter_map(depth_of).collect();
    if sides.is_empty() {
        return None;
    }
    let said: Vec<String> = sides
        .iter()
        .map(|DepthSide { row: y, tail: t, found: f, offered, uncorrected_p99 }| {
            let expected = f.held_consumer_depth(t.p99, *offered);
            let full = match f.capacity {
                Some(c) if c as f64 <= expected => format!(" (its {c} slots, full)"),
                _ => String::new(),
            };
            let side = if f.consumer_held(t.p99, *offered) {
                "the consumer's side held it (the producers kept sending behind it)"
            } else {
                "it was held before the channel or alone (little was sent behind it meanwhile)"
            };
            let sent = uncorrected_p99.map_or(String::new(), |u| {
                format!(", {} µs from its send", fmt_num(u as f64 / 1e3))
            });
            format!(
                "{}: p99 {} µs from its due time{sent}; its {} messages from {} µs up found \
                 {} behind them on average (most {}), where a consumer held that long would \
                 find about {}{full}: {side}.",
                y.label,
                fmt_num(t.p99 as f64 / 1e3),
                f.messages,
                fmt_num(f.from_ns as f64 / 1e3),
                fmt_num(f.mean),
                f.max,
                fmt_num(expected),
            )
        })
        .collect();
    Some(Why {
        group: x.group.clone(),
        variant: x.label.clone(),
        baseline: base.label.clone(),
        rule: "queue-depth".into(),
        text: format!(
            "At {} msgs/s, the messages in the channel behind each slow one when it was taken. \
             {}",
            fmt_rate(sides[0].offered),
            said.join(" ")
        ),
        figures: sides
            .iter()
            .flat_map(|d| {
                let (y, p99, mean) = (d.row, d.tail.p99 as f64, d.found.mean);
                [figure(r, y, "tail.p99", p99), figure(r, y, "rate.depths", mean)]
            })
            .collect(),
    })
}

fn loaded(r: &Results, group: &str, cores: usize) -> Option<Why> {
    let load = median_load(r, group)?;
    if load <= cores as f64 {
        return None;
    }
    let rows: Vec<&Row> = r.results.iter().filter(|x| x.group == group).collect();
    let (late, planned) = rows
        .iter()
        .filter_map(|x| detail(x).rate)
        .fold((0, 0), |a, f| (a.0 + f.late, a.1 + f.planned));
    let pct = 100.0 * late as f64 / planned.max(1) as f64;
    let harness = rows
        .iter()
        .find(|x| x.label == super::plan::HARNESS)
        .and_then(|x| detail(x).rate)
        .map_or(String::new(), |f| {
            format!(
                " The harness alone, with no handoff, sent {}% late.",
                fmt_num(100.0 * f.late as f64 / f.planned.max(1) as f64)
            )
        });
    Some(Why {
        group: group.into(),
        variant: "every row".into(),
        baseline: "–".into(),
        rule: "loaded-machine".into(),
        text: format!(
            "The forks of {group} met a load average of {} on {cores} CPUs: other work shared \
             the producers' and consumers' CPUs, and a thread that loses its CPU waits a \
             scheduler slice (milliseconds). {}% of the messages were sent 10 µs or more after \
             they were due: the producer itself was held, whatever the handoff.{harness} \
             Tails in milliseconds here are the machine's, not the design's; rerun on a quiet \
             machine.",
            fmt_num(load),
            fmt_num(pct)
        ),
        figures: vec![Figure {
            field: format!("results[group={group}].forks[].disturbance.load_avg (median)"),
            value: load,
        }],
    })
}

/// The harness's own late share from which the p99 (the slowest 1%) sits in the
/// machine's stalls rather than the handoff's.
pub const MACHINE_LATE_SHARE: f64 = 0.005;

fn machine_tail(r: &Results, group: &str) -> Option<Why> {
    let h = r.results.iter().find(|x| x.group == group && x.label == super::plan::HARNESS)?;
    let f = detail(h).rate?;
    let share = f.late as f64 / f.planned.max(1) as f64;
    if share < MACHINE_LATE_SHARE {
        return None;
    }
    let rows: Vec<(&Row, Tail)> = r
        .results
        .iter()
        .filter(|x| x.group == group && x.status == Status::Ok)
        .filter_map(|x| detail(x).tail.map(|t| (x, t)))
        .collect();
    let said: Vec<String> = rows
        .iter()
        .map(|(x, t)| {
            let us = |ns: u64| fmt_num(ns as f64 / 1e3);
            format!("{} p90 {} µs, p99 {} µs", x.label, us(t.p90), us(t.p99))
        })
        .collect();
    let mut figures = vec![figure(r, h, "rate.late", f.late as f64)];
    figures.extend(rows.iter().map(|(x, t)| figure(r, x, "tail.p90", t.p90 as f64)));
    Some(Why {
        group: group.into(),
        variant: "every row".into(),
        baseline: "–".into(),
        rule: "machine-tail".into(),
        text: format!(
            "The harness alone, with no handoff, sent {}% of its messages 10 µs or more after \
             they were due ({} of {}): that share of every row's messages is late before any \
             handoff. A p99 here (the slowest 1%) reads whether the machine stalled during each \
             run more than the design, and its paired ratios are wide; the p90 is where the \
             designs differ: {}.",
            fmt_num(100.0 * share),
            f.late,
            f.planned,
            said.join("; ")
        ),
        figures,
    })
}

/// Share of a run's messages above which the consumer's sleeps reach the p99: then more
/// than 1% of the messages can have found it asleep.
const SLEEPS_IN_P99: f64 = 0.01;

fn kernel_wake(r: &Results, group: &str) -> Option<Why> {
    let rows: Vec<(&Row, super::run::WakeRun)> = r
        .results
        .iter()
        .filter(|x| x.group == group && x.status == Status::Ok)
        .filter_map(|x| detail(x).wake.map(|w| (x, w)))
        .collect();
    let first = rows.first()?;
    let us = |ns: u64| fmt_num(ns as f64 / 1e3);
    let mut said = Vec::new();
    let mut figures = Vec::new();
    for (x, w) in &rows {
        let Some(d) = &w.wake_to_run else {
            said.push(match &w.note {
                Some(n) if w.taken == 0 => format!("{}: not recorded ({n})", x.label),
                _ => format!("{}'s consumer never slept ({} messages)", x.label, w.taken),
            });
            continue;
        };
        let share = d.count as f64 / w.taken.max(1) as f64;
        let reach = if share > SLEEPS_IN_P99 {
            format!(
                "more than 1% of its messages could find it asleep, so its p99 ({} µs in \
                     that run) carries a wake-up",
                us(w.p99_ns)
            )
        } else {
            format!(
                "under 1% of its messages could find it asleep (p99 {} µs in that run)",
                us(w.p99_ns)
            )
        };
        said.push(format!(
            "{}'s consumer slept {} times for {} messages in {} runs, and a wake-up took p50 {} \
             µs, p99 {} µs, max {} µs to run it: {reach}",
            x.label,
            d.count,
            w.taken,
            w.runs,
            us(d.p50_ns),
            us(d.p99_ns),
            us(d.max_ns)
        ));
        figures.push(figure(r, x, "wake.wake_to_run.p50_ns", d.p50_ns as f64));
        figures.push(figure(r, x, "wake.wake_to_run.count", d.count as f64));
    }
    Some(Why {
        group: group.into(),
        variant: "every Rust row".into(),
        baseline: "–".into(),
        rule: "kernel-wake".into(),
        text: format!(
            "One more run per fork, never timed, recorded the kernel's scheduler: from its \
             wake-up record (sched_waking) to the switch that ran the consumer again is what a \
             message pays when it finds a blocking consumer asleep; a run's own start and end \
             put every consumer to sleep about twice. {}.",
            said.join("; ")
        ),
        figures: if figures.is_empty() {
            vec![figure(r, first.0, "wake.taken", first.1.taken as f64)]
        } else {
            figures
        },
    })
}

/// Share of the runs' time above which the JVM's own work reaches the p99.
const RUNTIME_IN_P99: f64 = 0.01;

fn jvm_runtime(r: &Results, group: &str) -> Option<Why> {
    let rows: Vec<(&Row, LatDetail)> = r
        .results
        .iter()
        .filter(|x| x.group == group && x.status == Status::Ok)
        .map(|x| (x, detail(x)))
        .filter(|(_, d)| d.jvm_runtime.is_some())
        .collect();
    let first = rows.first()?;
    let mut said = Vec::new();
    let mut figures = Vec::new();
    for (x, d) in &rows {
        let Some(j) = d.jvm_runtime.as_ref() else { continue };
        let p99 = d.tail.as_ref().map_or(0.0, |t| t.p99 as f64 / 1e3);
        let share = |ms: u64| ms as f64 / j.wall_ms.max(1e-9);
        let gc = share(j.gc_ms);
        let jit = j.jit_ms.map(share);
        let jit_text = match (j.jit_ms, jit) {
            (Some(ms), Some(s)) => {
                format!("its compiler threads compiled for {ms} ms ({:.1}%)", 100.0 * s)
            }
            _ => "the JVM does not count its compiling".to_string(),
        };
        let mut held = Vec::new();
        if gc >= RUNTIME_IN_P99 {
            held.push("collections");
        }
        if jit.is_some_and(|s| s >= RUNTIME_IN_P99) {
            held.push("compiling");
        }
        let reach = if held.is_empty() {
            format!(
                "neither reached 1% of the time, so its p99 ({} µs) is not theirs",
                fmt_num(p99)
            )
        } else {
            format!(
                "{} held 1% of the time or more, so its p99 ({} µs) can carry them",
                held.join(" and "),
                fmt_num(p99)
            )
        };
        said.push(format!(
            "{}: in {} measured runs ({} ms) the JVM collected {} times ({} ms, {:.1}%) and {}: {reach}",
            x.label,
            j.runs,
            fmt_num(j.wall_ms),
            j.gc_count,
            j.gc_ms,
            100.0 * gc,
            jit_text
        ));
        figures.push(figure(r, x, "jvm_runtime.gc_ms", j.gc_ms as f64));
        if let Some(ms) = j.jit_ms {
            figures.push(figure(r, x, "jvm_runtime.jit_ms", ms as f64));
        }
    }
    let cores = r.environment.cores;
    let producers = first.0.typed_key::<super::detail::HlKey>().map_or(1, |k| k.producers);
    let threads = producers as usize + 1;
    let cpus = match cores.saturating_sub(threads) {
        0 => format!(
            "with this machine's {cores} CPUs and the run's {threads} threads pinned, none is \
             left, so they take one from the run's threads"
        ),
        spare => format!(
            "with this machine's {cores} CPUs and the run's {threads} threads pinned, {spare} \
             CPU(s) are left for them"
        ),
    };
    Some(Why {
        group: group.into(),
        variant: "every JVM row".into(),
        baseline: "–".into(),
        rule: "jvm-runtime".into(),
        text: format!(
            "Each JVM counted its own work while its runs were measured (its management \
             beans, read before and after each run): the collector stops every thread, and the \
             compiler threads need a CPU: {cpus}. {}.",
            said.join("; ")
        ),
        figures: if figures.is_empty() {
            let wall = first.1.jvm_runtime.as_ref().map_or(0.0, |j| j.wall_ms);
            vec![figure(r, first.0, "jvm_runtime.wall_ms", wall)]
        } else {
            figures
        },
    })
}

/// The Why sentences for the fixed-rate and pipeline groups, against `base`.
pub fn section(r: &Results, base: &str) -> Vec<Why> {
    let fastest = r
        .results
        .iter()
        .filter(|x| x.group == PING_PONG && x.label != super::plan::FLOOR)
        .filter_map(|x| detail(x).tail.map(|t| t.p50 as f64))
        .fold(f64::INFINITY, f64::min);
    let mut out = Vec::new();
    let mut groups: Vec<&str> = Vec::new();
    let rows =
        r.results.iter().filter(|x| x.status == Status::Ok && x.label != super::plan::HARNESS);
    for x in rows.filter(|x| detail(x).rate.is_some()) {
        if !groups.contains(&x.group.as_str()) {
            groups.push(&x.group);
        }
        if x.label == base {
            continue;
        }
        let Some(b) = r.results.iter().find(|y| y.group == x.group && y.label == base) else {
            continue;
        };
        out.extend(wake_up(r, x, b, fastest));
        out.extend(queue_depth(r, x, b));
    }
    for g in groups {
        out.extend(loaded(r, g, r.environment.cores));
        out.extend(machine_tail(r, g));
        out.extend(kernel_wake(r, g));
        out.extend(jvm_runtime(r, g));
    }
    out
}
