//! Where a row's gap to its own loop lies (`--contract-loops on`). Each Rust row then runs
//! beside two calibrations in the same rounds: its own loop (the crate's own API) and its
//! contract loop (the lab's adapter through the `Handoff` contract in the same plain loop,
//! no harness). The row's ratio to its own loop is the product of two paired ratios, each
//! with its own interval:
//! * the contract's share, contract loop ÷ own loop: what moving owned messages through
//!   the adapter costs against the crate's own API (writing in place, a handler per event);
//! * the harness's share, row ÷ contract loop: what the lab's measured loop costs around
//!   the same adapter (latency record, accounting, counters, its threads).
//!
//! A row whose gap is the contract's is the design's price under the lab's contract, and the
//! verdict stands on both the lab's rows and the own loops; one whose gap is the harness's
//! is the lab's to fix.

use super::calibration::{FAST_ABOVE, SLOW_BELOW};
use crate::results::{Ratio, Results, Role, Table};

/// One row's gap to its own loop and its two shares (either may be missing: a share's pair
/// had no rounds).
struct Split<'a> {
    /// The row against its own loop.
    whole: &'a Ratio,
    /// The contract loop against the own loop.
    contract: Option<&'a Ratio>,
    /// The row against its contract loop.
    harness: Option<&'a Ratio>,
}

fn splits(r: &Results) -> Vec<Split<'_>> {
    let find = |row: Role, base: Role, f: &dyn Fn(&Ratio) -> bool| {
        r.ratios.iter().find(|q| q.row_role == row && q.baseline_role == base && f(q))
    };
    r.ratios
        .iter()
        .filter(|q| q.row_role == Role::Measured && q.baseline_role == Role::OwnLoop)
        .filter_map(|q| {
            let same = |x: &Ratio| x.group == q.group;
            let contract =
                find(Role::ContractLoop, Role::OwnLoop, &|x| same(x) && x.baseline == q.baseline);
            let harness =
                find(Role::Measured, Role::ContractLoop, &|x| same(x) && x.variant == q.variant);
            (contract.is_some() || harness.is_some()).then_some(Split {
                whole: q,
                contract,
                harness,
            })
        })
        .collect()
}

/// Whether a share's median lies outside the 10% band around 1.
fn outside(q: Option<&Ratio>) -> bool {
    q.and_then(|q| q.median).is_some_and(|m| !(SLOW_BELOW..=FAST_ABOVE).contains(&m))
}

