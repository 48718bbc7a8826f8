//! 2, 4, 6 producers, one consumer, 64Ki slots, 16-byte events: alternating trials of the
//! ring with Yielding/Sleeping/Blocking and crossbeam `bounded`, each printed as
//! `M events/s / mean run length` (crossbeam: no runs, shown as 1). On two cores the
//! producers are oversubscribed; the figures show how the throughput moves with the run
//! length the consumer finds.
//!
//! Trials alternate, so the ratio of medians compares figures taken side by side, which
//! criterion's one-competitor-after-another groups cannot on a VM whose speed drifts.
//!
//! `cargo run --release -p ring --example mpsc_modes -- [trials] [events] [names]`
//! (`names`: comma-separated prefixes, e.g. `yielding,crossbeam`; all by default;
//! `PRODUCERS=1,2,4,6` in the environment sets the producer counts, 2,4,6 by default.
//! With one producer the ring still uses the multi-producer sequencer.)

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

#[derive(Clone, Copy, Default)]
struct Event {
    value: u64,
    _producer: u64,
}

fn share(n: u64, producers: u64, p: u64) -> u64 {
    n / producers + u64::from(p < n % producers)
}

/// Starts `producers` threads, each sending its share of `n` events through a sender
/// made by `make` (`send(producer id, i)`), then drops `make` (and the handles it owns),
/// releases the threads together and times until they and `finish` are done.
fn timed<S: FnMut(u64, u64) + Send + 'static>(
    n: u64,
    producers: u64,
    mut make: impl FnMut() -> S,
    finish: impl FnOnce(),
) -> f64 {
    let start = Arc::new(Barrier::new(producers as usize + 1));
    let hs: Vec<_> = (0..producers)
        .map(|id| {
            let mut send = make();
            let start = start.clone();
            thread::spawn(move || {
                start.wait();
                for i in 0..share(n, producers, id) {
                    send(id, i);
                }
            })
        })
        .collect();
    drop(make);
    start.wait();
    let t0 = Instant::now();
    for h in hs {
        h.join().expect("producer");
    }
    finish();
    t0.elapsed().as_secs_f64()
}

fn ring_trial<W: ring::WaitStrategy>(n: u64, producers: u64) -> (f64, f64) {
    let batches = Arc::new(AtomicU64::new(0));
    let b2 = batches.clone();
    let (mut sum, mut runs) = (0u64, 0u64);
    let (p0, procs) = ring::Builder::<Event, W>::new(1 << 16, Event::default)
        .handler(move |e: &Event, _seq, eob| {
            sum = std::hint::black_box(sum.wrapping_add(e.value));
            if eob {
                runs += 1;
                b2.store(runs, Relaxed);
            }
        })
        .build_multi()
        .expect("valid ring");
    let make = move || {
        let mut p = p0.clone();
        move |id, i| {
            p.publish(|e| *e = Event { value: i, _producer: id }).expect("processor alive");
        }
    };
    let secs = timed(n, producers, make, || {
        procs.join().expect("no panic");
    });
    (n as f64 / secs / 1e6, n as f64 / batches.load(Relaxed).max(1) as f64)
}

fn crossbeam_trial(n: u64, producers: u64) -> (f64, f64) {
    let (tx, rx) = crossbeam_channel::bounded::<Event>(1 << 16);
    let consumer = thread::spawn(move || {
        let mut sum = 0u64;
        while let Ok(e) = rx.recv() {
            sum = std::hint::black_box(sum.wrapping_add(e.value));
        }
    });
    let make = move || {
        let tx = tx.clone();
        move |id, i| tx.send(Event { value: i, _producer: id }).expect("consumer alive")
    };
    let secs = timed(n, producers, make, || consumer.join().expect("consumer"));
    (n as f64 / secs / 1e6, 1.0)
}

/// Parses a positive number or exits with a one-line error naming `what`.
fn number<T: std::str::FromStr + PartialOrd + Default>(s: &str, what: &str) -> T {
    match s.parse::<T>() {
        Ok(v) if v > T::default() => v,
        _ => {
            eprintln!("error: {what} must be a positive whole number, got {s:?}");
            std::process::exit(2);
        }
    }
}

fn main() {
    let names = ["yielding", "sleeping", "blocking", "crossbeam"];
    let mut args = std::env::args().skip(1);
    let trials: usize = args.next().map_or(6, |s| number(&s, "trials"));
    let n: u64 = args.next().map_or(10_000_000, |s| number(&s, "events"));
    let only: Option<String> = args.next();
    if let Some(o) = &only {
        if let Some(bad) =
            o.split(',').find(|o| o.is_empty() || !names.iter().any(|n| n.starts_with(o)))
        {
            eprintln!("error: unknown name {bad:?}; choose from {}", names.join(", "));
            std::process::exit(2);
        }
    }
    let counts: Vec<u64> = std::env::var("PRODUCERS").map_or(vec![2, 4, 6], |v| {
        v.split(',').map(|p| number(p, "each PRODUCERS count")).collect()
    });
    for producers in counts {
        let mut res: Vec<Vec<(f64, f64)>> = vec![Vec::new(); names.len()];
        for _ in 0..trials {
            for (i, name) in names.iter().enumerate() {
                if only.as_deref().is_some_and(|o| !o.split(',').any(|o| name.starts_with(o))) {
                    continue;
                }
                res[i].push(match i {
                    0 => ring_trial::<ring::Yielding>(n, producers),
                    1 => ring_trial::<ring::Sleeping>(n, producers),
                    2 => ring_trial::<ring::Blocking>(n, producers),
                    _ => crossbeam_trial(n, producers),
                });
            }
        }
        let mut medians = Vec::new();
        for (name, v) in names.iter().zip(res.iter_mut()) {
            if v.is_empty() {
                medians.push(0.0);
                continue;
            }
            let each: Vec<String> = v.iter().map(|(m, r)| format!("{m:.0}/{r:.0}")).collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            let med = v[v.len() / 2].0;
            medians.push(med);
            println!("P={producers} {name:9}: median {med:5.1} M/s  [{}]", each.join(" "));
        }
        let best = medians[..3].iter().cloned().fold(0.0, f64::max);
        if medians[3] > 0.0 {
            println!("P={producers} best ring / crossbeam = {:.2}x", best / medians[3]);
        }
    }
}
