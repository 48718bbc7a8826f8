//! `publish-on-latency`'s report: the latency table, seed 000's publishOn figures reproduced
//! on this machine, the charts, the targets and the method.

use super::{detail, LatencyArgs, BOUND};
use crate::experiments::rx_rows;
use crate::measure::rx::Lib;
use crate::results::{Chart, Ratio, Results, Row, Status, Table, Target};
use crate::stats::percentiles::Percentiles;
use crate::units::fmt_num;

fn us(ns: u64) -> String {
    fmt_num(ns as f64 / 1e3)
}

pub(super) fn latency_table(a: &LatencyArgs, r: &Results) -> Table {
    // The JVM library of a row, from its key (`None`: the reactive crate's).
    let lib_of = |label: &str, group: &str| {
        let x = r.results.iter().find(|x| x.label == label && x.group == group)?;
        rx_rows::lib_named(&x.key_as::<super::PublishOnKey>().variant)
    };
    let against_jvm = |q: &Ratio| lib_of(&q.baseline, &q.group).is_some();
    let against = |l: Lib| move |q: &Ratio| lib_of(&q.baseline, &q.group) == Some(l);
    let baseline = r.ratios.iter().find(|q| !against_jvm(q)).map(|x| x.baseline.clone());
    let baseline = baseline.unwrap_or_default();
    let libs: Vec<Lib> =
        Lib::ALL.into_iter().filter(|l| r.ratios.iter().any(against(*l))).collect();
    let mut t = Table::new(
        format!("Handoff latency, µs (N = {} per run; per fork one HDR histogram of its measured elements; percentiles: the median over forks)", a.elements),
        &["variant", "demand", "status", "p50 (row score) [interval]", "p90", "p99", "p99.9", "max", "fork p50 (min–max)", "elements", "crossed threads", "run ns/element"],
    );
    t.header.push(format!("vs {baseline} (p50, paired)"));
    for l in &libs {
        t.header.push(format!("vs its {} row (p50, paired)", l.library()));
    }
    t.header.push("library, JDK".into());
    for x in &r.results {
        let d = detail(x);
        let mode = d.mode.clone();
        let mut line = vec![x.label.clone(), mode.clone(), x.status.word().to_string()];
        match d.latency_ns.filter(|_| x.status == Status::Ok) {
            Some(l) => {
                line.push(match (x.score, x.score_ci) {
                    (Some(s), Some([lo, hi])) => {
                        format!("{} [{}, {}]", fmt_num(s), fmt_num(lo), fmt_num(hi))
                    }
                    (Some(s), None) => format!("{} [–]", fmt_num(s)),
                    _ => "–".into(),
                });
                line.extend([us(l.p90), us(l.p99), us(l.p999), us(l.max)]);
                let p50s = &d.fork_p50_ns;
                let lo = p50s.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = p50s.iter().copied().fold(0.0, f64::max);
                line.push(format!("{}–{}", fmt_num(lo / 1e3), fmt_num(hi / 1e3)));
                line.push(l.count.to_string());
                line.push(d.crossed_pct.map_or("–".into(), |p| format!("{p:.1}%")));
                line.push(d.ns_per_element.map_or("–".into(), fmt_num));
            }
            None => {
                line.push(x.error.clone().unwrap_or_default());
                line.extend(std::iter::repeat_n("–".to_string(), 8));
            }
        }
        let ratio = r
            .ratios
            .iter()
            .find(|q| q.variant == x.label && q.group == mode && q.baseline == baseline);
        line.push(
            ratio.map_or(
                if x.label == baseline { "baseline".into() } else { "–".into() },
                Ratio::text,
            ),
        );
        for l in &libs {
            let q =
                r.ratios.iter().find(|q| q.variant == x.label && q.group == mode && against(*l)(q));
            let is_jvm = lib_of(&x.label, &x.group) == Some(*l);
            line.push(q.map_or(if is_jvm { "counterpart" } else { "–" }.into(), Ratio::text));
        }
        line.push(d.library.clone().unwrap_or_else(|| "reactive (this workspace)".into()));
        t.rows.push(line);
    }
    t.note = Some(format!(
        "Bound {BOUND} everywhere it applies (publish_on prefetch, the locked queue's capacity, \
         the ring's size; the naive buffer is unbounded), except the -p1 rows (publish_on \
         prefetch 1); ring wait: blocking; reactive rows labelled with their scheduler \
         ({} worker(s) for parallel and rayon). The ratio is the baseline's p50 / the row's \
         within each round (> 1: the row's median latency is lower). Run ns/element: a run's \
         wall time over its elements (the median over forks), the rate elements flow; where \
         a queue stays full (bulk, and one-by-one behind a prefetch of {BOUND}), the median \
         latency is about the queue's depth times it.",
        a.workers
    ));
    t
}

