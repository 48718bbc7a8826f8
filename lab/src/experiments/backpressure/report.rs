//! `backpressure-buffer`'s report: the verdict, the charts, the seed's cases and the grid,
//! the reactive crate's rows first, then each JVM library's.

use super::{
    detail, lib_of, BackpressureArgs, BackpressureKey, CaseDetail, SEED_CAP, SEED_N, SERVICE_NS,
};
use crate::measure::rx::Lib;
use crate::results::{Chart, Results, Row, Status, Table};

/// Who ran the rows: the reactive crate (`None`), then each JVM library.
const WHO: [Option<Lib>; 3] = [None, Some(Lib::Rx), Some(Lib::Reactor)];

/// The seed's cases against their expected overflows, and the grid's range of overflows,
/// for the reactive rows and then the rx rows.
pub(super) fn verdict(r: &Results) -> Vec<String> {
    let mut v = Vec::new();
    for lib in WHO {
        let who = lib.map_or(String::new(), |l| format!(" ({})", l.library()));
        let mine = |x: &&Row| lib_of(x) == lib;
        let seed: Vec<&Row> = r.results.iter().filter(|x| x.group == "seed").filter(mine).collect();
        if !seed.is_empty() {
            let ok = seed.iter().filter(|x| x.status == Status::Ok).count();
            let cases: Vec<String> = seed
                .iter()
                .map(|x| {
                    let n = x.score.map_or("–".into(), |s| format!("{s:.0}"));
                    format!("{} {n}", x.label)
                })
                .collect();
            v.push(format!(
                "the seed's cases{who}: {ok} of {} give the expected overflows ({})",
                seed.len(),
                cases.join(", ")
            ));
        }
        let grid: Vec<(&Row, f64)> = r
            .results
            .iter()
            .filter(mine)
            .filter(|x| x.group == "grid" && x.status == Status::Ok)
            .filter_map(|x| Some((x, x.score?)))
            .collect();
        let lo = grid.iter().min_by(|a, b| a.1.total_cmp(&b.1));
        let hi = grid.iter().max_by(|a, b| a.1.total_cmp(&b.1));
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let at = |x: &Row| {
                let k: BackpressureKey = x.key_as();
                let cap = k.capacity.map_or("–".into(), |c| c.to_string());
                let rate = k.rate;
                format!("capacity {cap}, rate {}×", rate.map_or("–".into(), |r| r.to_string()))
            };
            v.push(format!(
                "the grid{who}: {} of {} cells overflow, from {:.0} ({}) to {:.0} ({})",
                grid.iter().filter(|g| g.1 > 0.0).count(),
                grid.len(),
                lo.1,
                at(lo.0),
                hi.1,
                at(hi.0)
            ));
        }
    }
    v
}

/// The verdict's two lines as charts: each seed case's overflows (median over forks, the
/// interval of that median as its bar) beside the count the reactive crate's tests expect;
/// the grid's overflows against the producer's rate, a series per capacity, beside the
/// fluid model's.
pub(super) fn charts(r: &Results) -> Vec<Chart> {
    let mut out = Vec::new();
    let seed = |x: &Row| (x.group == "seed").then(|| ("this run".to_string(), x.label.clone()));
    let titles = (
        "The seed's cases: overflows (bars: interval of the median over forks)",
        "case[overflow policy]",
        "overflows per run",
    );
    if let Some((mut c, cats)) = crate::analysis::charts::score_chart(r, titles, seed) {
        let expected: Vec<(String, f64)> = r
            .results
            .iter()
            .filter_map(|x| match detail(x)?.case {
                CaseDetail::Seed { expected_overflows, .. } => {
                    Some((x.label.clone(), expected_overflows as f64))
                }
                CaseDetail::Grid { .. } => None,
            })
            .collect();
        crate::analysis::charts::add_reference(
            &mut c,
            &cats,
            "expected (reactive's tests)",
            &expected,
        );
        out.push(c);
    }
    let mut grid = Chart {
        title: "The grid: overflows against the producer's rate (bars: interval of the median over forks)"
            .into(),
        x_label: "rate (producer rate / the consumer's nominal rate)".into(),
        y_label: "overflows per run".into(),
        ..Default::default()
    };
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let Some(CaseDetail::Grid { capacity, rate, fluid_model, .. }) = detail(x).map(|d| d.case)
        else {
            continue;
        };
        let who = lib_of(x).map_or(String::new(), |l| format!("{}, ", l.library()));
        if let Some(score) = x.score {
            crate::analysis::charts::push_point(
                &mut grid,
                &format!("{who}capacity {capacity}"),
                rate,
                score,
                x.score_ci,
            );
        }
        let name = format!("fluid model, capacity {capacity}");
        match grid.references.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) if !v.contains(&(rate, fluid_model)) => v.push((rate, fluid_model)),
            Some(_) => {}
            None => grid.references.push((name, vec![(rate, fluid_model)])),
        }
    }
    if !grid.series.is_empty() {
        out.push(grid);
    }
    out
}

