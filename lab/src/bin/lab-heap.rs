//! The heap-profiling child: runs one cell under `dhat::Profiler` and speaks the child
//! protocol (`lab::protocol`).
//!
//! Its own binary because `dhat::Alloc` takes one global lock on every allocation even when
//! no profiler runs: the timed children (the `lab` binary) keep the system allocator.

use lab::protocol::HeapTotals;
use serde_json::Value;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn profiled(
    file: &str,
    cell: &mut dyn FnMut() -> Result<Value, String>,
) -> Result<(Value, HeapTotals), String> {
    // The profiler writes its file when dropped, so it must drop before `process::exit`;
    // the totals are read before that.
    let (out, stats) = {
        let _profiler = dhat::Profiler::builder().file_name(file).build();
        let out = cell();
        (out, dhat::HeapStats::get())
    };
    let totals = HeapTotals {
        total_blocks: stats.total_blocks,
        total_bytes: stats.total_bytes,
        max_bytes: stats.max_bytes as u64,
        max_blocks: stats.max_blocks as u64,
    };
    out.map(|v| (v, totals))
}

fn main() {
    let Some(spec) = std::env::args().nth(1) else {
        eprintln!("usage: lab-heap <child spec JSON> (started by the lab's runner)");
        std::process::exit(2);
    };
    if spec == lab::machine::BUILD_ID_ARG {
        println!("{}", lab::machine::BUILD_ID);
        return;
    }
    std::process::exit(lab::cli::child::child_main(&spec, Some(profiled), "dhat"));
}
