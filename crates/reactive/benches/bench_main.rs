//! Seed 000's measurements as criterion benches: one entry, a module per scenario.
//!
//! * `base`: the harness itself (an empty loop of the same shape), for scale.
//! * `range`: `Flux.range(1, 1M)` summed (seed: 6 ms on the JVM).
//! * `mono_just`: `Mono.just(1)` subscribed 1M times (seed: 24 ns per subscription).
//! * `hand_written`: the hand-written single-value publisher subscribed 1M times (6 ns).
//! * `publish_on`: `range(1, 1M) → publish_on(single, 256) → sum`, throughput; the same
//!   on a one-thread rayon pool (`rayon1`, feature `rayon`) beside it.
//! * `spsc_raw`: the bare SPSC ring between two busy-spinning threads (capacity 256, 1M
//!   elements): the floor of any cross-thread handoff on this machine, to read the
//!   `publish_on` figure against, measured in the same run.
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
        let schedulers = [
            ("single", Scheduler::single()),
            #[cfg(feature = "rayon")]
            ("rayon1", Scheduler::rayon(1)),
        ];
        let mut g = c.benchmark_group("publish_on");
        g.throughput(Throughput::Elements(N));
        for (name, scheduler) in &schedulers {
            g.bench_function(format!("range_1M_publish_on_{name}_256_sum"), |b| {
                b.iter(|| {
                    let s = publish_on_sum(N, scheduler, 256, Duration::from_secs(60)).unwrap();
                    assert_eq!(s, expected_range_sum(N));
                    s
                })
            });
        }
        g.finish();
        for (_, scheduler) in schedulers {
            scheduler.dispose().unwrap();
        }
    }
}

mod spsc_raw {
    use super::*;
    use reactive::spsc::SpscRing;
    use std::sync::Arc;

    fn run(n: u64) -> u64 {
        let ring = Arc::new(SpscRing::new(256));
        let producer = {
            let ring = ring.clone();
            std::thread::spawn(move || {
                for i in 1..=n {
                    let mut v = i;
                    // SAFETY: this thread is the ring's only producer.
                    while let Err(back) = unsafe { ring.push(v) } {
                        v = back;
                        std::hint::spin_loop();
                    }
                }
            })
        };
        let (mut sum, mut got) = (0u64, 0u64);
        while got < n {
            // SAFETY: this thread is the ring's only consumer.
            match unsafe { ring.pop() } {
                Some(v) => {
                    sum = sum.wrapping_add(v);
                    got += 1;
                }
                None => std::hint::spin_loop(),
            }
        }
        producer.join().unwrap();
        sum
    }

    pub fn bench(c: &mut Criterion) {
        let mut g = c.benchmark_group("spsc_raw");
        g.throughput(Throughput::Elements(N));
        g.bench_function("two_threads_cap_256_1M", |b| {
            b.iter(|| {
                let s = run(N);
                assert_eq!(s, reactive::bench::expected_range_sum(N));
                s
            })
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = config();
    targets = base::bench, range::bench, mono_just::bench, hand_written::bench, publish_on::bench,
        spsc_raw::bench
}
criterion_main!(benches);
