//! The rows' details: each row's forks' histograms merged (its percentiles, its `.hgrm`
//! and V2 log), the fixed-rate account summed over its runs, a sweep's climb; then the
//! tables, charts and method.

use super::detail::{detail, HlKey, LatDetail};
use super::hdr::Merged;
use super::hdr::{self, Interval, Tail};
use super::run::highest_sustained;
use super::{clock, HandoffLatency, HlArgs, LatOutcome, RateFacts, Step};
use crate::experiment::{CellRecord, Finished};
use crate::results::{FileLink, Results, Row};
use hdrhistogram::Histogram;
use std::path::Path;
use std::time::Duration;

fn merge(rec: &CellRecord<HandoffLatency>, notes: &mut Vec<String>) -> Option<Merged> {
    let mut m = Merged { all: hdr::hist(), forks: Vec::new(), uncorrected: None };
    for f in rec.forks.iter().filter(|f| f.fork.status == crate::results::Status::Ok) {
        let Some(o) = &f.outcome else { continue };
        let decoded = o.hist.as_deref().map(hdr::decode).transpose();
        match decoded {
            Ok(Some(h)) => {
                let _ = m.all.add(&h);
                m.forks.push((f.fork.round, f.fork.wall_s, h));
            }
            Ok(None) => {}
            Err(e) => {
                notes.push(format!("{}: a fork's histogram did not decode: {e}", rec.plan.label))
            }
        }
        if let Some(Ok(u)) = o.uncorrected.as_deref().map(hdr::decode) {
            let _ = m.uncorrected.get_or_insert_with(hdr::hist).add(&u);
        }
    }
    (!m.all.is_empty()).then_some(m)
}

fn sum_rates(outs: &[&LatOutcome]) -> (Option<RateFacts>, usize, usize) {
    let runs: Vec<&RateFacts> = outs
        .iter()
        .flat_map(|o| o.runs.iter().filter(|r| !r.warmup && r.valid))
        .filter_map(|r| r.rate.as_ref())
        .collect();
    let Some(first) = runs.first() else { return (None, 0, 0) };
    let mut sum = RateFacts { offered: first.offered, ..RateFacts::default() };
    for r in &runs {
        sum.planned += r.planned;
        sum.sent += r.sent;
        sum.late += r.late;
        sum.unsent += r.unsent;
        sum.depths.merge(&r.depths);
        if sum.not_sustained.is_none() {
            sum.not_sustained.clone_from(&r.not_sustained);
        }
    }
    let bad = runs.iter().filter(|r| r.not_sustained.is_some()).count();
    (Some(sum), bad, runs.len())
}

/// The climb whose highest sustained rate is the median of the forks'.
fn median_climb(outs: &[&LatOutcome]) -> (Vec<Step>, Vec<f64>) {
    let mut climbs: Vec<(f64, &Vec<Step>)> =
        outs.iter().flat_map(|o| o.sweeps.iter()).map(|s| (highest_sustained(s), s)).collect();
    climbs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let highest = climbs.iter().map(|c| c.0).collect();
    (climbs.get(climbs.len() / 2).map(|c| c.1.clone()).unwrap_or_default(), highest)
}

/// A tag HdrHistogram accepts: no spaces, commas or colons.
fn tag(label: &str) -> String {
    label.chars().map(|c| if matches!(c, ' ' | ',' | ':') { '_' } else { c }).collect()
}

