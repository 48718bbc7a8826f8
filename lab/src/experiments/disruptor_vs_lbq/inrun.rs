//! `--trace in-run`: the flight recorder in the timed forks, and the outliers' dumps kept.
//!
//! A flight recorder exists to be always on and to keep the trace of the run that went
//! wrong. With `--trace in-run`, `disruptor-vs-lbq` plans beside every Rust cell a traced
//! twin ([`twins`]): the same spec with [`CellSpec::in_run_trace`] set, labelled
//! `<label>[in-run]`, in the same group, so it runs in the same rounds as its plain cell.
//! The plain rows stay the main rows (the headline tables and the ratios against the
//! baseline use them, unrecorded); each (twin, plain) pair is a ratio in `ratios[]`, what
//! recording cost in this very run, paired within rounds. There is no untimed trace pass:
//! the twins' timed forks are the traces.
//!
//! * Child ([`crate::profile::inrun::Recording`]): after its warm-up runs, a twin's timed fork installs the flight
//!   recorder and makes its measured runs with the lab's spans on (the traced loop and the
//!   recorder together are what the cost ratio measures); after them it dumps to
//!   `<run folder>/inrun/<stem>.<pid>.trace.json`, a scratch name unique per fork, and
//!   reports that name in `CellOutput::in_run_trace`. The run folder reaches every child
//!   as [`crate::protocol::RUN_DIR_ENV`], set by the pipeline before its first fork.
//! * Parent ([`analyse`]): per twin, the dumps of the slowest and the fastest valid fork
//!   (by fork score; ties: the first in round order) and, when the row is bimodal, of the
//!   fork nearest each mode's median are renamed `<stem>.{slowest,fastest,mode1,mode2}
//!   .trace.json` (a fork already kept is not kept twice), linked in `files[]` and listed in
//!   the row's `in_run_traces`; every other dump and the scratch folder are deleted.

use crate::experiment::{CellPlan, CellRecord, Experiment, Finished, Plan, TraceMode};
use crate::measure::harness::{CellOutput, CellSpec};
use crate::profile::inrun::SCRATCH;
use crate::results::Mode;
use crate::results::{FileLink, Results, Role, Row, Status, Table};
use crate::units::{fmt_num, group};
use serde::{Deserialize, Serialize};

/// What a traced twin's label adds to its plain cell's.
pub const SUFFIX: &str = "[in-run]";

/// With `--trace in-run`: a traced twin after every Rust cell (not the `jvm-*` cells, which
/// no Rust recorder hears), a (twin, plain) ratio for each, and no untimed trace pass.
pub fn twins(mode: TraceMode, plan: &mut Plan<CellSpec>) {
    if mode != TraceMode::InRun {
        return;
    }
    let mut cells = Vec::with_capacity(plan.cells.len() * 2);
    for mut c in std::mem::take(&mut plan.cells) {
        c.trace = false;
        let twin = (!crate::measure::variants::is_jvm(&c.cell.variant)).then(|| twin_of(&c));
        cells.push(c);
        if let Some(t) = twin {
            let pair = (t.label.clone(), t.beside.clone().unwrap_or_default());
            if !plan.pairs.contains(&pair) {
                plan.pairs.push(pair);
            }
            cells.push(t);
        }
    }
    plan.cells = cells;
    plan.notes.push(
        "--trace in-run: every Rust cell ran twice per round, plain and as its traced twin \
         ([in-run]: the flight recorder over its measured runs); the plain rows are the \
         results, the twins give the recording cost and the kept traces."
            .into(),
    );
}

fn twin_of(c: &CellPlan<CellSpec>) -> CellPlan<CellSpec> {
    let mut t = c.clone().rekey(|k: &mut super::DvlKey| k.in_run_trace = true);
    t.label = format!("{}{SUFFIX}", c.label);
    t.role = Role::Twin;
    t.beside = Some(c.label.clone());
    t.cell.in_run_trace = Some(c.file_stem.clone());
    // The sampling-cost pairs are the plain cell's to measure; the heap pass would repeat
    // the plain cell's.
    t.cell.sampling_ab_pairs = 0;
    t.heap = false;
    t
}

/// An experiment whose cells are the handoff harness's (`disruptor-vs-lbq`).
pub trait Handoffs: Experiment<Cell = CellSpec, Outcome = CellOutput> {}
impl<E: Experiment<Cell = CellSpec, Outcome = CellOutput>> Handoffs for E {}

