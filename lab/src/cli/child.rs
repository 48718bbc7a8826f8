//! The child entry points: `lab __child <spec>`, the `lab-heap` binary and the
//! `lab-cell-<allocator>` binaries (`lab-cell-mimalloc __child <spec>`). They find the
//! spec's experiment in the registry, run its cell for the pass the spec names (the
//! recorder installed around a trace pass, dhat's profiler around a heap pass) and speak
//! the protocol's lines.

use crate::protocol::{self, ChildSpec, Ctx, Extras, HeapTotals, Pass};
use serde_json::Value;

/// The `__child` entry (the `lab` binary) and the heap child (`lab-heap`): runs the spec's
/// cell with the registered experiment and prints the protocol's lines; the exit code.
/// `heap` runs a heap pass's cell under the profiler, writing the file it is given (the
/// `lab-heap` binary's; `None` in the `lab` binary, which refuses heap passes). `allocator`
/// names the binary's global allocator (its `#[global_allocator]`, or `system`): the cell's
/// code reads it from [`Ctx::allocator`] to report where it ran.
pub fn child_main(spec_json: &str, heap: Option<HeapWrap>, allocator: &'static str) -> i32 {
    let spec: ChildSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => return protocol::finish(Err(format!("bad child spec: {e}"))),
    };
    let Some(exp) = crate::experiments::find(&spec.experiment) else {
        return protocol::finish(Err(crate::experiments::unknown(&spec.experiment)));
    };
    let mut ctx = Ctx::new(spec.pass.clone());
    ctx.allocator = allocator;
    let result = match (&spec.pass, heap) {
        (Pass::Timed, _) => exp.child(&spec, &mut ctx).map(|v| (v, Extras::default())),
        (Pass::Trace { mode, file }, _) => {
            crate::profile::trace::traced(mode, file, || exp.child(&spec, &mut ctx))
                .map(|(v, note)| (v, Extras { note: Some(note), heap: None }))
        }
        (Pass::Heap { file }, Some(wrap)) => wrap(file, &mut || exp.child(&spec, &mut ctx))
            .map(|(v, totals)| (v, Extras { heap: Some(totals), note: None })),
        (Pass::Heap { .. }, None) => {
            Err("a heap pass runs in the lab-heap binary (dhat's allocator), not here".into())
        }
    };
    // The cell's own notes join the recorder's, in the pass's record.
    let kept = ctx.take_notes();
    let result = result.map(|(v, mut x)| {
        if !kept.is_empty() {
            x.note = Some(x.note.into_iter().chain(kept).collect::<Vec<_>>().join("; "));
        }
        (v, x)
    });
    protocol::finish(result)
}

/// Runs a cell under dhat's profiler writing `file`: (outcome, totals).
pub type HeapWrap = fn(
    file: &str,
    cell: &mut dyn FnMut() -> Result<Value, String>,
) -> Result<(Value, HeapTotals), String>;

/// The `main` of a `lab-cell-<allocator>` binary: `__child <spec>`, as the `lab` binary
/// takes it, run on the binary's global allocator `allocator`; the exit code.
pub fn allocator_main(allocator: &'static str) -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [child, spec] if child == "__child" => child_main(spec, None, allocator),
        [id] if id == crate::machine::BUILD_ID_ARG => {
            println!("{}", crate::machine::BUILD_ID);
            0
        }
        _ => {
            eprintln!(
                "usage: lab-cell-{allocator} __child <child spec JSON> (started by the lab's runner)"
            );
            2
        }
    }
}
