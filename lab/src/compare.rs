//! `lab compare A B` and `lab report DIR`, for every experiment.
//!
//! Rows are matched by label and key; a change is called only when the two rows'
//! intervals (order statistics over forks) do not overlap. A ratio's interval is a repeat
//! interval (where a repeat run's median falls), so a ratio changed when each run's median
//! lies outside the other's interval: neither run looks like a repeat of the other. Exit 1
//! when a change was found (so CI can gate on it), 0 otherwise.

use crate::analysis::pairing::{probe_values, Probe};
use crate::error::Error;
use crate::results::{Ratio, Results, Row, Status, SCHEMA_VERSION};
use crate::units::fmt_num;
use std::path::{Path, PathBuf};

fn results_file(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.join("results.json")
    } else {
        p.to_path_buf()
    }
}

/// The oldest schema version this lab still reads ([`Results::upgrade`] brings it to this
/// one).
pub const OLDEST_READ: u64 = 2;

/// Reads a results.json of this schema version or one it upgrades; a one-line error
/// otherwise.
pub fn load(p: &Path) -> Result<Results, Error> {
    let file = results_file(p);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Error::Usage(format!("cannot read {}: {e}", file.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::Usage(format!("{} is not JSON: {e}", file.display())))?;
    match v.get("schema_version").and_then(|x| x.as_u64()) {
        None => {
            return Err(Error::Usage(format!(
                "{} was written before results.json had a schema_version (an older lab); \
                 re-run its experiment to compare it",
                file.display()
            )))
        }
        Some(n) if !(OLDEST_READ..=u64::from(SCHEMA_VERSION)).contains(&n) => {
            return Err(Error::Usage(format!(
                "{} has schema_version {n}; this lab reads versions {OLDEST_READ} to \
                 {SCHEMA_VERSION}",
                file.display()
            )))
        }
        Some(_) => {}
    }
    let mut r: Results = serde_json::from_value(v)
        .map_err(|e| Error::Usage(format!("{} is not a lab results.json: {e}", file.display())))?;
    r.upgrade();
    // Every row's own fields must read as its experiment's: a renamed or mistyped field is
    // an error here, not a figure missing from the report.
    if let Some(e) = crate::experiments::find(&r.experiment) {
        e.check_rows(&r).map_err(|e| Error::Usage(format!("{}: {e}", file.display())))?;
    }
    Ok(r)
}

/// How `b` stands against `a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Better beyond both intervals.
    Better,
    /// Worse beyond both intervals.
    Worse,
    /// The intervals overlap.
    Within,
    /// No interval on one side (too few forks or rounds) or a failed row.
    Undecided,
}

/// Judges two intervals: non-overlapping means a change.
pub fn judge(a: Option<[f64; 2]>, b: Option<[f64; 2]>, higher_is_better: bool) -> Change {
    let (Some([alo, ahi]), Some([blo, bhi])) = (a, b) else { return Change::Undecided };
    let up = blo > ahi;
    let down = bhi < alo;
    match (up, down, higher_is_better) {
        (true, _, true) | (_, true, false) => Change::Better,
        (true, _, false) | (_, true, true) => Change::Worse,
        _ => Change::Within,
    }
}

fn word(c: Change) -> &'static str {
    match c {
        Change::Better => "BETTER (beyond both runs' intervals)",
        Change::Worse => "WORSE (beyond both runs' intervals)",
        Change::Within => "within the intervals",
        Change::Undecided => "undecided (no interval)",
    }
}

fn score_text(r: &Row) -> String {
    if r.status != Status::Ok {
        return r.status.word().to_string();
    }
    match (r.score, r.score_ci) {
        (Some(s), Some([lo, hi])) => {
            format!("{} [{}, {}] {}", fmt_num(s), fmt_num(lo), fmt_num(hi), r.unit)
        }
        (Some(s), None) => format!("{} [–] {}", fmt_num(s), r.unit),
        _ => "–".into(),
    }
}

/// Judges two ratios by their repeat intervals: a change when each median lies outside
/// the other run's interval, on the same side (ratios: higher is better).
pub fn judge_repeat(a: &Ratio, b: &Ratio) -> Change {
    let (Some(am), Some(alo), Some(ahi), Some(bm), Some(blo), Some(bhi)) =
        (a.median, a.ci_low, a.ci_high, b.median, b.ci_low, b.ci_high)
    else {
        return Change::Undecided;
    };
    if bm > ahi && am < blo {
        Change::Better
    } else if bm < alo && am > bhi {
        Change::Worse
    } else {
        Change::Within
    }
}

