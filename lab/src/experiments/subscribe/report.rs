//! `subscribe-overhead`'s report: the main table, the JVM rows' evidence, seed 000's table
//! reproduced on this machine, the targets, the chart and the method.

use super::{SubscribeArgs, SubscribeDetail, Workload, SEED_JVM_NS_PER_OP};
use crate::experiments::rx_rows;
use crate::measure::rx::Lib;
use crate::results::{Chart, Ratio, Results, Row, Status, Table, Target};
use crate::stats::Summary;
use serde_json::json;

/// The targets rest on each row's ns/op: a point per row (its median over forks, the
/// interval of that median as its bar), the seed's JVM figures beside them.
pub(super) fn main_chart(r: &Results) -> Option<Chart> {
    let titles = (
        "ns per op by workload (log scale; bars: interval of the median over forks)",
        "workload (an op: an element or a subscription)",
        "ns/op",
    );
    let (mut c, cats) = crate::analysis::charts::score_chart(r, titles, |x| {
        Some(("this run".to_string(), x.label.clone()))
    })?;
    let seed: Vec<(String, f64)> = r
        .results
        .iter()
        .filter_map(|x| {
            let w = detail(x).workload;
            let (_, ns) = SEED_JVM_NS_PER_OP.iter().find(|(n, _)| *n == w)?;
            Some((x.label.clone(), *ns))
        })
        .collect();
    crate::analysis::charts::add_reference(&mut c, &cats, "seed 000 (JVM)", &seed);
    Some(c)
}

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> SubscribeDetail {
    x.detail()
}

/// The row's ratio among those `keep` keeps: as the row (its text), as the baseline, or none.
fn ratio_text(r: &Results, label: &str, keep: impl Fn(&Ratio) -> bool) -> String {
    let mine = |x: &&Ratio| keep(x);
    match r.ratios.iter().filter(mine).find(|x| x.variant == label) {
        Some(x) => x.text(),
        None if r.ratios.iter().filter(mine).any(|x| x.baseline == label) => "baseline".into(),
        None => "–".into(),
    }
}

/// The JVM library of the row labelled `label` in `group`, from its key (`None`: the
/// reactive crate's row).
fn lib_of(r: &Results, label: &str, group: &str) -> Option<Lib> {
    let x = r.results.iter().find(|x| x.label == label && x.group == group)?;
    rx_rows::lib_named(&x.key_as::<super::SubscribeKey>().library)
}

/// Whether a ratio pairs a row with a JVM counterpart.
fn against_jvm(r: &Results, q: &Ratio) -> bool {
    lib_of(r, &q.baseline, &q.group).is_some()
}

/// Whether a ratio pairs a row with its counterpart on `lib`.
fn against(r: &Results, lib: Lib) -> impl Fn(&Ratio) -> bool + '_ {
    move |q: &Ratio| lib_of(r, &q.baseline, &q.group) == Some(lib)
}

/// The JVM libraries some ratio pairs a row with, in [`Lib::ALL`]'s order.
fn paired_libs(r: &Results) -> Vec<Lib> {
    Lib::ALL.into_iter().filter(|l| r.ratios.iter().any(against(r, *l))).collect()
}

