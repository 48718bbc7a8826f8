//! The GC rule: the share of a run the JVM spent in collections and the collections per
//! message, from Bus's own figures (GarbageCollectorMXBean deltas over each measured run,
//! `jvm.gc_ms_per_run` and `jvm.gc_count_per_run`, medians over runs) against the row's
//! median run (`median_ms`). A Rust row has no collector: its share is 0 by construction,
//! so it quotes no figure. The rule fires when one row of the pair spends at least
//! [`GC_HIGH`] of its run in collections and the other under [`GC_LOW`].

use super::{Figures, Pair};
use crate::analysis::why::{self, Fired};
use crate::results::{Figure, ReasonCell};

/// The share of the run (0..1) a row must spend collecting for the rule to name it.
pub const GC_HIGH: f64 = 0.05;
/// The share under which the other row counts as not collecting.
pub const GC_LOW: f64 = 0.01;

/// A row's collector, as far as the rules know it.
#[derive(Debug, Clone, Default)]
pub enum Collector {
    /// A Rust row: no garbage collector at all.
    #[default]
    None,
    /// A JVM row whose figures are missing (an old results.json, or no valid run).
    Unmeasured,
    /// A JVM row's figures.
    Measured(Gc),
}

/// A JVM row's collection figures, each with its results.json field.
#[derive(Debug, Clone)]
pub struct Gc {
    /// `jvm.gc_ms_per_run`: time in collections per measured run, ms.
    pub gc_ms: Figure,
    /// `jvm.gc_count_per_run`: collections per measured run.
    pub pauses: Figure,
    /// `median_ms`: the row's median run, ms.
    pub run_ms: Figure,
}

/// A side's GC share (0..1) with the figures it rests on (none for a Rust row).
fn share(f: &Figures) -> Option<(f64, Vec<Figure>)> {
    match &f.gc {
        Collector::None => Some((0.0, Vec::new())),
        Collector::Unmeasured => None,
        Collector::Measured(g) => {
            Some((g.gc_ms.value / g.run_ms.value, vec![g.gc_ms.clone(), g.run_ms.clone()]))
        }
    }
}

/// A side's collections per message, with the figures it rests on.
fn pauses_per_message(f: &Figures) -> Option<(f64, Vec<Figure>)> {
    match &f.gc {
        Collector::None => Some((0.0, Vec::new())),
        Collector::Unmeasured => None,
        Collector::Measured(g) => {
            let m = f.messages.clone()?;
            Some((g.pauses.value / m.value, vec![g.pauses.clone(), m]))
        }
    }
}

/// How one side reads in a sentence.
fn described(x: Pair<'_, '_>, share: f64) -> String {
    match &x.figures.gc {
        Collector::Measured(g) => format!(
            "{} spent {:.1}% of its run in GC ({:.0} ms of {:.0} ms per run, {:.0} collections, \
             {} per message)",
            x.label,
            share * 100.0,
            g.gc_ms.value,
            g.run_ms.value,
            g.pauses.value,
            pauses_per_message(x.figures).map_or("–".into(), |(p, _)| format!("{p:.2e}"))
        ),
        _ => format!("{} has no garbage collector (0%)", x.label),
    }
}

/// The rule (the row, then the baseline).
pub fn rule(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Fired {
    let ((a, fa), (b, fb)) = (share(row.figures)?, share(base.figures)?);
    let (hi, lo) = (a.max(b), a.min(b));
    if !(hi >= GC_HIGH && lo < GC_LOW) {
        return None;
    }
    let (first, second) = if a >= b { ((row, a), (base, b)) } else { ((base, b), (row, a)) };
    let mut figs = [fa, fb].concat();
    for x in [row, base] {
        if let Some((_, f)) = pauses_per_message(x.figures) {
            figs.extend(f);
        }
    }
    Some((
        "gc",
        format!(
            "{}; {} (rule: one row at least {:.0}% of its run in GC, the other under {:.0}%; \
             GarbageCollectorMXBean time and count over each measured run, the median over runs, \
             against the median run).",
            described(first.0, first.1),
            described(second.0, second.1),
            GC_HIGH * 100.0,
            GC_LOW * 100.0
        ),
        figs,
    ))
}

/// The reasons table's GC-share cell.
pub fn share_cell(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Option<ReasonCell> {
    let ((a, fa), (b, fb)) = (share(row.figures)?, share(base.figures)?);
    if fa.is_empty() && fb.is_empty() {
        return None; // two Rust rows: nothing to show
    }
    let text = format!("{:.1}% vs {:.1}%", a * 100.0, b * 100.0);
    Some(why::cell(text, [fa, fb].concat(), rule(row, base)))
}

/// The reasons table's collections-per-message cell.
pub fn pauses_cell(row: Pair<'_, '_>, base: Pair<'_, '_>) -> Option<ReasonCell> {
    let ((a, fa), (b, fb)) = (pauses_per_message(row.figures)?, pauses_per_message(base.figures)?);
    if fa.is_empty() && fb.is_empty() {
        return None;
    }
    let text = format!("{} vs {}", why::short(a), why::short(b));
    Some(why::cell(text, [fa, fb].concat(), rule(row, base)))
}
