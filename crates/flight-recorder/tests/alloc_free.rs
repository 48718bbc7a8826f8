//! The record path allocates nothing after a thread's first event: dhat in testing mode
//! counts every allocation while this thread records 10,000 events and spans.

use flight_recorder::{layer, Config};
use tracing_subscriber::layer::SubscriberExt;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

fn emit(i: u64) {
    handoff::counter!("queue_depth", i);
    handoff::instant!("overflow", count = i);
    let _w = handoff::wait_span!(handoff::trace::WAIT_FULL);
    let _b = handoff::batch_span!(i % 32);
    let _p = tracing::trace_span!("publish", flow = handoff::trace::flow_id(0, i)).entered();
    tracing::info!(i, "a message with a {} argument", "formatted");
}

#[test]
fn record_path_does_not_allocate_after_warm_up() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let (layer, rec) = layer(Config::default()).expect("layer");
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
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
            "allocations on the record path: {} blocks, {} bytes over 10,000 iterations",
            after.total_blocks - before.total_blocks,
            after.total_bytes - before.total_bytes
        );
    });
    // The events were recorded (not dropped): 6 records per iteration, the oldest
    // overwritten.
    let dir = std::env::temp_dir().join(format!("fr-alloc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let stats = rec.dump(&dir.join("alloc.trace.json")).expect("dump");
    assert_eq!(stats.events + stats.overwritten, 6 * 10_100, "{stats:?}");
    assert_eq!(stats.dropped, 0, "{stats:?}");
}