pub(super) fn main_table(a: &SubscribeArgs, r: &Results) -> Table {
    let baseline = r.ratios.iter().find(|q| !against_jvm(r, q)).map(|x| x.baseline.clone());
    let libs = paired_libs(r);
    let mut t = Table::new(
        format!("Subscribe overhead (N = {}; a fork's score is the median of its runs, a row's the median over forks)", a.elements),
        &["workload", "what", "op", "status", "ns/op [interval]", "run ms", "ops/s", "mean ± 99.9% CI ns/op (all runs)", "sd", "forks"],
    );
    if let Some(b) = &baseline {
        t.header.push(format!("vs {b} (throughput, paired)"));
    }
    for l in &libs {
        t.header.push(format!("vs its {} row (throughput, paired)", l.library()));
    }
    for x in &r.results {
        let d = detail(x);
        let w: Option<Workload> = serde_json::from_value(json!(d.workload)).ok();
        let op = w.map_or("?", Workload::op);
        let s: Option<Summary> = d.ns_per_op;
        let what = d.what;
        let mut line = vec![x.label.clone(), what, op.to_string(), x.status.word().to_string()];
        if x.status != Status::Ok {
            line.push(x.error.clone().unwrap_or_default());
            line.extend(std::iter::repeat_n("–".to_string(), 5));
        } else {
            line.push(match (x.score, x.score_ci) {
                (Some(m), Some([lo, hi])) => format!("{m:.3} [{lo:.3}, {hi:.3}]"),
                (Some(m), None) => format!("{m:.3} [–]"),
                _ => "–".into(),
            });
            line.push(d.run_ms.map_or("–".into(), |m| format!("{m:.3}")));
            line.push(d.ops_per_s.map_or("–".into(), |o| format!("{o:.3e} {op}s/s")));
            line.push(s.as_ref().map_or("–".into(), |s| match s.ci999_half {
                Some(h) => format!("{:.3} ± {h:.3}", s.mean),
                None => format!("{:.3} ± n/a", s.mean),
            }));
            line.push(s.as_ref().map_or("–".into(), |s| format!("{:.3}", s.stddev)));
            line.push(format!("{}/{}", x.fork_scores().len(), x.forks.len()));
        }
        if baseline.is_some() {
            line.push(ratio_text(r, &x.label, |q| !against_jvm(r, q)));
        }
        for l in &libs {
            line.push(ratio_text(r, &x.label, against(r, *l)));
        }
        t.rows.push(line);
    }
    t.note = Some(
        "ns/op = run time / N, where an op is one element (range, publish-on) or one subscription \
         (Mono.just, hand-written): the units differ, as the seed warns. The interval is the \
         order-statistic interval of the median over forks; `forks` counts those with a score. \
         A ratio > 1 means the row is faster than the row it is paired with (its median over \
         rounds, with the repeat interval: 13 rounds or more)."
            .into(),
    );
    t
}