/// Differences of the runs' median probes from this on are noted.
const PROBE_NOTE: f64 = 0.03;

/// A probe's median over every fork of a run, if recorded.
fn probe_median(r: &Results, probe: Probe) -> Option<f64> {
    crate::stats::median(&probe_values(r.results.iter().flat_map(|x| &x.forks), probe))
}

/// `lab compare A B`.
pub fn compare(a: &Path, b: &Path) -> Result<i32, Error> {
    let ra = load(a)?;
    let rb = load(b)?;
    if ra.experiment != rb.experiment {
        return Err(Error::Usage(format!(
            "cannot compare different experiments: {} vs {}",
            ra.experiment, rb.experiment
        )));
    }
    let (rows, mut changed) = row_table(&ra, &rb);
    println!(
        "{} — a: {} ({}), b: {} ({})",
        ra.experiment,
        a.display(),
        ra.environment.git_commit,
        b.display(),
        rb.environment.git_commit
    );
    println!("{rows}");
    let (ratios, n, ratio_changes) = ratio_table(&ra, &rb);
    changed += ratio_changes;
    if n > 0 {
        println!("{ratios}");
    }
    for note in notes(&ra, &rb) {
        println!("note: {note}");
    }
    println!("{changed} change(s) beyond both runs' intervals.");
    Ok(i32::from(changed > 0))
}

fn condensed(header: Vec<&str>) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

/// Row against row (matched by label and key): the table and how many changed.
fn row_table(ra: &Results, rb: &Results) -> (comfy_table::Table, usize) {
    let mut t = condensed(vec![
        "row",
        "group",
        "a: score [interval]",
        "b: score [interval]",
        "b/a",
        "change",
    ]);
    let same = |x: &Row, y: &Row| x.label == y.label && x.key == y.key;
    let mut changed = 0;
    for x in &ra.results {
        let Some(y) = rb.results.iter().find(|y| same(x, y)) else {
            t.add_row(vec![
                x.label.clone(),
                x.group.clone(),
                score_text(x),
                "(absent)".into(),
                "–".into(),
                "–".into(),
            ]);
            continue;
        };
        let ratio = match (x.score, y.score) {
            (Some(p), Some(q)) if p > 0.0 => format!("{:.2}×", q / p),
            _ => "–".into(),
        };
        let c = if x.status != Status::Ok || y.status != Status::Ok {
            Change::Undecided
        } else {
            judge(x.score_ci, y.score_ci, x.higher_is_better)
        };
        if matches!(c, Change::Better | Change::Worse) {
            changed += 1;
        }
        t.add_row(vec![
            x.label.clone(),
            x.group.clone(),
            score_text(x),
            score_text(y),
            ratio,
            word(c).into(),
        ]);
    }
    for y in rb.results.iter().filter(|y| !ra.results.iter().any(|x| same(x, y))) {
        t.add_row(vec![
            y.label.clone(),
            y.group.clone(),
            "(absent)".into(),
            score_text(y),
            "–".into(),
            "–".into(),
        ]);
    }
    (t, changed)
}

/// Ratio against ratio (matched by variant, baseline and group): the table, how many
/// ratios both runs have, and how many changed.
fn ratio_table(ra: &Results, rb: &Results) -> (comfy_table::Table, usize, usize) {
    let mut rt = condensed(vec!["ratio", "group", "a", "b", "change"]);
    let (mut ratios, mut changed) = (0, 0);
    for x in &ra.ratios {
        let Some(y) = rb
            .ratios
            .iter()
            .find(|y| y.variant == x.variant && y.baseline == x.baseline && y.group == x.group)
        else {
            continue;
        };
        ratios += 1;
        let c = judge_repeat(x, y);
        if matches!(c, Change::Better | Change::Worse) {
            changed += 1;
        }
        rt.add_row(vec![
            format!("{}/{}", x.variant, x.baseline),
            x.group.clone(),
            x.text(),
            y.text(),
            word(c).into(),
        ]);
    }
    (rt, ratios, changed)
}

