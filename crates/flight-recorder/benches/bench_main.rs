//! Record-path cost: one event (and one span: new, enter, exit, close) with no subscriber,
//! with a bare `tracing_subscriber` registry, with the flight recorder's layer on it, with
//! the flight recorder's standalone subscriber (what `install_flight` installs), and one
//! event with tracing-chrome's layer (the full capture, writing to a sink), ns per call.
//! The subscribers are scoped (`with_default`), as in the lab's child processes they are
//! global; a scoped dispatcher costs a little more per call.
//! Run: `cargo bench -p flight-recorder --bench bench_main`.

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use tracing_subscriber::layer::SubscriberExt;

fn event(i: u64) {
    handoff::counter!("queue_depth", i);
}

fn span(i: u64) {
    let _b = handoff::batch_span!(i);
}

/// Benches `event` (and `span` unless `event_only`) as `event/<name>`, `span/<name>` under
/// the current default subscriber.
fn calls(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, event_only: bool) {
    g.bench_function(format!("event/{name}"), |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            event(std::hint::black_box(i))
        })
    });
    if !event_only {
        g.bench_function(format!("span/{name}"), |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                span(std::hint::black_box(i))
            })
        });
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("record_path");
    g.throughput(Throughput::Elements(1));

    // Baseline: no subscriber at all (the callsite's cached interest says "never").
    calls(&mut g, "no_subscriber", false);

    // The registry alone (no layer): what any tracing_subscriber stack pays per span.
    tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        calls(&mut g, "registry_only", false)
    });

    let (layer, _rec) = flight_recorder::layer(flight_recorder::Config::default()).expect("layer");
    let flight = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(flight, || calls(&mut g, "flight", false));

    let (flight, _rec) =
        flight_recorder::subscriber(flight_recorder::Config::default()).expect("subscriber");
    tracing::subscriber::with_default(flight, || calls(&mut g, "flight_subscriber", false));

    // tracing-chrome writing to a sink: its per-event cost without disk I/O.
    let (chrome, guard) = tracing_chrome::ChromeLayerBuilder::new()
        .writer(std::io::sink())
        .include_args(true)
        .build();
    let full = tracing_subscriber::registry().with(chrome);
    tracing::subscriber::with_default(full, || calls(&mut g, "tracing_chrome", true));
    drop(guard);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
