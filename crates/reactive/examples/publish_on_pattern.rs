//! Where an element's latency through `publish_on` comes from: the seed's latency pipeline
//! (`Flux.range(0, N).map(stamp).publish_on(parallel(2), 256)`) with the stamp, the arrival
//! time and the stamping thread kept per element. Per run it prints the rate, the median and
//! 90th percentile latency, how many elements were stamped on the subscribing thread, and
//! the mean number of elements stamped but not yet received when one is received (the
//! queue's depth as the subscriber sees it); after the last run, every 8th element's
//! latency and stamp time (µs from the first shown), which shows the replenish cycle.
//!
//! `cargo run --release -p reactive --example publish_on_pattern -- [one|bulk] [RUNS]`

use reactive::{Error, Flux, Scheduler, Subscriber, Subscription, UNBOUNDED};
use std::sync::mpsc;
use std::thread::ThreadId;

const N: usize = 100_000;
const SHOWN: usize = 600;

/// Per element: stamp, arrival, stamped on the subscribing thread.
type Seen = (u64, u64, bool);

struct Record {
    seen: Vec<Seen>,
    one_by_one: bool,
    subscriber_thread: ThreadId,
    done: Option<mpsc::Sender<Vec<Seen>>>,
}

impl Subscriber<(u64, ThreadId)> for Record {
    fn on_subscribe<S: Subscription>(&mut self, s: &S) {
        s.request(if self.one_by_one { 1 } else { UNBOUNDED })
    }
    fn on_next<S: Subscription>(&mut self, (stamp, by): (u64, ThreadId), s: &S) {
        self.seen.push((stamp, handoff::now_ns(), by == self.subscriber_thread));
        if self.one_by_one {
            s.request(1);
        }
    }
    fn on_error(&mut self, e: Error) {
        panic!("publish_on failed: {e}");
    }
    fn on_complete(&mut self) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send(std::mem::take(&mut self.seen));
        }
    }
}

/// Mean count of elements stamped before element k arrived but after it (sampled).
fn mean_depth(seen: &[Seen]) -> f64 {
    let (mut sum, mut samples) = (0usize, 0usize);
    for k in (1000..seen.len() - 1000).step_by(97) {
        let ahead = seen[k + 1..].iter().take_while(|x| x.0 < seen[k].1).count();
        sum += ahead + 1;
        samples += 1;
    }
    sum as f64 / samples as f64
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let one_by_one = a.get(1).is_none_or(|m| m != "bulk");
    let runs: usize = a.get(2).and_then(|r| r.parse().ok()).unwrap_or(8);
    let mut last = Vec::new();
    for run in 0..runs {
        let scheduler = Scheduler::parallel(2);
        let (tx, rx) = mpsc::channel();
        let subscriber_thread = std::thread::current().id();
        let t0 = handoff::now_ns();
        Flux::range(0, N as u64)
            .map(|_| (handoff::now_ns(), std::thread::current().id()))
            .publish_on(&scheduler, reactive::DEFAULT_PREFETCH)
            .subscribe(Record {
                seen: Vec::with_capacity(N),
                one_by_one,
                subscriber_thread,
                done: Some(tx),
            });
        let seen = rx.recv().expect("the pipeline completes");
        let ns = (handoff::now_ns() - t0) as f64 / N as f64;
        let mut lat: Vec<u64> = seen.iter().map(|x| x.1 - x.0).collect();
        lat.sort_unstable();
        let on_subscriber = seen.iter().filter(|x| x.2).count();
        println!(
            "run {run}: {ns:.0} ns/element, p50 {:.1} µs, p90 {:.1} µs, {on_subscriber} stamped \
             on the subscribing thread, mean depth {:.1}",
            lat[N / 2] as f64 / 1e3,
            lat[N * 9 / 10] as f64 / 1e3,
            mean_depth(&seen)
        );
        last = seen;
    }
    let first = N / 2;
    let base = last[first].0;
    println!("element: latency µs / stamped at µs");
    for k in (first..first + SHOWN).step_by(8) {
        print!("{k}: {}/{}  ", (last[k].1 - last[k].0) / 1000, (last[k].0 - base) / 1000);
    }
    println!();
}
