//! `disruptor-vs-lbq --allocator`: the global allocator of the Rust rows' children as a
//! dimension of the matrix. Rust fixes the global allocator at compile time, so each one
//! is its own child binary: `system` is the `lab` binary itself (std's `System`, glibc
//! malloc here), the others are `lab-cell-<name>` with a `#[global_allocator]`. Heap passes
//! stay in `lab-heap` under dhat whatever the allocator: dhat counts the code's
//! allocations, which no allocator changes, not how fast an allocator serves them.

use super::DvlKey;
use super::HandoffDetail;
use crate::analysis::pairing::pair_ratios;
use crate::results::{Results, Row, Status, Table};
use crate::units::group;
use clap::ValueEnum;
use serde::Serialize;

/// One value of `--allocator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocatorArg {
    /// std's System allocator (glibc malloc): the lab binary itself.
    System,
    /// mimalloc (the lab-cell-mimalloc binary).
    Mimalloc,
    /// jemalloc, tikv-jemallocator (the lab-cell-jemalloc binary).
    Jemalloc,
    /// All three.
    All,
}

/// The allocators a list names, each once, in the order given (`all`: system, mimalloc,
/// jemalloc).
pub fn expand(list: &[AllocatorArg]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for a in list {
        let names: &[&'static str] = match a {
            AllocatorArg::System => &["system"],
            AllocatorArg::Mimalloc => &["mimalloc"],
            AllocatorArg::Jemalloc => &["jemalloc"],
            AllocatorArg::All => &["system", "mimalloc", "jemalloc"],
        };
        for n in names {
            if !out.contains(n) {
                out.push(n);
            }
        }
    }
    out
}

/// The allocator the others are compared with (and whose rows get the heap pass): `system`
/// when it ran, else the first.
pub fn reference<'a>(names: &[&'a str]) -> &'a str {
    if names.contains(&"system") {
        "system"
    } else {
        names[0]
    }
}

/// The child binary of an allocator (`None`: the lab binary, std's System allocator).
pub fn binary(name: &str) -> Option<&'static str> {
    match name {
        "mimalloc" => Some("lab-cell-mimalloc"),
        "jemalloc" => Some("lab-cell-jemalloc"),
        _ => None,
    }
}

/// The environment record's `timed_allocator` for the allocators used.
pub fn environment_text(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| match *n {
            "system" => "system: std::alloc::System (the platform malloc), the lab binary",
            "mimalloc" => "mimalloc: mimalloc::MiMalloc, the lab-cell-mimalloc binary",
            "jemalloc" => "jemalloc: tikv_jemallocator::Jemalloc, the lab-cell-jemalloc binary",
            other => other,
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A label and its allocator suffix: `locked@mimalloc` → (`locked`, Some(`mimalloc`)).
pub fn split_label(label: &str) -> (&str, Option<&str>) {
    match label.rsplit_once('@') {
        Some((stem, a)) => (stem, Some(a)),
        None => (label, None),
    }
}

/// The rows of a dimension (their key has it: `allocator`, `jvm_gc`): the label stems
/// (`locked` of `locked@jemalloc`) in the order first seen, and the producer counts,
/// ascending, once each.
pub fn stems_and_producers(
    r: &Results,
    dimension: impl Fn(&DvlKey) -> Option<String>,
) -> (Vec<&str>, Vec<u64>) {
    let mut stems: Vec<&str> = Vec::new();
    let mut ps: Vec<u64> = Vec::new();
    for (x, k) in r.results.iter().map(|x| (x, super::key(x))) {
        if dimension(&k).is_none() {
            continue;
        }
        let stem = split_label(&x.label).0;
        if !stems.contains(&stem) {
            stems.push(stem);
        }
        ps.push(k.producers);
    }
    ps.sort_unstable();
    ps.dedup();
    (stems, ps)
}

/// The row labelled `label` at `p` producers.
pub fn find_row<'a>(r: &'a Results, label: &str, p: u64) -> Option<&'a Row> {
    r.results.iter().find(|x| x.label == label && super::key(x).producers == p)
}

