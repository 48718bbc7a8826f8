//! What the subscribe loops' sink costs: the hand-written publisher subscribed N times with
//! the sum left in a thread-local at each `on_complete` (the lab's `SumInto` before
//! 2026-12-04) against the same loop summing into a local the loop owns (as RxBench's
//! `Sum` object is, which HotSpot keeps in a register), alternated run by run in one
//! process, with the plain loop of the same black boxes and no subscription as a floor.
//!
//! `cargo run --release -p reactive --example sink_ab -- [N] [ROUNDS]`

use reactive::bench::{hand_written_subscribe, take_sink, SumInto};
use reactive::SyncSinglePublisher;
use std::hint::black_box;
use std::time::Instant;

/// The hand-written loop as it was: each subscription's sum into the thread-local sink.
#[inline(never)]
fn thread_local_sink(n: u64) -> u64 {
    take_sink();
    let p = SyncSinglePublisher::new(1u64);
    for _ in 0..n {
        black_box(&p).subscribe(SumInto::default());
    }
    take_sink()
}

#[inline(never)]
fn floor(n: u64) -> u64 {
    let (mut acc, one) = (0u64, 1u64);
    for _ in 0..n {
        acc = acc.wrapping_add(*black_box(&one));
    }
    acc
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let n: u64 = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let rounds: usize = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(15);
    type Loop = fn(u64) -> u64;
    let cases: [(&str, Loop); 3] = [
        ("thread-local sink", thread_local_sink),
        ("local sink", hand_written_subscribe),
        ("floor", floor),
    ];
    let mut ns = vec![Vec::new(); cases.len()];
    for r in 0..rounds + 2 {
        for k in 0..cases.len() {
            let k = (k + r) % cases.len();
            let t = Instant::now();
            let got = (cases[k].1)(n);
            let per = t.elapsed().as_nanos() as f64 / n as f64;
            assert_eq!(got, n, "{}: every subscription delivers one 1", cases[k].0);
            if r >= 2 {
                ns[k].push(per);
            }
        }
    }
    println!("N = {n}, {rounds} rounds after 2 warm-up rounds: median ns per subscription");
    for (k, (name, _)) in cases.iter().enumerate() {
        let mut v = ns[k].clone();
        v.sort_by(f64::total_cmp);
        let ratio: Vec<f64> = ns[k].iter().zip(&ns[0]).map(|(x, b)| x / b).collect();
        let mut r = ratio.clone();
        r.sort_by(f64::total_cmp);
        println!(
            "{name:18} {:6.3} ns  (min {:.3}, max {:.3})  / thread-local: {:.2}",
            v[v.len() / 2],
            v[0],
            v[v.len() - 1],
            r[r.len() / 2]
        );
    }
}