pub(super) fn seed_table(r: &Results) -> Table {
    let mut t = Table::new(
        format!("The seed's cases ({SEED_N} elements, capacity {SEED_CAP})"),
        &[
            "impl (JVM rows: library and JDK)",
            "case",
            "overflow policy",
            "status",
            "overflows",
            "delivered",
            "terminal",
            "expected overflows",
        ],
    );
    for x in r.results.iter().filter(|x| x.group == "seed") {
        // Counts are medians (f64 in the detail): printed as whole numbers.
        let d = detail(x);
        let (case, policy, expected) = match d.as_ref().map(|d| &d.case) {
            Some(CaseDetail::Seed { case, policy, expected_overflows, .. }) => {
                (case.clone(), policy.clone(), expected_overflows.to_string())
            }
            _ => ("–".into(), "–".into(), "–".into()),
        };
        let null = |v: Option<String>| v.unwrap_or_else(|| "null".into());
        let ok = x.status == Status::Ok;
        t.rows.push(vec![
            // A JVM row names its library and the JDK that ran it.
            d.as_ref().and_then(|d| d.library.clone()).unwrap_or_else(|| "reactive".into()),
            case,
            policy,
            x.status.word().into(),
            if ok {
                x.score.map_or("–".into(), |v| format!("{v:.0}"))
            } else {
                x.error.clone().unwrap_or_default()
            },
            match d.as_ref().filter(|_| ok) {
                Some(d) => null(d.delivered.map(|n| format!("{n:.0}"))),
                None => "–".into(),
            },
            match d.as_ref().filter(|_| ok) {
                Some(d) => null(d.terminal.clone()),
                None => "–".into(),
            },
            expected,
        ]);
    }
    t.note = Some(
        "publish-on-1: element 0 waits in publish_on's 1-slot queue, 1..=10 fill the buffer, \
         the rest overflow while the range runs (before any downstream request). A count other \
         than the expected one makes the row INVALID. rx: RxJava 3's \
         onBackpressureBuffer(10, onOverflow, DROP_LATEST | DROP_OLDEST | ERROR), behind \
         observeOn(Schedulers.single(), false, 1) for publish-on-1; its DROP_LATEST drops the \
         newest buffered element, not the arriving one (same count, other elements), and its \
         ERROR overflow is the MissingBackpressureException it signals. reactor: Reactor's \
         onBackpressureBuffer(10, onBufferOverflow, DROP_LATEST | DROP_OLDEST | ERROR) behind \
         publishOn(Schedulers.single(), false, 1); its DROP_LATEST drops the arriving element \
         (as the reactive crate's), and under ERROR it calls onBufferOverflow for element 11, \
         delivers the 10 buffered elements, then signals its OverflowException."
            .into(),
    );
    t
}