/// The JVM rows' evidence: JDK, collector, GC per run, allocation and CPU per op.
pub(super) fn jvm_table(r: &Results) -> Option<Table> {
    let med = |v: Vec<f64>| crate::stats::median(&v);
    let fmt = |v: Option<f64>, p: usize| v.map_or("–".into(), |v| format!("{v:.p$}"));
    let mut t = Table::new(
        "The JVM rows (medians over the measured runs of the valid forks)",
        &[
            "row",
            "library, JDK",
            "JVM, collector",
            "GC per run",
            "GC ms per run",
            "allocated B/op",
            "CPU ns/op (every JVM thread)",
            "context switches per 1k ops",
        ],
    );
    for x in &r.results {
        let d = detail(x);
        if d.implementation == "reactive" || d.implementation.is_empty() {
            continue;
        }
        let jvm = d.jvm.as_ref().map_or("?".into(), |j| {
            let flags: Vec<&str> = j["flags"]
                .as_array()
                .map_or(Vec::new(), |f| f.iter().filter_map(|x| x.as_str()).collect());
            format!(
                "{} ({}: {})",
                j["vm_version"].as_str().unwrap_or("?"),
                d.jvm_gc.clone().unwrap_or_default(),
                flags.join(" ")
            )
        });
        let counter =
            |k: &str| med(d.counters.iter().filter_map(|c| c.get(k).copied().flatten()).collect());
        t.rows.push(vec![
            x.label.clone(),
            d.library.clone(),
            jvm,
            fmt(med(d.gc_count.iter().map(|&c| c as f64).collect()), 0),
            fmt(med(d.gc_ms.iter().map(|&c| c as f64).collect()), 0),
            fmt(med(d.allocated_bytes_per_op.clone()), 1),
            fmt(counter("task-clock"), 2),
            fmt(counter("context-switches").map(|c| c * 1e3), 3),
        ]);
    }
    t.note = Some(
        "GC from the GarbageCollectorMXBeans and allocation from HotSpot's per-thread \
         counters, read around each run inside the JVM; CPU and context switches from perf \
         counters on every thread of the java process (JIT and GC threads included) between \
         the run's marks, divided by N."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

/// The seed's targets and the reactive crate's throughput target, on the rows' scores (`None`: not decided,
/// the row failed).
pub(super) fn targets(r: &Results) -> Vec<Target> {
    let mut out = Vec::new();
    for x in r.results.iter().filter(|x| detail(x).implementation == "reactive") {
        let ok = x.score.filter(|_| x.status == Status::Ok);
        let workload = detail(x).workload;
        let mut t = match workload.as_str() {
            // ns per element × 1M elements / 1e6 ns per ms: the run time scaled to 1M, in ms.
            "flux-range" => Target {
                what: "Flux.range(1M) summed, run time scaled to 1M elements".into(),
                target: "≤ 1 ms (the seed's JVM: 6 ms)".into(),
                measured: ok.map_or("n/a".into(), |m| format!("{m:.3} ms")),
                met: ok.map(|m| m <= 1.0),
            },
            "mono-just" => Target {
                what: "Mono.just subscribed".into(),
                target: "≤ 5 ns/subscription (the seed's JVM: 24 ns)".into(),
                measured: ok.map_or("n/a".into(), |m| format!("{m:.3} ns")),
                met: ok.map(|m| m <= 5.0),
            },
            "hand-written" => Target {
                what: "hand-written publisher subscribed".into(),
                target: "≤ 2 ns/subscription (the seed's JVM: 6 ns)".into(),
                measured: ok.map_or("n/a".into(), |m| format!("{m:.3} ns")),
                met: ok.map(|m| m <= 2.0),
            },
            _ => {
                let rate = ok.filter(|m| *m > 0.0).map(|ns| 1e3 / ns);
                Target {
                    what: format!("{}: range → publish_on(256) → sum", x.label),
                    target: "≥ 50 M elements/s (the reactive crate's throughput target)".into(),
                    measured: rate.map_or("n/a".into(), |m| format!("{m:.1} M elements/s")),
                    met: rate.map(|m| m >= 50.0),
                }
            }
        };
        for l in Lib::ALL {
            if let Some(side) = side_by_side(r, x, l) {
                t.target = format!("{}; {side}", t.target);
            }
        }
        out.push(t);
    }
    out
}

/// The `lib` counterpart of reactive row `x`, measured in the same rounds: its score and
/// the paired ratio (`None` without such a row).
fn side_by_side(r: &Results, x: &Row, lib: Lib) -> Option<String> {
    let q = r.ratios.iter().find(|q| q.variant == x.label && against(r, lib)(q))?;
    let jvm = r.results.iter().find(|y| y.label == q.baseline)?;
    let score = match (jvm.status, jvm.score) {
        (Status::Ok, Some(s)) => format!("{s:.3} ns/{}", detail(jvm).op),
        (st, _) => st.word().to_string(),
    };
    Some(format!(
        "{} here, same rounds: {score}, this row {} faster (paired)",
        lib.library(),
        q.text()
    ))
}

/// Seed 000's published figures (its measured table: Reactor 3.8.8 on Temurin 25.0.5, an
/// Apple M1 Pro), per workload: what the figure is and its value in the unit the seed gave.
const SEED_TABLE: [(&str, &str, f64, &str); 3] = [
    ("flux-range", "Flux.range(1M) summed", 6.0, "ms"),
    ("mono-just", "Mono.just, per subscription", 24.0, "ns"),
    ("hand-written", "hand-written SyncSinglePublisher, per subscription", 6.0, "ns"),
];

/// The valid row of `imp` (`reactive`, `reactor`) for `workload` without a scheduler.
fn row_of<'a>(r: &'a Results, imp: &str, workload: &str) -> Option<&'a Row> {
    r.results.iter().find(|x| {
        let d = detail(x);
        d.implementation == imp && d.workload == workload && d.scheduler.is_none()
    })
}

