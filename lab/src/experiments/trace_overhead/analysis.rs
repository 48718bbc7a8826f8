//! In the parent: the forks' outcomes paired within rounds into costs, the predicted cost,
//! the tables, the targets, the files and the notes.

use super::detail::{ThreadShare, TraceDetail};
use super::{
    slots, AllocatorProbe, ModeOutcome, RecordCost, Recorder, TraceOverhead, TraceOverheadArgs,
    Workload, AA, BATCH, FLIGHT_TARGET_PCT, RING_SIZE, SAMPLE_EVERY,
};
use crate::experiment::{CellRecord, Finished};
use crate::results::{Chart, FileLink, Results, Row, Status, Table, Target};
use crate::stats::{median, median_ci, Interval, Summary};
use std::collections::BTreeMap;
use std::path::Path;

/// Full captures above this size are measured, then deleted (they are not the evidence here).
const KEEP_FULL_BYTES: u64 = 64 << 20;

/// By round (`Fork::round`): a figure of that round's fork.
type ByRound = BTreeMap<usize, f64>;

/// Records one thread (by name) wrote per message, and the share of spans among them.
#[derive(Debug, Clone)]
struct ThreadRecords {
    name: String,
    per_msg: f64,
    span_share: f64,
}

/// What a cell's forks returned. Statistics take valid forks only; the allocator probes
/// are checks and come from every fork that answered.
#[derive(Debug, Default)]
struct Gathered {
    /// Best (shortest) valid run of each round's fork.
    best: ByRound,
    /// Median process CPU time per run of each round's fork.
    cpu: ByRound,
    /// Every measured run of the valid forks, ms.
    runs_ms: Vec<f64>,
    allocators: Vec<AllocatorProbe>,
    costs: Vec<RecordCost>,
    /// Records written per message, by fork (flight).
    records_per_msg: Vec<f64>,
    /// Share of spans among the records kept in the dump, by fork (flight).
    span_share: Vec<f64>,
    /// Per thread name, over forks (flight).
    threads: Vec<ThreadRecords>,
    trace_bytes: Vec<u64>,
    /// Each fork's recorder account, and the dumps' worst figures.
    trace_notes: Vec<String>,
}

fn gather(rec: &CellRecord<TraceOverhead>, messages: u64) -> Gathered {
    let mut g = Gathered::default();
    for f in &rec.forks {
        let Some(o) = &f.outcome else { continue };
        g.allocators.push(o.allocator.clone());
        if f.fork.status != Status::Ok {
            continue;
        }
        let valid: Vec<&super::Run> = o.runs.iter().filter(|r| r.valid).collect();
        if let Some(b) = valid.iter().map(|r| r.ms).reduce(f64::min) {
            g.best.insert(f.fork.round, b);
        }
        if let Some(c) = median(&valid.iter().map(|r| r.cpu_ms).collect::<Vec<_>>()) {
            g.cpu.insert(f.fork.round, c);
        }
        g.runs_ms.extend(valid.iter().map(|r| r.ms));
        g.costs.extend(o.record_cost);
        g.trace_bytes.extend(o.trace_bytes);
        g.trace_notes.extend(o.trace_note.clone());
        add_dump(&mut g, o, messages);
    }
    g
}

/// A flight fork's dump: records per message, the span share, the per-thread split.
fn add_dump(g: &mut Gathered, o: &ModeOutcome, messages: u64) {
    let Some(d) = &o.dump else { return };
    let recorded = (o.runs_recorded as u64 * messages) as f64;
    let written = d.records + d.overwritten;
    if recorded > 0.0 {
        g.records_per_msg.push(written as f64 / recorded);
    }
    if d.records > 0 {
        g.span_share.push(d.span_records as f64 / d.records as f64);
    }
    // Kept records split by thread, scaled up to all written (kept + overwritten): the
    // overwritten ones were written in the same mix.
    let scale = written as f64 / d.records.max(1) as f64 / recorded.max(1.0);
    g.threads.extend(d.by_thread.iter().map(|t| ThreadRecords {
        name: t.name.clone(),
        per_msg: t.records as f64 * scale,
        span_share: t.spans as f64 / t.records.max(1) as f64,
    }));
}

/// Per-round paired costs of `g` against `base`, percent, in rounds where both have one.
fn paired(g: &ByRound, base: &ByRound) -> Vec<f64> {
    crate::analysis::pairing::change_pct_by_round(g, base)
}