/// Writes the row's `.hgrm` and V2 log; their names, or a note on why not.
pub fn write_files(
    dir: &Path,
    stem: &str,
    label: &str,
    m: &Merged,
    out: &mut Results,
) -> (Option<String>, Option<String>) {
    let hgrm = format!("{stem}.hgrm");
    let hlog = format!("{stem}.hlog");
    let mut written = (None, None);
    match crate::report::write_atomic(dir, &hgrm, hdr::hgrm(&m.all, 1000.0).as_bytes()) {
        Ok(()) => written.0 = Some(hgrm.clone()),
        Err(e) => out.notes.push(format!("{label}: {e}")),
    }
    let mut at = Duration::ZERO;
    let t = tag(label);
    let intervals: Vec<Interval> = m
        .forks
        .iter()
        .map(|(_, wall, h)| {
            let length = Duration::from_secs_f64(wall.max(0.001));
            let i = Interval { tag: &t, start: at, length, hist: h };
            at += length;
            i
        })
        .collect();
    let comment = format!("handoff-latency {label}: one interval per fork (round order), ns");
    match hdr::v2_log(&comment, &intervals)
        .and_then(|text| crate::report::write_atomic(dir, &hlog, text.as_bytes()))
    {
        Ok(()) => written.1 = Some(hlog.clone()),
        Err(e) => out.notes.push(format!("{label}: {e}")),
    }
    if let Err(e) = read_back(dir, &written, &m.all) {
        out.notes.push(format!("{label}: its files did not read back as written: {e}"));
    }
    for (f, what) in
        [(&written.0, "percentile distribution (.hgrm, µs)"), (&written.1, "HdrHistogram V2 log")]
    {
        if let Some(f) = f {
            out.files
                .push(FileLink { file: f.clone(), what: format!("{label} ({}): {what}", stem) });
        }
    }
    written
}

/// Reads the row's files back (the V2 log with the hdrhistogram crate) and checks that they
/// give the percentiles of the histogram they were written from.
fn read_back(
    dir: &Path,
    files: &(Option<String>, Option<String>),
    all: &Histogram<u64>,
) -> Result<(), String> {
    let want = Tail::of(all);
    if let Some(f) = &files.1 {
        let text = std::fs::read_to_string(dir.join(f)).map_err(|e| e.to_string())?;
        let mut sum = hdr::hist();
        for (_, h) in hdr::read_v2_log(&text)? {
            sum.add(&h).map_err(|e| format!("{e:?}"))?;
        }
        if Tail::of(&sum) != want {
            return Err(format!("{f}: {:?} against {want:?}", Tail::of(&sum)));
        }
    }
    if let Some(f) = &files.0 {
        let text = std::fs::read_to_string(dir.join(f)).map_err(|e| e.to_string())?;
        let rows = hdr::parse_hgrm(&text);
        let max = rows.last().map_or(0.0, |r| r.0);
        if rows.last().map(|r| r.2) != Some(want.count)
            || (max - want.max as f64 / 1e3).abs() > 0.001
        {
            return Err(format!("{f}: its last line is not the max and count of the histogram"));
        }
    }
    Ok(())
}

fn fill_row(
    row: &mut Row,
    rec: &CellRecord<HandoffLatency>,
    dir: &Path,
    out: &mut Results,
) -> Option<Merged> {
    let c = &rec.plan.cell;
    let outs: Vec<&LatOutcome> = rec.outcomes().collect();
    let merged = merge(rec, &mut out.notes);
    let (rate, runs_not_sustained, runs) = sum_rates(&outs);
    let (sweep, fork_highest) = median_climb(&outs);
    let (hgrm, hlog) = match &merged {
        Some(m) => write_files(dir, &rec.plan.file_stem, &rec.plan.label, m, out),
        None => (None, None),
    };
    let slowest_trace = write_journeys(dir, rec, out);
    let key: HlKey = row.key_as();
    row.set_detail(&LatDetail {
        workload: key.workload,
        variant: key.variant,
        wait: c.wait.clone(),
        tail: merged.as_ref().map(|m| Tail::of(&m.all)),
        uncorrected: merged.as_ref().and_then(|m| m.uncorrected.as_ref()).map(Tail::of),
        rate,
        runs_not_sustained,
        runs,
        sweep,
        fork_highest,
        hgrm,
        hlog,
        percentile_ratios: Vec::new(),
        slowest_trace,
        jvm: outs.iter().find_map(|o| o.jvm.clone()),
        jvm_runtime: super::jvm::JvmRuntime::sum(
            outs.iter().filter_map(|o| o.jvm_runtime.as_ref()),
        ),
        wake: super::run::WakeRun::merge(
            &outs.iter().filter_map(|o| o.wake.as_ref()).collect::<Vec<_>>(),
        ),
    });
    merged
}