/// What differed between the runs besides their scores: options, CPU, machine probes.
fn notes(ra: &Results, rb: &Results) -> Vec<String> {
    let mut out = Vec::new();
    let options = |r: &Results| {
        let mut c = r.config.clone();
        c["shared"]["out"] = serde_json::Value::Null;
        c
    };
    if options(ra) != options(rb) {
        out.push(
            "the runs' options differ (see config in each results.json); scores are compared as they are."
                .to_string(),
        );
    }
    if ra.environment.cpu_model != rb.environment.cpu_model {
        out.push(format!(
            "different CPUs: {} vs {}",
            ra.environment.cpu_model, rb.environment.cpu_model
        ));
    }
    let probes: [(&str, Probe); 2] = [
        ("speed probe (ns per multiply-add)", |d| d.cpu_ns_per_op),
        ("ping-pong between two CPUs (ns per round trip)", |d| d.cpu_ping_pong_ns),
    ];
    for (what, probe) in probes {
        if let (Some(x), Some(y)) = (probe_median(ra, probe), probe_median(rb, probe)) {
            let d = y / x - 1.0;
            if d.abs() >= PROBE_NOTE {
                out.push(format!(
                    "the machine differed: {what} a {x:.3}, b {y:.3} (b {:.0}% {}); \
                     what spins moves with it more than what sleeps.",
                    d.abs() * 100.0,
                    if d > 0.0 { "slower" } else { "faster" }
                ));
            }
        }
    }
    out
}

/// `lab report DIR`: the tables, report.md and report.html again from results.json.
pub fn report_again(dir: &Path, details: bool) -> Result<i32, Error> {
    let r = load(dir)?;
    let file = results_file(dir);
    let folder = file.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    crate::report::emit(&r, &folder, false, details).map_err(Error::Failed)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Role;

    #[test]
    fn roles_written_only_in_labels_are_read_into_roles() {
        let f = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/roles-in-labels/results.json");
        let r = load(&f).expect("a version 2 results.json loads");
        assert_eq!(r.schema_version, SCHEMA_VERSION);
        let role = |l: &str| {
            let x = r.results.iter().find(|x| x.label == l).expect(l);
            (x.role, x.beside.clone())
        };
        assert_eq!(role("ring"), (Role::Measured, None));
        assert_eq!(role("ring/own-loop"), (Role::OwnLoop, Some("ring".into())));
        assert_eq!(role("locked[in-run]"), (Role::Twin, Some("locked".into())));
        let q = |a: &str, b: &str| {
            let q = r.ratios.iter().find(|q| q.variant == a && q.baseline == b).expect(a);
            (q.row_role, q.baseline_role, q.is_side(), q.is_own_loops())
        };
        assert_eq!(q("ring", "locked"), (Role::Measured, Role::Measured, false, false));
        assert_eq!(q("ring", "ring/own-loop"), (Role::Measured, Role::OwnLoop, true, false));
        assert_eq!(q("ring[in-run]", "ring"), (Role::Twin, Role::Measured, true, false));
        let own = q("ring/own-loop", "locked/own-loop");
        assert_eq!(own, (Role::OwnLoop, Role::OwnLoop, true, true));
    }

    #[test]
    fn a_change_needs_disjoint_intervals() {
        assert_eq!(judge(Some([1.0, 2.0]), Some([1.5, 3.0]), true), Change::Within);
        assert_eq!(judge(Some([1.0, 2.0]), Some([2.5, 3.0]), true), Change::Better);
        assert_eq!(judge(Some([1.0, 2.0]), Some([2.5, 3.0]), false), Change::Worse);
        assert_eq!(judge(Some([1.0, 2.0]), Some([0.1, 0.5]), false), Change::Better);
        assert_eq!(judge(None, Some([0.1, 0.5]), false), Change::Undecided);
    }

    fn ratio(median: f64, lo: f64, hi: f64) -> Ratio {
        let q = crate::results::fixture::ratio("ring", "locked", "P=1", median, Some([lo, hi]));
        Ratio { coverage: Some(0.99), rounds: 27, ..q }
    }

    #[test]
    fn a_ratio_changed_when_neither_median_is_a_repeat_of_the_other() {
        let a = ratio(10.0, 9.0, 11.0);
        // Intervals overlap, but each median lies beyond the other's interval.
        assert_eq!(judge_repeat(&a, &ratio(11.5, 10.5, 12.5)), Change::Better);
        assert_eq!(judge_repeat(&a, &ratio(8.5, 7.5, 9.5)), Change::Worse);
        // b's median is outside a's interval, but a's median inside b's: within.
        assert_eq!(judge_repeat(&a, &ratio(11.5, 9.5, 13.0)), Change::Within);
        assert_eq!(judge_repeat(&a, &ratio(10.5, 9.5, 11.5)), Change::Within);
        let none = Ratio { ci_low: None, ..ratio(10.0, 9.0, 11.0) };
        assert_eq!(judge_repeat(&a, &none), Change::Undecided);
    }
}