/// Per round, the baseline a traced mode is paired with: the `off` fork's figure, or, where
/// the workload also runs the A/A `off` fork, the mean of the two (two measurements of the
/// same thing halve the baseline's variance; either one alone where the other is missing).
fn baseline(off: &ByRound, aa: Option<&ByRound>) -> ByRound {
    let Some(aa) = aa else { return off.clone() };
    let rounds: std::collections::BTreeSet<usize> = off.keys().chain(aa.keys()).copied().collect();
    rounds
        .into_iter()
        .filter_map(|r| {
            let v = match (off.get(&r), aa.get(&r)) {
                (Some(o), Some(a)) => (o + a) / 2.0,
                (Some(x), None) | (None, Some(x)) => *x,
                (None, None) => return None,
            };
            Some((r, v))
        })
        .collect()
}

/// "+1.2% [−0.3, +2.8]" (interval) or "+1.2% (range −0.3 … +2.8)" when too few rounds.
fn fmt_cost(xs: &[f64]) -> String {
    match (median(xs), median_ci(xs)) {
        (Some(m), Some(Interval { low: lo, high: hi, .. })) => {
            format!("{m:+.1}% [{lo:+.1}, {hi:+.1}]")
        }
        (Some(m), None) => {
            let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!("{m:+.1}% (range {lo:+.1} … {hi:+.1})")
        }
        _ => "-".into(),
    }
}

fn fmt_bytes(b: u64) -> String {
    if b >= 1 << 20 {
        format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64)
    } else {
        format!("{:.1} KiB", b as f64 / 1024.0)
    }
}

/// Median of each field over forks.
fn median_cost(cs: &[RecordCost]) -> Option<RecordCost> {
    let e: Vec<f64> = cs.iter().map(|c| c.event_ns).collect();
    let s: Vec<f64> = cs.iter().map(|c| c.span_ns).collect();
    Some(RecordCost { event_ns: median(&e)?, span_ns: median(&s)? })
}

/// One row with everything computed for it.
#[derive(Debug)]
struct Analysed {
    workload: Workload,
    /// The cell's label: `off`, `off-aa`, `flight`, `full`.
    slot: String,
    recorder: Recorder,
    status: Status,
    g: Gathered,
    /// Per-round costs against the baseline (the A/A row: against `off` alone), percent.
    per_round: Vec<f64>,
    /// The same on process CPU time.
    cpu_round: Vec<f64>,
    cost: Option<f64>,
    ci: Option<Interval>,
    record_cost: Option<RecordCost>,
    records_per_msg: Option<f64>,
    span_share: Option<f64>,
    /// All threads' records as if on one critical path (an upper bound), percent.
    predicted: Option<f64>,
    /// (thread name, records per message, predicted cost if it is the bottleneck).
    per_thread: Vec<(String, f64, Option<f64>)>,
    busiest: Option<(String, f64)>,
}

/// What a traced row's prediction needs from its workload's `off` row.
struct OffFigures {
    cost: Option<RecordCost>,
    /// Median over rounds of the off forks' best runs, ms.
    best_ms: Option<f64>,
}

fn analyse_rows(run: &Finished<TraceOverhead>, messages: u64) -> Vec<Analysed> {
    let gathered: Vec<Gathered> = run.cells.iter().map(|c| gather(c, messages)).collect();
    let find = |w: Workload, slot: &str| {
        run.cells.iter().position(|c| c.plan.cell.workload == w && c.plan.label == slot)
    };
    let mut rows = Vec::new();
    for (i, rec) in run.cells.iter().enumerate() {
        let w = rec.plan.cell.workload;
        let slot = rec.plan.label.clone();
        let empty = ByRound::new();
        let off = find(w, "off").map_or(&empty, |j| &gathered[j].best);
        let off_cpu = find(w, "off").map_or(&empty, |j| &gathered[j].cpu);
        let aa = find(w, AA).map(|j| &gathered[j]);
        let g = &gathered[i];
        // The A/A fork against off alone; traced modes against the baseline.
        let (per_round, cpu_round) = match slot.as_str() {
            "off" => (Vec::new(), Vec::new()),
            AA => (paired(&g.best, off), paired(&g.cpu, off_cpu)),
            _ => (
                paired(&g.best, &baseline(off, aa.map(|a| &a.best))),
                paired(&g.cpu, &baseline(off_cpu, aa.map(|a| &a.cpu))),
            ),
        };
        let off_figures = find(w, "off").map(|j| OffFigures {
            cost: median_cost(&gathered[j].costs),
            best_ms: median(&gathered[j].best.values().copied().collect::<Vec<_>>()),
        });
        let mut a = Analysed {
            workload: w,
            recorder: rec.plan.cell.recorder,
            status: rec.row().status,
            cost: median(&per_round),
            ci: median_ci(&per_round),
            per_round,
            cpu_round,
            record_cost: median_cost(&g.costs),
            records_per_msg: median(&g.records_per_msg),
            span_share: median(&g.span_share),
            predicted: None,
            per_thread: Vec::new(),
            busiest: None,
            g: Gathered::default(),
            slot,
        };
        predict(&mut a, g, off_figures.as_ref(), messages);
        rows.push(a);
    }
    for (a, g) in rows.iter_mut().zip(gathered) {
        a.g = g;
    }
    rows
}