/// Writes the row's slowest messages' journeys (every measured, valid run of its OK forks)
/// as a Chrome trace; its name, `None` when no run kept any.
fn write_journeys(
    dir: &Path,
    rec: &CellRecord<HandoffLatency>,
    out: &mut Results,
) -> Option<String> {
    let mut runs = Vec::new();
    for f in rec.forks.iter().filter(|f| f.fork.status == crate::results::Status::Ok) {
        let Some(o) = &f.outcome else { continue };
        let measured = o.runs.iter().filter(|r| !r.warmup && r.valid);
        for (k, r) in measured.enumerate() {
            if let Some(rate) = r.rate.as_ref().filter(|x| !x.slowest.is_empty()) {
                runs.push((
                    format!("round {} run {}", f.fork.round + 1, k + 1),
                    rate.slowest.clone(),
                ));
            }
        }
    }
    if runs.is_empty() {
        return None;
    }
    let label = &rec.plan.label;
    let file = format!("{}.slowest.trace.json", rec.plan.file_stem);
    let text = super::journeys::trace(label, &runs).to_string();
    match crate::report::write_atomic(dir, &file, text.as_bytes()) {
        Ok(()) => {
            out.files.push(FileLink {
                file: file.clone(),
                what: format!(
                    "{label} ({}): the {} slowest messages of each measured run, due → sent → \
                     taken, as a trace with flows (opens in Perfetto)",
                    rec.plan.file_stem,
                    super::journeys::KEPT
                ),
            });
            Some(file)
        }
        Err(e) => {
            out.notes.push(format!("{label}: {e}"));
            None
        }
    }
}

/// Fills the rows, the tables, the charts and the method.
pub fn analyse(a: &HlArgs, run: &Finished<HandoffLatency>, out: &mut Results) {
    let clock = clock::measure();
    let mut merged = Vec::new();
    let mut rows = std::mem::take(&mut out.results);
    for (row, rec) in rows.iter_mut().zip(&run.cells) {
        merged.push(fill_row(row, rec, &run.dir, out));
    }
    out.results = rows;
    super::tables::tables(a, &clock, out);
    let (by_row, table) = super::paired::pair_all(out, &merged);
    for (row, rs) in out.results.iter_mut().zip(by_row) {
        if !rs.is_empty() {
            let mut d = detail(row);
            d.percentile_ratios = rs;
            row.set_detail(&d);
        }
    }
    if !table.rows.is_empty() {
        out.tables.push(table);
    }
    out.tables.extend(crate::analysis::failure_table(out, &["row", "group"], |x| {
        vec![x.label.clone(), x.group.clone()]
    }));
    out.charts = super::charts::charts(out, &merged);
    out.why = super::why::section(out, &super::tables::baseline(out));
    out.verdict = crate::analysis::verdict::usual(&out.ratios, &out.targets);
    out.method.extend(super::tables::method(a, &clock));
    out.method.extend(jvm_method(out));
}

/// One method line per JVM original's row: the JVM and libraries that ran it.
fn jvm_method(out: &Results) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for x in &out.results {
        let Some(j) = detail(x).jvm else { continue };
        let lib = match (&j.wait_strategy, &j.disruptor_version) {
            (Some(w), Some(v)) => format!("the Disruptor {v} with its {w}"),
            _ => "java.util.concurrent.LinkedBlockingQueue (unbounded)".to_string(),
        };
        let line = format!(
            "{}: on Java {} ({}), {lib}; HdrHistogram {} (Java) records on the JVM's side \
             with the same bounds and correction as the Rust rows; {} JIT warm-up pass(es) \
             before the cell's warm-up runs, one JVM per fork.",
            x.label,
            j.java,
            j.flags.join(" "),
            j.hdrhistogram_version.as_deref().unwrap_or("(version unknown)"),
            j.jit_warmup_runs
        );
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}
