//! The ring through its Disruptor API (`Builder`, `publish` in place, one handler) against
//! the same ring through the lab's `Handoff` adapter (owned messages moved in with `send`,
//! moved out with `recv_batch` on a consumer thread of the caller's), both with the lab's
//! 40-byte `handoff::Message<16>` and its per-message check, alternating trials, Blocking
//! wait, 64Ki slots. Prints M msgs/s and each side's CPU ms per run (user + system, all
//! threads) with its voluntary and involuntary context switches.
//!
//! What it is for: telling the adapter's cost from the lab harness's when the lab's ring row
//! runs below its own loop (the lab's `ring/own-loop` row is the first shape here).
//!
//! `cargo run --release -p ring --example adapter_gap -- [trials] [messages] [producers]`
//! (defaults 7, 8Mi, 2; `BATCH=n` in the environment sets the adapter side's
//! `recv_batch` bound, 65536 by default).

use handoff::{Checker, Consumer, Handoff, Message, Producer};
use ring::{Blocking, RingHandoff};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

type M = Message<16>;

fn per(n: u64, p: usize) -> Vec<u64> {
    (0..p as u64).map(|i| n / p as u64 + u64::from(i < n % p as u64)).collect()
}

/// Process CPU ms (user + system) and context switches (voluntary, involuntary) so far.
fn usage() -> (f64, i64, i64) {
    // SAFETY: `getrusage` fills the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a `rusage`.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
    (ms(u.ru_utime) + ms(u.ru_stime), u.ru_nvcsw, u.ru_nivcsw)
}

/// Producers of `per`, each making the lab's messages and handing each to `send`.
fn producers<T: Send + 'static>(
    per: &[u64],
    txs: Vec<T>,
    barrier: &Arc<Barrier>,
    send: fn(&mut T, M) -> bool,
) -> Vec<thread::JoinHandle<()>> {
    per.iter()
        .zip(txs)
        .enumerate()
        .map(|(i, (&n, mut tx))| {
            let barrier = barrier.clone();
            thread::spawn(move || {
                barrier.wait();
                for seq in 0..n {
                    if !send(&mut tx, M::new(i as u32, seq)) {
                        panic!("send failed");
                    }
                }
            })
        })
        .collect()
}

fn own(per: &[u64]) -> f64 {
    let total: u64 = per.iter().sum();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let mut checker = Checker::new(per.len());
    let b = ring::Builder::<M, Blocking>::new(65536, M::default).handler(move |m: &M, _s, _e| {
        checker.observe(m);
        if checker.received() == total {
            let _ = done_tx.send((Instant::now(), checker.clone()));
        }
    });
    let (tx, procs) = b.build_multi().expect("ring");
    let txs: Vec<_> = per.iter().map(|_| tx.clone()).collect();
    drop(tx);
    let barrier = Arc::new(Barrier::new(per.len() + 1));
    let hs = producers(per, txs, &barrier, |tx, m| tx.publish(|e| *e = m).is_ok());
    barrier.wait();
    let t0 = Instant::now();
    for h in hs {
        h.join().expect("producer");
    }
    procs.join().expect("processor");
    let (end, checker) = done_rx.recv().expect("end");
    assert!(checker.verdict::<16>(per).ok());
    end.duration_since(t0).as_secs_f64()
}

fn adapter(per: &[u64], batch: usize) -> f64 {
    let (txs, mut rx) = RingHandoff::<Blocking>::new(65536).open::<M>(per.len()).expect("ring");
    let barrier = Arc::new(Barrier::new(per.len() + 2));
    let hs = producers(per, txs, &barrier, |tx, m| tx.send(m).is_ok());
    let p = per.len();
    let cb = barrier.clone();
    let consumer = thread::spawn(move || {
        let mut checker = Checker::new(p);
        cb.wait();
        while rx.recv_batch(batch, |m| checker.observe(&m)) > 0 {}
        (Instant::now(), checker)
    });
    barrier.wait();
    let t0 = Instant::now();
    for h in hs {
        h.join().expect("producer");
    }
    let (end, checker) = consumer.join().expect("consumer");
    assert!(checker.verdict::<16>(per).ok());
    end.duration_since(t0).as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let trials: usize = args.get(1).map_or(7, |s| s.parse().expect("trials"));
    let n: u64 = args.get(2).map_or(8 << 20, |s| s.parse().expect("messages"));
    let p: usize = args.get(3).map_or(2, |s| s.parse().expect("producers"));
    let batch: usize = std::env::var("BATCH").map_or(65536, |s| s.parse().expect("BATCH"));
    let per = per(n, p);
    let mut ratios = Vec::new();
    for t in 0..trials {
        let mut line = format!("trial {t}:");
        let mut rates = [0.0; 2];
        for (k, name) in ["own", "adapter"].iter().enumerate() {
            let u0 = usage();
            let s = if k == 0 { own(&per) } else { adapter(&per, batch) };
            let u1 = usage();
            rates[k] = n as f64 / s / 1e6;
            line += &format!(
                "  {name} {:.1} M/s cpu {:.0} ms vcs {} ivcs {}",
                rates[k],
                u1.0 - u0.0,
                u1.1 - u0.1,
                u1.2 - u0.2
            );
        }
        ratios.push(rates[1] / rates[0]);
        println!("{line}  adapter/own {:.2}", rates[1] / rates[0]);
    }
    ratios.sort_by(f64::total_cmp);
    println!("median adapter/own: {:.2}", ratios[ratios.len() / 2]);
}
