//! Record-path cost, ns per call, of one event (`handoff::counter!`) and one span
//! (`handoff::batch_span!`: start and end; every batch kept), measured in one run against
//! an empty loop (a criterion bench of a no-op, the harness's own cost):
//! * `no_subscriber`: no recorder at all (the callsite's cached interest says "never");
//! * `registry_only`: a bare `tracing_subscriber` registry, what any layer stack pays;
//! * `flight_layer`: the flight recorder's layer on a registry (`tracing` path);
//! * `flight_subscriber`: its standalone subscriber (`tracing` path), what
//!   `install_flight` installed before the direct path;
//! * `tracing_chrome`: tracing-chrome's layer writing to a sink, the full capture (event
//!   only: its writer thread competes for the cores);
//! * `flight_direct`: `install_flight` as the lab calls it, the macros writing straight
//!   into the recorder's rings (`handoff::trace::Sink`). Measured last: the sink, once set,
//!   takes every macro call in the process.
//!
//! The `tracing`-path subscribers are scoped (`with_default`), where the lab's are global;
//! a scoped dispatcher costs a little more per call. After criterion's own report, the
//! bench prints a table of its figures (median of criterion's samples, and net of the empty
//! loop) beside published figures of other recorders, on other machines, as anchors:
//! Tracy 2.25 ns a zone (Tracy manual); minstant's TSC read 10.5 ns vs 26.9 ns for
//! `std::time::Instant` (minstant's README); fastrace ~30 ns a span (fastrace's README);
//! puffin ~60 ns a scope, ~1 ns when off (puffin's README); LTTng-UST 181–225 ns an event
//! (LTTng-UST measurements).
//! Run: `cargo bench -p flight-recorder --bench bench_main -- --warm-up-time 1
//! --measurement-time 2`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use tracing_subscriber::layer::SubscriberExt;

fn event(i: u64) {
    handoff::counter!("queue_depth", i);
}

fn span(i: u64) {
    let _b = handoff::batch_span!(i);
}

fn empty(i: u64) {
    black_box(i);
}

/// Per bench id: each timed batch's calls and the time they took (criterion's warm-up and
/// samples).
static TOTALS: Mutex<BTreeMap<String, Vec<(u64, Duration)>>> = Mutex::new(BTreeMap::new());

/// Benches `f` as `id`, timing criterion's iterations itself so the summary can read them.
fn timed(g: &mut BenchmarkGroup<'_, WallTime>, id: &str, f: impl Fn(u64)) {
    g.bench_function(id, |b| {
        b.iter_custom(|iters| {
            let t0 = Instant::now();
            for i in 0..iters {
                f(black_box(i));
            }
            let took = t0.elapsed();
            let mut totals = TOTALS.lock().unwrap();
            totals.entry(id.to_string()).or_default().push((iters, took));
            took
        })
    });
}

/// Benches `event` (and `span` unless `event_only`) as `event/<name>`, `span/<name>` under
/// the current default subscriber.
fn calls(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, event_only: bool) {
    timed(g, &format!("event/{name}"), event);
    if !event_only {
        timed(g, &format!("span/{name}"), span);
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("record_path");
    g.throughput(Throughput::Elements(1));

    timed(&mut g, "empty_loop", empty);
    // The clock reads a record is built around: the TSC (what the recorder reads where the
    // kernel keeps time with it) and `Instant::now` (its fallback).
    #[cfg(target_arch = "x86_64")]
    timed(&mut g, "clock/tsc", |_| {
        // SAFETY: RDTSC exists on every x86_64 CPU and only reads the time-stamp counter.
        black_box(unsafe { core::arch::x86_64::_rdtsc() });
    });
    timed(&mut g, "clock/instant", |_| {
        black_box(Instant::now());
    });

    calls(&mut g, "no_subscriber", false);

    tracing::subscriber::with_default(tracing_subscriber::registry(), || {
        calls(&mut g, "registry_only", false)
    });

    let (layer, _rec) = flight_recorder::layer(flight_recorder::Config::default()).expect("layer");
    let flight = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(flight, || calls(&mut g, "flight_layer", false));

    let (flight, _rec) =
        flight_recorder::subscriber(flight_recorder::Config::default()).expect("subscriber");
    tracing::subscriber::with_default(flight, || calls(&mut g, "flight_subscriber", false));

    let (chrome, guard) = tracing_chrome::ChromeLayerBuilder::new()
        .writer(std::io::sink())
        .include_args(true)
        .build();
    let full = tracing_subscriber::registry().with(chrome);
    tracing::subscriber::with_default(full, || calls(&mut g, "tracing_chrome", true));
    drop(guard);

    // Last: from here on every macro call in this process takes the direct path.
    let rec = flight_recorder::install_flight(flight_recorder::Config::default()).expect("install");
    calls(&mut g, "flight_direct", false);
    g.finish();
    // Check what was timed: the direct path recorded (it was not dropped or bypassed).
    let dir = std::env::temp_dir().join(format!("fr-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let stats = rec.dump(&dir.join("direct.trace.json")).expect("dump");
    assert!(stats.records > 0 && stats.dropped == 0, "direct path not recording: {stats:?}");
    let _ = std::fs::remove_dir_all(&dir);
    summary();
}

/// Median over `id`'s timed batches of ns per call, if it ran: robust to the batches a
/// busy machine slowed down, which a mean is not.
fn median_ns(totals: &BTreeMap<String, Vec<(u64, Duration)>>, id: &str) -> Option<f64> {
    let mut per: Vec<f64> = totals
        .get(id)?
        .iter()
        .filter(|&&(n, _)| n > 0)
        .map(|&(n, t)| t.as_nanos() as f64 / n as f64)
        .collect();
    per.sort_by(f64::total_cmp);
    per.get(per.len() / 2).copied()
}

fn summary() {
    let totals = TOTALS.lock().unwrap();
    let base = median_ns(&totals, "empty_loop").unwrap_or(0.0);
    let cell = |id: &str| match median_ns(&totals, id) {
        Some(ns) => format!("{ns:>7.2} ({:>7.2})", ns - base),
        None => format!("{:>17}", "-"),
    };
    println!("\nrecord path, ns per call: median over criterion's samples (net of the empty loop)");
    println!("{:<46} {:>17} {:>17}", "path", "event", "span");
    println!("{:<46} {:>17} {:>17}", "empty loop (no-op)", format!("{base:>7.2}"), "");
    println!("{:<46} {}", "clock read: TSC (rdtsc)", cell("clock/tsc"));
    println!("{:<46} {}", "clock read: std::time::Instant::now", cell("clock/instant"));
    for (name, what) in [
        ("flight_direct", "flight recorder, direct (install_flight)"),
        ("flight_subscriber", "flight recorder subscriber, tracing path"),
        ("flight_layer", "flight recorder layer on a registry"),
        ("registry_only", "registry, no layer"),
        ("no_subscriber", "no subscriber"),
        ("tracing_chrome", "tracing-chrome (full capture, to a sink)"),
    ] {
        let span = cell(&format!("span/{name}"));
        println!("{what:<46} {} {span}", cell(&format!("event/{name}")));
    }
    println!(
        "anchors (published, other machines): Tracy 2.25 ns a zone; minstant's TSC read \
         10.5 ns vs 26.9 ns for std::time::Instant;\n  fastrace ~30 ns a span; puffin ~60 ns \
         a scope (~1 ns off); LTTng-UST 181-225 ns an event"
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
