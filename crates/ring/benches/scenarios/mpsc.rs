//! 2, 4 and 6 producers, one consumer (oversubscribed on a 2-core machine): the ring with
//! each wait strategy, the `disruptor` crate (busy spin) and crossbeam `bounded`.

use super::common::{crossbeam, disruptor_crate, ring};
use criterion::{BenchmarkId, Criterion, Throughput};
use ring::{Blocking, BusySpin, Sleeping, Yielding};
use std::time::Duration;

pub fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("mpsc");
    g.throughput(Throughput::Elements(1));
    // Oversubscribed runs swing with the VM's phases (crossbeam's rate more than doubled
    // between samples; figures: docs/design-figures.md): 20 samples over 3 s each, rather
    // than the file's 10 over 1 s, so every competitor's median spans several phases.
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    for p in [2usize, 4, 6] {
        g.bench_with_input(BenchmarkId::new("ring/yielding", p), &p, |b, &p| {
            b.iter_custom(|n| ring::<Yielding>(n, p))
        });
        g.bench_with_input(BenchmarkId::new("ring/sleeping", p), &p, |b, &p| {
            b.iter_custom(|n| ring::<Sleeping>(n, p))
        });
        g.bench_with_input(BenchmarkId::new("ring/blocking", p), &p, |b, &p| {
            b.iter_custom(|n| ring::<Blocking>(n, p))
        });
        g.bench_with_input(BenchmarkId::new("ring/busy-spin", p), &p, |b, &p| {
            b.iter_custom(|n| ring::<BusySpin>(n, p))
        });
        g.bench_with_input(BenchmarkId::new("crossbeam/bounded", p), &p, |b, &p| {
            b.iter_custom(|n| crossbeam(n, p))
        });
        g.bench_with_input(BenchmarkId::new("disruptor-crate/busy-spin", p), &p, |b, &p| {
            b.iter_custom(|n| disruptor_crate(n, p))
        });
    }
    g.finish();
}
