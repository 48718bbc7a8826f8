//! One producer and one consumer over the Blocking ring (64Ki slots, the lab's 16-byte
//! message and checker, the consumer taking batches of up to 1024), pinned to CPUs 1 and 0.
//! Prints, per run, the milliseconds, the consumer's mean batch, and each thread's
//! voluntary / involuntary context switches (`getrusage(RUSAGE_THREAD)`): a voluntary
//! switch is a sleep. docs/ring.md has what these counts showed.
//!
//! `cargo run --release -p ring --example blocking_sleeps -- [messages] [runs]`

use handoff::{Checker, Consumer, Handoff, Message, Producer};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// This thread's (voluntary, involuntary) context switches so far.
fn switches() -> (i64, i64) {
    // SAFETY: `rusage` is plain data; all zeroes is a valid value to be overwritten.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid, writable `rusage`; RUSAGE_THREAD reads the calling thread.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut r) };
    assert_eq!(rc, 0, "getrusage: {}", std::io::Error::last_os_error());
    (r.ru_nvcsw, r.ru_nivcsw)
}

/// Pins the calling thread to `cpu`.
fn pin(cpu: usize) {
    // SAFETY: `cpu_set_t` is plain data; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is far below CPU_SETSIZE; `set` is valid and writable.
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: `set` is a valid `cpu_set_t` of the size passed; pid 0 is this thread.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    assert_eq!(rc, 0, "pinning to CPU {cpu}: {}", std::io::Error::last_os_error());
}

fn main() {
    let mut args = std::env::args().skip(1).map(|s| s.parse::<u64>().expect("a number"));
    let n = args.next().unwrap_or(8 << 20);
    let runs = args.next().unwrap_or(12);
    for run in 0..runs {
        let (mut txs, mut rx) =
            ring::RingHandoff::<ring::Blocking>::new(65536).open::<Message<16>>(1).unwrap();
        let mut tx = txs.pop().unwrap();
        let start = Arc::new(Barrier::new(2));
        let gate = start.clone();
        let producer = std::thread::spawn(move || {
            pin(1);
            gate.wait();
            let t0 = Instant::now();
            for s in 0..n {
                tx.send(Message::<16>::new(0, s)).unwrap();
            }
            drop(tx);
            (t0, switches())
        });
        let consumer = std::thread::spawn(move || {
            pin(0);
            start.wait();
            let mut check = Checker::new(1);
            let mut calls = 0u64;
            while rx.recv_batch(1024, |m| check.observe(&m)) > 0 {
                calls += 1;
            }
            (Instant::now(), switches(), calls)
        });
        let (t0, p) = producer.join().unwrap();
        let (t1, c, calls) = consumer.join().unwrap();
        println!(
            "run {run}: {:.1} ms, mean batch {:.0}, producer switches {}/{}, consumer {}/{}",
            t1.duration_since(t0).as_secs_f64() * 1e3,
            n as f64 / calls.max(1) as f64,
            p.0,
            p.1,
            c.0,
            c.1
        );
    }
}