/// The seed's publishOn latency on its JVM, µs: (p50, p99).
const SEED_JVM_US: (f64, f64) = (5.0, 11.0);

/// A percentile of a histogram's summary.
type Pick = fn(&Percentiles) -> u64;

/// Seed 000's publishOn figures on this machine: p50 and p99 of Reactor's row and the
/// reactive crate's on the parallel scheduler (the seed's `publishOn(Schedulers.parallel())`)
/// per demand mode, the seed's published figures beside them (its run was bulk demand).
/// `None` without either row.
pub(super) fn seed_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Seed 000's publishOn latency on this machine, µs (parallel scheduler)",
        &[
            "figure",
            "demand",
            "seed 000 (published, bulk)",
            "Reactor here [interval]",
            "Reactor's library and JDK",
            "reactive crate here [interval]",
            "reactive vs Reactor (p50, paired within rounds)",
        ],
    );
    let find = |imp: &str, mode: &str| -> Option<&Row> {
        r.results.iter().find(|x| {
            let d = detail(x);
            x.group == mode && d.scheduler.as_deref() == Some("parallel") && d.variant == imp
        })
    };
    // p50 is the row's score (the median over its runs' p50s, with its interval), as the
    // latency table shows it; p99 the median over forks of each fork's histogram p99.
    let at = |x: Option<&Row>, f: Option<Pick>| match x {
        None => "not run".to_string(),
        Some(x) if x.status != Status::Ok => x.status.word().to_string(),
        Some(x) => match (f, x.score, x.score_ci) {
            (None, Some(s), Some([lo, hi])) => {
                format!("{} [{}, {}]", fmt_num(s), fmt_num(lo), fmt_num(hi))
            }
            (None, Some(s), None) => format!("{} [–]", fmt_num(s)),
            (Some(f), _, _) => {
                detail(x).latency_ns.map_or("–".into(), |l| fmt_num(f(&l) as f64 / 1e3))
            }
            _ => "–".into(),
        },
    };
    for mode in ["bulk", "one-by-one"] {
        let (reactor, reactive) = (find("reactor", mode), find("reactive", mode));
        if reactor.is_none() && reactive.is_none() {
            continue;
        }
        let paired = reactive.zip(reactor).and_then(|(a, b)| {
            r.ratios
                .iter()
                .find(|q| q.variant == a.label && q.baseline == b.label && q.group == mode)
        });
        let lib = reactor.and_then(|x| detail(x).library).unwrap_or_else(|| "–".into());
        let figures: [(&str, f64, Option<Pick>); 2] =
            [("p50", SEED_JVM_US.0, None), ("p99", SEED_JVM_US.1, Some(|l| l.p99))];
        for (name, seed, f) in figures {
            t.rows.push(vec![
                name.to_string(),
                mode.to_string(),
                format!("{seed} µs"),
                at(reactor, f),
                lib.clone(),
                at(reactive, f),
                if name == "p50" { paired.map_or("–".into(), Ratio::text) } else { "–".into() },
            ]);
        }
    }
    t.note = Some(
        "Seed 000 (shared/seeds/000_3295038f679b729e.txt, its publishOn latency test: Reactor \
         3.8.8 on Temurin 25.0.5, an Apple M1 Pro, Flux.range(0, 100000).map(stamp)\
         .publishOn(Schedulers.parallel()) with every element requested at once, the last of 4 \
         runs) published p50 5 µs and p99 11 µs. Here: p99 is the median over forks of each \
         fork's histogram p99, and p50 the row's score (the median over its runs' p50s, with \
         the interval of that median), as the latency table gives them; the paired ratio is \
         the reactive row's p50 against Reactor's within rounds (> 1: the reactive crate's median latency is lower). Bulk \
         latency is mostly queueing behind the 256-element prefetch (the seed says so); \
         one-by-one is the seed's recommended idle measurement."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

/// The verdict's ratios (the baseline's p50 over each row's, paired within rounds) per
/// demand mode with their repeat intervals; then each row's p50 with the interval of its
/// median over forks, the seed's JVM p50 beside the one-by-one rows.
pub(super) fn charts(r: &Results) -> Vec<Chart> {
    let mut out: Vec<Chart> = crate::analysis::charts::ratio_chart(
        r,
        "p50 latency ratio by demand (baseline p50 / row p50, median over rounds; bars: repeat interval)",
        "demand",
        "× (> 1: lower latency than the baseline)",
    )
    .into_iter()
    .collect();
    let titles = (
        "p50 latency by demand (log scale; bars: interval of the median over forks)",
        "demand",
        "µs",
    );
    if let Some((mut c, cats)) = crate::analysis::charts::score_chart(r, titles, |x| {
        Some((x.label.clone(), x.group.clone()))
    }) {
        let seed = [("one-by-one".to_string(), SEED_JVM_US.0)];
        crate::analysis::charts::add_reference(
            &mut c,
            &cats,
            "seed 000 (JVM publishOn p50)",
            &seed,
        );
        out.push(c);
    }
    out
}

/// The seed's idle-latency targets, on the rows where demand reaches the source one by
/// one (the -p1 rows, one-by-one): with prefetch 256 publish_on keeps 256 queued whatever
/// the subscriber asks, which is queueing, reported but not the target.
pub(super) fn targets(r: &Results, cores: usize) -> Vec<Target> {
    let mut out = Vec::new();
    for x in &r.results {
        let d = detail(x);
        let v = d.variant;
        if !(v.starts_with("reactive") && v.ends_with("-p1") && x.group == "one-by-one") {
            continue;
        }
        let l = d.latency_ns.filter(|_| x.status == Status::Ok);
        for (name, limit, f) in [
            ("p50", SEED_JVM_US.0, (|l: &Percentiles| l.p50) as fn(&Percentiles) -> u64),
            ("p99", SEED_JVM_US.1, |l| l.p99),
        ] {
            let m = l.as_ref().map(|l| f(l) as f64 / 1e3);
            out.push(Target {
                what: format!("{} one-by-one {name} ({cores} cores)", x.label),
                target: format!("≤ {limit} µs (the seed's JVM: {limit} µs)"),
                measured: m.map_or("n/a".into(), |m| format!("{} µs", fmt_num(m))),
                met: m.map(|m| m <= limit),
            });
        }
    }
    out
}

pub(super) fn method_lines(a: &LatencyArgs) -> Vec<String> {
    let w = a.workers as usize;
    let scheds: Vec<String> = a.scheduler.0.iter().map(|s| s.describe(w)).collect();
    vec![
        format!(
            "Reactive rows run on {} (a fresh scheduler per run, disposed after it); the stamp \
             is taken in map(), just before publish_on's queue, and read in the subscriber's \
             on_next on the worker (reactive::bench::publish_on_latency; stamps into a Vec \
             preallocated for N).",
            scheds.join(", ")
        ),
        "reactor rows: Reactor 3.8.8 in a JVM per fork (tools/jvm/reactor/ReactorBench.java, \
         workload latency) on --jdk's JDK (Temurin 25, the seed's, by default) with the seed's \
         flags (-Xms512m -Xmx1g -XX:+UseG1GC) unless --jvm-gc is given: the seed's test, \
         Flux.range(0, N).map(i -> {System.nanoTime(), i, thread id}).publishOn(\
         Schedulers.single() for single, Schedulers.parallel() for parallel (the seed's), \
         false, 256: the seed's default prefetch), a CoreSubscriber recording as the rx rows' \
         does; bulk is the seed's request(Long.MAX_VALUE)."
            .into(),
        "rx rows: RxJava 3 in a JVM per fork (tools/jvm/rx/RxBench.java, workload latency): \
         Flowable.range(0, N).map(i -> {System.nanoTime(), i, thread id}).observeOn(\
         Schedulers.single() for single, Schedulers.computation() for parallel, false, 256), \
         the subscriber recording nanoTime − stamp per element into an array sized before the \
         run and checking the order; bulk: request(Long.MAX_VALUE), one-by-one: request(1) \
         after each element. nanoTime is CLOCK_MONOTONIC as the Rust rows' now_ns; the \
         samples come back to the lab and go into the same histograms. Each JVM row is paired \
         within rounds with reactive[single] or reactive[parallel] of its demand."
            .into(),
        "Handoffs: stamp just before send, read just after recv, into a preallocated array; \
         one-by-one = the producer sends element i only after the consumer stored i into an \
         AtomicU64 acknowledgement (Release/Acquire), spinning on it and yielding every 64 \
         spins."
            .into(),
        "Bulk = as fast as possible: the queue fills up to its bound, so bulk latency is mostly \
         queueing time (the seed's 100 µs p99.9); one-by-one = idle latency."
            .into(),
        "Reactive one-by-one with prefetch 256: publish_on prefetches 256 from the range \
         whatever the subscriber requests (as Reactor's publishOn does), so stamped elements \
         still wait in its queue; reactive-p1 (prefetch 1) lets demand reach the range one \
         element at a time: that row is the idle latency."
            .into(),
        "Where the elements are made: Flux.range emits on the thread that requests (as \
         Reactor's FluxRange), so only the first prefetch is stamped on the subscribing \
         thread; every later batch is produced by the worker inside its own replenish request \
         and waits only for the elements queued before it ('crossed threads' counts the \
         rest). reactive-iter-p1 (Flux.from_iter, which stays on the subscribing thread) \
         measures the cross-thread path: a producer waiting for demand and a worker woken per \
         element."
            .into(),
        "A run that loses, reorders or duplicates an element is INVALID, warm-ups included.".into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture::{ratio, results, row};
    use serde_json::json;

    #[test]
    fn the_main_chart_is_the_verdicts_ratios_per_demand_then_each_rows_p50() {
        let rows = vec![
            row("locked", "bulk", 20.0, Some([18.0, 22.0]), json!({})),
            row("ring", "bulk", 10.0, None, json!({})),
            row("locked", "one-by-one", 12.0, None, json!({})),
            row("ring", "one-by-one", 4.0, Some([3.5, 4.5]), json!({})),
        ];
        let ratios = vec![
            ratio("ring", "locked", "bulk", 2.0, Some([1.8, 2.2])),
            ratio("ring", "locked", "one-by-one", 3.0, None),
        ];
        let r = results("publish-on-latency", rows, ratios);
        let cs = charts(&r);
        assert_eq!(cs.len(), 2);
        let (main, p50) = (&cs[0], &cs[1]);
        assert_eq!(main.x_names, vec![(1.0, "bulk".to_string()), (2.0, "one-by-one".to_string())]);
        for q in &r.ratios {
            let at = if q.group == "bulk" { 1.0 } else { 2.0 };
            assert!(main.series[0].1.contains(&(at, q.median.expect("median"))));
            let bar = q.ci_low.zip(q.ci_high).map(|(a, b)| (at, a, b));
            assert_eq!(main.intervals[0].1.iter().find(|v| v.0 == at).copied(), bar);
        }
        assert_eq!(main.series[0].0, "ring/locked");
        for x in &r.results {
            let at = if x.group == "bulk" { 1.0 } else { 2.0 };
            let s = p50.series.iter().find(|s| s.0 == x.label).expect("a series per row label");
            assert!(s.1.contains(&(at, x.score.expect("score"))));
        }
        assert_eq!(p50.references[0].1, vec![(2.0, SEED_JVM_US.0)]);
    }
}
