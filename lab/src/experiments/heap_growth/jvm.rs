//! `heap-growth`'s JVM rows: a library's program (RxHeapGrowth.java, ReactorHeapGrowth.java)
//! runs a buffer in one JVM per fork, each run checked again here, and the row's figures
//! from its forks.

use super::{
    fail, trace_pass, GrowthCell, GrowthOutcome, HeapGrowth, HeapGrowthDetail, JvmGrowth, BOUND,
};
use crate::experiment::CellRecord;
use crate::measure::rx::{LibSettings, RxHeapRun};
use crate::protocol::Ctx;
use crate::results::{Row, Status};

/// The JVM rows' buffers in RxBench's words (Reactor's: [`crate::measure::rx::Lib::word`];
/// it has no `observable`): (label after the library's prefix, `--buffer`, bound).
pub(super) const RX_BUFFERS: &[(&str, &str, Option<usize>)] = &[
    ("observable (unbounded)", "observable", None),
    ("on-backpressure-buffer (unbounded)", "on-backpressure-buffer", None),
    ("observe-on (prefetch 1024)", "observe-on", Some(BOUND)),
];

/// The JVM rows' heap for N: room for all 2N messages live at once (a 40-byte message, its
/// queue slot and what the source allocates beside it: 512 B a message leaves a copying
/// young generation room beside the backlog), at least 256 MiB, at most a third of RAM.
pub(super) fn rx_heap(n: u64) -> u64 {
    let want = (2 * n).saturating_mul(512).max(256 << 20);
    want.min(crate::measure::jvm::heap_cap().max(256 << 20)) >> 20 << 20
}

/// The lab's check of one JVM run: the JVM's own check, then all N messages, in order.
fn rx_check(r: &RxHeapRun, n: u64) -> Result<(), String> {
    if r.check != "ok" {
        return Err(format!("the JVM's check: {}", r.check));
    }
    if r.received != n || !r.in_order || r.terminal != "complete" {
        return Err(format!(
            "{} of {n} messages arrived (in order: {}; terminal: {})",
            r.received, r.in_order, r.terminal
        ));
    }
    if r.live_peak_bytes < 0 {
        return Err("no live-heap sample was taken".into());
    }
    Ok(())
}

/// A JVM cell: the library's heap-growth workload in one JVM, each run checked again here.
pub(super) fn run_rx(
    cell: &GrowthCell,
    rx: &LibSettings,
    ctx: &mut Ctx,
) -> Result<GrowthOutcome, String> {
    let mut extra = vec!["--buffer".to_string(), cell.variant.clone()];
    extra.extend(["--work".to_string(), cell.work.to_string()]);
    extra.extend(["--bound".to_string(), BOUND.to_string()]);
    let n = cell.messages;
    let (o, _) = crate::measure::rx::run(rx, "heap-growth", n, cell.runs, &extra, ctx)?;
    let heap = |r: &crate::measure::rx::RxRun| r.heap.clone().ok_or("the program returned no heap");
    let mut verdict = Ok(());
    for (i, r) in o.warmup.iter().chain(&o.runs).enumerate() {
        let checked = heap(r).map_err(String::from).and_then(|h| rx_check(&h, n));
        if let Err(e) = checked {
            verdict = Err(format!("run {i}: {e}"));
            break;
        }
    }
    let runs: Vec<RxHeapRun> = o.runs.iter().filter_map(|r| r.heap.clone()).collect();
    let last = runs.last().ok_or("the program returned no measured run")?;
    Ok(GrowthOutcome {
        messages: n,
        received: last.received,
        max_depth: last.max_depth,
        depth_series: last.depth_series.clone(),
        checksum: last.checksum as u64,
        elapsed_ms: o.runs.last().map_or(0.0, |r| r.ns as f64 / 1e6),
        valid: verdict.is_ok(),
        verdict: verdict.err().unwrap_or_else(|| "ok".into()),
        jvm: Some(JvmGrowth {
            allocated_bytes_per_message: o
                .runs
                .iter()
                .map(|r| r.allocated_bytes as f64 / n as f64)
                .collect(),
            gc_count: o.runs.iter().map(|r| r.gc_count).collect(),
            runs,
            rxjava_version: Some(rx.library_text(&o)),
            jvm: o.jvm,
        }),
    })
}

/// A JVM row's details from its forks (the generic row already has their status): the
/// medians over the measured runs of the valid forks.
pub(super) fn fill_rx_row(row: &mut Row, rec: &CellRecord<HeapGrowth>) {
    let js: Vec<&JvmGrowth> = rec.outcomes().filter_map(|o| o.jvm.as_ref()).collect();
    let runs: Vec<&RxHeapRun> = js.iter().flat_map(|j| &j.runs).collect();
    let med = |f: &dyn Fn(&RxHeapRun) -> f64| {
        crate::stats::median(&runs.iter().map(|r| f(r)).collect::<Vec<f64>>())
    };
    let held = |r: &RxHeapRun| (r.live_peak_bytes as f64 - r.live_before_bytes as f64).max(0.0);
    let alloc: Vec<f64> = js.iter().flat_map(|j| j.allocated_bytes_per_message.clone()).collect();
    let first = rec.forks.iter().find_map(|f| f.outcome.as_ref()?.jvm.as_ref());
    let mut d = HeapGrowthDetail {
        max_depth: med(&|r| r.max_depth as f64).map(|v| v as u64),
        messages: Some(rec.plan.cell.messages),
        jvm_live_bytes: med(&held).map(|v| v as u64),
        jvm_live_peak_bytes: med(&|r| r.live_peak_bytes as f64).map(|v| v as u64),
        jvm_live_before_bytes: med(&|r| r.live_before_bytes as f64).map(|v| v as u64),
        jvm_allocated_bytes_per_message: crate::stats::median(&alloc),
        library: first.and_then(|j| j.rxjava_version.clone()),
        jvm: first.map(|j| j.jvm.clone()),
        ..HeapGrowthDetail::default()
    };
    trace_pass(row, &mut d, rec);
    if row.status == Status::Ok && d.jvm_live_bytes.is_none() {
        fail(row, Status::Error, "no measured run of a valid fork".into());
    }
    row.set_detail(&d);
}