/// Predicted cost, percent of off's time per message: `per_msg` records with `share`
/// spans, each costing the mode's ns per record less off's disabled call site's.
fn predict(a: &mut Analysed, g: &Gathered, off: Option<&OffFigures>, messages: u64) {
    let f = |per_msg: f64, share: f64| -> Option<f64> {
        let off = off?;
        let (c, oc, ob) = (a.record_cost?, off.cost?, off.best_ms?);
        let ns = share * (c.span_ns - oc.span_ns) + (1.0 - share) * (c.event_ns - oc.event_ns);
        Some(per_msg * ns / (ob * 1e6 / messages as f64) * 100.0)
    };
    a.predicted = a.records_per_msg.zip(a.span_share).and_then(|(r, sh)| f(r, sh));
    // Per thread name: medians over forks, then the busiest thread's prediction.
    let mut names: Vec<&str> = g.threads.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    a.per_thread = names
        .iter()
        .filter_map(|name| {
            let of = |x: fn(&ThreadRecords) -> f64| -> Vec<f64> {
                g.threads.iter().filter(|t| t.name == *name).map(x).collect()
            };
            let per_msg = median(&of(|t| t.per_msg))?;
            let share = median(&of(|t| t.span_share))?;
            Some((name.to_string(), per_msg, f(per_msg, share)))
        })
        .collect();
    a.busiest = a
        .per_thread
        .iter()
        .filter_map(|(name, _, p)| Some((name.clone(), (*p)?)))
        .max_by(|x, y| x.1.total_cmp(&y.1));
}

/// Fills the rows' details, the tables, the targets, the files, the method and the notes.
pub(super) fn analyse(a: &TraceOverheadArgs, run: &Finished<TraceOverhead>, out: &mut Results) {
    let n = a.messages;
    let rows = analyse_rows(run, n);
    let files = place_files(run, out);
    let ratios = out.ratios.clone();
    let rounds = out.rounds.planned;
    for (i, (row, an)) in out.results.iter_mut().zip(&rows).enumerate() {
        let ratio = ratios.iter().find(|r| r.variant == row.label && r.group == row.group);
        fill_detail(row, an, rounds, ratio.and_then(|r| r.median), n);
        let mut d: TraceDetail = row.detail();
        d.trace_files = files.get(&i).cloned().unwrap_or_default();
        row.set_detail(&d);
    }
    out.tables = vec![
        brief_table(out, &rows, n).headline(),
        cost_table(out, &rows, n),
        record_path_table(&rows),
    ];
    out.tables.extend(crate::analysis::failure_table(out, &["workload", "trace"], |x| {
        vec![x.group.clone(), x.label.clone()]
    }));
    let mut notes = Vec::new();
    for w in Workload::deciding() {
        if let Some(t) = flight_target(w, &rows, out.rounds.finished, &mut notes) {
            out.targets.push(t);
        }
    }
    context_notes(&rows, &mut notes);
    trace_account_notes(&rows, &mut notes);
    out.notes.extend(notes);
    let allocator = allocator_target(&rows);
    out.environment.timed_allocator = allocator.measured.clone();
    out.targets.push(allocator);
    out.verdict = crate::analysis::verdict::usual(&out.ratios, &out.targets);
    out.charts.extend(cost_chart(out));
    out.environment.tracing =
        "measured here: off, flight and full, each in its own timed forks".into();
    out.method.extend(method_lines(&rows));
}

/// The target rests on each traced mode's cost: a point per (workload, mode) at its median
/// over paired rounds (`cost_pct_median`), its confidence interval (`cost_ci_pct`) as the
/// bar, the flight target beside the flight rows.
pub(super) fn cost_chart(r: &Results) -> Option<Chart> {
    let mut c = Chart {
        title: "Tracing's cost by mode (median over paired rounds; bars: its confidence interval)"
            .into(),
        x_label: "mode (against off in the same round)".into(),
        y_label: "% of off's run time".into(),
        ..Default::default()
    };
    let mut cats = crate::analysis::charts::Categories::default();
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let d: TraceDetail = x.detail();
        let Some(cost) = d.cost_pct_median else { continue };
        let ci = d.cost_ci_pct;
        let at = cats.x(&x.label);
        crate::analysis::charts::push_point(&mut c, &x.group, at, cost, ci);
    }
    c.x_names = cats.names();
    let target = [("flight".to_string(), FLIGHT_TARGET_PCT)];
    crate::analysis::charts::add_reference(&mut c, &cats, "flight target (at most)", &target);
    (!c.series.is_empty()).then_some(c)
}

