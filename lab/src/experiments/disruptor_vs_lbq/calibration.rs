//! The calibration cells of `disruptor-vs-lbq`: beside every cell whose variant has a
//! calibration kind (`crate::measure::calibration::kind_of`: the Rust peers and the JVM originals), a cell
//! labelled `<label>/<kind>` (e.g. `crossbeam/own-loop`) that runs the same competitor
//! through its own API in a plain loop, with the same messages, P, capacity and placement.
//! It sits in the cell's group, so it runs in the same rounds; the (cell, calibration)
//! pair gives a paired ratio per round (lab QPS / calibration QPS), summarised with its
//! repeat interval in `ratios[]`. [`table`] shows each competitor's lab figure against its
//! calibration; [`warnings`] flags, in the verdict, a competitor whose median ratio is more
//! than [`SLOW_BELOW`] under its calibration: the lab would be measuring its own harness,
//! not the competitor. Calibration rows stay out of the headline tables, the verdict's
//! comparisons and the Why section ([`is_side`]).

use super::inrun;
use crate::experiment::Plan;
use crate::measure::calibration::{kind_of, label_of};
use crate::measure::harness::CellSpec;
use crate::results::{Ratio, Results, Table};
use serde_json::json;

/// A competitor is flagged when the lab runs it below this share of its calibration.
pub const SLOW_BELOW: f64 = 0.9;

/// Whether `label` is a calibration cell's (`<label>/<kind>`).
pub fn is_calibration(label: &str) -> bool {
    label.rsplit_once('/').is_some_and(|(_, kind)| kind == crate::measure::calibration::OWN_LOOP)
}

/// Whether `label` is a row beside the results (a traced twin or a calibration) rather
/// than one of the compared rows.
pub fn is_side(label: &str) -> bool {
    inrun::is_twin(label) || is_calibration(label)
}

/// Whether a ratio pairs a side row: a traced twin, a calibration, or a cell against its
/// calibration.
pub fn is_side_ratio(q: &Ratio) -> bool {
    is_side(&q.variant) || is_side(&q.baseline)
}

/// Puts a calibration cell after every cell whose variant has a calibration kind (traced
/// twins excepted: their plain cell's calibration serves them), and a (cell, calibration)
/// pair for each.
pub fn cells(plan: &mut Plan<CellSpec>) {
    let mut cells = Vec::with_capacity(plan.cells.len() * 2);
    let mut any = false;
    for c in std::mem::take(&mut plan.cells) {
        let kind = kind_of(&c.cell.variant).filter(|_| !inrun::is_twin(&c.label));
        let mut cal = None;
        if let Some(kind) = kind {
            let mut k = c.clone();
            k.label = label_of(&c.label, kind);
            k.file_stem = format!("{}-{kind}", c.file_stem);
            k.key.insert("calibration".into(), json!(kind));
            k.cell.calibration = Some(kind.to_string());
            k.cell.sampling_ab_pairs = 0;
            k.cell.in_run_trace = None;
            k.heap = false;
            k.trace = false;
            let pair = (c.label.clone(), k.label.clone());
            if !plan.pairs.contains(&pair) {
                plan.pairs.push(pair);
            }
            cal = Some(k);
        }
        cells.push(c);
        if let Some(k) = cal {
            any = true;
            cells.push(k);
        }
    }
    plan.cells = cells;
    if any {
        plan.notes.push(
            "Every peer's and JVM original's cell ran beside its calibration \
             (`<row>/own-loop`: the crate's or the JVM library's own send and receive in a \
             plain loop, the same messages, P, capacity, placement and check), in the same \
             rounds; the calibration table has their paired ratios."
                .into(),
        );
    }
}

/// The (cell, calibration) ratios of a run.
fn ratios(r: &Results) -> impl Iterator<Item = &Ratio> {
    r.ratios.iter().filter(|q| is_calibration(&q.baseline) && !is_side(&q.variant))
}

