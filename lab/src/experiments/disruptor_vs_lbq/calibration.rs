//! The calibration cells of `disruptor-vs-lbq`: beside every cell whose variant has a
//! calibration kind (`crate::measure::calibration::kind_of`: our own variants with
//! `--own-loops on`, the Rust peers and the JVM originals), a cell labelled
//! `<label>/<kind>` (e.g. `ring/own-loop`) that runs the same competitor through its own
//! API in a plain loop, with the same messages, P, capacity, placement and check. It sits in
//! the cell's group, so it runs in the same rounds; the (cell, calibration) pair gives a
//! paired ratio per round (lab QPS / calibration QPS), summarised with its repeat interval
//! in `ratios[]`. [`table`] shows each row's lab figure against its calibration; [`warnings`]
//! flags, in the verdict, a row whose median ratio is more than 10% away from 1 either way:
//! under [`SLOW_BELOW`], the lab would be measuring its own harness, not the competitor;
//! over [`FAST_ABOVE`], the own loop is not the crate's best plain use on this machine (or
//! the adapter beats the crate's own API), so it bounds nothing. Calibration rows stay out
//! of the headline tables, the verdict's comparisons and the Why section (their role,
//! [`Role::OwnLoop`]).

use super::DvlKey;
use crate::experiment::Plan;
use crate::measure::calibration::{contract_kind_of, kind_of, label_of};
use crate::measure::harness::CellSpec;
use crate::results::{Ratio, Results, Role, Table};

/// A row is flagged when the lab runs it below this share of its calibration.
pub const SLOW_BELOW: f64 = 0.9;

/// A row is flagged when the lab runs it above this share of its calibration.
pub const FAST_ABOVE: f64 = 1.1;

/// Puts a calibration cell after every cell whose variant has a calibration kind (traced
/// twins excepted: their plain cell's calibration serves them; our own variants only with
/// `ours`), and a (cell, calibration) pair for each. With `contract`, a Rust competitor's
/// cell also gets its contract loop (`<row>/contract-loop`), paired with the row and with
/// the own loop.
pub fn cells(plan: &mut Plan<CellSpec>, ours: bool, contract: bool) {
    let mut cells = Vec::with_capacity(plan.cells.len() * 3);
    let (mut any, mut any_contract) = (false, false);
    for c in std::mem::take(&mut plan.cells) {
        let is_ours = crate::measure::variants::find(&c.cell.variant).is_some_and(|v| v.ours);
        let calibrated = c.role != Role::Twin && (ours || !is_ours);
        let own = (kind_of(&c.cell.variant).filter(|_| calibrated))
            .map(|kind| calibration_cell(&c, kind, Role::OwnLoop));
        let through = (contract_kind_of(&c.cell.variant).filter(|_| calibrated && contract))
            .map(|kind| calibration_cell(&c, kind, Role::ContractLoop));
        let mut pair = |a: &str, b: &str| {
            let pair = (a.to_string(), b.to_string());
            if !plan.pairs.contains(&pair) {
                plan.pairs.push(pair);
            }
        };
        if let Some(k) = &own {
            pair(&c.label, &k.label);
        }
        if let Some(t) = &through {
            pair(&c.label, &t.label);
            if let Some(k) = &own {
                pair(&t.label, &k.label);
            }
        }
        any |= own.is_some();
        any_contract |= through.is_some();
        cells.push(c);
        cells.extend(through);
        cells.extend(own);
    }
    plan.cells = cells;
    own_loop_pairs(plan);
    if any {
        plan.notes.push(
            "Every peer's and JVM original's cell, and ours with --own-loops on, ran beside \
             its calibration (`<row>/own-loop`: the crate's or the JVM library's own send and \
             receive in a plain loop, the same messages, P, capacity, placement and check), in \
             the same rounds; the calibration table has their paired ratios."
                .into(),
        );
    }
    if any_contract {
        plan.notes.push(
            "With --contract-loops on, every Rust row also ran beside its contract loop \
             (`<row>/contract-loop`: the lab's adapter through the Handoff contract in the own \
             loops' plain loop, no harness), in the same rounds; the table of the gap's shares \
             splits each row's gap to its own loop into the contract's and the harness's."
                .into(),
        );
    }
}

