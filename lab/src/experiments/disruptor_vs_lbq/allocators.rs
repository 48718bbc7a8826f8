//! `disruptor-vs-lbq --allocator`: the global allocator of the Rust rows' children as a
//! dimension of the matrix. Rust fixes the global allocator at compile time, so each one
//! is its own child binary: `system` is the `lab` binary itself (std's `System`, glibc
//! malloc here), the others are `lab-cell-<name>` with a `#[global_allocator]`. Heap passes
//! stay in `lab-heap` under dhat whatever the allocator: dhat counts the code's
//! allocations, which no allocator changes, not how fast an allocator serves them.

use super::dimension::Dimension;
use super::HandoffDetail;
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

/// The allocator dimension: per Rust variant and P, the QPS under each allocator with its
/// ratio to `system` (or to the first allocator when system did not run), paired within
/// rounds, and dhat's allocations per message beside them.
pub const DIMENSION: Dimension = Dimension {
    title: "Allocator: QPS under each global allocator (messages/s, median over forks)",
    value: |k| k.allocator.clone(),
    clear: |k| k.allocator = None,
    reference,
    per_value: &[],
    last: Some(("dhat allocations/msg", |rows| {
        let blocks =
            rows.iter().find_map(|x| Some(x.detail::<HandoffDetail>().heap?.blocks_per_message));
        blocks.map_or("–".into(), |b| format!("{b:.3}"))
    })),
    note: |_, reference| {
        format!(
            "Each allocator is its own child binary (system: the lab binary, std's System \
             allocator, glibc malloc here; lab-cell-mimalloc; lab-cell-jemalloc). Ratio = QPS \
             under the allocator / QPS under {reference}, taken within each round (the rows of \
             one P run side by side) and summarised as the median over rounds with its \
             repeat interval (99%). dhat allocations/msg comes from the heap pass, which \
             runs in lab-heap under dhat whatever the allocator: dhat counts the code's \
             allocations, the same under every allocator, not their cost."
        )
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_expand_in_order_once() {
        use AllocatorArg::*;
        assert_eq!(expand(&[System]), ["system"]);
        assert_eq!(expand(&[Jemalloc, All]), ["jemalloc", "system", "mimalloc"]);
        assert_eq!(binary("system"), None);
    }
}