/// Each competitor's lab QPS against its calibration's, with the paired ratio.
pub fn table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Calibration: each peer in the lab against its own plain loop (same messages, P, \
         capacity, placement)",
        &["competitor", "P", "lab QPS", "own-loop QPS", "lab/own-loop QPS [interval]", "flag"],
    );
    for q in ratios(r) {
        let qps = |l: &str| super::tables::qps_cell(r, l, &q.group);
        t.rows.push(vec![
            q.variant.clone(),
            q.producers.map_or("–".into(), |p| p.to_string()),
            qps(&q.variant),
            qps(&q.baseline),
            q.text(),
            match slowed(q) {
                Some(Slowed::Shown(m)) => format!("SLOWED: {:.0}% below", (1.0 - m) * 100.0),
                Some(Slowed::Median(m)) => {
                    format!("below at the median ({:.0}%), no interval shows it", (1.0 - m) * 100.0)
                }
                None if q.median.is_some() => "ok".into(),
                None => "–".into(),
            },
        ]);
    }
    t.note = Some(format!(
        "Each round runs a peer's cell and its calibration side by side; the ratio is the \
         cell's QPS over the calibration's within a round, the median over rounds with its \
         repeat interval (99%). An interval wholly under {SLOW_BELOW} means the harness or the \
         adapter, not the competitor, set the lab's figure (SLOWED); a median under it without \
         such an interval may be that or the machine's noise, which more rounds tell apart. \
         Both are flagged in the verdict."
    ));
    (!t.rows.is_empty()).then_some(t)
}

/// How a competitor's calibration ratio falls below [`SLOW_BELOW`].
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slowed {
    /// The whole repeat interval lies below: the lab slowed it (the median given).
    Shown(f64),
    /// The median lies below, but no interval shows it (too few rounds, or an interval
    /// reaching [`SLOW_BELOW`]): slowed, or the machine's noise.
    Median(f64),
}

fn slowed(q: &Ratio) -> Option<Slowed> {
    let m = q.median.filter(|m| *m < SLOW_BELOW)?;
    Some(match q.ci_high {
        Some(h) if h < SLOW_BELOW => Slowed::Shown(m),
        _ => Slowed::Median(m),
    })
}

/// A verdict line for every competitor the lab runs more than 10% below its calibration:
/// said as shown when the repeat interval lies below, as a median only otherwise.
pub fn warnings(r: &Results) -> Vec<String> {
    let pct = (1.0 - SLOW_BELOW) * 100.0;
    ratios(r)
        .filter_map(|q| {
            Some(match slowed(q)? {
                Slowed::Shown(m) => format!(
                    "WARNING: {} {} ran at {m:.2}× its own plain loop ({}): the lab slowed this \
                     competitor by more than {pct:.0}%, so its figures here understate it",
                    q.variant,
                    q.group,
                    q.text(),
                ),
                Slowed::Median(m) => format!(
                    "WARNING: {} {} ran at {m:.2}× its own plain loop at the median ({}), more \
                     than {pct:.0}% below, but no interval shows it: the lab may understate this \
                     competitor, or the rounds may differ by the machine's noise alone; more \
                     rounds tell",
                    q.variant,
                    q.group,
                    q.text(),
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::charts::fixture;

    fn ratio(median: f64, ci: Option<[f64; 2]>) -> Ratio {
        fixture::ratio("crossbeam", "crossbeam/own-loop", "P=1", median, ci)
    }

    #[test]
    fn a_slowdown_is_shown_only_by_an_interval_below() {
        assert_eq!(slowed(&ratio(0.7, Some([0.6, 0.85]))), Some(Slowed::Shown(0.7)));
        assert_eq!(slowed(&ratio(0.85, Some([0.6, 1.05]))), Some(Slowed::Median(0.85)));
        assert_eq!(slowed(&ratio(0.85, None)), Some(Slowed::Median(0.85)));
        assert_eq!(slowed(&ratio(0.95, Some([0.8, 1.1]))), None);
        let r = fixture::results(
            "disruptor-vs-lbq",
            Vec::new(),
            vec![ratio(0.7, Some([0.6, 0.85])), ratio(0.85, None)],
        );
        let w = warnings(&r);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("the lab slowed this competitor"), "{}", w[0]);
        assert!(w[1].contains("no interval shows it"), "{}", w[1]);
    }

    #[test]
    fn calibration_labels_are_told_apart() {
        assert!(is_calibration("crossbeam/own-loop"));
        assert!(is_calibration("disruptor-rs@mimalloc/own-loop"));
        assert!(!is_calibration("crossbeam"));
        assert!(is_side("ring[in-run]"));
        assert!(!is_side("ring"));
    }
}