/// The calibration cell of `kind` beside `c`: the same spec and group, untraced, no heap
/// pass, no sampling pairs.
fn calibration_cell(
    c: &crate::experiment::CellPlan<CellSpec>,
    kind: &str,
    role: Role,
) -> crate::experiment::CellPlan<CellSpec> {
    let mut k = c.clone().rekey(|k: &mut DvlKey| k.calibration = Some(kind.to_string()));
    k.label = label_of(&c.label, kind);
    k.role = role;
    k.beside = Some(c.label.clone());
    k.file_stem = format!("{}-{kind}", c.file_stem);
    k.cell.calibration = Some(kind.to_string());
    k.cell.sampling_ab_pairs = 0;
    k.cell.in_run_trace = None;
    k.heap = false;
    k.trace = false;
    k
}

/// Pairs the own loops of every compared pair whose rows both have one (`ring/own-loop`
/// against `locked/own-loop`, `ring/own-loop` against `jvm-disruptor/own-loop`): the same
/// comparison with the harness taken out of both sides, for the verdict to set beside the
/// lab's ([`own_loop_lines`]).
fn own_loop_pairs(plan: &mut Plan<CellSpec>) {
    let cells: Vec<Cell<'_>> =
        plan.cells.iter().map(|c| (c.label.as_str(), c.role, c.beside.as_deref())).collect();
    let more = own_pairs(&cells, &plan.pairs, plan.baseline.as_deref());
    plan.pairs.extend(more);
}

/// A planned cell as [`own_pairs`] sees it: its label, role and the cell it stands beside.
type Cell<'a> = (&'a str, Role, Option<&'a str>);

/// The own-loop pairs of [`own_loop_pairs`], from the cells, the named pairs and the
/// baseline: new pairs only.
fn own_pairs(
    cells: &[Cell<'_>],
    pairs: &[(String, String)],
    baseline: Option<&str>,
) -> Vec<(String, String)> {
    let measured = |l: &str| cells.iter().any(|c| c.0 == l && c.1 == Role::Measured);
    let own_of = |l: &str| {
        cells.iter().find(|c| c.1 == Role::OwnLoop && c.2 == Some(l)).map(|c| c.0.to_string())
    };
    // The compared pairs: the named ones, and every row against the baseline.
    let mut compared = pairs.to_vec();
    if let Some(base) = baseline {
        compared.extend(cells.iter().map(|c| (c.0.to_string(), base.to_string())));
    }
    let mut more = Vec::new();
    for (a, b) in compared.iter().filter(|(a, b)| a != b && measured(a) && measured(b)) {
        let (Some(x), Some(y)) = (own_of(a), own_of(b)) else { continue };
        let pair = (x, y);
        if !pairs.contains(&pair) && !more.contains(&pair) {
            more.push(pair);
        }
    }
    more
}

/// A verdict line per pair of own loops (`ring/own-loop against locked/own-loop: …`), the
/// comparison with no harness on either side.
pub fn own_loop_lines(r: &Results) -> Vec<String> {
    crate::analysis::verdict::comparisons(&r.ratios, Ratio::is_own_loops)
        .into_iter()
        .map(|c| format!("own loops, no harness on either side: {}", c.line))
        .collect()
}

/// The (cell, calibration) ratios of a run.
fn ratios(r: &Results) -> impl Iterator<Item = &Ratio> {
    r.ratios.iter().filter(|q| q.baseline_role == Role::OwnLoop && q.row_role == Role::Measured)
}

/// Each row's lab QPS against its calibration's, with the paired ratio and its flag.
pub fn table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "Calibration: each row in the lab against its own plain loop (same messages, P, \
         capacity, placement, check)",
        &["competitor", "P", "lab QPS", "own-loop QPS", "lab/own-loop QPS [interval]", "flag"],
    );
    for q in ratios(r) {
        let qps = |l: &str| super::tables::qps_cell(r, l, &q.group);
        t.rows.push(vec![
            q.variant.clone(),
            super::ratio_producers(r, q).map_or("–".into(), |p| p.to_string()),
            qps(&q.variant),
            qps(&q.baseline),
            q.text(),
            match off(q) {
                Some(Off { side: Side::Below, shown: true, median: m }) => {
                    format!("SLOWED: {:.0}% below", (1.0 - m) * 100.0)
                }
                Some(Off { side: Side::Below, shown: false, median: m }) => {
                    format!("below at the median ({:.0}%), no interval shows it", (1.0 - m) * 100.0)
                }
                Some(Off { side: Side::Above, shown: true, median: m }) => {
                    format!("ABOVE: {:.0}% above", (m - 1.0) * 100.0)
                }
                Some(Off { side: Side::Above, shown: false, median: m }) => {
                    format!("above at the median ({:.0}%), no interval shows it", (m - 1.0) * 100.0)
                }
                None if q.median.is_some() => "ok".into(),
                None => "–".into(),
            },
        ]);
    }
    t.note = Some(format!(
        "Each round runs a row's cell and its calibration side by side; the ratio is the \
         cell's QPS over the calibration's within a round, the median over rounds with its \
         repeat interval (99%). An interval wholly under {SLOW_BELOW} means the harness or the \
         adapter, not the competitor, set the lab's figure (SLOWED); one wholly over \
         {FAST_ABOVE} means the own loop is not the crate's best plain use here, or the \
         adapter beats the crate's own API (ABOVE): either way the calibration bounds nothing \
         for that row. A median outside without such an interval may be that or the \
         machine's noise, which more rounds tell apart. All are flagged in the verdict."
    ));
    (!t.rows.is_empty()).then_some(t)
}

