//! Ping-pong round trips, one message in flight, two threads pinned to CPUs 0 and 1: the
//! ring's `Handoff` adapter (busy-spin, one producer) against the `disruptor` crate's
//! single producer and event poller (busy-spin with the spin hint), and the machine's
//! floor (one atomic bounced). All send the lab's 40-byte `handoff::Message<16>`, in
//! rounds (each loop once a round, in turn). Prints the median round's p50 round trip and
//! the ratios paired by round: this VM's cross-core latency changes in phases, so only
//! loops measured side by side compare.
//!
//! What it is for: telling where the ring's round trip goes beside the peer's and the
//! floor's, without the lab's harness (the lab's `handoff-latency --workloads ping-pong`
//! runs the same protocol through the same adapters).
//!
//! `cargo run --release -p ring --example ping_pong -- [rounds] [trips]` (defaults 25
//! rounds of 5,000 round trips, as the lab's default ping-pong forks).

use disruptor::{BusySpinWithSpinLoopHint, Producer as _};
use handoff::{Consumer, Handoff, Message, Producer};
use ring::{BusySpin, RingHandoff};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

type M = Message<16>;

fn pin(cpu: usize) {
    // SAFETY: a zeroed `cpu_set_t` is an empty set, filled by `CPU_SET` below.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `cpu` is below the set's capacity (1024).
    unsafe { libc::CPU_SET(cpu, &mut set) };
    // SAFETY: a valid set of the size given, for the calling thread (pid 0).
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
}

fn p50(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Runs `echo` on CPU 1 and `ping(i)` (one round trip) on CPU 0 `trips` times; the p50.
fn run(trips: u64, echo: impl FnOnce() + Send + 'static, mut ping: impl FnMut(u64)) -> u64 {
    let e = thread::spawn(move || {
        pin(1);
        echo();
    });
    pin(0);
    let mut v = Vec::with_capacity(trips as usize);
    for i in 0..trips {
        let t = Instant::now();
        ping(i);
        v.push(t.elapsed().as_nanos() as u64);
    }
    e.join().unwrap();
    p50(v)
}

fn ring(trips: u64) -> u64 {
    let h = RingHandoff::<BusySpin>::new(1 << 16);
    let (mut there, mut there_c) = h.open::<M>(1).unwrap();
    let (mut back, mut back_c) = h.open::<M>(1).unwrap();
    let mut there = there.pop().unwrap();
    let mut back = back.pop().unwrap();
    run(
        trips,
        move || {
            for _ in 0..trips {
                let m = there_c.recv().expect("the pinger is gone");
                assert!(back.send(m).is_ok(), "the pinger is gone");
            }
        },
        |i| {
            let m = M::new(0, i);
            there.send(m).unwrap();
            assert!(back_c.recv() == Some(m));
        },
    )
}

/// The `disruptor` crate's slot: the message, moved in and out.
struct Slot(std::cell::UnsafeCell<M>);
// SAFETY: the crate's sequences hand each slot to one thread at a time.
unsafe impl Sync for Slot {}

type Tx = disruptor::SingleProducer<Slot, disruptor::SingleConsumerBarrier>;
type Rx = disruptor::EventPoller<Slot, disruptor::SingleProducerBarrier>;

fn open_rs() -> (Tx, Rx) {
    let b = disruptor::build_single_producer(
        1 << 16,
        || Slot(std::cell::UnsafeCell::new(M::default())),
        BusySpinWithSpinLoopHint,
    );
    let (poller, b) = b.new_event_poller();
    (b.build(), poller)
}

fn send_rs(tx: &mut Tx, m: M) {
    while tx
        .try_publish(|s| {
            // SAFETY: the crate gave this producer the slot.
            unsafe { *s.0.get() = m }
        })
        .is_err()
    {
        std::hint::spin_loop();
    }
}

fn recv_rs(rx: &mut Rx) -> Option<M> {
    loop {
        match rx.take(1) {
            Ok(mut g) => {
                // SAFETY: the guard covers the slot.
                return (&mut g).next().map(|s| unsafe { *s.0.get() });
            }
            Err(disruptor::Polling::NoEvents) => std::hint::spin_loop(),
            Err(disruptor::Polling::Shutdown) => return None,
        }
    }
}

fn disruptor_rs(trips: u64) -> u64 {
    let (mut there, mut there_c) = open_rs();
    let (mut back, mut back_c) = open_rs();
    run(
        trips,
        move || {
            for _ in 0..trips {
                let m = recv_rs(&mut there_c).unwrap();
                send_rs(&mut back, m);
            }
        },
        |i| {
            let m = M::new(0, i);
            send_rs(&mut there, m);
            assert!(recv_rs(&mut back_c) == Some(m));
        },
    )
}

fn floor(trips: u64) -> u64 {
    let line = Arc::new(crossbeam_utils::CachePadded::new(AtomicU64::new(0)));
    let l = line.clone();
    run(
        trips,
        move || {
            for i in 0..trips {
                while l.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                l.store(2 * i + 2, Ordering::Release);
            }
        },
        |i| {
            line.store(2 * i + 1, Ordering::Release);
            while line.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        },
    )
}

/// One loop: round trips in, p50 ns out.
type Loop = fn(u64) -> u64;

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().expect("a count"));
    let rounds = args.next().unwrap_or(25) as usize;
    let trips = args.next().unwrap_or(5_000);
    let runs: [(&str, Loop); 3] =
        [("floor", floor), ("ring", ring), ("disruptor-rs", disruptor_rs)];
    let mut p50s = vec![Vec::with_capacity(rounds); runs.len()];
    for _ in 0..rounds {
        for (k, (_, f)) in runs.iter().enumerate() {
            p50s[k].push(f(trips));
        }
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("{rounds} rounds of {trips} round trips; each round's p50, then paired ratios");
    for (k, (name, _)) in runs.iter().enumerate() {
        let ns = median(p50s[k].iter().map(|&x| x as f64).collect());
        let ratio = |base: usize| {
            median((0..rounds).map(|i| p50s[k][i] as f64 / p50s[base][i] as f64).collect())
        };
        println!(
            "{name:>13}: p50 {ns:.0} ns (median round), ÷ floor {:.2}×, ÷ ring {:.2}×",
            ratio(0),
            ratio(1)
        );
    }
}

/// The lab's timed forks run on jemalloc; so does this loop.
#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
