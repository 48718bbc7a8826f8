//! `disruptor-vs-lbq`'s tables and charts, from the rows' typed details.

use super::HandoffDetail;
use crate::results::{Chart, Results, Row, Status, Table};
use crate::stats::percentiles::Percentiles;
use crate::units::{fmt_num, group};

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> HandoffDetail {
    x.detail()
}

/// The JVM rows' own evidence: allocation per message and GC, from the JVM's instruments.
pub(super) fn jvm_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "JVM rows: bytes allocated per message (ThreadMXBean) and GC per run (GC beans), medians over runs",
        &["variant", "P", "producer type", "wait strategy", "message", "collector", "bytes/msg", "GCs/run", "GC ms/run", "JIT passes"],
    );
    for x in &r.results {
        let Some(j) = detail(x).jvm else { continue };
        let f = |v: Option<f64>, d: usize| v.map_or("–".into(), |v| format!("{v:.d$}"));
        t.rows.push(vec![
            x.label.clone(),
            super::key(x).producers.to_string(),
            j.producer_type.to_uppercase(),
            j.wait_strategy.clone().unwrap_or_else(|| "–".into()),
            j.message.clone(),
            j.gc.clone(),
            f(j.allocated_bytes_per_message, 1),
            f(j.gc_count_per_run, 1),
            f(j.gc_ms_per_run, 1),
            j.jit_warmup_passes.to_string(),
        ]);
    }
    t.note = Some(
        "As seed 000 asks of JVM memory: bytes allocated as the JVM counts them, and GC \
         time, not totalMemory. The Rust rows' heap evidence is dhat's (the Heap table). \
         Wait strategy: the JVM Disruptor's class (under Rust blocking, \
         BlockingWaitStrategy as seed 001 ran, unless --jvm-wait says otherwise). Message: \
         inline (payload as long fields) or byte-array (a byte[] per message). Collector: \
         the --jvm-gc setting (flags in the Method section)."
            .into(),
    );
    // The JVM originals' own evidence is shown beside the headline tables when they ran.
    t.headline = true;
    (!t.rows.is_empty()).then_some(t)
}

fn axes(r: &Results) -> (Vec<String>, Vec<u64>) {
    let mut labels: Vec<String> = Vec::new();
    // Traced twins have their own table (`inrun::cost_table`).
    for row in r.results.iter().filter(|x| !x.role.is_side()) {
        if !labels.contains(&row.label) {
            labels.push(row.label.clone());
        }
    }
    let mut ps: Vec<u64> = r.results.iter().map(|x| super::key(x).producers).collect();
    ps.sort_unstable();
    ps.dedup();
    (labels, ps)
}

fn find<'a>(r: &'a Results, label: &str, p: u64) -> Option<&'a Row> {
    r.results.iter().find(|x| x.label == label && super::key(x).producers == p)
}

fn qps_of(row: &Row, score: f64) -> f64 {
    detail(row).messages as f64 / (score / 1e3)
}

/// A cell's value: the score, or its two modes when bimodal; the status word otherwise.
fn cell_text(row: Option<&Row>, f: impl Fn(&Row, f64) -> String) -> String {
    let Some(r) = row else { return "–".into() };
    if r.status != Status::Ok {
        return r.status.word().to_string();
    }
    match (&r.modes, r.score) {
        (Some([lo, hi]), _) => format!(
            "bimodal: {} ({:.0}%) | {} ({:.0}%)",
            f(r, lo.median),
            lo.share * 100.0,
            f(r, hi.median),
            hi.share * 100.0
        ),
        (None, Some(s)) => f(r, s),
        _ => "–".into(),
    }
}

