//! One producer, one consumer: the ring with each wait strategy, the `disruptor` crate
//! (busy spin) and crossbeam `bounded`, side by side in one group.

use super::common::{crossbeam, disruptor_crate, ring};
use criterion::{Criterion, Throughput};
use ring::{Blocking, BusySpin, Sleeping, Yielding};

pub fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("spsc");
    g.throughput(Throughput::Elements(1));
    g.bench_function("ring/busy-spin", |b| b.iter_custom(|n| ring::<BusySpin>(n, 1)));
    g.bench_function("disruptor-crate/busy-spin", |b| b.iter_custom(|n| disruptor_crate(n, 1)));
    g.bench_function("crossbeam/bounded", |b| b.iter_custom(|n| crossbeam(n, 1)));
    g.bench_function("ring/yielding", |b| b.iter_custom(|n| ring::<Yielding>(n, 1)));
    g.bench_function("ring/sleeping", |b| b.iter_custom(|n| ring::<Sleeping>(n, 1)));
    g.bench_function("ring/blocking", |b| b.iter_custom(|n| ring::<Blocking>(n, 1)));
    g.finish();
}
