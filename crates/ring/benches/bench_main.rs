//! Criterion benches of the ring against the `disruptor` crate (4.x) and crossbeam-channel
//! `bounded`: same 16-byte `Copy` message, same capacity (64Ki), same consumer work (sum a
//! field, count), one message per publish for everyone (no batch publishing).
//!
//! `cargo bench -p ring` runs everything briefly (sample size 10, 1 s measurement; the
//! oversubscribed MPSC group 20 samples over 3 s, about 70 s in all);
//! `cargo bench -p ring -- --test` runs each routine once as a smoke test.

use criterion::{criterion_group, criterion_main, Criterion};
use std::time::Duration;

mod scenarios;

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = scenarios::base::bench, scenarios::spsc::bench, scenarios::mpsc::bench
}
criterion_main!(benches);
