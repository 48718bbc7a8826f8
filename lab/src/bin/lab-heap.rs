//! The heap-profiling child: runs one cell under `dhat::Profiler` and prints one JSON line.
//!
//! Its own binary because `dhat::Alloc` takes one global lock on every allocation even when
//! no profiler runs: the timed children (the `lab` binary) keep the system allocator.

use lab::harness::{self, CellSpec, HeapStats, Mode};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn main() {
    let code = run();
    std::process::exit(code);
}

fn run() -> i32 {
    let fail = |e: String| {
        println!("{}", serde_json::json!({"ok": false, "error": e}));
        3
    };
    let Some(arg) = std::env::args().nth(1) else {
        return fail("usage: lab-heap <cell spec JSON>".to_string());
    };
    if lab::experiments::is_spec(&arg) {
        return lab::experiments::heap_cell_main(&arg);
    }
    let spec: CellSpec = match serde_json::from_str(&arg) {
        Ok(s) => s,
        Err(e) => return fail(format!("bad cell spec: {e}")),
    };
    let Mode::Heap { file } = &spec.mode else {
        return fail("lab-heap runs heap cells only".to_string());
    };
    // The profiler writes its file when dropped, so it must drop before `process::exit`.
    let (result, stats) = {
        let _profiler = dhat::Profiler::builder().file_name(file).build();
        let result = harness::run_spec(&spec, None);
        (result, dhat::HeapStats::get())
    };
    match result {
        Ok(mut out) => {
            out.heap = Some(HeapStats {
                total_blocks: stats.total_blocks,
                total_bytes: stats.total_bytes,
                max_bytes: stats.max_bytes as u64,
                max_blocks: stats.max_blocks as u64,
                messages: spec.messages,
                valid: out.runs.iter().all(|r| r.valid),
            });
            println!("{}", serde_json::json!({"ok": true, "output": out}));
            0
        }
        Err(e) => fail(e),
    }
}