/// The seed's two headline tables, with a column per paired ratio (every row against the
/// baseline, and each port against its JVM original).
pub(super) fn headline_tables(r: &Results) -> Vec<Table> {
    let (labels, ps) = axes(r);
    let mut pairs: Vec<(String, String)> = Vec::new();
    for x in r.ratios.iter().filter(|x| !x.is_side()) {
        let p = (x.variant.clone(), x.baseline.clone());
        if !pairs.contains(&p) {
            pairs.push(p);
        }
    }
    let mut tables = Vec::new();
    for is_qps in [true, false] {
        let mut header = vec!["P".to_string()];
        header.extend(labels.iter().cloned());
        header.extend(pairs.iter().map(|(o, b)| {
            if is_qps {
                format!("{o}/{b} QPS [interval]")
            } else {
                format!("{o}/{b} duration")
            }
        }));
        let rows = ps
            .iter()
            .map(|&p| {
                let mut row = vec![p.to_string()];
                for l in &labels {
                    row.push(cell_text(find(r, l, p), |x, s| {
                        if is_qps {
                            group(qps_of(x, s))
                        } else {
                            fmt_num(s)
                        }
                    }));
                }
                for (o, b) in &pairs {
                    let x = r.ratios.iter().find(|x| {
                        &x.variant == o
                            && &x.baseline == b
                            && super::ratio_producers(r, x) == Some(p)
                    });
                    row.push(match x {
                        Some(x) if is_qps => x.text(),
                        Some(x) => x.median.map_or("–".into(), |m| format!("{:.1}%", 100.0 / m)),
                        None => "–".into(),
                    });
                }
                row
            })
            .collect();
        let (title, note) = if is_qps {
            (
                "QPS (messages/s, from the median over forks)".to_string(),
                format!(
                    "Ratio = variant QPS / baseline QPS, taken within each round and summarised \
                     as the median over rounds with its repeat interval (99%: where the next \
                     run's median falls; the seed's 对比 column: {:.0}% … {:.0}%); 'unstable' \
                     marks an interval wider than ±10%.",
                    super::SEED_QPS_RATIOS[0].1 * 100.0,
                    super::SEED_QPS_RATIOS[1].1 * 100.0
                ),
            )
        } else {
            (
                "Duration (ms per run, median over forks)".to_string(),
                "Ratio = variant duration / baseline duration, from the paired QPS ratio (the \
                 seed: 73% … 39.65%)."
                    .to_string(),
            )
        };
        tables.push(Table { title, header, rows, note: Some(note), headline: true });
    }
    tables
}

/// The forks of each row: scores, interval, modes, disturbance.
pub(super) fn forks_table(r: &Results) -> Table {
    let mut t = Table::new(
        "Forks: scores (ms per run) over rounds, interval of the median, what disturbed them",
        &[
            "variant",
            "P",
            "status",
            "valid forks",
            "min",
            "median",
            "max",
            "interval",
            "modes",
            "steal max",
            "load avg",
            "CPU ns/op",
            "ping-pong ns",
            "threads > cores",
        ],
    );
    for x in &r.results {
        let s = x.fork_scores();
        let f = |v: Option<f64>| v.map_or("–".into(), fmt_num);
        let steal = x.forks.iter().filter_map(|f| f.disturbance.steal_pct).reduce(f64::max);
        let load = crate::stats::median(
            &x.forks.iter().filter_map(|f| f.disturbance.load_avg).collect::<Vec<_>>(),
        );
        t.rows.push(vec![
            x.label.clone(),
            super::key(x).producers.to_string(),
            x.status.word().to_string(),
            format!("{}/{}", s.len(), x.forks.len()),
            f(s.iter().copied().reduce(f64::min)),
            f(x.score),
            f(s.iter().copied().reduce(f64::max)),
            x.score_ci.map_or("–".into(), |[a, b]| format!("[{}, {}]", fmt_num(a), fmt_num(b))),
            x.modes.as_ref().map_or("one".into(), |[a, b]| {
                format!("{} ×{} | {} ×{}", fmt_num(a.median), a.count, fmt_num(b.median), b.count)
            }),
            steal.map_or("–".into(), |s| format!("{s:.1}%")),
            load.map_or("–".into(), |l| format!("{l:.2}")),
            probe_text(&x.forks, |d| d.cpu_ns_per_op, 3),
            probe_text(&x.forks, |d| d.cpu_ping_pong_ns, 0),
            if x.forks.iter().any(|f| f.disturbance.oversubscribed) {
                "yes".into()
            } else {
                "no".into()
            },
        ]);
    }
    t.note = Some(
        "A fork is a fresh child process; its score is the median of its measured runs. \
         Steal is the hypervisor's share of CPU time during the fork (/proc/stat); \
         CPU ns/op is the speed probe before each fork (ns per dependent multiply-add, \
         mean over the CPUs; median and range over the forks: a higher figure is a slower \
         machine); ping-pong ns is the round trip of a cache line between the first two \
         CPUs, probed at the same time (where the host placed the virtual CPUs: a spinning \
         handoff's cost); threads > cores means the cell was oversubscribed."
            .into(),
    );
    t
}