pub(super) fn grid_table(a: &BackpressureArgs, r: &Results) -> Table {
    let mut header = vec!["capacity".to_string()];
    header.extend(a.rates.0.iter().map(|r| format!("rate {r}×")));
    let mut t = Table {
        title: format!(
            "Overflows of {} elements (drop-latest) by capacity × producer rate (consumer: {} µs/element, request(1) each, behind publish_on(single, 1); median over forks)",
            a.elements,
            SERVICE_NS / 1000
        ),
        header,
        rows: Vec::new(),
        headline: true,
        note: Some(
            "Each cell: overflows (delivered; wall time per delivered element) [fluid model]. \
             rate = producer rate / the consumer's nominal rate (1 / service time). The fluid \
             model predicts max(0, N·(1 − 1/rate) − capacity) overflows; where the wall time per \
             delivered element exceeds the service time, the consumer's real rate (service + \
             publish_on's wake-up per element on these cores) is lower than nominal and more \
             overflow. Lines 'C (RxJava …)': RxJava 3, onBackpressureBuffer(C, onOverflow, \
             DROP_LATEST) → observeOn(Schedulers.single(), false, 1); lines 'C (Reactor …)': \
             Reactor, onBackpressureBuffer(C, onBufferOverflow, DROP_LATEST) → \
             publishOn(Schedulers.single(), false, 1); in the same rounds."
                .into(),
        ),
    };
    for lib in WHO {
        if !r.results.iter().any(|x| x.group == "grid" && lib_of(x) == lib) {
            continue;
        }
        for &cap in &a.capacities.0 {
            let library = r.results.iter().find_map(|x| {
                (x.group == "grid" && lib_of(x) == lib).then(|| detail(x)?.library).flatten()
            });
            let name = match (lib, library) {
                (None, _) => cap.to_string(),
                (Some(_), Some(l)) => format!("{cap} ({l})"),
                (Some(l), None) => format!("{cap} ({})", l.name()),
            };
            let mut line = vec![name];
            for &rate in &a.rates.0 {
                let row = r.results.iter().find(|x| {
                    x.group == "grid"
                        && lib_of(x) == lib
                        && x.key_as::<BackpressureKey>().capacity == Some(cap as u64)
                        && x.key_as::<BackpressureKey>().rate == Some(rate)
                });
                line.push(row.map_or("–".into(), grid_cell_text));
            }
            t.rows.push(line);
        }
    }
    t
}

/// One grid cell: overflows (delivered; µs per delivered element) [fluid model].
fn grid_cell_text(x: &Row) -> String {
    if x.status != Status::Ok {
        return format!("{}: {}", x.status.word(), x.error.clone().unwrap_or_default());
    }
    let d = detail(x);
    let (us, fluid) = match d.as_ref().map(|d| &d.case) {
        Some(CaseDetail::Grid { us_per_delivered, fluid_model, .. }) => {
            (*us_per_delivered, *fluid_model)
        }
        _ => (None, 0.0),
    };
    format!(
        "{} ({}; {} µs) [{:.0}]",
        x.score.map_or("–".into(), |v| format!("{v:.0}")),
        d.and_then(|d| d.delivered).map_or("–".into(), |v| format!("{v:.0}")),
        us.map_or("–".into(), |v| format!("{v:.0}")),
        fluid
    )
}

