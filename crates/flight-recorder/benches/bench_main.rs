//! Record-path cost: one event (and one span: new, enter, exit, close) with no subscriber,
//! with a bare `tracing_subscriber` registry, with the flight recorder's layer on it, with
//! the flight recorder's standalone subscriber (what `install_flight` installs), and one
//! event with tracing-chrome's layer (the full capture, writing to a sink), ns per call.
//! The subscribers are scoped (`with_default`), as in the lab's child processes they are
//! global; a scoped dispatcher costs a little more per call.
//! Run: `cargo bench -p flight-recorder --bench bench_main`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tracing_subscriber::layer::SubscriberExt;

fn event(i: u64) {
    handoff::counter!("queue_depth", i);
}

fn span(i: u64) {
    let _b = handoff::batch_span!(i);
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("record_path");
    g.throughput(Throughput::Elements(1));

    // Baseline: no subscriber at all (the callsite's cached interest says "never").
    g.bench_function("event/no_subscriber", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            event(std::hint::black_box(i))
        })
    });
    g.bench_function("span/no_subscriber", |b| {
        let mut i = 0u64;
        b.iter(|| {
            i += 1;
            span(std::hint::black_box(i))
        })
    });

    // The registry alone (no layer): what any tracing_subscriber stack pays per span.
    tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        g.bench_function("event/registry_only", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                event(std::hint::black_box(i))
            })
        });
        g.bench_function("span/registry_only", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                span(std::hint::black_box(i))
            })
        });
    });

    let (layer, _rec) = flight_recorder::layer(flight_recorder::Config::default()).expect("layer");
    let flight = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(flight, || {
        g.bench_function("event/flight", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                event(std::hint::black_box(i))
            })
        });
        g.bench_function("span/flight", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                span(std::hint::black_box(i))
            })
        });
    });

    let (flight, _rec) =
        flight_recorder::subscriber(flight_recorder::Config::default()).expect("subscriber");
    tracing::subscriber::with_default(flight, || {
        g.bench_function("event/flight_subscriber", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                event(std::hint::black_box(i))
            })
        });
        g.bench_function("span/flight_subscriber", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                span(std::hint::black_box(i))
            })
        });
    });

    // tracing-chrome writing to a sink: its per-event cost without disk I/O.
    let (chrome, guard) = tracing_chrome::ChromeLayerBuilder::new()
        .writer(std::io::sink())
        .include_args(true)
        .build();
    let full = tracing_subscriber::registry().with(chrome);
    tracing::subscriber::with_default(full, || {
        g.bench_function("event/tracing_chrome", |b| {
            let mut i = 0u64;
            b.iter(|| {
                i += 1;
                event(std::hint::black_box(i))
            })
        });
    });
    drop(guard);
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
