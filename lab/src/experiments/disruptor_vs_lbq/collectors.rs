//! `disruptor-vs-lbq --jvm-gc`: the JVM rows' garbage collector as a dimension of the
//! matrix, as `--allocator` is the Rust rows': each setting is its own set of JVM flags
//! (`crate::measure::jvm::GCS`), rows labelled `jvm-lbq@parallel`, and a table of each
//! JVM row's QPS per collector with its paired ratio to the default collector and the GC
//! time per run beside it.

use super::dimension::Dimension;
use super::HandoffDetail;
use crate::measure::jvm::{DEFAULT_GC, GCS};
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

/// The collector dimension: per JVM row and P, the QPS under each collector with its
/// ratio to the reference (paired within rounds) and the median GC ms per run beside each.
pub const DIMENSION: Dimension = Dimension {
    title: "Collector: the JVM rows' QPS under each collector (messages/s, median over forks)",
    value: |k| k.jvm_gc.clone(),
    clear: |k| k.jvm_gc = None,
    reference,
    per_value: &[("GC ms/run", |x| {
        let gc_ms = x.detail::<HandoffDetail>().jvm.and_then(|j| j.gc_ms_per_run);
        gc_ms.map_or("–".into(), |m| format!("{m:.0}"))
    })],
    last: None,
    note: |gcs, reference| {
        let settings: Vec<String> = GCS
            .iter()
            .filter(|g| gcs.contains(&g.0))
            .map(|g| format!("{}: {}", g.0, g.1))
            .collect();
        format!(
            "{}. Ratio = QPS under the collector / QPS under {reference}, taken within each \
             round (the rows of one P run side by side) and summarised as the median over \
             rounds with its repeat interval (99%). GC ms/run: the median over runs of the \
             time the GarbageCollectorMXBeans count between a run's start and end.",
            settings.join("; ")
        )
    },
};

#[cfg(test)]
mod tests {
    use super::super::dimension::table;
    use super::*;
    use crate::results::fixture::{ratio, results, row};
    use crate::results::{Role, Row};
    use serde_json::json;

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

    /// A row of `label` at P=1 under collector `gc`, with its QPS and role.
    fn gc_row(label: &str, variant: &str, gc: &str, qps: f64, role: Role) -> Row {
        let mut x = row(label, "P=1", 1.0, None, json!({ "qps": qps }));
        let k = json!({ "variant": variant, "producers": 1, "jvm_gc": gc });
        x.key = serde_json::from_value(k).expect("a key");
        x.role = role;
        x
    }

    #[test]
    fn a_group_is_the_rest_of_the_key_and_side_rows_stay_out() {
        let rows = vec![
            gc_row("jvm-lbq@serial", "jvm-lbq", "serial", 10.0, Role::Measured),
            gc_row("jvm-lbq@parallel", "jvm-lbq", "parallel", 8.0, Role::Measured),
            gc_row("jvm-lbq@serial/own-loop", "jvm-lbq", "serial", 11.0, Role::OwnLoop),
            gc_row("jvm-disruptor@parallel", "jvm-disruptor", "parallel", 20.0, Role::Measured),
        ];
        let q = ratio("jvm-lbq@parallel", "jvm-lbq@serial", "P=1", 0.8, Some([0.7, 0.9]));
        let t = table(&results("disruptor-vs-lbq", rows, vec![q]), &DIMENSION)
            .expect("two collectors ran");
        let names: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(names, ["jvm-lbq", "jvm-disruptor"], "{:?}", t.rows);
        assert_eq!(t.header[2], "serial QPS", "the reference first: {:?}", t.header);
        assert_eq!(t.rows[0][2], "10", "{:?}", t.rows[0]);
        assert_eq!(t.rows[1][2], "–", "no serial row: {:?}", t.rows[1]);
    }
}