/// Which forks' dumps a twin keeps: (fork index, kind), distinct forks, in kind order.
fn chosen<E: Handoffs>(rec: &CellRecord<E>, row: &Row) -> Vec<(usize, &'static str)> {
    let scored: Vec<(usize, f64)> = rec
        .forks
        .iter()
        .enumerate()
        .filter(|(_, f)| f.fork.status == Status::Ok)
        .filter(|(_, f)| f.outcome.as_ref().is_some_and(|o| o.in_run_trace.is_some()))
        .filter_map(|(i, f)| f.fork.score.map(|s| (i, s)))
        .collect();
    choose(&scored, row.modes.as_ref())
}

/// Of (fork index, score in ms) in round order: the slowest, the fastest and, when
/// bimodal, the nearest to each mode's median, each fork once; ties go to the first.
fn choose(scored: &[(usize, f64)], modes: Option<&[Mode; 2]>) -> Vec<(usize, &'static str)> {
    // The first fork that `better` prefers to every other (strictly: ties keep the first).
    let pick = |better: &dyn Fn(f64, f64) -> bool| {
        scored.iter().copied().reduce(|a, b| if better(b.1, a.1) { b } else { a }).map(|x| x.0)
    };
    let mut kept: Vec<(usize, &'static str)> = Vec::new();
    let mut keep = |i: Option<usize>, kind: &'static str| {
        if let Some(i) = i.filter(|i| !kept.iter().any(|k| k.0 == *i)) {
            kept.push((i, kind));
        }
    };
    // Scores are ms per run: the slowest fork has the largest.
    keep(pick(&|x, y| x > y), "slowest");
    keep(pick(&|x, y| x < y), "fastest");
    for (m, kind) in modes.into_iter().flatten().zip(["mode1", "mode2"]) {
        keep(pick(&|x, y| (x - m.median).abs() < (y - m.median).abs()), kind);
    }
    kept
}

/// One kept dump of a timed fork.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InRunTrace {
    /// The trace file, relative to the run folder.
    pub file: String,
    /// The fork's round (from 0).
    pub round: usize,
    /// The fork's score, ms per run.
    pub score_ms: f64,
    /// Its messages per second.
    pub qps: f64,
    /// Why it was kept: `slowest`, `fastest`, `mode1`, `mode2`.
    pub kind: String,
}

