//! What the subscribe loops' sink costs: the hand-written publisher subscribed N times with
//! the sum left in a thread-local at each `on_complete` (the lab's `SumInto` before
//! 2026-12-04) against the same loop summing into a local the loop owns (as RxBench's
//! `Sum` object is, which HotSpot keeps in a register), alternated run by run in one
//! process, with the plain loop of the same black boxes and no subscription as a floor.
//!
//! `cargo run --release -p reactive --example sink_ab -- [N] [ROUNDS]`

use reactive::{Error, Subscriber, Subscription, SyncSinglePublisher};
use std::cell::Cell;
use std::hint::black_box;
use std::time::Instant;

thread_local! {
    static SINK: Cell<u64> = const { Cell::new(0) };
}

#[derive(Default)]
struct ToThreadLocal {
    sum: u64,
}

impl Subscriber<u64> for ToThreadLocal {
    #[inline]
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        s.request(u64::MAX)
    }
    #[inline]
    fn on_next<S: Subscription>(&mut self, item: u64, _s: &S) {
        self.sum = self.sum.wrapping_add(black_box(item));
    }
    fn on_error(&mut self, error: Error) {
        panic!("unexpected on_error: {error}")
    }
    #[inline]
    fn on_complete(&mut self) {
        SINK.with(|c| c.set(c.get().wrapping_add(self.sum)));
    }
}

struct ToLocal<'a> {
    sum: u64,
    into: &'a mut u64,
}

impl Subscriber<u64> for ToLocal<'_> {
    #[inline]
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        s.request(u64::MAX)
    }
    #[inline]
    fn on_next<S: Subscription>(&mut self, item: u64, _s: &S) {
        self.sum = self.sum.wrapping_add(black_box(item));
    }
    fn on_error(&mut self, error: Error) {
        panic!("unexpected on_error: {error}")
    }
    #[inline]
    fn on_complete(&mut self) {
        *self.into = self.into.wrapping_add(self.sum);
    }
}

#[inline(never)]
fn thread_local_sink(n: u64) -> u64 {
    SINK.with(|c| c.set(0));
    let p = SyncSinglePublisher::new(1u64);
    for _ in 0..n {
        black_box(&p).subscribe(ToThreadLocal::default());
    }
    SINK.with(|c| c.replace(0))
}

#[inline(never)]
fn local_sink(n: u64) -> u64 {
    let mut acc = 0u64;
    let p = SyncSinglePublisher::new(1u64);
    for _ in 0..n {
        black_box(&p).subscribe(ToLocal { sum: 0, into: &mut acc });
    }
    acc
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
    let cases: [(&str, Loop); 3] =
        [("thread-local sink", thread_local_sink), ("local sink", local_sink), ("floor", floor)];
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