/// Moves each fork's trace file from where the fork left it into the run folder as
/// `<workload>-<mode>-r<round from 1>.trace.json` and links it; full captures over
/// [`KEEP_FULL_BYTES`] are deleted (their size is measured). The file names by cell.
fn place_files(run: &Finished<TraceOverhead>, out: &mut Results) -> BTreeMap<usize, Vec<String>> {
    let mut placed: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, rec) in run.cells.iter().enumerate() {
        for f in &rec.forks {
            let Some(o) = &f.outcome else { continue };
            let Some(tmp) = o.trace_file.as_deref().map(Path::new) else { continue };
            // Rounds counted from 1, as the progress lines and the file's description say.
            let name = format!("{}-r{}.trace.json", rec.plan.file_stem, f.fork.round + 1);
            let bytes = o.trace_bytes.unwrap_or(0);
            // A flight dump's native twin goes where its JSON goes.
            let twin = pftrace::twin_path(tmp);
            if o.recorder == Recorder::Full && bytes > KEEP_FULL_BYTES {
                let _ = std::fs::remove_file(tmp);
                let _ = std::fs::remove_file(&twin);
                out.notes.push(format!(
                    "{name}: {} measured, then deleted (over {})",
                    fmt_bytes(bytes),
                    fmt_bytes(KEEP_FULL_BYTES)
                ));
                continue;
            }
            match move_file(tmp, &run.dir.join(&name)) {
                Ok(()) => {
                    if twin.exists() {
                        let to = pftrace::twin_path(&run.dir.join(&name));
                        if let Err(e) = move_file(&twin, &to) {
                            out.notes.push(format!("{name}'s .pftrace: not kept: {e}"));
                        }
                    }
                    out.files.push(FileLink {
                        file: name.clone(),
                        what: format!(
                            "{} recorder of the timed fork {} {}, round {}",
                            o.recorder.name(),
                            rec.plan.group,
                            rec.plan.label,
                            f.fork.round + 1
                        ),
                    });
                    placed.entry(i).or_default().push(name);
                }
                Err(e) => out.notes.push(format!("{name}: not kept: {e}")),
            }
        }
    }
    placed
}

/// A rename, or a copy and a removal across file systems.
fn move_file(from: &Path, to: &Path) -> Result<(), String> {
    if std::fs::rename(from, to).is_ok() {
        return Ok(());
    }
    std::fs::copy(from, to).map_err(|e| format!("{} → {}: {e}", from.display(), to.display()))?;
    let _ = std::fs::remove_file(from);
    Ok(())
}

fn fill_detail(row: &mut Row, a: &Analysed, rounds: usize, ratio: Option<f64>, n: u64) {
    let by_round = |m: &ByRound| (0..rounds).map(|r| m.get(&r).copied()).collect::<Vec<_>>();
    row.set_detail(&TraceDetail {
        workload: a.workload.label(),
        decides: a.workload.decides(),
        mode: a.slot.clone(),
        recorder: a.recorder.name().to_string(),
        child_best_ms: by_round(&a.g.best),
        child_cpu_ms: by_round(&a.g.cpu),
        msgs_per_s_median: row.score.map(|s| n as f64 / s * 1e3),
        // Off against itself is 1; the others: the pipeline's paired ratio against off.
        throughput_vs_off: if a.slot == "off" { Some(1.0) } else { ratio },
        cost_pct_median: a.cost,
        cost_pct_per_round: a.per_round.clone(),
        cost_ci_pct: a.ci.map(|c| [c.low, c.high]),
        cost_ci_coverage: a.ci.map(|c| c.coverage),
        cpu_cost_pct_per_round: a.cpu_round.clone(),
        record_cost: a.record_cost,
        records_per_msg: a.records_per_msg,
        span_share: a.span_share,
        predicted_cost_pct: a.predicted,
        predicted_cost_pct_busiest_thread: a.busiest.as_ref().map(|b| b.1),
        busiest_thread: a.busiest.as_ref().map(|b| b.0.clone()),
        records_by_thread: a
            .per_thread
            .iter()
            .map(|(name, r, p)| ThreadShare {
                name: name.clone(),
                per_msg: *r,
                predicted_cost_pct: *p,
            })
            .collect(),
        trace_bytes: a.g.trace_bytes.clone(),
        allocator: a.g.allocators.clone(),
        trace_files: Vec::new(),
    });
}