/// Which side of its calibration a row falls on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    /// Under [`SLOW_BELOW`].
    Below,
    /// Over [`FAST_ABOVE`].
    Above,
}

/// How a row's calibration ratio falls outside [`SLOW_BELOW`]..=[`FAST_ABOVE`].
#[derive(Debug, Clone, Copy, PartialEq)]
struct Off {
    side: Side,
    /// Whether the whole repeat interval lies outside on that side (else the median only:
    /// too few rounds, or an interval reaching back over the bar; off, or the machine's
    /// noise).
    shown: bool,
    median: f64,
}

fn off(q: &Ratio) -> Option<Off> {
    let m = q.median?;
    let (side, shown) = if m < SLOW_BELOW {
        (Side::Below, q.ci_high.is_some_and(|h| h < SLOW_BELOW))
    } else if m > FAST_ABOVE {
        (Side::Above, q.ci_low.is_some_and(|l| l > FAST_ABOVE))
    } else {
        return None;
    };
    Some(Off { side, shown, median: m })
}

/// A verdict line for every row the lab runs more than 10% away from its calibration,
/// either way: said as shown when the repeat interval lies outside, as a median only
/// otherwise.
pub fn warnings(r: &Results) -> Vec<String> {
    let (below, above) = ((1.0 - SLOW_BELOW) * 100.0, (FAST_ABOVE - 1.0) * 100.0);
    ratios(r)
        .filter_map(|q| {
            let o = off(q)?;
            let (v, g, t, m) = (&q.variant, &q.group, q.text(), o.median);
            Some(match (o.side, o.shown) {
                (Side::Below, true) => format!(
                    "WARNING: {v} {g} ran at {m:.2}× its own plain loop ({t}): the lab slowed \
                     this competitor by more than {below:.0}%, so its figures here understate it"
                ),
                (Side::Below, false) => format!(
                    "WARNING: {v} {g} ran at {m:.2}× its own plain loop at the median ({t}), \
                     more than {below:.0}% below, but no interval shows it: the lab may \
                     understate this competitor, or the rounds may differ by the machine's \
                     noise alone; more rounds tell"
                ),
                (Side::Above, true) => format!(
                    "WARNING: {v} {g} ran at {m:.2}× its own plain loop ({t}), more than \
                     {above:.0}% above it: that own loop is not the crate's best plain use on \
                     this machine (or the lab's adapter beats the crate's own API), so it does \
                     not bound what the harness costs this row"
                ),
                (Side::Above, false) => format!(
                    "WARNING: {v} {g} ran at {m:.2}× its own plain loop at the median ({t}), \
                     more than {above:.0}% above, but no interval shows it: the own loop may \
                     not be the crate's best plain use here, or the rounds may differ by the \
                     machine's noise alone; more rounds tell"
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    fn ratio(median: f64, ci: Option<[f64; 2]>) -> Ratio {
        let q = fixture::ratio("crossbeam", "crossbeam/own-loop", "P=1", median, ci);
        Ratio { baseline_role: Role::OwnLoop, ..q }
    }

    fn at(side: Side, shown: bool, median: f64) -> Option<Off> {
        Some(Off { side, shown, median })
    }

    #[test]
    fn a_row_off_its_own_loop_is_shown_only_by_an_interval_outside() {
        assert_eq!(off(&ratio(0.7, Some([0.6, 0.85]))), at(Side::Below, true, 0.7));
        assert_eq!(off(&ratio(0.85, Some([0.6, 1.05]))), at(Side::Below, false, 0.85));
        assert_eq!(off(&ratio(0.85, None)), at(Side::Below, false, 0.85));
        assert_eq!(off(&ratio(0.95, Some([0.8, 1.1]))), None);
        assert_eq!(off(&ratio(1.09, Some([1.0, 1.2]))), None);
        assert_eq!(off(&ratio(1.8, Some([1.5, 2.2]))), at(Side::Above, true, 1.8));
        assert_eq!(off(&ratio(1.2, Some([1.05, 1.4]))), at(Side::Above, false, 1.2));
        assert_eq!(off(&ratio(1.2, None)), at(Side::Above, false, 1.2));
        let r = fixture::results(
            "disruptor-vs-lbq",
            Vec::new(),
            vec![
                ratio(0.7, Some([0.6, 0.85])),
                ratio(0.85, None),
                ratio(1.8, Some([1.5, 2.2])),
                ratio(1.2, None),
            ],
        );
        let w = warnings(&r);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[0].contains("the lab slowed this competitor"), "{}", w[0]);
        assert!(w[1].contains("no interval shows it"), "{}", w[1]);
        assert!(w[2].contains("more than 10% above it"), "{}", w[2]);
        assert!(w[3].contains("above, but no interval shows it"), "{}", w[3]);
        let t = table(&r).expect("a table");
        let flags: Vec<&str> = t.rows.iter().map(|row| row[5].as_str()).collect();
        assert!(flags[0].starts_with("SLOWED") && flags[2].starts_with("ABOVE"), "{flags:?}");
    }

    #[test]
    fn own_loops_are_paired_as_their_rows_are() {
        let (m, own, twin) = (Role::Measured, Role::OwnLoop, Role::Twin);
        let cells = [
            ("locked", m, None),
            ("locked/own-loop", own, Some("locked")),
            ("ring", m, None),
            ("ring/own-loop", own, Some("ring")),
            ("jvm-disruptor", m, None),
            ("jvm-disruptor/own-loop", own, Some("jvm-disruptor")),
            ("naive", m, None),
            ("ring[in-run]", twin, Some("ring")),
        ];
        let named = vec![("ring".to_string(), "jvm-disruptor".to_string())];
        let got = own_pairs(&cells, &named, Some("locked"));
        let want: Vec<(String, String)> = [
            ("ring/own-loop", "jvm-disruptor/own-loop"),
            ("ring/own-loop", "locked/own-loop"),
            ("jvm-disruptor/own-loop", "locked/own-loop"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        // naive has no own loop here, the twin none of its own: neither is paired.
        assert_eq!(got, want);
    }
}