pub(super) fn method_lines() -> Vec<String> {
    vec![
        "A row's measured value is its overflow count per run: counts, not timings (the grid's \
         counts vary a little with scheduling)."
            .into(),
        "Producer: Flux.range paced by spinning to i × period in map() on the subscribing \
         thread; async boundary: publish_on(Scheduler::single(), prefetch 1); consumer: spins \
         the service time, then request(1)."
            .into(),
        "Every run is checked, warm-ups included: a grid run is INVALID unless delivered + \
         overflows = N and the stream completed; a seed case is INVALID unless its count and \
         terminal signal equal those of the reactive crate's tests (0 complete; 989 complete; \
         989 complete; 1 then an error)."
            .into(),
        "Traces: overflow instants come from the reactive crate's buffer \
         (instant!(\"overflow\")); buffer_depth is sampled by the harness's map()."
            .into(),
        "reactor rows: Reactor 3.8.8 (Maven Central, seed 000's version) in a JVM per fork on \
         --jdk's JDK (Temurin 25 by default) with the seed's flags (-Xms512m -Xmx1g \
         -XX:+UseG1GC) unless --jvm-gc is given, tools/jvm/reactor (ReactorBackpressure.java): \
         the same cases as the rx rows with Flux.range, onBackpressureBuffer(capacity, \
         onBufferOverflow, strategy) and publishOn(Schedulers.single(), false, 1). Overflows = \
         onBufferOverflow calls (under ERROR Reactor calls it for the element that overflowed \
         too, so its error is not counted again). Checked as the rx rows are."
            .into(),
        "rx rows: RxJava 3 (3.1.12, Maven Central) in a JVM per fork on --jdk's JDK \
         (--jvm-gc's collector, a 256 MiB heap), tools/jvm/rx (RxBackpressure.java): the same cases with \
         Flowable.range(0, N).map(pace).onBackpressureBuffer(capacity, onOverflow, strategy) \
         (RxJava's form with an exact capacity), observeOn(Schedulers.single(), false, 1) as \
         the boundary, the same pacing (spinning to i × period from the first element) and \
         consumer (spin the service time, then request(1)). Overflows = onOverflow calls + \
         MissingBackpressureExceptions the buffer signalled. Each run checks itself in the \
         JVM (every emitted element delivered or overflowed, in order) and again in the lab \
         against its own N and the seed's counts (under ERROR: element 11 overflowed). Their \
         trace pass (the same cells as the reactive rows') runs the JVM under Java Flight \
         Recorder: GC pauses, safepoints, parks and monitor waits on each Java thread's \
         track, with the kernel's off-CPU slices; RxJava emits no overflow instants."
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture::{results, row};
    use serde_json::json;

    fn seed(label: &str, overflows: f64, expected: u64) -> Row {
        let d = json!({"kind": "seed", "case": label, "policy": "drop-latest",
            "expected_overflows": expected, "expected_terminal": "complete", "runs": []});
        row(label, "seed", overflows, Some([overflows - 1.0, overflows + 1.0]), d)
    }

    fn grid(capacity: usize, rate: f64, overflows: f64, fluid: f64) -> Row {
        let d = json!({"kind": "grid", "elements": 500, "capacity": capacity, "rate": rate,
            "fluid_model": fluid, "runs": []});
        row(&format!("grid[c{capacity},r{rate}]"), "grid", overflows, None, d)
    }

    #[test]
    fn the_main_chart_is_each_seed_cases_overflows_beside_the_expected_count() {
        let rows = vec![
            seed("sync-request-1[drop-latest]", 0.0, 0),
            seed("publish-on-1[drop-latest]", 989.0, 989),
            grid(10, 0.5, 337.5, 0.0),
            grid(10, 2.0, 411.5, 240.0),
            grid(100, 2.0, 298.5, 150.0),
        ];
        let r = results("backpressure-buffer", rows, Vec::new());
        let cs = charts(&r);
        let main = &cs[0];
        assert_eq!(main.series, vec![("this run".to_string(), vec![(1.0, 0.0), (2.0, 989.0)])]);
        assert_eq!(
            main.intervals,
            vec![("this run".to_string(), vec![(1.0, -1.0, 1.0), (2.0, 988.0, 990.0)])]
        );
        assert_eq!(main.references[0].1, vec![(1.0, 0.0), (2.0, 989.0)]);
        let g = &cs[1];
        assert_eq!(
            g.series,
            vec![
                ("capacity 10".to_string(), vec![(0.5, 337.5), (2.0, 411.5)]),
                ("capacity 100".to_string(), vec![(2.0, 298.5)]),
            ]
        );
        assert_eq!(
            g.references[0],
            ("fluid model, capacity 10".to_string(), vec![(0.5, 0.0), (2.0, 240.0)])
        );
    }
}
