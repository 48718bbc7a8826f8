//! One producer, one BusySpin consumer, 64Ki slots, 16-byte events: alternating trials of
//! this crate and the `disruptor` crate, each printed as `M events/s / mean run length`
//! (events per batch the processor took). On two cores the throughput of both is
//! bimodal and follows the run length: a consumer right behind its producer takes short
//! runs and shares slot lines with it. Criterion's medians hide that; this shows it.
//!
//! `cargo run --release -p ring --example spsc_modes -- [trials] [events]`

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

#[derive(Clone, Copy, Default)]
struct Event {
    value: u64,
    _pad: u64,
}

/// A handler that sums the events and counts the batches (runs) it is given.
fn counting_handler(batches: Arc<AtomicU64>) -> impl FnMut(&Event, bool) + Send + 'static {
    let (mut sum, mut runs) = (0u64, 0u64);
    move |e, end_of_batch| {
        sum = std::hint::black_box(sum.wrapping_add(e.value));
        if end_of_batch {
            runs += 1;
            batches.store(runs, Relaxed);
        }
    }
}

/// (M events/s, mean run length) of one trial.
fn result(n: u64, t0: Instant, batches: &AtomicU64) -> (f64, f64) {
    let secs = t0.elapsed().as_secs_f64();
    (n as f64 / secs / 1e6, n as f64 / batches.load(Relaxed).max(1) as f64)
}

fn this_crate(n: u64) -> (f64, f64) {
    let batches = Arc::new(AtomicU64::new(0));
    let mut h = counting_handler(batches.clone());
    let (mut p, procs) = ring::Builder::<Event, ring::BusySpin>::new(1 << 16, Event::default)
        .handler(move |e: &Event, _seq, eob| h(e, eob))
        .build_single()
        .expect("valid ring");
    let t0 = Instant::now();
    for i in 0..n {
        p.publish(|e| e.value = i).expect("processor alive");
    }
    drop(p);
    procs.join().expect("no panic");
    result(n, t0, &batches)
}

fn disruptor_crate(n: u64) -> (f64, f64) {
    use disruptor::{build_single_producer, BusySpin, Producer};
    let batches = Arc::new(AtomicU64::new(0));
    let mut h = counting_handler(batches.clone());
    let mut p = build_single_producer(1 << 16, Event::default, BusySpin)
        .handle_events_with(move |e: &Event, _seq: i64, eob: bool| h(e, eob))
        .build();
    let t0 = Instant::now();
    for i in 0..n {
        p.publish(|e| e.value = i);
    }
    drop(p); // joins the processor
    result(n, t0, &batches)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().map_or(10, |s| s.parse().expect("trials: a number"));
    let n: u64 = args.next().map_or(20_000_000, |s| s.parse().expect("events: a number"));
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        ours.push(this_crate(n));
        theirs.push(disruptor_crate(n));
    }
    for (name, v) in [("ring           ", &mut ours), ("disruptor crate", &mut theirs)] {
        let each: Vec<String> = v.iter().map(|(m, r)| format!("{m:.0}/{r:.0}")).collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        println!("{name}: median {:.0} M/s  [{}]", v[v.len() / 2].0, each.join(" "));
    }
}