/// "1.05 (0.98–1.13)": a probe's median and range over `forks`, to `digits`, or "–".
fn probe_text(
    forks: &[crate::results::Fork],
    probe: crate::analysis::pairing::Probe,
    digits: usize,
) -> String {
    let v = crate::analysis::pairing::probe_values(forks, probe);
    match (
        crate::stats::median(&v),
        v.iter().copied().reduce(f64::min),
        v.iter().copied().reduce(f64::max),
    ) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:.digits$} ({lo:.digits$}–{hi:.digits$})"),
        _ => "–".into(),
    }
}

fn fmt_us(ns: u64) -> String {
    let us = ns as f64 / 1e3;
    if us >= 100.0 {
        format!("{us:.0}")
    } else {
        format!("{us:.1}")
    }
}

pub(super) fn latency_table(r: &Results, every: u64) -> Table {
    let mut t = Table::new(
        "Queueing delay at saturation of sampled messages (µs, send → consume while every \
         producer sends as fast as it can; median over forks): not the handoff's latency, see \
         handoff-latency",
        &["variant", "P", "samples", "p50", "p90", "p99", "p99.9", "max"],
    );
    for x in &r.results {
        let p = super::key(x).producers.to_string();
        t.rows.push(match detail(x).latency_ns {
            Some(l) => vec![
                x.label.clone(),
                p,
                l.count.to_string(),
                fmt_us(l.p50),
                fmt_us(l.p90),
                fmt_us(l.p99),
                fmt_us(l.p999),
                fmt_us(l.max),
            ],
            None => [x.label.clone(), p, x.status.word().into()]
                .into_iter()
                .chain(std::iter::repeat_n("–".to_string(), 5))
                .collect(),
        });
    }
    t.note = Some(format!(
        "Every {every}th message of each producer is stamped at send and read at receipt while \
         the producers saturate the channel: a message waits behind everything queued before \
         it (up to the ring's size; without bound in the locked queue), so these figures are \
         the queue's depth times the consumer's speed, counted from the actual send in a \
         closed loop (coordinated omission). They must not be read as handoff latency: `lab \
         handoff-latency` measures that (ping-pong round trips, a fixed offered rate counted \
         from each message's due time, LMAX's pipeline)."
    ));
    t
}

pub(super) fn cpu_table(r: &Results) -> Table {
    let mut t = Table::new(
        "CPU: process use, CPU time per thread (ms), context switches (means per run)",
        &[
            "variant",
            "P",
            "process CPU",
            "of machine",
            "producer-0 / producer-1 / …",
            "consumer",
            "consumer sys",
            "voluntary cs",
            "involuntary cs",
            "page faults/msg",
        ],
    );
    for x in &r.results {
        let p = super::key(x).producers.to_string();
        let d = detail(x);
        t.rows.push(match d.cpu {
            Some(c) => {
                let prod: Vec<String> = c
                    .threads
                    .iter()
                    .filter(|t| t.name.starts_with("producer"))
                    .map(|t| format!("{:.0}", t.cpu_ms))
                    .collect();
                let cons = c.threads.iter().find(|t| t.name == "consumer");
                vec![
                    x.label.clone(),
                    p,
                    format!("{:.0}%", c.process_pct),
                    format!("{:.0}%", c.machine_pct),
                    prod.join(" / "),
                    cons.map_or("–".into(), |t| format!("{:.0}", t.cpu_ms)),
                    cons.map_or("–".into(), |t| format!("{:.0}", t.sys_ms)),
                    format!("{:.0}", c.threads.iter().map(|t| t.voluntary_cs).sum::<f64>()),
                    format!("{:.0}", c.threads.iter().map(|t| t.involuntary_cs).sum::<f64>()),
                    d.page_faults_per_message.map_or("–".into(), |f| format!("{f:.5}")),
                ]
            }
            None => [x.label.clone(), p, x.status.word().into()]
                .into_iter()
                .chain(std::iter::repeat_n("–".to_string(), 7))
                .collect(),
        });
    }
    t.note = Some(
        "process CPU = CPU time / wall time (200% = two cores busy); \"of machine\" divides by \
         the online cores, like the seed's CPU graph. Thread times from \
         getrusage(RUSAGE_THREAD) at each thread's end. Page faults/msg: the run's own (from \
         after the handoff was opened, getrusage), median over runs."
            .into(),
    );
    t
}

