//! The physical-limit reference: the same produce/consume loop on one thread, through a
//! 64Ki-slot array, with no handoff at all.

use super::common::{Msg, CAP};
use criterion::{Criterion, Throughput};
use std::hint::black_box;
use std::time::Instant;

pub fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("base");
    g.throughput(Throughput::Elements(1));
    g.bench_function("one-thread", |b| {
        let mut buf = vec![Msg::default(); CAP];
        b.iter_custom(|iters| {
            let t0 = Instant::now();
            let mut sum = 0u64;
            let mut i = 0u64;
            while i < iters {
                // Produce a batch the size of the ring, then consume it.
                let end = (i + CAP as u64).min(iters);
                for s in i..end {
                    buf[(s as usize) & (CAP - 1)] = Msg { seq: s, producer: 0 };
                }
                // The consumer reads what the producer wrote, from memory.
                black_box(&mut buf);
                for s in i..end {
                    sum = sum.wrapping_add(buf[(s as usize) & (CAP - 1)].seq);
                }
                i = end;
            }
            black_box(sum);
            t0.elapsed()
        })
    });
    g.finish();
}
