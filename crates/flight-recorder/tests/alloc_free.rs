//! The record path allocates nothing after a thread's first event: dhat in testing mode
//! counts every allocation while this thread records 10,000 events and spans, through the
//! layer on a registry, through the standalone subscriber, and installed with
//! `install_flight` (the macros on the direct path, `tracing`'s own through the subscriber).
//!
//! It runs without libtest's harness (`harness = false`): dhat counts the allocations of
//! every thread, and libtest's main thread allocates while a test runs (the waker of the
//! channel it waits on, its map of running tests), later the busier the machine is. A
//! failed check panics, which exits with 101 like a failed test.

use flight_recorder::{layer, Config};
use tracing_subscriber::layer::SubscriberExt;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn emit(i: u64) {
    handoff::counter!("queue_depth", i);
    handoff::instant!("overflow", count = i);
    let _w = handoff::wait_span!(handoff::trace::WAIT_FULL);
    let _b = handoff::batch_span!(i % 32);
    let _p = handoff::publish_span!(handoff::trace::flow_id(0, i));
    let _h = tracing::trace_span!("handle", conn = i).entered();
    tracing::info!(i, "a message with a {} argument", "formatted");
}

/// Records 10,000 iterations under `dispatch` (the global one if `None`) after 100 of
/// warm-up, and asserts that dhat counted no allocation meanwhile and that nothing was
/// dropped.
fn check(what: &str, dispatch: Option<tracing::Dispatch>, rec: &flight_recorder::Recorder) {
    let run = || {
        // Warm-up: registers the thread (its ring, stack, span table) and the callsites,
        // and lets the registry's span slab and span stack reach their working size.
        for i in 0..100 {
            emit(i);
        }
        let before = dhat::HeapStats::get();
        for i in 0..10_000 {
            emit(i);
        }
        let after = dhat::HeapStats::get();
        dhat::assert_eq!(
            after.total_blocks,
            before.total_blocks,
            "{what}: allocations on the record path: {} blocks, {} bytes over 10,000 iterations",
            after.total_blocks - before.total_blocks,
            after.total_bytes - before.total_bytes
        );
    };
    match dispatch {
        Some(d) => tracing::dispatcher::with_default(&d, run),
        None => run(),
    }
    // The events were recorded (not dropped): 7 records per iteration, the oldest
    // overwritten.
    let dir = std::env::temp_dir().join(format!("fr-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let stats = rec.dump(&dir.join(format!("{what}.trace.json"))).expect("dump");
    assert_eq!(stats.records + stats.overwritten, 7 * 10_100, "{what}: {stats:?}");
    assert_eq!(stats.dropped, 0, "{what}: {stats:?}");
}

// One check per process: dhat allows one profiler at a time.
fn main() {
    if cfg!(miri) {
        println!("record_path_does_not_allocate_after_warm_up ... ignored: dhat's allocator captures backtraces, which Miri cannot run");
        return;
    }
    let _profiler = dhat::Profiler::builder().testing().build();
    let (layer, rec) = layer(Config::default()).expect("layer");
    let registry = tracing_subscriber::registry().with(layer);
    check("layer", Some(tracing::Dispatch::new(registry)), &rec);
    // The subscriber install_flight installs, alone.
    let (subscriber, rec) = flight_recorder::subscriber(Config::default()).expect("subscriber");
    check("subscriber", Some(tracing::Dispatch::new(subscriber)), &rec);
    // Installed: from here on the macros take the direct path.
    let rec = flight_recorder::install_flight(Config::default()).expect("install");
    check("installed", None, &rec);
    println!("record_path_does_not_allocate_after_warm_up ... ok (layer, subscriber, installed)");
}
