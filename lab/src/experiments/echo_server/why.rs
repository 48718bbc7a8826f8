//! `echo-server`'s Why rules (see [`crate::experiments::why`]): of the rules, only
//! allocation has figures here (heap blocks per request, the heap pass).

use super::analyse::{detail, EchoDetail};
use crate::experiments::why::{self, short, Fired, Reason, Side};
use crate::results::{Figure, ReasonCell, Reasons, Results, Row, Why};

/// The figures of one row the rules read, each with its field of results.json.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// `heap.blocks_per_request` (the heap pass ran).
    pub blocks_per_request: Option<Figure>,
}

impl Figures {
    /// The figures of `results[i]`, from its detail.
    pub fn of(i: usize, d: &EchoDetail) -> Figures {
        Figures {
            blocks_per_request: d.heap.as_ref().map(|h| Figure {
                field: format!("results[{i}].heap.blocks_per_request"),
                value: h.blocks_per_request,
            }),
        }
    }
}

/// The Why section of a run.
pub fn section(r: &Results) -> Vec<Why> {
    let figures = |i: usize, x: &Row| Figures::of(i, &detail(x));
    why::section(r, figures, &[allocation])
}

/// The reasons table of a run: heap allocations per request, a column per pair.
pub fn reasons(r: &Results) -> Option<Reasons> {
    let figures = |i: usize, x: &Row| Figures::of(i, &detail(x));
    let defs =
        [Reason { reason: "heap allocs/request", rule: "allocation", cell: allocation_cell }];
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