/// The cells both cost tables show, for one row.
struct Cells {
    status: String,
    rounds: String,
    msgs: String,
    cost: String,
    cpu: String,
    busiest: String,
}

fn cells(row: &Row, a: &Analysed, n: u64) -> Cells {
    let traced = a.slot != "off";
    Cells {
        status: match &row.error {
            Some(e) => format!("{}: {e}", row.status.word()),
            None => row.status.word().into(),
        },
        rounds: format!("{}/{}", a.g.best.len(), row.forks.len()),
        msgs: row.score.map_or("-".into(), |m| format!("{:.2}", n as f64 / m / 1e3)),
        cost: if traced { fmt_cost(&a.per_round) } else { "-".into() },
        cpu: if traced { fmt_cost(&a.cpu_round) } else { "-".into() },
        busiest: a.busiest.as_ref().map_or("-".into(), |(name, b)| format!("{b:+.1}% {name}")),
    }
}

/// The terminal's table: what each mode costs, in under 120 columns; the rest is in the
/// full table (`--details`, the report).
fn brief_table(out: &Results, rows: &[Analysed], n: u64) -> Table {
    let mut t = Table::new(
        "Tracing cost against off (median over rounds of the paired cost, 95% interval)",
        &["workload", "trace", "rounds", "M msg/s", "cost", "CPU cost", "predicted (busiest)"],
    );
    for (row, a) in out.results.iter().zip(rows) {
        let c = cells(row, a, n);
        let rounds =
            if row.error.is_some() { format!("{} {}", c.rounds, c.status) } else { c.rounds };
        t.rows.push(vec![
            a.workload.label(),
            a.slot.clone(),
            rounds,
            c.msgs,
            c.cost,
            c.cpu,
            c.busiest,
        ]);
    }
    t
}

fn cost_table(out: &Results, rows: &[Analysed], n: u64) -> Table {
    let env = &out.environment;
    let mut t = Table::new(
        format!(
            "Tracing cost: {n} messages per run, {} run(s) per fork after {} warm-up(s); cost = \
             median over rounds of the paired ratio of each fork's best run to off's − 1",
            env.measured_runs, env.warmup_runs
        ),
        &[
            "workload",
            "role",
            "trace",
            "status",
            "rounds",
            "median ms [min, max]",
            "M msg/s",
            "throughput vs off [interval]",
            "cost [95% CI]",
            "CPU cost",
            "records/msg",
            "predicted cost: busiest thread (all)",
            "trace file",
            "global allocator",
        ],
    );
    for (row, a) in out.results.iter().zip(rows) {
        let s = Summary::of(&a.g.runs_ms);
        let traced = a.slot != "off";
        let ratio = out.ratios.iter().find(|r| r.variant == row.label && r.group == row.group);
        let mut alloc: Vec<&str> = a.g.allocators.iter().map(|p| p.name.as_str()).collect();
        alloc.sort_unstable();
        alloc.dedup();
        let c = cells(row, a, n);
        t.rows.push(vec![
            a.workload.label(),
            if a.workload.decides() { "decides" } else { "context" }.into(),
            a.slot.clone(),
            c.status,
            c.rounds,
            s.as_ref()
                .map_or("-".into(), |s| format!("{:.1} [{:.1}, {:.1}]", s.median, s.min, s.max)),
            c.msgs,
            if traced { ratio.map_or("-".into(), |r| r.text()) } else { "1 (baseline)".into() },
            c.cost,
            c.cpu,
            a.records_per_msg.map_or("-".into(), |r| format!("{r:.4}")),
            match a.predicted {
                Some(p) if c.busiest != "-" => format!("{} (all: {p:+.1}%)", c.busiest),
                _ => "-".into(),
            },
            a.g.trace_bytes.iter().max().map_or("-".into(), |b| fmt_bytes(*b)),
            if alloc.is_empty() { "-".into() } else { alloc.join(", ") },
        ]);
    }
    t.note = Some(
        "Each round runs one fork per (workload, mode), order rotated; a mode's cost in a \
         round is its fork's best run time over the off fork's of that round − 1 (over the \
         mean of the two off forks' where there is an off-aa one). cost: median over rounds, \
         with the order-statistics confidence interval of that median (≥ 95%). throughput vs \
         off: off's fork score / the mode's, paired within rounds against the off fork alone \
         (median over rounds with its interval). off-aa: a second off fork per round (A/A \
         control: its cost must be 0 within the interval). CPU cost: the same on process CPU \
         time per run (all threads). records/msg: records the flight recorder wrote per \
         message (kept + overwritten). predicted cost: records/msg × the record path's \
         measured ns per record (less off's) / off's ns per message (its forks' best runs, \
         median over rounds), for the thread that records most (its cost if it is the \
         bottleneck) and for all threads together (as if every record's time were on one \
         critical path: an upper bound)."
            .into(),
    );
    t
}