/// A per-message count: three significant digits, however small.
fn fmt_per_message(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if x.abs() >= 1.0 {
        return fmt_num(x);
    }
    let digits = (2 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

pub(super) fn counters_table(r: &Results) -> Table {
    let rows: Vec<(&Row, HandoffDetail)> = r.results.iter().map(|x| (x, detail(x))).collect();
    let has = |k: &str| {
        rows.iter().any(|(_, d)| {
            d.counters.as_ref().is_some_and(|c| c.get(k).copied().flatten().is_some())
        })
    };
    let mut columns: Vec<&str> = perf_counters::EVENTS.into_iter().filter(|e| has(e)).collect();
    if has("ipc") {
        columns.push("ipc");
    }
    let mut header = vec!["variant", "P"];
    header.extend(columns.iter().map(|c| if *c == "ipc" { "IPC" } else { c }));
    let mut t = Table::new("Counters per message (perf events, whole process)", &header);
    let mut nulls: Vec<String> = Vec::new();
    for (x, d) in &rows {
        let c = &d.counters;
        let p = super::key(x).producers.to_string();
        let mut row = vec![x.label.clone(), p];
        match c {
            Some(c) => row.extend(columns.iter().map(|k| {
                c.get(*k).copied().flatten().map_or("–".into(), |v| {
                    if *k == "ipc" {
                        format!("{v:.2}")
                    } else {
                        fmt_per_message(v)
                    }
                })
            })),
            // Not counted (a JVM row) or no valid run: the status word says which.
            None => row.extend(columns.iter().enumerate().map(|(i, _)| {
                if i == 0 && x.status != Status::Ok {
                    x.status.word().to_string()
                } else {
                    "–".to_string()
                }
            })),
        }
        let some_null = c.as_ref().is_none_or(|c| c.values().any(Option::is_none));
        if let Some(n) = d.counters_note.as_ref().filter(|_| some_null) {
            if !nulls.contains(n) {
                nulls.push(n.clone());
            }
        }
        t.rows.push(row);
    }
    let mut note = "Each measured run's counts divided by its messages, as JMH's perfnorm \
                    does; the median over forks of each fork's median over its valid runs. \
                    Whole process: every thread summed, from after the handoff was opened until \
                    its threads were joined; per thread (counters_by_thread): from the start \
                    barrier to the end of the thread's loop. task-clock in ns. JVM rows: every \
                    thread of the java process (GC and JIT compiler threads included; by thread, \
                    the JVM's own summed by kind, the VM thread apart: it runs the serial \
                    collector's collections), per run between Bus's run marks, else over \
                    the whole JVM (the row's counters_note says which)."
        .to_string();
    if !nulls.is_empty() {
        note.push_str(&format!(" Missing values: {}.", nulls.join("; ")));
    }
    t.note = Some(note);
    t
}

pub(super) fn heap_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Heap (dhat, a separate untimed run per cell)",
        &[
            "variant",
            "P",
            "messages",
            "allocations",
            "bytes allocated",
            "peak live bytes",
            "allocations/msg",
            "bytes/msg",
            "check",
        ],
    );
    for x in &r.results {
        if let Some(h) = detail(x).heap {
            t.rows.push(vec![
                x.label.clone(),
                super::key(x).producers.to_string(),
                h.messages.to_string(),
                h.total_blocks.to_string(),
                h.total_bytes.to_string(),
                h.max_bytes.to_string(),
                format!("{:.3}", h.blocks_per_message),
                format!("{:.1}", h.bytes_per_message),
                if h.valid { "ok".into() } else { "INVALID".into() },
            ]);
        }
    }
    t.note = Some(
        "Totals include the run's fixed setup (threads, the checker, a preallocated ring); \
         per-message figures divide the totals by the heap run's messages."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

/// The paired ratios against P: a series per (row, baseline) pair at its median, its repeat
/// interval as a bar at each P, and the seed's published ratios beside them.
fn ratio_chart(r: &Results) -> Option<Chart> {
    let (_, ps) = axes(r);
    let mut c = Chart {
        title: "QPS ratio against producers (median over rounds, 99% repeat interval)".into(),
        x_label: "producers (P)".into(),
        y_label: "× (variant QPS / baseline QPS)".into(),
        ..Default::default()
    };
    for x in r.ratios.iter().filter(|x| !x.is_side()) {
        let name = format!("{}/{}", x.variant, x.baseline);
        let (Some(p), Some(m)) = (super::ratio_producers(r, x), x.median) else { continue };
        let at = match c.series.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                c.series.push((name.clone(), Vec::new()));
                c.intervals.push((name, Vec::new()));
                c.series.len() - 1
            }
        };
        c.series[at].1.push((p as f64, m));
        if let (Some(lo), Some(hi)) = (x.ci_low, x.ci_high) {
            c.intervals[at].1.push((p as f64, lo, hi));
        }
    }
    c.intervals.retain(|(_, v)| !v.is_empty());
    if c.series.is_empty() {
        return None;
    }
    let seed: Vec<(f64, f64)> = super::SEED_QPS_RATIOS
        .iter()
        .filter(|(p, _)| ps.contains(p))
        .map(|&(p, x)| (p as f64, x))
        .collect();
    if !seed.is_empty() {
        c.references.push(("seed 001 (Disruptor/LBQ)".into(), seed));
    }
    Some(c)
}