/// Keeps the outliers' dumps of every twin (see the module's account), fills the twins'
/// `in_run_traces`, and keeps each twin's ratio against its plain row only (not against the
/// baseline: the plain rows are the results).
pub fn analyse<E: Handoffs>(run: &Finished<E>, out: &mut Results) {
    if !run.cells.iter().any(|c| c.plan.cell.in_run_trace.is_some()) {
        return;
    }
    let twins: Vec<(String, Option<String>)> =
        out.results.iter().map(|x| (x.label.clone(), x.beside.clone())).collect();
    let beside = |label: &str| twins.iter().find(|t| t.0 == label).and_then(|t| t.1.as_deref());
    let mut seen: Vec<(String, String, String)> = Vec::new();
    out.ratios.retain(|q| {
        let id = (q.variant.clone(), q.baseline.clone(), q.group.clone());
        let wanted = q.row_role != Role::Twin || beside(&q.variant) == Some(q.baseline.as_str());
        let first = !seen.contains(&id);
        seen.push(id);
        wanted && first
    });
    let rounds = run.rounds.planned;
    let mut notes: Vec<String> = Vec::new();
    for (row, rec) in out.results.iter_mut().zip(&run.cells) {
        let Some(stem) = &rec.plan.cell.in_run_trace else { continue };
        let mut listed = Vec::new();
        for (i, kind) in chosen(rec, row) {
            let f = &rec.forks[i];
            let (Some(scratch), Some(ms)) =
                (f.outcome.as_ref().and_then(|o| o.in_run_trace.as_ref()), f.fork.score)
            else {
                continue;
            };
            let file = format!("{stem}.{kind}.trace.json");
            if let Err(e) = std::fs::rename(run.dir.join(scratch), run.dir.join(&file)) {
                notes.push(format!("{file}: not kept ({scratch}: {e})"));
                continue;
            }
            // The recorder's own .pftrace goes with its JSON (it has the kernel's thread
            // ids); where it is missing, the run folder's completion converts the JSON.
            let twin = pftrace::twin_path(&run.dir.join(scratch));
            if twin.exists() {
                let _ = std::fs::rename(&twin, pftrace::twin_path(&run.dir.join(&file)));
            }
            let qps = rec.plan.cell.messages as f64 / (ms / 1e3);
            out.files.push(FileLink {
                file: file.clone(),
                what: format!(
                    "Flight recorder of the timed fork {} {}, the {kind} fork: round {}/{rounds}, \
                     {} ms per run ({} msg/s)",
                    row.label,
                    row.group,
                    f.fork.round + 1,
                    fmt_num(ms),
                    group(qps)
                ),
            });
            listed.push(InRunTrace {
                file,
                round: f.fork.round,
                score_ms: ms,
                qps,
                kind: kind.into(),
            });
        }
        let mut d: super::HandoffDetail = row.detail();
        d.in_run_traces = listed;
        row.set_detail(&d);
        for n in rec.forks.iter().filter_map(|f| f.outcome.as_ref()).flat_map(|o| &o.notes) {
            let n = format!("{} {}: {n}", row.label, row.group);
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
    }
    let scratch = run.dir.join(SCRATCH);
    if scratch.exists() {
        if let Err(e) = std::fs::remove_dir_all(&scratch) {
            notes.push(format!("{}: not removed: {e}", scratch.display()));
        }
    }
    out.notes.extend(notes);
    out.environment.tracing = "in-run: the flight recorder in the timed forks of each Rust \
                               cell's traced twin ([in-run] rows); no untimed trace pass"
        .into();
}

/// "In-run recording cost": per twin, the plain and traced QPS and their paired ratio.
pub fn cost_table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "In-run recording cost (the flight recorder in the timed forks)",
        &["variant", "P", "plain QPS", "traced QPS", "traced/plain QPS [interval]", "cost"],
    );
    // Each twin's ratios are against its plain row only ([`analyse`]).
    for q in r.ratios.iter().filter(|q| q.row_role == Role::Twin) {
        let qps = |l: &str| super::tables::qps_cell(r, l, &q.group);
        t.rows.push(vec![
            q.baseline.clone(),
            super::ratio_producers(r, q).map_or("–".into(), |p| p.to_string()),
            qps(&q.baseline),
            qps(&q.variant),
            q.text(),
            q.median.map_or("–".into(), |m| format!("{:+.1}% QPS", (m - 1.0) * 100.0)),
        ]);
    }
    t.note = Some(
        "Each round runs a cell and its traced twin side by side; the ratio is the twin's QPS \
         over the plain cell's within a round, the median over rounds with its \
         repeat interval (99%). The twin's measured runs carry the lab's spans and the \
         flight recorder (installed after the warm-up, dumped after the measured runs); its \
         rings are set up at the first measured run's first events and reused by later \
         runs' threads, which a fork of few short runs feels. The slowest and fastest forks' dumps (and one per mode when \
         bimodal) are kept."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

/// The method's line on tracing in this mode.
pub fn method_line() -> String {
    "Trace: no untimed trace pass; each Rust cell's traced twin ([in-run]) installs the \
     flight recorder in every timed fork after its warm-up runs, makes its measured runs \
     with the lab's spans on (producers wrap sampled sends in `publish`, the consumer \
     emits `consume` with the same flow id and `messages_per_ms`), and dumps it after them; \
     the parent keeps the slowest and fastest forks' dumps (and the fork nearest each \
     mode's median when the row is bimodal) and deletes the rest."
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(median: f64) -> Mode {
        Mode { median, count: 3, share: 0.5 }
    }

    #[test]
    fn the_extremes_are_kept_once_each_and_ties_go_to_the_first() {
        let s = [(0, 2.0), (1, 5.0), (2, 1.0), (3, 5.0), (4, 1.0)];
        assert_eq!(choose(&s, None), vec![(1, "slowest"), (2, "fastest")]);
        // One fork is both extremes: kept once.
        assert_eq!(choose(&[(0, 3.0)], None), vec![(0, "slowest")]);
        assert!(choose(&[], None).is_empty());
    }

    #[test]
    fn a_bimodal_row_also_keeps_the_fork_nearest_each_modes_median() {
        let s = [(0, 1.0), (1, 1.1), (2, 1.2), (3, 2.0), (4, 2.1), (5, 2.3)];
        let m = [mode(1.1), mode(2.1)];
        assert_eq!(
            choose(&s, Some(&m)),
            vec![(5, "slowest"), (0, "fastest"), (1, "mode1"), (4, "mode2")]
        );
        // A mode whose nearest fork is already kept adds nothing.
        let m = [mode(1.0), mode(2.1)];
        assert_eq!(choose(&s, Some(&m)), vec![(5, "slowest"), (0, "fastest"), (4, "mode2")]);
    }
}