fn record_path_table(rows: &[Analysed]) -> Table {
    let mut t = Table::new(
        "Record path, timed in each fork after its runs (median over forks): ns per call",
        &["workload", "trace", "counter event ns", "span ns (new, enter, exit, close)"],
    );
    for a in rows {
        if let Some(c) = a.record_cost {
            t.rows.push(vec![
                a.workload.label(),
                a.slot.clone(),
                format!("{:.1}", c.event_ns),
                format!("{:.1}", c.span_ns),
            ]);
        }
    }
    t.note = Some(
        "off: the call sites with no subscriber (a cached-interest check). flight: the flight \
         recorder installed globally, as in the runs. 7 × 20,000 calls on the fork's main \
         thread; the predicted cost uses flight's figures less off's."
            .into(),
    );
    t
}

/// The flight target of deciding workload `w` (`None` when it did not run); the reason in
/// `notes` when it stays UNDECIDED, and a comment on a negative median.
fn flight_target(
    w: Workload,
    rows: &[Analysed],
    rounds: usize,
    notes: &mut Vec<String>,
) -> Option<Target> {
    let mine: Vec<&Analysed> = rows.iter().filter(|a| a.workload == w).collect();
    let flight = mine.iter().find(|a| a.slot == "flight")?;
    let aa = mine.iter().find(|a| a.slot == AA).map(|a| a.per_round.as_slice());
    let aa_ok = aa.and_then(median_ci).is_some_and(|c| c.contains(0.0));
    // A row that did not pass its checks leaves the decision, as it leaves every statistic.
    let failed: Vec<String> = mine
        .iter()
        .filter(|a| a.status != Status::Ok)
        .map(|a| format!("{} {}", a.slot, a.status.word()))
        .collect();
    // An interval wholly below 0 is not a cost but changed dynamics (tracing made the
    // workload faster): the measurement decides nothing then.
    let dynamics = flight.ci.is_some_and(|c| c.high < 0.0);
    let met = match flight.ci {
        Some(ci) if aa_ok && !dynamics && failed.is_empty() => {
            if ci.high <= FLIGHT_TARGET_PCT {
                Some(true)
            } else if ci.low > FLIGHT_TARGET_PCT {
                Some(false)
            } else {
                None
            }
        }
        _ => None,
    };
    let label = w.label();
    let measured = match (flight.cost, flight.ci) {
        (Some(c), Some(Interval { low: lo, high: hi, coverage: cov })) => format!(
            "{c:+.1}% [{lo:+.1}, {hi:+.1}] ({:.1}% interval of the median of {} paired rounds; \
             A/A control {}; predicted {}; CPU time {})",
            cov * 100.0,
            flight.per_round.len(),
            aa.map_or("-".into(), fmt_cost),
            match (&flight.busiest, flight.predicted) {
                (Some((name, b)), Some(p)) =>
                    format!("{b:+.1}% for the {name} thread, {p:+.1}% all"),
                _ => "-".into(),
            },
            fmt_cost(&flight.cpu_round),
        ),
        _ => {
            format!("too few valid rounds for an interval ({} of {rounds})", flight.per_round.len())
        }
    };
    if !failed.is_empty() {
        notes.push(format!(
            "{label}: UNDECIDED: {} did not pass (see the Failures table); its forks leave \
             every statistic, and the target is not decided on a partial workload.",
            failed.join(", ")
        ));
    }
    if let (Some(c), Some(Interval { low: lo, high: hi, .. })) = (flight.cost, flight.ci) {
        if !aa_ok {
            notes.push(format!(
                "{label}: UNDECIDED: the A/A control (off against off) cost {} — its interval \
                 misses 0, so this machine drifted during the run more than the intervals \
                 allow; rerun on a quieter machine.",
                aa.map_or("-".into(), fmt_cost)
            ));
        } else if dynamics {
            notes.push(format!(
                "{label}: UNDECIDED: the flight cost's whole interval [{lo:+.1}%, {hi:+.1}%] \
                 lies below 0: tracing made this workload faster, so its timing changed with \
                 the perturbation and the figure is not the recorder's cost (see the predicted \
                 cost and the record path's ns per call instead)."
            ));
        } else if met.is_none() && failed.is_empty() {
            notes.push(format!(
                "{label}: UNDECIDED: the flight cost's interval [{lo:+.1}%, {hi:+.1}%] \
                 straddles the {FLIGHT_TARGET_PCT}% target; more rounds or a quieter machine \
                 would decide it."
            ));
        }
        if c < 0.0 {
            notes.push(format!(
                "{label}: the flight cost's median is negative ({c:+.1}%): the traced runs were \
                 faster than off. A recorder cannot speed up the work; read it as noise within \
                 the interval (the A/A control shows its size), or as changed dynamics if the \
                 interval lies below 0.{}",
                if met == Some(true) {
                    " It counts as met because the whole interval lies at or below the target, \
                     not because of the negative median."
                } else {
                    ""
                }
            ));
        }
    } else if failed.is_empty() {
        notes.push(format!(
            "{label}: UNDECIDED: too few valid paired rounds for an interval ({} of {rounds}).",
            flight.per_round.len()
        ));
    }
    Some(Target {
        what: format!("flight recorder's cost, {label}"),
        target: format!(
            "≤ {FLIGHT_TARGET_PCT}% of throughput (JFR states 1–2%): the 95% interval below it"
        ),
        measured,
        met,
    })
}