/// A row's spread over forks in QPS: the interval of its median (`score_ci`), else the
/// range of its forks' scores; `None` with fewer than two forks.
fn qps_spread(x: &Row) -> Option<(f64, f64)> {
    let [a, b] = x.score_ci.or_else(|| {
        let s = x.fork_scores();
        let lo = s.iter().copied().reduce(f64::min)?;
        let hi = s.iter().copied().reduce(f64::max)?;
        (s.len() > 1).then_some([lo, hi])
    })?;
    // A longer time is a lower rate: the interval's ends swap.
    (a > 0.0 && b > 0.0).then(|| (qps_of(x, b.max(a)), qps_of(x, a.min(b))))
}

pub(super) fn charts(r: &Results) -> Vec<Chart> {
    let (labels, _) = axes(r);
    let ok = |x: &&Row| x.status == Status::Ok;
    let mut qps = Chart {
        title: "Throughput against producers (bars: interval of the median over forks)".into(),
        x_label: "producers (P)".into(),
        y_label: "messages/s".into(),
        ..Default::default()
    };
    for l in &labels {
        let rows: Vec<(f64, &Row)> = r
            .results
            .iter()
            .filter(|x| &x.label == l)
            .filter(ok)
            .map(|x| (super::key(x).producers as f64, x))
            .collect();
        let pts = rows.iter().filter_map(|(p, x)| Some((*p, detail(x).qps?))).collect();
        let bars: Vec<(f64, f64, f64)> =
            rows.iter().filter_map(|(p, x)| qps_spread(x).map(|(lo, hi)| (*p, lo, hi))).collect();
        qps.series.push((l.clone(), pts));
        if !bars.is_empty() {
            qps.intervals.push((l.clone(), bars));
        }
    }
    let mut lat = Vec::new();
    for l in &labels {
        for (name, f) in
            [("p50", (|x: &Percentiles| x.p50) as fn(&Percentiles) -> u64), ("p99", |x| x.p99)]
        {
            let pts = r
                .results
                .iter()
                .filter(|x| &x.label == l)
                .filter(ok)
                .filter_map(|x| {
                    Some((super::key(x).producers as f64, f(&detail(x).latency_ns?) as f64 / 1e3))
                })
                .collect();
            lat.push((format!("{l} {name}"), pts));
        }
    }
    let mut out: Vec<Chart> = ratio_chart(r).into_iter().collect();
    out.push(qps);
    out.push(Chart {
        title: "Queueing delay at saturation of sampled messages (log scale; not handoff \
                latency: see handoff-latency)"
            .into(),
        x_label: "producers (P)".into(),
        y_label: "µs".into(),
        series: lat,
        ..Default::default()
    });
    out
}

/// The QPS cell of row `label` in `group`: its grouped QPS, its status word when it did not
/// run to the end, `–` when there is no such row or no figure.
pub fn qps_cell(r: &Results, label: &str, group_: &str) -> String {
    match r.results.iter().find(|x| x.label == label && x.group == group_) {
        Some(x) if x.status != Status::Ok => x.status.word().to_string(),
        Some(x) => x.detail::<HandoffDetail>().qps.map_or("–".into(), group),
        None => "–".into(),
    }
}