/// Which share a gap is: the one further from 1 by its median, when outside the band.
/// Where the contract loop ran below the band against the own loop and the row above it
/// against the contract loop, the contract loop is slower than both of the cells it is
/// meant to stand between: it is the outlier, and it does not say where the row's gap is.
fn larger(s: &Split<'_>) -> &'static str {
    let median = |q: Option<&Ratio>| q.and_then(|q| q.median);
    let dist = |q: Option<&Ratio>| median(q).map(|m| m.ln().abs());
    let below = median(s.contract).is_some_and(|m| m < SLOW_BELOW);
    let above = median(s.harness).is_some_and(|m| m > FAST_ABOVE);
    if below && above {
        return "not split: the contract loop ran below both the row and the own loop";
    }
    match (outside(s.contract), outside(s.harness)) {
        (false, false) => "neither (both within 10%)",
        (true, false) => "the contract",
        (false, true) => "the harness",
        (true, true) => {
            if dist(s.contract) >= dist(s.harness) {
                "both; the contract more"
            } else {
                "both; the harness more"
            }
        }
    }
}

/// The table of each row's gap to its own loop and its two shares.
pub fn table(r: &Results) -> Option<Table> {
    let mut t = Table::new(
        "The gap to the own loop, split: the Handoff contract's share and the harness's",
        &[
            "competitor",
            "P",
            "lab/own-loop",
            "contract: contract-loop/own-loop",
            "harness: lab/contract-loop",
            "outside 10%",
        ],
    );
    for s in splits(r) {
        let text = |q: Option<&Ratio>| q.map_or("–".into(), Ratio::text);
        t.rows.push(vec![
            s.whole.variant.clone(),
            super::ratio_producers(r, s.whole).map_or("–".into(), |p| p.to_string()),
            s.whole.text(),
            text(s.contract),
            text(s.harness),
            larger(&s).into(),
        ]);
    }
    t.note = Some(
        "Each ratio is paired within rounds, its median over rounds with its repeat interval \
         (99%). The contract loop runs the lab's adapter through the Handoff contract (owned \
         messages, send and recv_batch) in the own loops' plain loop, with none of the \
         harness's recording: against the own loop it is what the contract costs, and the row \
         against it is what the harness costs. The two medians multiply to about the row's \
         ratio to its own loop (medians of products and products of medians differ a little)."
            .into(),
    );
    (!t.rows.is_empty()).then_some(t)
}

/// A verdict line for every row whose gap to its own loop is outside the 10% band and was
/// split: which share holds it, with both figures.
pub fn lines(r: &Results) -> Vec<String> {
    splits(r)
        .into_iter()
        .filter(|s| outside(Some(s.whole)))
        .map(|s| {
            let text = |q: Option<&Ratio>| q.map_or("–".into(), Ratio::text);
            format!(
                "{} {} at {} of its own loop: the contract {} (contract loop ÷ own loop), the \
                 harness {} (lab ÷ contract loop); the gap is {}",
                s.whole.variant,
                s.whole.group,
                s.whole.text(),
                text(s.contract),
                text(s.harness),
                larger(&s)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture;

    fn q(row: (&str, Role), base: (&str, Role), median: f64) -> Ratio {
        let x = fixture::ratio(row.0, base.0, "P=1", median, Some([median - 0.02, median + 0.02]));
        Ratio { row_role: row.1, baseline_role: base.1, ..x }
    }

    #[test]
    fn a_gap_splits_into_the_contracts_share_and_the_harnesss() {
        let (m, own, con) = (Role::Measured, Role::OwnLoop, Role::ContractLoop);
        let ratios = vec![
            q(("ring", m), ("ring/own-loop", own), 0.80),
            q(("ring/contract-loop", con), ("ring/own-loop", own), 0.97),
            q(("ring", m), ("ring/contract-loop", con), 0.82),
            q(("locked", m), ("locked/own-loop", own), 0.75),
            q(("locked/contract-loop", con), ("locked/own-loop", own), 0.70),
            q(("locked", m), ("locked/contract-loop", con), 1.05),
            // A row with no contract loop is not split.
            q(("crossbeam", m), ("crossbeam/own-loop", own), 0.5),
        ];
        let r = fixture::results("disruptor-vs-lbq", Vec::new(), ratios);
        let t = table(&r).expect("a table");
        let last: Vec<&str> = t.rows.iter().map(|row| row[5].as_str()).collect();
        assert_eq!(last, ["the harness", "the contract"], "{:?}", t.rows);
        assert!(t.rows[0][3].starts_with("0.97") && t.rows[0][4].starts_with("0.82"));
        let l = lines(&r);
        assert_eq!(l.len(), 2, "{l:?}");
        assert!(l[0].starts_with("ring P=1 at 0.80") && l[0].ends_with("the harness"), "{}", l[0]);
        // Both outside: the one further from 1 holds more of the gap.
        let both = vec![
            q(("ring", m), ("ring/own-loop", own), 0.60),
            q(("ring/contract-loop", con), ("ring/own-loop", own), 0.85),
            q(("ring", m), ("ring/contract-loop", con), 0.70),
        ];
        let r = fixture::results("disruptor-vs-lbq", Vec::new(), both);
        assert_eq!(table(&r).unwrap().rows[0][5], "both; the harness more");
        // A contract loop below the own loop and below the row splits nothing.
        let outlier = vec![
            q(("crossbeam", m), ("crossbeam/own-loop", own), 0.84),
            q(("crossbeam/contract-loop", con), ("crossbeam/own-loop", own), 0.44),
            q(("crossbeam", m), ("crossbeam/contract-loop", con), 1.94),
        ];
        let r = fixture::results("disruptor-vs-lbq", Vec::new(), outlier);
        let l = lines(&r);
        assert!(
            l[0].ends_with("the contract loop ran below both the row and the own loop"),
            "{l:?}"
        );
        // No contract loops: no table, no lines.
        let r = fixture::results(
            "disruptor-vs-lbq",
            Vec::new(),
            vec![q(("ring", m), ("ring/own-loop", own), 0.5)],
        );
        assert!(table(&r).is_none() && lines(&r).is_empty());
    }
}
