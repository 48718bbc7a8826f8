//! A dimension of `disruptor-vs-lbq` beside the variant and P (the timed allocator, the
//! JVM's collector), and its one table: per group of rows that differ only in that
//! dimension (the rest of their key) and per P, the QPS under each value with its paired
//! ratio to the reference value, and the dimension's own columns. Rows are told apart by
//! their typed keys, never by their labels.

use super::{key, ratio_producers, DvlKey, HandoffDetail};
use crate::analysis::pairing::pair_ratios;
use crate::results::{Results, Role, Row, Status, Table};
use crate::units::group;

/// A column per value: (header after the value's name, the cell of the row under it).
pub type ValueColumn = (&'static str, fn(&Row) -> String);

/// A last column: (header, the cell from a group's rows at one P).
pub type LastColumn = (&'static str, fn(&[&Row]) -> String);

/// One dimension and what its table shows.
pub struct Dimension {
    /// The table's title.
    pub title: &'static str,
    /// A row's value of the dimension (`None`: not a row of it).
    pub value: fn(&DvlKey) -> Option<String>,
    /// Clears the dimension from a key: what is left names the row's group.
    pub clear: fn(&mut DvlKey),
    /// The value the others are compared with, of those that ran.
    pub reference: for<'a> fn(&[&'a str]) -> &'a str,
    /// More columns per value, after its QPS.
    pub per_value: &'static [ValueColumn],
    /// A last column.
    pub last: Option<LastColumn>,
    /// The note under the table, from the values and the reference.
    pub note: fn(&[&str], &str) -> String,
}

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> HandoffDetail {
    x.detail()
}

/// A group's name in the table, from its key: its variant, and its wait strategy when the
/// groups ran under several (as the rows' labels show them).
fn name(k: &DvlKey, several_waits: bool) -> String {
    match &k.wait {
        Some(w) if several_waits => format!("{}[{w}]", k.variant),
        _ => k.variant.clone(),
    }
}

/// The compared rows (side rows, own loops and twins, stay out of the table).
fn measured(r: &Results) -> impl Iterator<Item = &Row> {
    r.results.iter().filter(|x| x.role == Role::Measured)
}

/// The rows' groups (the rest of each row's key, its producers cleared too) in the order
/// first seen, and the producer counts, ascending, once each.
fn groups(r: &Results, d: &Dimension) -> (Vec<DvlKey>, Vec<u64>) {
    let (mut rests, mut ps) = (Vec::new(), Vec::new());
    for k in measured(r).map(key).filter(|k| (d.value)(k).is_some()) {
        ps.push(k.producers);
        let mut rest = k;
        (d.clear)(&mut rest);
        rest.producers = 0;
        if !rests.contains(&rest) {
            rests.push(rest);
        }
    }
    ps.sort_unstable();
    ps.dedup();
    (rests, ps)
}

/// The row of group `rest` at `p` producers under `value`.
fn find<'a>(r: &'a Results, d: &Dimension, rest: &DvlKey, p: u64, value: &str) -> Option<&'a Row> {
    measured(r).find(|x| {
        let mut k = key(x);
        if k.producers != p || (d.value)(&k).as_deref() != Some(value) {
            return false;
        }
        (d.clear)(&mut k);
        k.producers = 0;
        k == *rest
    })
}

/// The table, when more than one value of the dimension ran.
pub fn table(r: &Results, d: &Dimension) -> Option<Table> {
    let mut named: Vec<String> = Vec::new();
    for v in measured(r).filter_map(|x| (d.value)(&key(x))) {
        if !named.contains(&v) {
            named.push(v);
        }
    }
    let mut values: Vec<&str> = named.iter().map(String::as_str).collect();
    if values.len() < 2 {
        return None;
    }
    let reference = (d.reference)(&values);
    values.sort_by_key(|v| *v != reference);
    let mut header = vec!["variant".to_string(), "P".to_string()];
    for v in &values {
        header.push(format!("{v} QPS"));
        header.extend(d.per_value.iter().map(|(h, _)| format!("{v} {h}")));
        if *v != reference {
            header.push(format!("{v}/{reference} [interval]"));
        }
    }
    header.extend(d.last.map(|(h, _)| h.to_string()));
    let (rests, ps) = groups(r, d);
    let waits: Vec<&Option<String>> =
        rests.iter().map(|k| &k.wait).filter(|w| w.is_some()).collect();
    let several_waits = waits.iter().any(|w| *w != waits[0]);
    let mut rows = Vec::new();
    for rest in &rests {
        for &p in &ps {
            let under: Vec<Option<&Row>> = values.iter().map(|v| find(r, d, rest, p, v)).collect();
            if under.iter().all(Option::is_none) {
                continue;
            }
            let mut row = vec![name(rest, several_waits), p.to_string()];
            for (v, x) in values.iter().zip(&under) {
                row.push(match x {
                    Some(x) if x.status != Status::Ok => x.status.word().to_string(),
                    Some(x) => detail(x).qps.map_or("–".into(), group),
                    None => "–".into(),
                });
                row.extend(d.per_value.iter().map(|(_, cell)| x.map_or("–".into(), cell)));
                if *v != reference {
                    let base = under[0].map(|b| b.label.as_str());
                    let ratio = x.zip(base).and_then(|(x, b)| {
                        pair_ratios(&r.results, &x.label, b)
                            .into_iter()
                            .find(|q| ratio_producers(r, q) == Some(p))
                    });
                    row.push(ratio.map_or("–".into(), |q| q.text()));
                }
            }
            if let Some((_, cell)) = d.last {
                row.push(cell(&under.iter().flatten().copied().collect::<Vec<_>>()));
            }
            rows.push(row);
        }
    }
    Some(Table {
        title: d.title.into(),
        header,
        rows,
        note: Some((d.note)(&values, reference)),
        headline: false,
    })
}
