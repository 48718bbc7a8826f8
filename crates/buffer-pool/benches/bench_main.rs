//! Seed 004's ByteBufAllocator table: allocate + free of 0…65536 bytes, pooled against the
//! global allocator, reported as elements (alloc/free cycles) per second.

use buffer_pool::{pooled_cycle, unpooled_cycle, Pool, SEED_SIZES};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::time::Duration;

fn alloc_and_free(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc_and_free");
    g.throughput(Throughput::Elements(1));
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(1));
    for size in SEED_SIZES {
        let pool = Pool::default();
        g.bench_with_input(BenchmarkId::new("pooled", size), &size, |b, &n| {
            b.iter(|| pooled_cycle(&pool, n))
        });
        g.bench_with_input(BenchmarkId::new("unpooled", size), &size, |b, &n| {
            b.iter(|| unpooled_cycle(n))
        });
    }
    g.finish();
}

criterion_group!(benches, alloc_and_free);
criterion_main!(benches);
