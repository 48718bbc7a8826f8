//! `lab compare A B` and `lab report DIR`, for every experiment.
//!
//! Rows are matched by label and key; a change is called only when the two rows'
//! intervals (order statistics over forks) do not overlap, and ratios are judged the same
//! way. Exit 1 when a change was found (so CI can gate on it), 0 otherwise.

use crate::experiment::Failure;
use crate::report::fmt_num;
use crate::results::{Ratio, Results, Row, Status, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

fn results_file(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.join("results.json")
    } else {
        p.to_path_buf()
    }
}

/// Reads a results.json of this schema version; a one-line error otherwise.
pub fn load(p: &Path) -> Result<Results, Failure> {
    let file = results_file(p);
    let text = std::fs::read_to_string(&file)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", file.display())))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{} is not JSON: {e}", file.display())))?;
    match v.get("schema_version").and_then(|x| x.as_u64()) {
        None => {
            return Err(Failure::Usage(format!(
                "{} was written before results.json had a schema_version (an older lab); \
                 re-run its experiment to compare it",
                file.display()
            )))
        }
        Some(n) if n != u64::from(SCHEMA_VERSION) => {
            return Err(Failure::Usage(format!(
                "{} has schema_version {n}; this lab reads version {SCHEMA_VERSION}",
                file.display()
            )))
        }
        Some(_) => {}
    }
    serde_json::from_value(v)
        .map_err(|e| Failure::Usage(format!("{} is not a lab results.json: {e}", file.display())))
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
        Change::Better => "BETTER (beyond both intervals)",
        Change::Worse => "WORSE (beyond both intervals)",
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

fn ratio_ci(r: &Ratio) -> Option<[f64; 2]> {
    Some([r.ci_low?, r.ci_high?])
}

/// `lab compare A B`.
pub fn compare(a: &Path, b: &Path) -> Result<i32, Failure> {
    let ra = load(a)?;
    let rb = load(b)?;
    if ra.experiment != rb.experiment {
        return Err(Failure::Usage(format!(
            "cannot compare different experiments: {} vs {}",
            ra.experiment, rb.experiment
        )));
    }
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
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
    println!(
        "{} — a: {} ({}), b: {} ({})",
        ra.experiment,
        a.display(),
        ra.environment.git_commit,
        b.display(),
        rb.environment.git_commit
    );
    println!("{t}");
    let mut rt = comfy_table::Table::new();
    rt.load_preset(comfy_table::presets::UTF8_FULL_CONDENSED);
    rt.set_header(vec!["ratio", "group", "a", "b", "change"]);
    let mut ratios = 0;
    for x in &ra.ratios {
        let Some(y) = rb
            .ratios
            .iter()
            .find(|y| y.variant == x.variant && y.baseline == x.baseline && y.group == x.group)
        else {
            continue;
        };
        ratios += 1;
        let c = judge(ratio_ci(x), ratio_ci(y), true);
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
    if ratios > 0 {
        println!("{rt}");
    }
    let options = |r: &Results| {
        let mut c = r.config.clone();
        c["shared"]["out"] = serde_json::Value::Null;
        c
    };
    if options(&ra) != options(&rb) {
        println!("note: the runs' options differ (see config in each results.json); scores are compared as they are.");
    }
    if ra.environment.cpu_model != rb.environment.cpu_model {
        println!(
            "note: different CPUs: {} vs {}",
            ra.environment.cpu_model, rb.environment.cpu_model
        );
    }
    println!("{changed} change(s) beyond both runs' intervals.");
    Ok(i32::from(changed > 0))
}

/// `lab report DIR`: the tables, report.md and report.html again from results.json.
pub fn report_again(dir: &Path) -> Result<i32, Failure> {
    let r = load(dir)?;
    let file = results_file(dir);
    let folder = file.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    crate::report::emit(&r, &folder, false).map_err(Failure::Io)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_needs_disjoint_intervals() {
        assert_eq!(judge(Some([1.0, 2.0]), Some([1.5, 3.0]), true), Change::Within);
        assert_eq!(judge(Some([1.0, 2.0]), Some([2.5, 3.0]), true), Change::Better);
        assert_eq!(judge(Some([1.0, 2.0]), Some([2.5, 3.0]), false), Change::Worse);
        assert_eq!(judge(Some([1.0, 2.0]), Some([0.1, 0.5]), false), Change::Better);
        assert_eq!(judge(None, Some([0.1, 0.5]), false), Change::Undecided);
    }
}