/// The context workloads' negative costs: changed dynamics, said so.
fn context_notes(rows: &[Analysed], notes: &mut Vec<String>) {
    let deciders = decider_labels();
    for a in rows.iter().filter(|a| !a.workload.decides() && a.slot != "off") {
        if a.cost.is_some_and(|c| c < 0.0) {
            notes.push(format!(
                "{} {}: tracing made this workload faster ({}): not a negative cost but changed \
                 dynamics. In a handoff whose threads block, slowing a thread a little (the \
                 recorder's work) makes the other side's batches larger and saves wake-ups and \
                 context switches, which are worth more than the recording. Context only: the \
                 targets are decided on {deciders}.",
                a.workload.label(),
                a.slot,
                fmt_cost(&a.per_round),
            ));
        }
    }
}

/// One line per traced row: what its recorders said (the first fork's account, and how many
/// forks gave one).
fn trace_account_notes(rows: &[Analysed], notes: &mut Vec<String>) {
    for a in rows.iter().filter(|a| a.recorder != Recorder::Off) {
        if let Some(first) = a.g.trace_notes.first() {
            notes.push(format!(
                "{} {}: {} of its valid forks recorded; the first said: {first}",
                a.workload.label(),
                a.slot,
                a.g.trace_notes.len()
            ));
        }
    }
}

