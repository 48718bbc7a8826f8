//! `disruptor-vs-lbq --jvm-gc`: the JVM rows' garbage collector as a dimension of the
//! matrix, as `--allocator` is the Rust rows': each setting is its own set of JVM flags
//! (`crate::measure::jvm::GCS`), rows labelled `jvm-lbq@parallel`, and a table of each
//! JVM row's QPS per collector with its paired ratio to the default collector and the GC
//! time per run beside it.

use super::HandoffDetail;
use crate::analysis::pairing::pair_ratios;
use crate::measure::jvm::{DEFAULT_GC, GCS};
use crate::results::{Results, Row, Status, Table};
use crate::units::group;
use clap::ValueEnum;
use serde::Serialize;

/// One value of `--jvm-gc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JvmGcArg {
    /// G1, heap fixed at twice the run's messages, pre-touched.
    G1,
    /// ParallelGC, the same heap.
    Parallel,
    /// SerialGC, the same heap.
    Serial,
    /// G1 with the JDK's own heap sizing.
    G1Default,
    /// All four.
    All,
}

/// The collector settings a list names, each once, in the order given (`all`: the order
/// of `GCS`).
pub fn expand(list: &[JvmGcArg]) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for a in list {
        let names: Vec<&'static str> = match a {
            JvmGcArg::G1 => vec!["g1"],
            JvmGcArg::Parallel => vec!["parallel"],
            JvmGcArg::Serial => vec!["serial"],
            JvmGcArg::G1Default => vec!["g1-default"],
            JvmGcArg::All => GCS.iter().map(|g| g.0).collect(),
        };
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The collector the others are compared with: the default when it ran, else the first.
pub fn reference<'a>(names: &[&'a str]) -> &'a str {
    names.iter().copied().find(|n| *n == DEFAULT_GC).unwrap_or(names[0])
}

/// A JVM row's label: the variant, its wait (when several ran), its message form when not
/// the default (`(byte-array)`), its collector when several ran (`@parallel`).
pub fn label(v: &str, wait: Option<&str>, message: &str, gc: Option<&str>) -> String {
    let mut l = v.to_string();
    if let Some(w) = wait {
        l += &format!("[{w}]");
    }
    if message != "inline" {
        l += &format!("({message})");
    }
    if let Some(gc) = gc {
        l += &format!("@{gc}");
    }
    l
}

fn detail(x: &Row) -> HandoffDetail {
    x.detail()
}

/// The table "Collector", when more than one collector ran: per JVM row and P, the QPS
/// under each collector with its ratio to the reference (paired within rounds) and the
/// median GC ms per run beside each.
pub fn table(r: &Results) -> Option<Table> {
    let mut named: Vec<String> = Vec::new();
    for g in r.results.iter().filter_map(|x| super::key(x).jvm_gc) {
        if !named.contains(&g) {
            named.push(g);
        }
    }
    let mut gcs: Vec<&str> = named.iter().map(String::as_str).collect();
    if gcs.len() < 2 {
        return None;
    }
    let reference = reference(&gcs);
    gcs.sort_by_key(|g| *g != reference);
    let mut header = vec!["variant".to_string(), "P".to_string()];
    for g in &gcs {
        header.push(format!("{g} QPS"));
        header.push(format!("{g} GC ms/run"));
        if *g != reference {
            header.push(format!("{g}/{reference} [interval]"));
        }
    }
    let (stems, ps) = super::allocators::stems_and_producers(r, |k| k.jvm_gc.clone());
    let find = |label: &str, p: u64| super::allocators::find_row(r, label, p);
    let mut rows = Vec::new();
    for stem in &stems {
        for &p in &ps {
            let label = |g: &str| format!("{stem}@{g}");
            if gcs.iter().all(|g| find(&label(g), p).is_none()) {
                continue;
            }
            let mut row = vec![stem.to_string(), p.to_string()];
            for g in &gcs {
                let x = find(&label(g), p);
                row.push(match x {
                    Some(x) if x.status != Status::Ok => x.status.word().to_string(),
                    Some(x) => detail(x).qps.map_or("–".into(), group),
                    None => "–".into(),
                });
                let gc_ms = x.and_then(|x| detail(x).jvm?.gc_ms_per_run);
                row.push(gc_ms.map_or("–".into(), |m| format!("{m:.0}")));
                if *g != reference {
                    let ratio = pair_ratios(&r.results, &label(g), &label(reference))
                        .into_iter()
                        .find(|q| super::ratio_producers(r, q) == Some(p));
                    row.push(ratio.map_or("–".into(), |q| q.text()));
                }
            }
            rows.push(row);
        }
    }
    let settings: Vec<String> =
        GCS.iter().filter(|g| gcs.contains(&g.0)).map(|g| format!("{}: {}", g.0, g.1)).collect();
    Some(Table {
        title: "Collector: the JVM rows' QPS under each collector (messages/s, median over forks)"
            .into(),
        header,
        rows,
        note: Some(format!(
            "{}. Ratio = QPS under the collector / QPS under {reference}, taken within each \
             round (the rows of one P run side by side) and summarised as the median over \
             rounds with its repeat interval (99%). GC ms/run: the median over runs of the \
             time the GarbageCollectorMXBeans count between a run's start and end.",
            settings.join("; ")
        )),
        headline: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_expand_in_order_once_and_labels_name_what_differs() {
        use JvmGcArg::*;
        assert_eq!(expand(&[Parallel, All]), ["parallel", "g1", "serial", "g1-default"]);
        assert_eq!(reference(&["parallel", DEFAULT_GC]), DEFAULT_GC, "the default when it ran");
        assert_eq!(reference(&["g1-default", "parallel"]), "g1-default", "else the first");
        assert_eq!(label("jvm-lbq", None, "inline", None), "jvm-lbq");
        assert_eq!(
            label("jvm-disruptor", Some("blocking"), "byte-array", Some("serial")),
            "jvm-disruptor[blocking](byte-array)@serial"
        );
    }
}