/// With several allocators and a plain baseline name (`locked`, the default; `None`: locked
/// or the first row): that name and the pairs (row, its own allocator's baseline), e.g.
/// (`ring@mimalloc`, `locked@mimalloc`).
pub fn own_baselines(
    labels: &[&str],
    allocs: &[&str],
    baseline: Option<&str>,
) -> Result<(String, Vec<(String, String)>), String> {
    let stems: Vec<&str> = labels.iter().map(|l| split_label(l).0).collect();
    let b = match baseline {
        Some(b) if stems.contains(&b) => b.to_string(),
        Some(b) => {
            let mut valid: Vec<&str> = Vec::new();
            for l in stems.iter().chain(labels) {
                if !valid.contains(l) {
                    valid.push(l);
                }
            }
            return Err(format!(
                "--baseline '{b}' is not a row of this run; valid: {}",
                valid.join(", ")
            ));
        }
        None if stems.contains(&"locked") => "locked".into(),
        None => stems[0].to_string(),
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for al in allocs {
        let base = format!("{b}@{al}");
        for l in labels {
            let own = split_label(l).1 == Some(al);
            if own && *l != base && !pairs.iter().any(|(x, _)| x == l) {
                pairs.push((l.to_string(), base.clone()));
            }
        }
    }
    Ok((b, pairs))
}

/// A row's typed detail (the default for a row that has none).
fn detail(x: &Row) -> HandoffDetail {
    x.detail()
}

/// The table "Allocator", when more than one allocator ran: per Rust variant and P, the QPS
/// under each allocator with its ratio to `system` (or to the first allocator when system
/// did not run), paired within rounds, and dhat's allocations per message beside them.
pub fn table(r: &Results) -> Option<Table> {
    let named: Vec<String> = {
        let mut v: Vec<String> = Vec::new();
        for a in r.results.iter().filter_map(|x| super::key(x).allocator) {
            if !v.contains(&a) {
                v.push(a);
            }
        }
        v
    };
    let mut allocs: Vec<&str> = { named.iter().map(String::as_str).collect::<Vec<&str>>() };
    if allocs.len() < 2 {
        return None;
    }
    let reference = reference(&allocs);
    allocs.sort_by_key(|a| *a != reference);
    let mut header = vec!["variant".to_string(), "P".to_string()];
    for a in &allocs {
        header.push(format!("{a} QPS"));
        if *a != reference {
            header.push(format!("{a}/{reference} [interval]"));
        }
    }
    header.push("dhat allocations/msg".into());
    let (stems, ps) = stems_and_producers(r, |k| k.allocator.clone());
    let find = |label: &str, p: u64| find_row(r, label, p);
    let mut rows = Vec::new();
    for stem in &stems {
        for &p in &ps {
            let label = |a: &str| format!("{stem}@{a}");
            if allocs.iter().all(|a| find(&label(a), p).is_none()) {
                continue;
            }
            let mut row = vec![stem.to_string(), p.to_string()];
            for a in &allocs {
                let x = find(&label(a), p);
                row.push(match x {
                    Some(x) if x.status != Status::Ok => x.status.word().to_string(),
                    Some(x) => detail(x).qps.map_or("–".into(), group),
                    None => "–".into(),
                });
                if *a != reference {
                    let ratio = pair_ratios(&r.results, &label(a), &label(reference))
                        .into_iter()
                        .find(|q| super::ratio_producers(r, q) == Some(p));
                    row.push(ratio.map_or("–".into(), |q| q.text()));
                }
            }
            let blocks = allocs
                .iter()
                .filter_map(|a| find(&label(a), p))
                .find_map(|x| Some(detail(x).heap?.blocks_per_message));
            row.push(blocks.map_or("–".into(), |b| format!("{b:.3}")));
            rows.push(row);
        }
    }
    Some(Table {
        title: "Allocator: QPS under each global allocator (messages/s, median over forks)".into(),
        header,
        rows,
        note: Some(format!(
            "Each allocator is its own child binary (system: the lab binary, std's System \
             allocator, glibc malloc here; lab-cell-mimalloc; lab-cell-jemalloc). Ratio = QPS \
             under the allocator / QPS under {reference}, taken within each round (the rows of \
             one P run side by side) and summarised as the median over rounds with its \
             repeat interval (99%). dhat allocations/msg comes from the heap pass, which \
             runs in lab-heap under dhat whatever the allocator: dhat counts the code's \
             allocations, the same under every allocator, not their cost."
        )),
        headline: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_expand_in_order_once() {
        use AllocatorArg::*;
        assert_eq!(expand(&[System]), ["system"]);
        assert_eq!(expand(&[Jemalloc, All]), ["jemalloc", "system", "mimalloc"]);
        assert_eq!(split_label("ring[blocking]@mimalloc"), ("ring[blocking]", Some("mimalloc")));
        assert_eq!(split_label("jvm-lbq"), ("jvm-lbq", None));
        assert_eq!(binary("system"), None);
        let labels = ["locked@system", "ring@system", "locked@mimalloc", "ring@mimalloc"];
        let (b, pairs) = own_baselines(&labels, &["system", "mimalloc"], None).unwrap();
        assert_eq!(b, "locked");
        let want = [("ring@system", "locked@system"), ("ring@mimalloc", "locked@mimalloc")];
        assert_eq!(pairs, want.map(|(a, b)| (a.to_string(), b.to_string())));
        let e = own_baselines(&labels, &["system"], Some("nope")).unwrap_err();
        assert!(
            e.ends_with(
                "valid: locked, ring, locked@system, ring@system, locked@mimalloc, ring@mimalloc"
            ),
            "{e}"
        );
    }
}
