//! `echo-server`'s Why rules (see [`crate::analysis::why`]): allocation (heap blocks per
//! request, the heap pass; Rust rows only), the server threads' CPU time per request (every
//! echo server, the JVM ones included: schedstat of the `echo-*` threads over the fork), and
//! GC (a JVM server's collections as a share of its measured runs).

use super::detail::{detail, EchoDetail};
use crate::analysis::why::{self, short, Fired, Reason, Side};
use crate::results::{Figure, ReasonCell, Reasons, Results, Row, Why};

/// The figures of one row the rules read, each with its field of results.json.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// `heap.blocks_per_request` (the heap pass ran).
    pub blocks_per_request: Option<Figure>,
    /// `server_cpu_us_per_request`.
    pub server_cpu: Option<Figure>,
    /// `gc_pct_of_run` (JVM servers).
    pub gc_pct: Option<Figure>,
}

/// The CPU rule's threshold: the server threads' CPU per request differs this many times.
pub const CPU_FACTOR: f64 = 1.5;

/// The GC rule's thresholds: one side at least this % of its runs in GC ...
pub const GC_HIGH_PCT: f64 = 5.0;
/// ... and the other under this % (a Rust row has no collector: 0).
pub const GC_LOW_PCT: f64 = 1.0;

impl Figures {
    /// The figures of `results[i]`, from its detail.
    pub fn of(i: usize, d: &EchoDetail) -> Figures {
        Figures {
            blocks_per_request: d.heap.as_ref().map(|h| Figure {
                field: format!("results[{i}].heap.blocks_per_request"),
                value: h.blocks_per_request,
            }),
            server_cpu: d.server_cpu_us_per_request.map(|v| Figure {
                field: format!("results[{i}].server_cpu_us_per_request"),
                value: v,
            }),
            gc_pct: d
                .gc_pct_of_run
                .map(|v| Figure { field: format!("results[{i}].gc_pct_of_run"), value: v }),
        }
    }
}

/// The Why section of a run.
pub fn section(r: &Results) -> Vec<Why> {
    let figures = |i: usize, x: &Row| Figures::of(i, &detail(x));
    why::section(r, figures, &[allocation, server_cpu, gc])
}

/// The reasons table of a run: heap allocations per request, a column per pair.
pub fn reasons(r: &Results) -> Option<Reasons> {
    let figures = |i: usize, x: &Row| Figures::of(i, &detail(x));
    let defs = [
        Reason { reason: "heap allocs/request", rule: "allocation", cell: allocation_cell },
        Reason { reason: "server threads CPU µs/request", rule: "cpu-time", cell: cpu_cell },
    ];
    why::reasons(r, figures, |_| true, &defs)
}

fn allocation_cell(row: &Side<'_, Figures>, base: &Side<'_, Figures>) -> Option<ReasonCell> {
    let (fa, fb) =
        (row.figures.blocks_per_request.clone()?, base.figures.blocks_per_request.clone()?);
    let text = format!("{} vs {}", short(fa.value), short(fb.value));
    Some(why::cell(text, vec![fa, fb], allocation(row, base)))
}

fn allocation(row: &Side<'_, Figures>, base: &Side<'_, Figures>) -> Fired {
    why::allocation(
        (row.label, row.figures.blocks_per_request.as_ref()),
        (base.label, base.figures.blocks_per_request.as_ref()),
        "request",
    )
}

fn cpu_cell(row: &Side<'_, Figures>, base: &Side<'_, Figures>) -> Option<ReasonCell> {
    let (fa, fb) = (row.figures.server_cpu.clone()?, base.figures.server_cpu.clone()?);
    let text = format!("{} vs {}", short(fa.value), short(fb.value));
    Some(why::cell(text, vec![fa, fb], server_cpu(row, base)))
}

/// The server threads' CPU time per request differs at least [`CPU_FACTOR`]×.
fn server_cpu(row: &Side<'_, Figures>, base: &Side<'_, Figures>) -> Fired {
    let (fa, fb) = (row.figures.server_cpu.as_ref()?, base.figures.server_cpu.as_ref()?);
    let (a, b) = (fa.value, fb.value);
    let (hi, lo) = (a.max(b), a.min(b));
    (lo > 0.0 && hi / lo >= CPU_FACTOR).then(|| {
        (
            "cpu-time",
            format!(
                "the server's own threads spend {a:.1} µs of CPU per request in {}, {b:.1} µs \
                 in {} ({:.2}×; rule: CPU per request of the echo-* threads differs at least \
                 {CPU_FACTOR}×; schedstat over the fork).",
                row.label,
                base.label,
                a / b
            ),
            vec![fa.clone(), fb.clone()],
        )
    })
}

/// One side spends at least [`GC_HIGH_PCT`]% of its measured runs in GC, the other under
/// [`GC_LOW_PCT`]% (a side without a collector counts as 0).
fn gc(row: &Side<'_, Figures>, base: &Side<'_, Figures>) -> Fired {
    let pct = |s: &Side<'_, Figures>| s.figures.gc_pct.as_ref().map_or(0.0, |f| f.value);
    let (a, b) = (pct(row), pct(base));
    let fires = (a >= GC_HIGH_PCT && b < GC_LOW_PCT) || (b >= GC_HIGH_PCT && a < GC_LOW_PCT);
    fires.then(|| {
        let figs: Vec<Figure> =
            [&row.figures.gc_pct, &base.figures.gc_pct].into_iter().flatten().cloned().collect();
        (
            "gc",
            format!(
                "{} spends {a:.1}% of its measured runs in GC pauses, {} {b:.1}% (rule: at least \
                 {GC_HIGH_PCT}% against under {GC_LOW_PCT}%; GarbageCollectorMXBean between \
                 the run marks; no collector counts 0).",
                row.label, base.label
            ),
            figs,
        )
    })
}