/// The timed forks' global allocator: the system allocator everywhere (`dhat::Alloc` only
/// in lab-heap); undecided when no fork answered.
fn allocator_target(rows: &[Analysed]) -> Target {
    let probes: Vec<&AllocatorProbe> = rows.iter().flat_map(|a| &a.g.allocators).collect();
    let system = !probes.is_empty() && probes.iter().all(|p| p.name == "std::alloc::System");
    let mut names: Vec<&str> = probes.iter().map(|p| p.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let measured = format!(
        "{} (probed in each of the {} timed forks: a dhat testing profiler counted {} \
         allocations of a test Box)",
        if names.is_empty() { "unknown (no fork answered)".to_string() } else { names.join(", ") },
        probes.len(),
        probes.iter().map(|p| p.dhat_counted_blocks).max().unwrap_or(0)
    );
    Target {
        what: "global allocator of the timed forks".into(),
        target: "the system allocator (dhat::Alloc only in lab-heap)".into(),
        measured,
        met: (!probes.is_empty()).then_some(system),
    }
}

/// The deciding workloads' labels, joined for a sentence.
fn decider_labels() -> String {
    Workload::deciding().into_iter().map(Workload::label).collect::<Vec<_>>().join(" and ")
}

fn method_lines(rows: &[Analysed]) -> Vec<String> {
    let mut workloads: Vec<Workload> = rows.iter().map(|a| a.workload).collect();
    workloads.dedup();
    let labels: Vec<String> = workloads.iter().map(|w| w.label()).collect();
    let cells: usize = workloads.iter().map(|&w| slots(w).len()).sum();
    vec![
        format!(
            "Workloads: {}; 16-byte messages, one consumer, consumer batches of up to {BATCH}, \
             a latency sample every {SAMPLE_EVERY}th message of each producer, ring size \
             {RING_SIZE}, the locked queue unbounded. A flight target is decided on each of \
             {}, each with its own off-against-off control: the seed's baseline queue, and the \
             fastest handoff, where a record weighs most against a message (its runs are \
             bimodal on two cores). ring[blocking] P=2 is context: a blocking handoff changes \
             its dynamics when a thread is slowed (larger batches, fewer wake-ups), so its \
             'cost' can be negative.",
            labels.join(", "),
            decider_labels()
        ),
        "off: a timed fork exactly as in disruptor-vs-lbq (no subscriber; the harness's \
         publish/consume spans compiled out). flight: the flight recorder installed before the \
         warm-ups and the harness's spans on, dumped once after the last run (the dump is not \
         timed). full: tracing-chrome streams every event to a file; its writer thread runs \
         during the runs, the final flush and repair are not timed. Each fork leaves its file \
         in the temporary folder and the parent moves it into the run folder."
            .into(),
        format!(
            "{cells} cells per round: one fork per (workload, mode), each deciding workload \
             also a second off fork (its A/A control). Cost per round = the mode fork's best run \
             time / the off fork's of the same round − 1 (the best run: other processes only \
             slow runs down); the cost is the median over rounds with its order-statistics \
             confidence interval (≥ 95%; 6 rounds at least)."
        ),
        format!(
            "Each flight target (≤ {FLIGHT_TARGET_PCT}%) is met when the interval lies at or \
             below it, not met when it lies above, otherwise UNDECIDED; UNDECIDED too when the \
             workload's A/A control's interval misses 0, when a row of that workload did not \
             pass its checks, and when the whole interval lies below 0 (tracing made the workload \
             faster: changed dynamics, not a cost)."
        ),
        "Predicted cost: each off and flight fork times 7 × 20,000 counter events and spans \
         after its runs; the flight dump gives the records written (kept + overwritten) and \
         the share of spans, per thread name, so predicted = records per message × (flight's \
         ns per record − off's) / off's ns per message (best runs): for the busiest thread \
         (what it costs if that thread is the bottleneck) and for all threads summed (an upper \
         bound). In a handoff whose consumer keeps up, the consumer's records only use its \
         idle time, so the measured cost can lie below both."
            .into(),
        "Each timed fork probed its own global allocator before the runs: a dhat profiler in \
         testing mode counts a test Box only when dhat::Alloc is the global allocator."
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rounds(xs: &[(usize, f64)]) -> ByRound {
        xs.iter().copied().collect()
    }

    #[test]
    fn the_main_chart_is_each_traced_modes_cost_and_interval_beside_the_target() {
        use crate::results::fixture::{results, row};
        let cost = |m: Option<f64>, ci: Option<[f64; 2]>| serde_json::json!({"cost_pct_median": m, "cost_ci_pct": ci});
        let rows = vec![
            row("off", "locked P=2", 2.3, None, cost(None, None)),
            row("off-aa", "locked P=2", 2.0, None, cost(Some(-0.5), Some([-2.0, 1.0]))),
            row("flight", "locked P=2", 2.4, None, cost(Some(1.5), Some([0.5, 2.5]))),
            row("full", "locked P=2", 2.7, None, cost(Some(25.0), None)),
        ];
        let r = results("trace-overhead", rows, Vec::new());
        let c = cost_chart(&r).expect("a chart");
        assert_eq!(
            c.series,
            vec![("locked P=2".to_string(), vec![(1.0, -0.5), (2.0, 1.5), (3.0, 25.0)])]
        );
        assert_eq!(
            c.intervals,
            vec![("locked P=2".to_string(), vec![(1.0, -2.0, 1.0), (2.0, 0.5, 2.5)])]
        );
        assert_eq!(c.x_names[1], (2.0, "flight".to_string()));
        assert_eq!(c.references[0].1, vec![(2.0, FLIGHT_TARGET_PCT)]);
    }

    #[test]
    fn paired_costs_skip_rounds_without_both_figures() {
        let got = paired(&rounds(&[(0, 110.0), (2, 99.0)]), &rounds(&[(0, 100.0), (1, 100.0)]));
        assert_eq!(got.len(), 1);
        assert!((got[0] - 10.0).abs() < 1e-9);
    }

    #[test]
    fn the_baseline_is_the_mean_of_both_off_forks_where_there_are_two() {
        let off = rounds(&[(0, 100.0), (2, 90.0)]);
        let aa = rounds(&[(0, 110.0), (1, 95.0)]);
        assert_eq!(baseline(&off, None), off);
        assert_eq!(baseline(&off, Some(&aa)), rounds(&[(0, 105.0), (1, 95.0), (2, 90.0)]));
    }
}
