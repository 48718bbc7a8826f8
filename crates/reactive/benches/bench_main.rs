//! Seed 000's measurements as criterion benches: one entry, a module per scenario.
//!
//! * `base`: the harness itself (an empty loop of the same shape), for scale.
//! * `range`: `Flux.range(1, 1M)` summed (seed: 6 ms on the JVM).
//! * `mono_just`: `Mono.just(1)` subscribed 1M times (seed: 24 ns per subscription).
//! * `hand_written`: the hand-written single-value publisher subscribed 1M times (6 ns).
//! * `publish_on`: `range(1, 1M) → publish_on(single, 256) → sum`, throughput.
//!
//! Nothing can be optimised away: every workload returns a value computed from all of its
//! elements (the sum, or the count of delivered elements), and each iteration asserts it
//! equals the expected value; inputs pass through `black_box`.
//!
//! `Throughput::Elements` makes criterion report elements (or subscriptions) per second;
//! time per iteration / 1M gives the per-element / per-subscription cost.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;

const N: u64 = 1_000_000;

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}

mod base {
    use super::*;
    use std::hint::black_box;

    /// The same loop shape with no reactive machinery: a plain sum of 1..=N.
    pub fn bench(c: &mut Criterion) {
        let mut g = c.benchmark_group("base");
        g.throughput(Throughput::Elements(N));
        g.bench_function("plain_loop_sum_1M", |b| {
            b.iter(|| {
                let n = black_box(N);
                let mut s = 0u64;
                for i in 1..=n {
                    s = s.wrapping_add(black_box(i));
                }
                assert_eq!(s, reactive::bench::expected_range_sum(N));
                s
            })
        });
        g.finish();
    }
}

mod range {
    use super::*;
    use reactive::bench::{expected_range_sum, range_sum};

    pub fn bench(c: &mut Criterion) {
        let mut g = c.benchmark_group("range");
        g.throughput(Throughput::Elements(N));
        g.bench_function("flux_range_1M_sum", |b| {
            b.iter(|| {
                let s = range_sum(N);
                assert_eq!(s, expected_range_sum(N));
                s
            })
        });
        g.finish();
    }
}

mod mono_just {
    use super::*;

    pub fn bench(c: &mut Criterion) {
        let mut g = c.benchmark_group("mono_just");
        g.throughput(Throughput::Elements(N));
        g.bench_function("subscribe_x1M", |b| {
            b.iter(|| {
                let s = reactive::bench::mono_just_subscribe(N);
                assert_eq!(s, N, "every subscription delivered its element");
                s
            })
        });
        g.finish();
    }
}

mod hand_written {
    use super::*;

    pub fn bench(c: &mut Criterion) {
        let mut g = c.benchmark_group("hand_written");
        g.throughput(Throughput::Elements(N));
        g.bench_function("subscribe_x1M", |b| {
            b.iter(|| {
                let s = reactive::bench::hand_written_subscribe(N);
                assert_eq!(s, N, "every subscription delivered its element");
                s
            })
        });
        g.finish();
    }
}

mod publish_on {
    use super::*;
    use reactive::bench::{expected_range_sum, publish_on_sum};
    use reactive::Scheduler;

    pub fn bench(c: &mut Criterion) {
        let single = Scheduler::single();
        let mut g = c.benchmark_group("publish_on");
        g.throughput(Throughput::Elements(N));
        g.bench_function("range_1M_publish_on_single_256_sum", |b| {
            b.iter(|| {
                let s = publish_on_sum(N, &single, 256, Duration::from_secs(60)).unwrap();
                assert_eq!(s, expected_range_sum(N));
                s
            })
        });
        g.finish();
        single.dispose().unwrap();
    }
}

criterion_group! {
    name = benches;
    config = config();
    targets = base::bench, range::bench, mono_just::bench, hand_written::bench, publish_on::bench
}
criterion_main!(benches);