/// A row's figure in the seed's unit: ns/op, which for the range is also ms per 1M
/// elements (ns/element × 1M elements / 1e6 ns per ms), with its interval.
fn figure(x: Option<&Row>, unit: &str) -> String {
    let Some(x) = x else { return "not run".into() };
    match (x.status, x.score, x.score_ci) {
        (Status::Ok, Some(m), Some([lo, hi])) => format!("{m:.3} {unit} [{lo:.3}, {hi:.3}]"),
        (Status::Ok, Some(m), None) => format!("{m:.3} {unit} [–]"),
        (st, _, _) => st.word().to_string(),
    }
}

/// Seed 000's table on this machine: each of its subscribe figures beside Reactor's here
/// (the JDK named), the reactive crate's here, and their ratio paired within rounds; the
/// seed's published figure beside them. `None` without a Reactor or reactive row.
pub(super) fn seed_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Seed 000's table on this machine (publishOn p50 and p99: publish-on-latency's report)",
        &[
            "figure",
            "seed 000 (published)",
            "Reactor here [interval]",
            "Reactor's library and JDK",
            "reactive crate here [interval]",
            "reactive vs Reactor (paired within rounds, repeat interval)",
        ],
    );
    for (w, what, seed, unit) in SEED_TABLE {
        let (reactor, reactive) = (row_of(r, "reactor", w), row_of(r, "reactive", w));
        if reactor.is_none() && reactive.is_none() {
            continue;
        }
        let paired = reactive.zip(reactor).and_then(|(a, b)| {
            r.ratios.iter().find(|q| q.variant == a.label && q.baseline == b.label)
        });
        t.rows.push(vec![
            what.to_string(),
            format!("{seed} {unit}"),
            figure(reactor, unit),
            reactor.map_or("–".into(), |x| detail(x).library),
            figure(reactive, unit),
            paired.map_or("–".into(), Ratio::text),
        ]);
    }
    t.note = Some(
        "Seed 000 (shared/seeds/000_3295038f679b729e.txt, \"eventd v1 性能基线\", its measured \
         table: Reactor 3.8.8, Temurin 25.0.5, -Xms512m -Xmx1g -XX:+UseG1GC, an Apple M1 Pro, \
         the median of 5 runs after 3 warm-ups, ms resolution) published Flux.range(1M) 6 ms, \
         Mono.just 24 ns and the hand-written publisher 6 ns per subscription. Here: the \
         row's median over forks of each fork's median run, with the interval of that median; \
         Flux.range's ms are per 1M elements (its ns/element, numerically). A ratio > 1: the \
         reactive crate is faster than Reactor, paired within rounds. The seed's machine is \
         not this one: read its column as the seed's claim, not as a third measurement."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

pub(super) fn method_lines(a: &SubscribeArgs) -> Vec<String> {
    let w = a.workers as usize;
    let scheds: Vec<String> = a.scheduler.0.iter().map(|s| s.describe(w)).collect();
    vec![
        "Every run is timed with std::time::Instant (ns resolution); a fork's runs share one \
         process, warm-ups first."
            .into(),
        "Each run's result is checked, warm-ups included: the range's sum must equal \
         N(N+1)/2, the subscribe loops must deliver N (one element of value 1 per \
         subscription); a wrong result makes the row INVALID."
            .into(),
        "The workloads are reactive::bench::{range_sum, mono_just_subscribe, \
         hand_written_subscribe, publish_on_sum}; every element of the synchronous workloads \
         passes through black_box so the sum is not folded into its closed form. Each \
         subscription's sum goes to a sink: the hand-written loop's is a local of the loop (as \
         RxBench's Sum object is), Mono.just's a thread-local (Mono takes 'static \
         subscribers), which black_box makes a load and a store per subscription."
            .into(),
        format!(
            "publish-on: {} ({}), prefetch {}, one scheduler per fork made before its first \
             run; the timed run includes subscribing and waiting for on_complete. As in \
             Reactor, the range emits on the thread that requests, so after the first \
             prefetch the worker produces each replenish batch itself (reactive's docs \
             explain).",
            if scheds.len() > 1 { "one row per scheduler" } else { "on" },
            scheds.join(", "),
            reactive::DEFAULT_PREFETCH
        ),
        "The Flux.range target is checked on the row's ns/element, which is the run time \
         scaled to 1M elements in ms."
            .into(),
        "reactor rows: Reactor (reactor-core 3.8.8, BOM 2025.0.8, Maven Central; seed 000's \
         version) in a JVM per fork, tools/jvm/reactor (ReactorBench.java), on --jdk's JDK \
         (25, Temurin, the seed's, by default) with the seed's flags (-Xms512m -Xmx1g \
         -XX:+UseG1GC) unless --jvm-gc is given: the seed's Bench.java, Flux.range(1, N) and \
         Mono.just(1) subscribed with a summing lambda, the seed's SyncSinglePublisher on \
         java.util.concurrent.Flow with its anonymous subscriber (request(Long.MAX_VALUE)), \
         publishOn(Schedulers.single(), false, 256) for publish_on(single, 256); the sink is a \
         plain field behind the blackhole below, not the seed's static volatile, so the JVM \
         rows and the Rust rows pay the same per element. Everything else as the rx rows."
            .into(),
        "rx rows: RxJava 3 (3.1.12, Maven Central) in a JVM per \
         fork on --jdk's JDK (25 by default) with --jvm-gc's collector (serial, a fixed 1 GiB \
         heap, by default), tools/jvm/rx (RxBench.java): Flowable.range summed into a plain long field, \
         each element made opaque to the JIT as black_box makes it to LLVM (JMH's \
         Blackhole trick: a store behind two volatile loads, no fence), Single.just(1) subscribed N times, the seed's \
         SyncSinglePublisher written against org.reactivestreams (one element once demand \
         arrives; request(n ≤ 0) signals onError, no recursion from onNext), \
         observeOn(Schedulers.single(), false, 256) for publish_on(single, 256). The same \
         warm-up and measured runs, timed with System.nanoTime around each run; each run's \
         result checked against the lab's closed form; GC collections and time \
         (GarbageCollectorMXBeans) and bytes allocated by every thread per run; perf \
         counters on every thread of the java process between the run marks. Each JVM row \
         is paired within rounds with the reactive row of its workload; the JVM rows table \
         names the JDK each ran on."
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture::{results, row};

    #[test]
    fn the_main_chart_is_each_rows_score_and_interval_beside_the_seeds_figure() {
        let mut rows = vec![
            row(
                "flux-range",
                "flux-range",
                1.3,
                Some([1.2, 1.4]),
                json!({"workload": "flux-range"}),
            ),
            row("mono-just", "mono-just", 3.3, None, json!({"workload": "mono-just"})),
            row(
                "publish-on[single]",
                "publish-on",
                11.0,
                Some([9.0, 12.5]),
                json!({"workload": "publish-on"}),
            ),
        ];
        rows[1].status = Status::Invalid;
        let r = results("subscribe-overhead", rows, Vec::new());
        let c = main_chart(&r).expect("a chart");
        let x_of = |l: &str| c.x_names.iter().find(|(_, n)| n == l).map(|(x, _)| *x);
        for x in r.results.iter().filter(|x| x.status == Status::Ok) {
            let at = x_of(&x.label).expect("a category per row");
            assert!(c.series[0].1.contains(&(at, x.score.expect("score"))), "{:?}", c.series);
            let bar = x.score_ci.map(|[a, b]| (at, a, b));
            assert_eq!(c.intervals[0].1.iter().find(|v| v.0 == at).copied(), bar);
        }
        assert_eq!(x_of("mono-just"), None, "a row that failed its checks is not drawn");
        assert_eq!(c.references, vec![("seed 000 (JVM)".to_string(), vec![(1.0, 6.0)])]);
        assert!(c.title.contains("log scale"));
    }
}
